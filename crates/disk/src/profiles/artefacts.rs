//! The artefacts probe: does the device (or the file system on it)
//! compress or deduplicate what it is given? No benchmark result can be
//! trusted until that is known, since a compressing device turns zeros,
//! CrystalDiskMark's 0Fill or a reused buffer into a fast result.
//!
//! One region (the target, up to `--size`) is written sequentially with
//! each data pattern in turn (random, compressible:50, zeros, repeated
//! blocks), flushed, then read back from a cold cache. The write rate
//! counts the flush, so a file system that compresses at writeback is
//! caught even when the writes themselves land in its page cache. Rounds
//! repeat the patterns in the same order and each pattern's best rate is
//! kept (CrystalDiskMark's maximum): a device that compresses runs the
//! other patterns clearly faster than random data
//! ([`CLEAR_MARGIN`](iomark_model::artefact::CLEAR_MARGIN)), a plain one
//! within noise of it.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use iomark_model::artefact::{PatternRates, ProbeVerdict};
use iomark_model::disk::{DataPattern, DiskJobSpec, EngineKind, RwMode};
use iomark_model::profile::{ArtefactsResult, ProfileResult};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};

use super::common::{shortened, PointSpec};
use super::settings::{ProfileSettings, Setting};
use super::{measure, ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// The patterns, in the order each round writes them: random data last,
/// so the region holds incompressible data afterwards, as the test file's
/// fill left it for the profile that follows the short probe.
pub(crate) const PATTERNS: [DataPattern; 4] = [
    DataPattern::Zeros,
    DataPattern::Repeat,
    DataPattern::Compressible(50),
    DataPattern::Random,
];

/// Bytes per I/O: large, so the rate is the medium's, not per-I/O cost.
pub(crate) const BLOCK: u64 = 1 << 20;
/// I/Os in flight with an asynchronous engine.
const DEPTH: u32 = 8;
/// The region probed when no `--size` is given.
pub(crate) const DEFAULT_REGION: Bytes = Bytes(256 << 20);
/// The region of the short probe run before the default profile.
const SHORT_REGION: Bytes = Bytes(64 << 20);
/// Rounds of a full probe.
const ROUNDS: u32 = 3;
/// Rounds of a `--quick` (or short) probe.
const QUICK_ROUNDS: u32 = 2;

/// How to run the probe.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtefactsOptions {
    /// Rounds over every pattern.
    pub(crate) rounds: u32,
    /// Bytes written per pattern; `None` is the whole target.
    pub(crate) region: Option<Bytes>,
    /// The engine.
    pub(crate) engine: EngineKind,
    /// Whether it was shortened.
    pub(crate) quick: bool,
    /// Seed for the random data.
    pub(crate) seed: u64,
}

impl ArtefactsOptions {
    /// The short probe run before the default profile: `SHORT_REGION`
    /// (or the target, when smaller), `QUICK_ROUNDS` rounds.
    pub fn short(engine: EngineKind, seed: u64) -> Self {
        ArtefactsOptions {
            rounds: QUICK_ROUNDS,
            region: Some(SHORT_REGION),
            engine,
            quick: true,
            seed,
        }
    }
}

/// The settings the probe takes: `--passes` is its rounds.
pub(crate) const SETTINGS: &[Setting] = &[Setting::Passes, Setting::Engine];

/// The probe's options from the user's settings.
pub(crate) fn plan(s: &ProfileSettings) -> Result<ArtefactsOptions, DiskError> {
    let rounds = s
        .passes
        .unwrap_or(if s.quick { QUICK_ROUNDS } else { ROUNDS });
    if rounds == 0 {
        return Err(DiskError::Invalid(
            "--passes must be at least 1 for the artefacts probe: try --passes 3".into(),
        ));
    }
    Ok(ArtefactsOptions {
        rounds,
        region: None,
        engine: s.engine.unwrap_or(EngineKind::IoUring),
        quick: s.quick,
        seed: s.seed,
    })
}

/// One sequential pass over the region with `data` (write) or reading it.
fn spec(
    rw: RwMode,
    data: DataPattern,
    region: Bytes,
    o: &ArtefactsOptions,
    t: &OpenTarget,
) -> DiskJobSpec {
    let name = format!("artefacts {data} {rw}");
    DiskJobSpec {
        iodepth: DEPTH,
        size: region,
        rwmix_read: 0,
        ..PointSpec::one_pass(o.engine, data, o.seed).job(name, rw, Bytes(BLOCK), t)
    }
}

/// The region each pattern is written to on a target of `size`: `--size`
/// or the short probe's, whole blocks only, and at least one.
pub(crate) fn region(o: &ArtefactsOptions, size: Bytes) -> Bytes {
    let size = size.get();
    let region = o.region.map_or(size, |r| r.get().min(size));
    Bytes((region / BLOCK * BLOCK).max(BLOCK.min(size)))
}

/// A flush that took longer than the writes before it: the writes went to
/// a cache (the page cache, a drive's), and their rate without the flush
/// was the cache's. The table's rate counts the flush; this says why it
/// differs from the write job's own.
fn flush_outlasted_writes(
    data: DataPattern,
    (bytes, writing): (Bytes, Nanos),
    flush: Nanos,
) -> Option<iomark_model::Warning> {
    (writing.get() > 0 && flush > writing).then(|| {
        iomark_model::Warning::new(
            iomark_model::WarningKind::CacheSuspected,
            format!(
                "artefacts {data} write: the flush took {flush}, longer than the {writing} of \
                 writes before it: a cache took the writes ({} without the flush); the rate \
                 shown counts the flush",
                BytesPerSec::over(bytes, writing)
            ),
        )
    })
}

/// Run the probe on `target`.
pub(crate) fn run(
    o: &ArtefactsOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let region = region(o, target.info.size);
    let mut warnings = shortened(o.quick, || {
        format!("{} round(s) instead of {ROUNDS}", o.rounds)
    });
    let mut jobs = Vec::new();
    let mut best: Vec<PatternRates> = Vec::new();
    let mut interrupted = false;
    'rounds: for round in 1..=o.rounds {
        for data in PATTERNS {
            let label = format!("round {round}/{}: {data}", o.rounds);
            let write = spec(RwMode::Write, data, region, o, target);
            let Some(w) = measure(&write, target, false, stop, obs, &format!("{label} write"))?
            else {
                interrupted = true;
                break 'rounds;
            };
            // The flush is part of the write: a file system that
            // compresses at writeback does its work here.
            let flushed = Instant::now();
            target.flush()?;
            let flush = Nanos(flushed.elapsed().as_nanos() as u64);
            let written = w
                .write
                .as_ref()
                .map_or((Bytes(0), Nanos(0)), |d| (d.io_bytes, d.runtime));
            let write_rate = BytesPerSec::over(written.0, Nanos(written.1.get() + flush.get()));
            if let Some(w) = flush_outlasted_writes(data, written, flush) {
                if !warnings.iter().any(|seen| seen.kind == w.kind) {
                    warnings.push(w);
                }
            }
            jobs.push(w);
            let read = spec(RwMode::Read, data, region, o, target);
            let Some(r) = measure(&read, target, false, stop, obs, &format!("{label} read"))?
            else {
                interrupted = true;
                break 'rounds;
            };
            let read_rate = r.read.as_ref().map_or(BytesPerSec(0.0), |d| d.bw);
            jobs.push(r);
            obs.finished(&jobs);
            match best.iter_mut().find(|p| p.data == data) {
                Some(p) => {
                    p.write = BytesPerSec(p.write.0.max(write_rate.0));
                    p.read = BytesPerSec(p.read.0.max(read_rate.0));
                }
                None => best.push(PatternRates {
                    data,
                    write: write_rate,
                    read: read_rate,
                }),
            }
        }
    }
    // A verdict needs every pattern; an interrupted first round has none.
    let verdict = (best.len() == PATTERNS.len())
        .then(|| ProbeVerdict::judge(&best, region))
        .flatten();
    // Shown and stored random data first, the reference the others are
    // measured against.
    best.sort_by_key(|p| p.data != DataPattern::Random);
    Ok(ProfileOutcome {
        jobs,
        result: ProfileResult::Artefacts(ArtefactsResult {
            region,
            rounds: o.rounds,
            quick: o.quick,
            patterns: best,
            verdict,
        }),
        warnings,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flush_longer_than_the_writes_names_the_cache() {
        let mib64 = Bytes(64 << 20);
        let w = flush_outlasted_writes(
            DataPattern::Random,
            (mib64, Nanos(15_000_000)),
            Nanos(560_000_000),
        )
        .expect("a flush 37x the writes");
        assert_eq!(w.kind, iomark_model::WarningKind::CacheSuspected);
        assert!(
            w.message
                .contains("the flush took 560.00 ms, longer than the 15.00 ms of writes"),
            "{w}"
        );
        // A drive that wrote through: the flush is short.
        let none = flush_outlasted_writes(
            DataPattern::Random,
            (mib64, Nanos(500_000_000)),
            Nanos(3_000_000),
        );
        assert!(none.is_none());
    }
}
