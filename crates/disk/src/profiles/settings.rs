//! What a user may say about a profile, and which profile takes what.
//!
//! Every setting is optional and typed; each profile declares the settings
//! it takes ([`super::ProfileName::settings`]) and turns them into its own
//! options with its `plan` function. A setting given to a profile that
//! does not take it is refused, naming the flag.

use std::str::FromStr;

use iomark_model::disk::{DataPattern, EngineKind};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::verify::VerifyPhase;

/// Queue depths for IOmeter's sweep: a list `1,2,4,8` or a range `1..32`
/// (powers of two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Depths(pub Vec<u32>);

impl FromStr for Depths {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_depths(s).map(Depths)
    }
}

/// Engines to compare, comma-separated: `psync,mmap-sync,mmap-async`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineList(pub Vec<EngineKind>);

impl FromStr for EngineList {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_engines(s).map(EngineList)
    }
}

/// Block sizes for the sweep, comma-separated, run in the order given:
/// `4k,64k,1M`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeList(pub Vec<Bytes>);

impl FromStr for SizeList {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_sizes(s).map(SizeList)
    }
}

/// Parse `--qd`: a list `1,2,4,8` or a range `1..32` (powers of two, as
/// IOmeter's exponential cycling).
pub fn parse_depths(s: &str) -> Result<Vec<u32>, String> {
    parse_depths_for("--qd", s)
}

/// Parse a list or range of depths given to `flag`, as [`parse_depths`].
pub fn parse_depths_for(flag: &str, s: &str) -> Result<Vec<u32>, String> {
    let bad = || format!("{flag} '{s}': give a list such as 1,2,4,8 or a range such as 1..32");
    let depths: Vec<u32> = if let Some((a, b)) = s.split_once("..") {
        let a: u32 = a.trim().parse().map_err(|_| bad())?;
        let b: u32 = b
            .trim()
            .trim_start_matches('=')
            .parse()
            .map_err(|_| bad())?;
        if a == 0 || b < a {
            return Err(bad());
        }
        // Said, not silently capped at the last power of two below.
        if b > crate::MAX_IODEPTH {
            return Err(format!(
                "{flag} '{s}': depths go up to {}",
                crate::MAX_IODEPTH
            ));
        }
        super::powers_of_two(u64::from(a), u64::from(b))
            .into_iter()
            .map(|d| d as u32)
            .collect()
    } else {
        s.split(',')
            .map(|d| d.trim().parse::<u32>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?
    };
    if depths.is_empty() || depths.contains(&0) {
        return Err(bad());
    }
    if depths.iter().any(|d| *d > crate::MAX_IODEPTH) {
        return Err(format!(
            "{flag} '{s}': depths go up to {}",
            crate::MAX_IODEPTH
        ));
    }
    Ok(depths)
}

/// Parse `--engines`: a comma-separated list of engines.
pub fn parse_engines(s: &str) -> Result<Vec<EngineKind>, String> {
    let engines: Vec<EngineKind> = s
        .split(',')
        .map(|e| e.trim().parse::<EngineKind>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--engines: {e}"))?;
    if engines.is_empty() {
        return Err("--engines: name at least one engine, e.g. psync,mmap-sync".into());
    }
    Ok(engines)
}

/// Parse `--sizes`: a comma-separated list of block sizes, each larger than
/// 0 and at most [`crate::MAX_BS`], none twice; run in the order given.
pub fn parse_sizes(s: &str) -> Result<Vec<Bytes>, String> {
    let mut sizes: Vec<Bytes> = Vec::new();
    for part in s.split(',') {
        let bs: Bytes = part
            .trim()
            .parse()
            .map_err(|e| format!("--sizes '{s}': {e}"))?;
        if bs.get() == 0 || bs > crate::MAX_BS {
            return Err(format!(
                "--sizes '{s}': each size must be larger than 0 and at most {}",
                crate::MAX_BS
            ));
        }
        if sizes.contains(&bs) {
            return Err(format!("--sizes '{s}': {bs} is given twice"));
        }
        sizes.push(bs);
    }
    Ok(sizes)
}

/// Everything a user may set on a profile; `None` (or `false`) keeps the
/// profile's default.
#[derive(Debug, Clone, Default)]
pub struct ProfileSettings {
    /// Shorter passes for a first look.
    pub quick: bool,
    /// Measured passes per test.
    pub passes: Option<u32>,
    /// Length of each pass.
    pub pass_time: Option<Nanos>,
    /// Pause between tests.
    pub interval: Option<Nanos>,
    /// Read percentage of an added mix test.
    pub mix: Option<u8>,
    /// Queue depths.
    pub qd: Option<Depths>,
    /// Measured time per point.
    pub runtime: Option<Nanos>,
    /// Unmeasured time before each point.
    pub ramp: Option<Nanos>,
    /// The engine of every test.
    pub engine: Option<EngineKind>,
    /// Engines to compare.
    pub engines: Option<EngineList>,
    /// The sweep's block sizes, in order.
    pub sizes: Option<SizeList>,
    /// Transfer-rate samples.
    pub samples: Option<u32>,
    /// Bytes per transfer-rate sample.
    pub sample_size: Option<Bytes>,
    /// Access-time samples.
    pub access_samples: Option<u32>,
    /// Write each sample back.
    pub write: bool,
    /// verify: which phases run.
    pub phase: Option<VerifyPhase>,
    /// What is written.
    pub data: DataPattern,
    /// Seed for offsets and data.
    pub seed: u64,
    /// Stop once the rate after a drop has been steady this long
    /// (`--until-steady`).
    pub until_steady: Option<Nanos>,
    /// Idle this long, then write again to see how much cache came back
    /// (`--recover`).
    pub recover: Option<Nanos>,
    /// Leave the target's pages in the page cache between jobs
    /// (`--keep-cache`); by default each job starts with them dropped.
    /// Every profile obeys it, so it is no [`Setting`].
    pub keep_cache: bool,
}

/// A setting a profile may take, by the flag that gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// `--passes`
    Passes,
    /// `--pass-time`
    PassTime,
    /// `--interval`
    Interval,
    /// `--mix`
    Mix,
    /// `--qd`
    Qd,
    /// `--runtime`
    Runtime,
    /// `--ramp`
    Ramp,
    /// `--engine`
    Engine,
    /// `--engines`
    Engines,
    /// `--sizes`
    Sizes,
    /// `--samples`
    Samples,
    /// `--sample-size`
    SampleSize,
    /// `--access-samples`
    AccessSamples,
    /// `--write`
    Write,
    /// `--until-steady`
    UntilSteady,
    /// `--recover`
    Recover,
    /// `--phase`
    Phase,
}

impl Setting {
    /// Every setting, in `--help`'s order.
    pub const ALL: [Setting; 17] = [
        Setting::Passes,
        Setting::PassTime,
        Setting::Interval,
        Setting::Mix,
        Setting::Qd,
        Setting::Ramp,
        Setting::Runtime,
        Setting::Engine,
        Setting::Samples,
        Setting::SampleSize,
        Setting::AccessSamples,
        Setting::Write,
        Setting::Engines,
        Setting::Sizes,
        Setting::UntilSteady,
        Setting::Recover,
        Setting::Phase,
    ];

    /// The flag that gives it.
    pub fn flag(self) -> &'static str {
        match self {
            Setting::Passes => "--passes",
            Setting::PassTime => "--pass-time",
            Setting::Interval => "--interval",
            Setting::Mix => "--mix",
            Setting::Qd => "--qd",
            Setting::Runtime => "--runtime",
            Setting::Ramp => "--ramp",
            Setting::Engine => "--engine",
            Setting::Engines => "--engines",
            Setting::Sizes => "--sizes",
            Setting::Samples => "--samples",
            Setting::SampleSize => "--sample-size",
            Setting::AccessSamples => "--access-samples",
            Setting::Write => "--write",
            Setting::UntilSteady => "--until-steady",
            Setting::Recover => "--recover",
            Setting::Phase => "--phase",
        }
    }

    /// Whether the user gave it.
    pub fn given(self, s: &ProfileSettings) -> bool {
        match self {
            Setting::Passes => s.passes.is_some(),
            Setting::PassTime => s.pass_time.is_some(),
            Setting::Interval => s.interval.is_some(),
            Setting::Mix => s.mix.is_some(),
            Setting::Qd => s.qd.is_some(),
            Setting::Runtime => s.runtime.is_some(),
            Setting::Ramp => s.ramp.is_some(),
            Setting::Engine => s.engine.is_some(),
            Setting::Engines => s.engines.is_some(),
            Setting::Sizes => s.sizes.is_some(),
            Setting::Samples => s.samples.is_some(),
            Setting::SampleSize => s.sample_size.is_some(),
            Setting::AccessSamples => s.access_samples.is_some(),
            Setting::Write => s.write,
            Setting::UntilSteady => s.until_steady.is_some(),
            Setting::Recover => s.recover.is_some(),
            Setting::Phase => s.phase.is_some(),
        }
    }
}
