//! The verify profile: f3write + f3read (or h2testw) with a benchmark's
//! figures, and f3probe with `--quick` (docs/verify.md).
//!
//! The full check fills the whole target with verify blocks
//! ([`crate::verify::block`]), flushes, drops the cache and reads
//! everything back, reporting bad blocks as ranges, the capacity that
//! really holds data, and the write and read rate across the surface. The
//! phases can run apart (`--phase write`, then `--phase read` after the
//! device was unplugged and plugged back in): the read phase learns the
//! run's seed and region from the blocks themselves.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use iomark_model::disk::{DataPattern, EngineKind};
use iomark_model::profile::ProfileResult;
use iomark_model::units::Bytes;
use iomark_model::verify::{VerifyPhase, VerifyResult};

use super::common::shortened;
use super::settings::{ProfileSettings, Setting};
use super::{ProfileObserver, ProfileOutcome};
use crate::buffer::AlignedBuf;
use crate::target::{FreeSpaceMargin, OpenTarget};
use crate::verify::block::{Expect, Header, BLOCK};
use crate::verify::surface::{self, PassOptions};
use crate::verify::{probe, Findings, GROUP};
use crate::DiskError;

/// Groups in flight with io_uring: enough to keep a USB stick or SSD busy
/// while the next group is stamped or the last one checked.
const DEPTH: u32 = 4;
/// The pass number of the full check's blocks.
const SEQUENCE: u32 = 1;
/// Groups the read phase looks through for a block that names the run.
const DISCOVER_GROUPS: u64 = 16;

/// How to run the check.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyOptions {
    /// The quick probe instead of the full check.
    pub(crate) quick: bool,
    /// Which phases run.
    pub(crate) phase: VerifyPhase,
    /// psync or io_uring.
    engine: EngineKind,
    /// The payload of each block after its header.
    data: DataPattern,
}

/// The settings the profile takes.
pub(crate) const SETTINGS: &[Setting] = &[Setting::Engine, Setting::Phase];

/// The profile's options from the user's settings.
pub(crate) fn plan(s: &ProfileSettings) -> Result<VerifyOptions, DiskError> {
    let engine = s.engine.unwrap_or(EngineKind::IoUring);
    if !matches!(engine, EngineKind::IoUring | EngineKind::Psync) {
        return Err(DiskError::Invalid(format!(
            "--engine {engine} cannot run the verify profile: use io_uring or psync"
        )));
    }
    let phase = s.phase.unwrap_or_default();
    if s.quick && phase != VerifyPhase::Both {
        return Err(DiskError::Invalid(
            "--quick probes in one go and takes no --phase: drop one of them".into(),
        ));
    }
    Ok(VerifyOptions {
        quick: s.quick,
        phase,
        engine,
        data: s.data,
    })
}

/// Free space a directory's test file leaves without `--size`: 2% of it,
/// and at least 64 MiB; the file is whole block groups.
pub(crate) const FREE_SPACE_MARGIN: FreeSpaceMargin = FreeSpaceMargin {
    divisor: 50,
    at_least: Bytes(64 << 20),
    granule: Bytes(GROUP),
};

/// The region checked on a target of `size`: whole block groups.
pub(crate) fn region(size: Bytes) -> Bytes {
    Bytes(size.get() / GROUP * GROUP)
}

/// Run the check on `target`.
pub(crate) fn run(
    o: &VerifyOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let lbs = u64::from(target.info.logical_block_size);
    if lbs > BLOCK as u64 {
        return Err(DiskError::Invalid(format!(
            "{} has {lbs} B logical blocks; verify blocks are {BLOCK} B: use a file system on it",
            target.info.path
        )));
    }
    let region = region(target.info.size).get();
    if region == 0 {
        return Err(DiskError::Invalid(format!(
            "{} is smaller than one {} block group: verify needs at least that; raise --size",
            target.info.path,
            Bytes(GROUP)
        )));
    }
    let seed = rand::random::<u64>();
    if o.quick {
        return quick(target, region, seed, stop, obs);
    }
    let pass = PassOptions {
        engine: o.engine,
        depth: DEPTH,
    };
    let mut result = VerifyResult {
        quick: false,
        phase: o.phase,
        claimed: Bytes(region),
        block: Bytes(BLOCK as u64),
        group: Bytes(GROUP),
        seed,
        engine: o.engine,
        direct: target.bypasses_cache(o.engine),
        write_bw: None,
        read_bw: None,
        write_series: Vec::new(),
        read_series: Vec::new(),
        checked_blocks: 0,
        bad: Default::default(),
        ranges: Vec::new(),
        more_ranges: 0,
        usable: None,
        partial: false,
    };
    let mut interrupted = false;
    let mut written_to = region;
    if o.phase.writes() {
        let header = Header {
            offset: 0,
            seed,
            region,
            sequence: SEQUENCE,
            block: BLOCK as u32,
        };
        obs.begin("write");
        let w = surface::write(target, region, header, o.data, pass, stop, obs);
        obs.end();
        let w = w?;
        // The flush is part of the write: a device that acknowledges
        // writes into its cache does its work here.
        let flushed = Instant::now();
        target.flush()?;
        result.write_bw = Some(w.rate(flushed.elapsed()));
        result.write_series = w.series;
        written_to = w.done_to;
        interrupted = w.interrupted;
        result.partial = w.interrupted;
    }
    if o.phase.reads() && !interrupted {
        let expect = if o.phase.writes() {
            Expect {
                seed,
                sequence: SEQUENCE,
            }
        } else {
            let h = discover(target)?;
            result.seed = h.seed;
            let claimed = h.region.min(region);
            result.claimed = Bytes(claimed);
            written_to = claimed;
            Expect {
                seed: h.seed,
                sequence: h.sequence,
            }
        };
        // Read from the device, not from what the write left in the cache.
        target.invalidate_cache();
        let mut found = Findings::default();
        obs.begin("read and check");
        let r = surface::read(target, written_to, expect, pass, &mut found, stop, obs);
        obs.end();
        let r = r?;
        result.read_bw = Some(r.rate(Duration::ZERO));
        result.read_series = r.series;
        result.partial |= r.interrupted;
        interrupted = r.interrupted;
        result.checked_blocks = found.checked;
        if !r.interrupted {
            result.usable = Some(Bytes(found.usable(result.claimed.get(), r.done_to)));
        }
        result.bad = found.bad;
        result.ranges = found.ranges;
        result.more_ranges = found.more_ranges;
    }
    Ok(ProfileOutcome {
        jobs: Vec::new(),
        result: ProfileResult::Verify(result),
        warnings: Vec::new(),
        interrupted,
    })
}

/// The quick probe (f3probe).
fn quick(
    target: &OpenTarget,
    region: u64,
    seed: u64,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    obs.begin("probe");
    let report = probe::run(target, region, seed, stop, obs);
    obs.end();
    let report = report?;
    let warnings = shortened(true, || {
        format!(
            "a probe of {} blocks across the claimed size, not a full check of every block: \
             run --profile verify without --quick for that",
            report.probed
        )
    });
    let found = report.found;
    Ok(ProfileOutcome {
        jobs: Vec::new(),
        result: ProfileResult::Verify(VerifyResult {
            quick: true,
            phase: VerifyPhase::Both,
            claimed: Bytes(region),
            block: Bytes(BLOCK as u64),
            group: Bytes(GROUP),
            seed,
            engine: EngineKind::Psync,
            direct: target.direct,
            write_bw: None,
            read_bw: None,
            write_series: Vec::new(),
            read_series: Vec::new(),
            checked_blocks: report.probed,
            bad: found.bad,
            ranges: found.ranges,
            more_ranges: found.more_ranges,
            usable: (!report.interrupted).then_some(Bytes(report.usable)),
            partial: report.interrupted,
        }),
        warnings,
        interrupted: report.interrupted,
    })
}

/// The header a write phase left: the first sound block in the first
/// groups. A target without one holds no iomark verify blocks.
fn discover(target: &OpenTarget) -> Result<Header, DiskError> {
    let mut buf = AlignedBuf::new(
        GROUP as usize,
        target.info.logical_block_size.max(512) as usize,
    );
    let size = target.info.size.get();
    for g in 0..DISCOVER_GROUPS {
        let offset = g * GROUP;
        if offset + GROUP > size {
            break;
        }
        let n = rustix::io::pread(&*target.file, buf.as_mut_slice(), offset).map_err(|e| {
            DiskError::Io {
                errno: e.raw_os_error(),
                message: format!("reading {} at offset {offset}: {e}", target.info.path),
            }
        })?;
        for (i, block) in buf.as_slice()[..n / BLOCK * BLOCK]
            .chunks_exact(BLOCK)
            .enumerate()
        {
            let Some(h) = Header::read(block) else {
                continue;
            };
            // Only a block whose checksum holds is trusted to name the run.
            let probe = Expect {
                seed: h.seed,
                sequence: h.sequence,
            };
            let at = offset + (i * BLOCK) as u64;
            let sound = match probe.check(block, at) {
                crate::verify::block::Verdict::Good => true,
                crate::verify::block::Verdict::Bad(b) => b.from.is_some(),
            };
            if sound && h.block as usize == BLOCK {
                return Ok(h);
            }
        }
    }
    Err(DiskError::Invalid(format!(
        "{} holds no iomark verify blocks: run --profile verify --phase write on it first",
        target.info.path
    )))
}
