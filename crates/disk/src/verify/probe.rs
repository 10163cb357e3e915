//! The quick probe for fake capacity, as `f3probe`: a few hundred blocks
//! across the claimed size instead of all of it, in seconds.
//!
//! 1. Blocks go to chosen offsets: the ends, every power of two and the
//!    block below it, a grid of [`GRID`] evenly spaced offsets and
//!    [`RANDOM`] random ones. They are written from the highest offset down
//!    and flushed, so where the device maps two offsets to one place the
//!    lower one is written last and survives: reading the higher one
//!    back finds the lower one's block, a wrap, and the distance between
//!    them is a multiple of the real size. The greatest common divisor of
//!    the distances is the real size.
//! 2. Without a wrap, when every probed block from some offset to the end
//!    came back lost or corrupted (a device that drops what lies beyond
//!    its real size), the boundary lies between the last good probe and
//!    the first bad one; a binary search narrows it to one block group,
//!    writing and reading one block per step with a new pass number, so
//!    no block of an earlier step can pass for it.
//!
//! It is a probe: a wrap whose period aliases no two probed offsets (not a
//! divisor of a power of two or of a grid step) and damage between the
//! probes go unseen. The full check reads every block.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iomark_model::verify::BadKind;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::block::{Bad, Expect, Header, Verdict, BLOCK};
use super::{Findings, GROUP};
use crate::buffer::AlignedBuf;
use crate::runner::Observer;
use crate::target::OpenTarget;
use crate::DiskError;
use iomark_pipeline::Progress;

/// Evenly spaced probes across the claimed size.
const GRID: u64 = 256;
/// Random probes.
const RANDOM: u64 = 64;

/// What the probe found.
#[derive(Debug, Default)]
pub(crate) struct ProbeReport {
    /// The probed blocks' findings (the search's too).
    pub(crate) found: Findings,
    /// Blocks written and read back.
    pub(crate) probed: u64,
    /// The capacity that holds data, within one block group.
    pub(crate) usable: u64,
    /// Whether the stop flag ended it.
    pub(crate) interrupted: bool,
}

/// The offsets probed on a target of `claimed` bytes, ascending.
pub(crate) fn offsets(claimed: u64, seed: u64) -> Vec<u64> {
    let blocks = claimed / BLOCK as u64;
    if blocks == 0 {
        return Vec::new();
    }
    let last = (blocks - 1) * BLOCK as u64;
    let mut at = vec![0, last];
    let mut p = BLOCK as u64;
    while p <= last {
        at.push(p);
        at.push(p - BLOCK as u64);
        p *= 2;
    }
    let step = (claimed / GRID / BLOCK as u64).max(1) * BLOCK as u64;
    at.extend((0..GRID).map(|k| k * step).filter(|o| *o <= last));
    let mut rng = SmallRng::seed_from_u64(seed);
    at.extend((0..RANDOM).map(|_| rng.random_range(0..blocks) * BLOCK as u64));
    at.sort_unstable();
    at.dedup();
    at
}

/// One block of I/O on the target, through an aligned buffer.
struct BlockIo<'a> {
    target: &'a OpenTarget,
    buf: AlignedBuf,
    header: Header,
}

impl BlockIo<'_> {
    /// Write this run's block for `offset` (pass `sequence`); false when
    /// the device refused it.
    fn write(&mut self, offset: u64, sequence: u32) -> bool {
        let h = Header {
            offset,
            sequence,
            ..self.header
        };
        let block = self.buf.as_mut_slice();
        let mut rng = SmallRng::seed_from_u64(h.seed ^ offset ^ u64::from(sequence));
        rng.fill(&mut block[..]);
        h.stamp(block);
        rustix::io::pwrite(&*self.target.file, self.buf.as_slice(), offset)
            .is_ok_and(|n| n == BLOCK)
    }

    /// Read the block at `offset` back and check it for pass `sequence`.
    fn check(&mut self, offset: u64, sequence: u32) -> Verdict {
        let expect = Expect {
            seed: self.header.seed,
            sequence,
        };
        match rustix::io::pread(&*self.target.file, self.buf.as_mut_slice(), offset) {
            Ok(n) if n == BLOCK => expect.check(self.buf.as_slice(), offset),
            Ok(n) => lost(format!("a short read ({n} of {BLOCK} B)")),
            Err(e) => lost(format!("a read error: {e}")),
        }
    }

    /// Make the writes durable and drop them from the page cache, so the
    /// reads come from the device.
    fn settle(&self) -> Result<(), DiskError> {
        self.target.flush()?;
        self.target.invalidate_cache();
        Ok(())
    }
}

fn lost(found: String) -> Verdict {
    Verdict::Bad(Bad {
        kind: BadKind::Lost,
        from: None,
        found,
    })
}

/// Probe `claimed` bytes of `target` with blocks of run `seed`.
pub(crate) fn run(
    target: &OpenTarget,
    claimed: u64,
    seed: u64,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> Result<ProbeReport, DiskError> {
    let start = Instant::now();
    let mut io = BlockIo {
        target,
        buf: AlignedBuf::new(BLOCK, target.info.logical_block_size.max(512) as usize),
        header: Header {
            offset: 0,
            seed,
            region: claimed,
            sequence: 1,
            block: BLOCK as u32,
        },
    };
    let at = offsets(claimed, seed);
    let mut report = ProbeReport {
        probed: at.len() as u64,
        usable: claimed,
        ..ProbeReport::default()
    };
    let progress = |obs: &mut dyn Observer, done: u64, total: u64| {
        obs.progress(&Progress {
            elapsed: start.elapsed(),
            total: None,
            ramping: false,
            bytes: done * BLOCK as u64,
            bytes_total: Some(total * BLOCK as u64),
        });
    };
    let total = 2 * at.len() as u64;
    // Highest first: where two offsets share a place, the lower survives.
    let mut refused = Vec::new();
    for (i, &o) in at.iter().rev().enumerate() {
        if stop.load(Ordering::Relaxed) {
            report.interrupted = true;
            return Ok(report);
        }
        if !io.write(o, 1) {
            refused.push(o);
        }
        progress(obs, i as u64, total);
    }
    io.settle()?;
    let mut verdicts = Vec::with_capacity(at.len());
    for (i, &o) in at.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            report.interrupted = true;
            return Ok(report);
        }
        let v = if refused.contains(&o) {
            lost("a write error".into())
        } else {
            io.check(o, 1)
        };
        match &v {
            Verdict::Good => report.found.good(),
            Verdict::Bad(bad) => report.found.bad(o, BLOCK as u64, bad.clone()),
        }
        verdicts.push((o, v == Verdict::Good));
        progress(obs, at.len() as u64 + i as u64, total);
    }
    if let Some(period) = report.found.wrap_period {
        report.usable = period.min(claimed);
        return Ok(report);
    }
    // A bad tail: every probe from the first bad one to the end is bad.
    let Some(first_bad) = verdicts.iter().position(|(_, good)| !good) else {
        return Ok(report);
    };
    if verdicts[first_bad..].iter().any(|(_, good)| *good) {
        return Ok(report);
    }
    let mut hi = verdicts[first_bad].0;
    let mut lo = first_bad.checked_sub(1).map(|i| verdicts[i].0);
    let mut sequence = 1;
    while hi - lo.unwrap_or(0) > GROUP {
        if stop.load(Ordering::Relaxed) {
            report.interrupted = true;
            break;
        }
        let from = lo.map_or(0, |l| l + BLOCK as u64);
        let mid = (from + (hi - from) / 2) / BLOCK as u64 * BLOCK as u64;
        sequence += 1;
        let written = io.write(mid, sequence);
        io.settle()?;
        let v = if written {
            io.check(mid, sequence)
        } else {
            lost("a write error".into())
        };
        report.probed += 1;
        match v {
            Verdict::Good => lo = Some(mid),
            Verdict::Bad(_) => hi = mid,
        }
        if lo.is_none() && hi == 0 {
            break;
        }
    }
    report.usable = hi;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_cover_both_ends_powers_of_two_and_a_grid() {
        let claimed = 256 << 20;
        let at = offsets(claimed, 1);
        assert_eq!(at.first(), Some(&0));
        assert_eq!(at.last(), Some(&(claimed - BLOCK as u64)));
        for p in [64 << 20, (64 << 20) - BLOCK as u64, 1 << 20] {
            assert!(at.binary_search(&p).is_ok(), "{p}");
        }
        assert!(at.windows(2).all(|w| w[0] < w[1]));
        assert!(at.iter().all(|o| o % BLOCK as u64 == 0));
        assert!(at.len() > 300 && at.len() < 420, "{}", at.len());
    }

    #[test]
    fn a_tiny_target_still_gets_a_probe() {
        assert_eq!(offsets(BLOCK as u64, 3), vec![0]);
        assert!(offsets(100, 3).is_empty());
    }
}
