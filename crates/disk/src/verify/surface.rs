//! The full check: every block group of a region written in order with
//! verify blocks, or read back in order and checked, through an engine at
//! a queue depth, timed by stretch of the surface for the rate-by-position
//! chart.
//!
//! The passes drive an [`Engine`](crate::engine::Engine) directly instead of going through the
//! runner: the runner writes and reads data it does not look at, while
//! here every group is stamped before it is written and checked when it
//! comes back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iomark_model::disk::{DataPattern, EngineKind};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};
use iomark_model::verify::{BadKind, SurfaceRate};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::block::{Bad, Expect, Header, Verdict, BLOCK};
use super::{Findings, GROUP};
use crate::buffer::AlignedBuf;
use crate::engine::{self, Dir, Done, EngineSetup, IoUnit, Queued};
use crate::runner::Observer;
use crate::target::OpenTarget;
use crate::{pattern, DiskError};
use iomark_pipeline::Progress;

/// Stretches of the surface a pass is timed in (GNOME Disks' chart has
/// about as many points).
const STRETCHES: u64 = 100;
/// Groups in the shortest stretch: several queue depths, so that groups
/// completing together at depth do not make one stretch look instant and
/// the next slow.
const MIN_STRETCH_GROUPS: u64 = 16;

/// How a pass runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PassOptions {
    /// psync or io_uring.
    pub(crate) engine: EngineKind,
    /// Groups in flight (io_uring).
    pub(crate) depth: u32,
}

/// What one pass did.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pass {
    /// Bytes moved from the start of the region without a gap: where a
    /// read phase must stop when the pass was cut short.
    pub(crate) done_to: u64,
    /// Wall time of the pass.
    elapsed: Duration,
    /// The rate of each stretch, in order.
    pub(crate) series: Vec<SurfaceRate>,
    /// Whether the stop flag ended it early.
    pub(crate) interrupted: bool,
}

impl Pass {
    /// The mean rate over the pass, plus `extra` time (a flush).
    pub(crate) fn rate(&self, extra: Duration) -> BytesPerSec {
        BytesPerSec::over(
            Bytes(self.done_to),
            Nanos::from_duration(self.elapsed + extra),
        )
    }
}

/// What a pass does with each group: fill it before it is written, or
/// check it once it is read.
trait Groups {
    /// Fill `buf`, about to be written at `offset`.
    fn fill(&mut self, _buf: &mut [u8], _offset: u64) {}
    /// Check `buf`, read from `offset`.
    fn check(&mut self, _buf: &[u8], _offset: u64) {}
    /// The blocks from `from` to `to` could not be read (`why`).
    fn unreadable(&mut self, _from: u64, _to: u64, _why: &str) {}
}

/// Fills groups with verify blocks.
struct Writer {
    /// The header every block gets, with its own offset.
    header: Header,
    /// The payload.
    data: DataPattern,
}

impl Groups for Writer {
    fn fill(&mut self, buf: &mut [u8], offset: u64) {
        let mut rng = SmallRng::seed_from_u64(self.header.seed ^ offset.rotate_left(17));
        pattern::fill(buf, self.data, &mut rng);
        stamp_group(buf, offset, self.header);
    }
}

/// Checks groups read back.
struct Checker<'a> {
    /// What every block must hold.
    expect: Expect,
    /// What was found.
    found: &'a mut Findings,
}

impl Groups for Checker<'_> {
    fn check(&mut self, buf: &[u8], offset: u64) {
        check_group(buf, offset, self.expect, self.found);
    }

    fn unreadable(&mut self, from: u64, to: u64, why: &str) {
        for at in (from..to).step_by(BLOCK) {
            let bad = Bad {
                kind: BadKind::Lost,
                from: None,
                found: why.to_string(),
            };
            self.found.bad(at, BLOCK as u64, bad);
        }
    }
}

/// Write verify blocks over `region` bytes of `target`: each group's
/// payload drawn from `data` seeded by `header.seed` and the group's
/// offset, each block stamped with `header` for its own offset.
pub(crate) fn write(
    target: &OpenTarget,
    region: u64,
    header: Header,
    data: DataPattern,
    o: PassOptions,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> Result<Pass, DiskError> {
    let mut w = Writer { header, data };
    drive(target, Dir::Write, region, o, stop, obs, &mut w)
}

/// Stamp every block of a group written at `offset`.
fn stamp_group(buf: &mut [u8], offset: u64, header: Header) {
    for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
        let at = offset + (i * BLOCK) as u64;
        Header {
            offset: at,
            ..header
        }
        .stamp(block);
    }
}

/// Read `region` bytes of `target` back and check every block against
/// `expect`, into `found`.
pub(crate) fn read(
    target: &OpenTarget,
    region: u64,
    expect: Expect,
    o: PassOptions,
    found: &mut Findings,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
) -> Result<Pass, DiskError> {
    let mut c = Checker { expect, found };
    drive(target, Dir::Read, region, o, stop, obs, &mut c)
}

/// Check every block of a group read from `offset`.
fn check_group(buf: &[u8], offset: u64, expect: Expect, found: &mut Findings) {
    for (i, block) in buf.chunks_exact(BLOCK).enumerate() {
        let at = offset + (i * BLOCK) as u64;
        match expect.check(block, at) {
            Verdict::Good => found.good(),
            Verdict::Bad(bad) => found.bad(at, BLOCK as u64, bad),
        }
    }
}

/// Time of each stretch's last completion, for the rates by position.
struct Stretches {
    len: u64,
    region: u64,
    done: Vec<u64>,
    finished_at: Vec<Option<Duration>>,
}

impl Stretches {
    fn new(region: u64) -> Self {
        let groups = region.div_ceil(GROUP).max(1);
        let len = groups
            .div_ceil(STRETCHES)
            .max(MIN_STRETCH_GROUPS)
            .min(groups)
            * GROUP;
        let count = region.div_ceil(len) as usize;
        Stretches {
            len,
            region,
            done: vec![0; count],
            finished_at: vec![None; count],
        }
    }

    fn span(&self, i: usize) -> u64 {
        let start = i as u64 * self.len;
        self.len.min(self.region - start)
    }

    fn completed(&mut self, offset: u64, bytes: u64, at: Duration) {
        let i = (offset / self.len) as usize;
        self.done[i] += bytes;
        if self.done[i] >= self.span(i) {
            self.finished_at[i] = Some(at);
        }
    }

    /// The rate of every finished stretch from the start, in order, each
    /// timed from the end of the stretches before it (groups complete
    /// nearly in order, a queue depth apart).
    fn series(&self) -> Vec<SurfaceRate> {
        let mut out = Vec::new();
        let mut prev = Duration::ZERO;
        for (i, at) in self.finished_at.iter().enumerate() {
            let Some(at) = *at else { break };
            let took = at.saturating_sub(prev).max(Duration::from_micros(1));
            prev = prev.max(at);
            let len = Bytes(self.span(i));
            out.push(SurfaceRate {
                at: Bytes(i as u64 * self.len),
                len,
                bw: BytesPerSec::over(len, Nanos::from_duration(took)),
            });
        }
        out
    }
}

/// Run one pass over `region`, `groups` filling each group before it is
/// written or checking it once read.
fn drive(
    target: &OpenTarget,
    dir: Dir,
    region: u64,
    o: PassOptions,
    stop: &AtomicBool,
    obs: &mut dyn Observer,
    groups: &mut dyn Groups,
) -> Result<Pass, DiskError> {
    let depth = if o.engine == EngineKind::IoUring {
        o.depth.max(1)
    } else {
        1
    };
    let setup = EngineSetup {
        file: target.engine_file(),
        region,
        depth,
        writable: target.writable,
        random: false,
    };
    let mut engine = engine::build(o.engine, &setup)?;
    let align = target.info.logical_block_size.max(512) as usize;
    let mut free: Vec<IoUnit> = (0..depth)
        .map(|slot| IoUnit {
            buf: AlignedBuf::new(GROUP as usize, align),
            offset: 0,
            len: GROUP as u32,
            dir,
            slot,
            issued: Instant::now(),
        })
        .collect();
    engine.register_buffers(&mut free)?;
    let mut state = State {
        start: Instant::now(),
        region,
        dir,
        stretches: Stretches::new(region),
        finished: Default::default(),
        done_to: 0,
    };
    let mut next = 0u64;
    let mut in_flight = 0usize;
    let mut reaped: Vec<Done> = Vec::new();
    let mut last_report = state.start;
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        while next < region && !stopping {
            let Some(mut unit) = free.pop() else { break };
            let len = GROUP.min(region - next);
            unit.offset = next;
            unit.len = len as u32;
            if dir == Dir::Write {
                groups.fill(&mut unit.buf.as_mut_slice()[..len as usize], next);
            }
            unit.issued = Instant::now();
            next += len;
            match engine.queue(unit)? {
                Queued::Completed(d) => free.push(state.complete(d, groups)?),
                Queued::InFlight => in_flight += 1,
            }
        }
        engine.commit()?;
        if in_flight == 0 {
            if next >= region || stopping {
                break;
            }
            continue;
        }
        reaped.clear();
        let n = engine.reap(1, &mut reaped)?;
        in_flight -= n;
        for d in reaped.drain(..) {
            free.push(state.complete(d, groups)?);
        }
        if last_report.elapsed() >= Duration::from_millis(100) {
            last_report = Instant::now();
            obs.progress(&Progress {
                elapsed: state.start.elapsed(),
                total: None,
                ramping: false,
                bytes: state.done_to,
                bytes_total: Some(region),
            });
        }
    }
    Ok(Pass {
        done_to: state.done_to,
        elapsed: state.start.elapsed(),
        series: state.stretches.series(),
        interrupted: state.done_to < region,
    })
}

/// A pass under way: what finished, and when.
struct State {
    start: Instant,
    region: u64,
    dir: Dir,
    stretches: Stretches,
    /// Groups finished beyond `done_to` (they finish out of order at
    /// depth).
    finished: std::collections::BTreeSet<u64>,
    done_to: u64,
}

impl State {
    /// Take a finished I/O: check what was read, refuse a failed write,
    /// and hand the unit back for reuse.
    fn complete(&mut self, d: Done, groups: &mut dyn Groups) -> Result<IoUnit, DiskError> {
        let unit = d.unit;
        let len = unit.len;
        let offset = unit.offset;
        match (d.result, self.dir) {
            (Ok(n), Dir::Read) if n == len => {
                groups.check(&unit.buf.as_slice()[..len as usize], offset)
            }
            (Ok(n), Dir::Write) if n == len => {}
            (Ok(n), Dir::Write) => {
                return Err(DiskError::Io {
                    errno: 0,
                    message: format!(
                        "write of {} at offset {offset} stopped after {n} B: \
                         the device ends there; lower --size below that offset",
                        Bytes(u64::from(len)),
                    ),
                })
            }
            (Err(errno), Dir::Write) => {
                let err = std::io::Error::from_raw_os_error(errno);
                return Err(DiskError::Io {
                    errno,
                    message: format!(
                        "write at offset {offset} failed: {err}: the device refuses writes there; \
                         lower --size below that offset to check what comes before it"
                    ),
                });
            }
            // What a failed or short read did not return is lost: the
            // device cannot give it back.
            (result, Dir::Read) => {
                let got = (result.unwrap_or(0) as usize / BLOCK * BLOCK).min(len as usize);
                groups.check(&unit.buf.as_slice()[..got], offset);
                let why = match result {
                    Ok(n) => format!("a short read ({n} of {len} B)"),
                    Err(e) => format!("a read error: {}", std::io::Error::from_raw_os_error(e)),
                };
                groups.unreadable(offset + got as u64, offset + u64::from(len), &why);
            }
        }
        self.stretches
            .completed(offset, u64::from(len), self.start.elapsed());
        self.finished.insert(offset);
        while self.finished.remove(&self.done_to) {
            self.done_to += GROUP.min(self.region - self.done_to);
        }
        Ok(unit)
    }
}
