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
pub(crate) struct Depths(pub(crate) Vec<u32>);

impl FromStr for Depths {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_depths(s).map(Depths)
    }
}

/// Engines to compare, comma-separated: `psync,mmap-sync,mmap-async`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EngineList(pub(crate) Vec<EngineKind>);

impl FromStr for EngineList {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_engines(s).map(EngineList)
    }
}

/// Block sizes for the sweep, comma-separated, run in the order given:
/// `4k,64k,1M`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SizeList(pub(crate) Vec<Bytes>);

impl FromStr for SizeList {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_sizes(s).map(SizeList)
    }
}

/// Read/write mixes for the PTS tests, each the percentage of reads, in
/// the order given: `100,65,0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MixList(pub(crate) Vec<u8>);

impl FromStr for MixList {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("--mixes '{s}': give read percentages from 0 to 100, e.g. 100,65,0");
        let mut mixes = Vec::new();
        for part in s.split(',') {
            let m: u8 = part.trim().parse().map_err(|_| bad())?;
            if m > 100 || mixes.contains(&m) {
                return Err(bad());
            }
            mixes.push(m);
        }
        Ok(MixList(mixes))
    }
}

/// Parse `--qd`: a list `1,2,4,8` or a range `1..32` (powers of two, as
/// IOmeter's exponential cycling).
pub(crate) fn parse_depths(s: &str) -> Result<Vec<u32>, String> {
    parse_depths_for("--qd", s)
}

/// Parse a list or range of depths given to `flag`, as [`parse_depths`].
pub(crate) fn parse_depths_for(flag: &str, s: &str) -> Result<Vec<u32>, String> {
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
pub(crate) fn parse_engines(s: &str) -> Result<Vec<EngineKind>, String> {
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
pub(crate) fn parse_sizes(s: &str) -> Result<Vec<Bytes>, String> {
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

/// `--mix` takes an optional value, so it also swallows a path that follows
/// it; say how to write it.
pub fn parse_mix(s: &str) -> Result<u8, String> {
    match s.parse::<u8>() {
        Ok(p) if p <= 100 => Ok(p),
        _ => Err(
            "--mix takes a read percentage from 0 to 100; to use the default 70 \
                  before a path, write --mix=70 or put --mix after the path"
                .into(),
        ),
    }
}

/// Everything a user may set on a profile; `None` (or `false`) keeps the
/// profile's default.
///
/// With the `clap` feature these are the profile arguments of `iomark
/// disk` (flattened into the command), each named by its [`Setting`]'s
/// flag; the settings a custom job has too (runtime, ramp, engine, data,
/// seed) are the job's flags ([`crate::job::JobSettings`]), copied in
/// by [`crate::plan::DiskSettings::build`]. `--keep-cache`, `--no-probe`
/// and `--keep-verify-file` are here too, though the run reads them rather
/// than a profile's plan.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ProfileSettings {
    /// Shorter passes, intervals and sample counts for a first look; the
    /// result says it was shortened.
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Profile"))]
    pub(crate) quick: bool,

    /// CrystalDiskMark: measured passes per test (default 5). pts-iops,
    /// pts-tp, pts-lat: at most this many rounds (default 25).
    #[cfg_attr(feature = "clap", arg(long = Setting::Passes.long(), value_name = "N", help_heading = "Profile"))]
    pub(crate) passes: Option<u32>,

    /// CrystalDiskMark: length of each pass (default 5s; cdm3 6s).
    #[cfg_attr(feature = "clap", arg(long = Setting::PassTime.long(), value_name = "TIME", help_heading = "Profile"))]
    pub(crate) pass_time: Option<Nanos>,

    /// CrystalDiskMark: pause between tests (default 5s).
    #[cfg_attr(feature = "clap", arg(long = Setting::Interval.long(), value_name = "TIME", help_heading = "Profile"))]
    pub(crate) interval: Option<Nanos>,

    /// CrystalDiskMark: add the mix test with this read percentage (70
    /// when given without a value).
    #[cfg_attr(feature = "clap", arg(long = Setting::Mix.long(), value_name = "PCT", num_args = 0..=1, default_missing_value = "70", value_parser = parse_mix, help_heading = "Profile"))]
    pub(crate) mix: Option<u8>,

    /// iometer: queue depths, a list (1,2,4,8, the default) or a range
    /// (1..32, powers of two). pts-iops, pts-wsat: one depth, per each of
    /// the four threads (default 32); pts-tp: one depth (default 32).
    #[cfg_attr(feature = "clap", arg(long = Setting::Qd.long(), value_name = "LIST", help_heading = "Profile"))]
    pub(crate) qd: Option<Depths>,

    /// Measured time per point: the job's `--runtime`.
    #[cfg_attr(feature = "clap", arg(skip))]
    pub(crate) runtime: Option<Nanos>,

    /// Unmeasured time before each point: the job's `--ramp`.
    #[cfg_attr(feature = "clap", arg(skip))]
    pub(crate) ramp: Option<Nanos>,

    /// The engine of every test: the job's `--engine`.
    #[cfg_attr(feature = "clap", arg(skip))]
    pub(crate) engine: Option<EngineKind>,

    /// gnome: transfer-rate samples (default 100).
    #[cfg_attr(feature = "clap", arg(long = Setting::Samples.long(), value_name = "N", help_heading = "Profile"))]
    pub(crate) samples: Option<u32>,

    /// gnome: bytes per transfer-rate sample (default 10MiB).
    #[cfg_attr(feature = "clap", arg(long = Setting::SampleSize.long(), value_name = "SIZE", help_heading = "Profile"))]
    pub(crate) sample_size: Option<Bytes>,

    /// gnome: access-time samples (default 1000).
    #[cfg_attr(feature = "clap", arg(long = Setting::AccessSamples.long(), value_name = "N", help_heading = "Profile"))]
    pub(crate) access_samples: Option<u32>,

    /// gnome: write each sample back (the data just read, fsynced); only
    /// on a test file or a target named with --allow-write.
    #[cfg_attr(feature = "clap", arg(long = Setting::Write.long(), help_heading = "Profile"))]
    pub(crate) write: bool,

    /// sweep: engines to compare (default psync), e.g. psync,mmap-sync,mmap-async.
    #[cfg_attr(feature = "clap", arg(long = Setting::Engines.long(), value_name = "LIST", help_heading = "Profile"))]
    pub(crate) engines: Option<EngineList>,

    /// Skip the short artefacts probe (does this device compress?) that
    /// runs before the default profile when the store has no verdict for
    /// the device yet.
    //
    // The run's choice, made before any profile plans, so no [`Setting`].
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Profile"))]
    pub no_probe: bool,

    /// verify: write, read or both (default): --phase write fills the
    /// target and leaves it; --phase read later checks what it left, e.g.
    /// after the device was unplugged and plugged back in.
    #[cfg_attr(feature = "clap", arg(long = Setting::Phase.long(), value_name = "PHASE", help_heading = "Profile"))]
    pub(crate) phase: Option<VerifyPhase>,

    /// verify: keep the file a --phase write left in a directory after
    /// --phase read has checked it (it is removed otherwise).
    //
    // The run removes the file (`lifecycle::RunOptions`), not the
    // profile's plan, so no [`Setting`].
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Profile"))]
    pub keep_verify_file: bool,

    /// sweep: random block sizes, run in the order given (default every
    /// power of two from 4k to 4M), e.g. 4k,64k,1M. pts-iops: the block
    /// sizes of a round (default 1M,128k,64k,32k,16k,8k,4k,512; 4k is
    /// the tracking variable's, so it stays); pts-lat: likewise (default
    /// 8k,4k,512); pts-tp: its one block size (1M, the default, or 128k).
    #[cfg_attr(feature = "clap", arg(long = Setting::Sizes.long(), value_name = "LIST", help_heading = "Profile"))]
    pub(crate) sizes: Option<SizeList>,

    /// pts-iops, pts-lat, pts-tp: the read/write mixes of a round as read
    /// percentages (default 100,95,65,50,35,5,0; pts-lat 100,65,0; pts-tp
    /// 100,0; 0, the tracking variable's, stays).
    #[cfg_attr(feature = "clap", arg(long = Setting::Mixes.long(), value_name = "LIST", help_heading = "Profile"))]
    pub(crate) mixes: Option<MixList>,

    /// pts-iops, pts-tp, pts-lat: bytes of 128 KiB sequential writes
    /// before the rounds, the workload-independent preconditioning
    /// (default twice the range; 0 skips it).
    #[cfg_attr(feature = "clap", arg(long = Setting::Precondition.long(), value_name = "SIZE", help_heading = "Profile"))]
    pub(crate) precondition: Option<Bytes>,

    /// sustained: stop once the rate has fallen and then held steady this
    /// long (default 20s; write --until-steady=30s with a value), instead
    /// of writing the whole region.
    #[cfg_attr(feature = "clap", arg(long = Setting::UntilSteady.long(), value_name = "TIME", num_args = 0..=1, require_equals = true, default_missing_value = "20s", help_heading = "Profile"))]
    pub(crate) until_steady: Option<Nanos>,

    /// sustained: after the first pass idle this long (e.g. 60s), then write
    /// again and report how much of the fast cache came back.
    #[cfg_attr(feature = "clap", arg(long = Setting::Recover.long(), value_name = "TIME", help_heading = "Profile"))]
    pub(crate) recover: Option<Nanos>,

    /// pts-wsat: after saturation, SNIA PTS's host idle recovery: N bursts
    /// of the same writes (the specification's 360) after each of five idle
    /// times, 1, 2, 3, 5 and 10 times a burst, each wait state followed by
    /// as long again of continuous writing.
    #[cfg_attr(feature = "clap", arg(long = Setting::Hir.long(), value_name = "N", help_heading = "Profile"))]
    pub(crate) hir: Option<u32>,

    /// pts-wsat --hir: each burst's length (default 5s, the
    /// specification's).
    #[cfg_attr(feature = "clap", arg(long = Setting::HirBurst.long(), value_name = "TIME", help_heading = "Profile"))]
    pub(crate) hir_burst: Option<Nanos>,

    /// What is written: the job's `--data`.
    #[cfg_attr(feature = "clap", arg(skip))]
    pub(crate) data: DataPattern,

    /// Seed for offsets and data: the job's `--seed`.
    #[cfg_attr(feature = "clap", arg(skip))]
    pub(crate) seed: u64,

    /// Keep the target's pages in the page cache before the job, and
    /// between a profile's jobs (fio's --invalidate=0); with --buffered this
    /// measures the cache on purpose.
    //
    // Every profile obeys it, and a custom job too, so it is no
    // [`Setting`].
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Engine"))]
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
    /// `--hir`
    Hir,
    /// `--hir-burst`
    HirBurst,
    /// `--phase`
    Phase,
    /// `--mixes`
    Mixes,
    /// `--precondition`
    Precondition,
}

impl Setting {
    /// Every setting, in `--help`'s order.
    pub const ALL: [Setting; 21] = [
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
        Setting::Hir,
        Setting::HirBurst,
        Setting::Phase,
        Setting::Mixes,
        Setting::Precondition,
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
            Setting::Hir => "--hir",
            Setting::HirBurst => "--hir-burst",
            Setting::Phase => "--phase",
            Setting::Mixes => "--mixes",
            Setting::Precondition => "--precondition",
        }
    }

    /// The flag's long name, as clap takes it: [`flag`](Self::flag)
    /// without its dashes.
    #[cfg(feature = "clap")]
    pub(crate) fn long(self) -> &'static str {
        self.flag().trim_start_matches('-')
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
            Setting::Hir => s.hir.is_some(),
            Setting::HirBurst => s.hir_burst.is_some(),
            Setting::Phase => s.phase.is_some(),
            Setting::Mixes => s.mixes.is_some(),
            Setting::Precondition => s.precondition.is_some(),
        }
    }
}
