//! One thread of a job: its engine and pool of units, the offsets and
//! directions it picks, and the loop that keeps the pool busy and accounts
//! each completion.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::gate::StartGate;
use super::live::LiveCounter;
use super::stats::ThreadStats;
use super::submit::SubmitPolicy;
use super::Plan;
use crate::buffer::AlignedBuf;
use crate::engine::{self, Dir, Done, Engine, EngineSetup, IoUnit, Queued};
use crate::pattern;
use crate::DiskError;

/// Picks where and which way each I/O goes.
pub(super) struct Workload {
    rng: SmallRng,
    random: bool,
    bs: u64,
    /// The blocks this thread picks from: the whole region, or under
    /// `--verify` the thread's own stretch of it.
    first: u64,
    end: u64,
    next_block: u64,
    read_percent: u8,
}

impl Workload {
    pub(super) fn new(plan: &Plan, thread: usize) -> Self {
        let spec = &plan.spec;
        let threads = u64::from(spec.numjobs.max(1));
        // Sequential threads start evenly spread over the region.
        let start = plan.blocks * thread as u64 / threads;
        let (first, end) = if plan.ledger.is_some() {
            (start, plan.blocks * (thread as u64 + 1) / threads)
        } else {
            (0, plan.blocks)
        };
        Workload {
            rng: SmallRng::seed_from_u64(
                spec.seed ^ (thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            random: spec.rw.is_random(),
            bs: spec.bs.get(),
            first,
            end,
            next_block: start,
            read_percent: spec.rw.read_percent(spec.rwmix_read),
        }
    }

    #[inline]
    pub(super) fn next(&mut self) -> (u64, Dir) {
        let offset = self.next_write();
        let dir = match self.read_percent {
            100 => Dir::Read,
            0 => Dir::Write,
            p => {
                if self.rng.random_range(0..100u8) < p {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        };
        (offset, dir)
    }

    /// The offset of the next block (for a write instead of a busy block:
    /// without a direction).
    #[inline]
    fn next_write(&mut self) -> u64 {
        let block = if self.random {
            self.rng.random_range(self.first..self.end)
        } else {
            let b = self.next_block;
            self.next_block = if b + 1 >= self.end { self.first } else { b + 1 };
            b
        };
        block * self.bs
    }
}

/// Drop `offset` from the writes in flight.
fn forget(writing: &mut Vec<u64>, offset: u64) {
    if let Some(i) = writing.iter().position(|&o| o == offset) {
        writing.swap_remove(i);
    }
}

/// One thread of a job.
pub(super) fn worker(
    thread: usize,
    plan: &Plan,
    setup: &EngineSetup,
    gate: &StartGate,
    counter: &LiveCounter,
    stop: &AtomicBool,
    thread_stop: &AtomicBool,
) -> Result<ThreadStats, DiskError> {
    /// Calls the start off if this thread panics before reaching the gate.
    struct Absent<'a>(Option<&'a StartGate>);
    impl Drop for Absent<'_> {
        fn drop(&mut self) {
            if let Some(gate) = self.0 {
                gate.call_off();
            }
        }
    }
    let mut absent = Absent(Some(gate));
    let prepared = prepare(thread, plan, setup);
    // Every thread reaches the gate, even one that failed to prepare, so
    // the others are not left waiting for it.
    absent.0 = None;
    let go = gate.arrive(stop);
    let (mut engine, units) = prepared?;
    if !go {
        // Called off (the job fails) or stopped before the start: nothing
        // was measured.
        return Ok(ThreadStats::new(plan));
    }
    let result = drive(
        thread,
        plan,
        engine.as_mut(),
        units,
        counter,
        stop,
        thread_stop,
    );
    if result.is_err() {
        // One thread's I/O error ends the job for every thread.
        thread_stop.store(true, Ordering::Relaxed);
    }
    result
}

fn prepare(
    thread: usize,
    plan: &Plan,
    setup: &EngineSetup,
) -> Result<(Box<dyn Engine>, Vec<IoUnit>), DiskError> {
    let bs = plan.spec.bs.get() as usize;
    let mut rng = SmallRng::seed_from_u64(plan.spec.seed.wrapping_add(thread as u64 + 1));
    let now = Instant::now();
    let mut units: Vec<IoUnit> = (0..plan.depth)
        .map(|slot| IoUnit {
            buf: AlignedBuf::new(bs, plan.align),
            offset: 0,
            len: bs as u32,
            dir: Dir::Read,
            slot,
            issued: now,
        })
        .collect();
    let mut engine = engine::build(plan.spec.engine, setup)?;
    // Registration comes before the first write to the buffers: pages the
    // kernel faults in while pinning them for registration are physically
    // contiguous far more often than pages the program touches one by one
    // (see buffer.rs). A read-only job never writes them at all; its reads
    // overwrite whatever is there. Filled once here; `drive` stamps each
    // write so that no two are alike.
    engine.register_buffers(&mut units)?;
    if plan.spec.rw.writes() {
        for unit in &mut units {
            pattern::fill(unit.buf.as_mut_slice(), plan.spec.data, &mut rng);
        }
    }
    Ok((engine, units))
}

pub(super) fn drive(
    thread: usize,
    plan: &Plan,
    engine: &mut dyn Engine,
    mut free: Vec<IoUnit>,
    counter: &LiveCounter,
    stop: &AtomicBool,
    thread_stop: &AtomicBool,
) -> Result<ThreadStats, DiskError> {
    let mut stats = ThreadStats::new(plan);
    let mut policy = SubmitPolicy::new(plan.spec.iodepth_batch, plan.depth);
    let mut work = Workload::new(plan, thread);
    // Each write is stamped just before it is issued, so none repeats
    // another (fio's scramble_buffers); reads are never touched. Tags start
    // from the clock, as fio's come from the issue time, so a second run
    // does not rewrite the first one's bytes either.
    let clock = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut scrambler = pattern::Scrambler::new(
        plan.spec.data,
        clock ^ (thread as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    let start = Instant::now();
    let measure_start = start + plan.ramp;
    let deadline = plan.runtime.map(|r| measure_start + r);
    let mut budget = plan.bytes_per_thread;
    let mut done: Vec<Done> = Vec::with_capacity(free.len());
    let mut in_flight: u32 = 0;
    let mut issuing = true;
    let mut last_counted = measure_start;
    let mut first_error: Option<DiskError> = None;
    let mut depth_clock = DepthClock::new(measure_start, deadline);
    type RunWait = (Duration, Duration);
    let mut cpu_at_start: Option<RunWait> = None;
    let mut cpu_at_end: Option<RunWait> = None;
    // Under --verify: the offsets of this thread's writes in flight (at
    // most iodepth, so a scan is cheap) and the sequence of its last write.
    let mut writing: Vec<u64> = Vec::new();
    let mut sequence: u32 = 0;
    let verifying = plan.ledger.is_some();

    // Account one completion observed at `at`; false on an I/O error.
    let mut complete = |d: &Done, at: Instant, stats: &mut ThreadStats| -> Result<(), DiskError> {
        let bytes = match d.result {
            Ok(n) if n > 0 => u64::from(n),
            Ok(_) => return Err(DiskError::short_io(d.unit.dir, d.unit.offset, &plan.spec)),
            Err(errno) => return Err(DiskError::io(errno, d.unit.dir, d.unit.offset, &plan.spec)),
        };
        // An I/O belongs to the window it was issued in, not the one it was
        // reaped in. A worker descheduled across the ramp's end reaps, after
        // it, up to iodepth I/Os that the device finished before it: by reap
        // time they would all count (4 MiB over a 3 s window at QD16 x
        // 256 KiB, +6.7% on a throttle). By issue they stay in the ramp, and
        // the ones in flight at the deadline, which the drain below still
        // reaps, stand for the ones in flight at the window's start.
        let issued = d.unit.issued;
        if issued < measure_start || deadline.is_some_and(|dl| issued >= dl) {
            return Ok(());
        }
        let lat = at.saturating_duration_since(issued).as_nanos() as u64;
        // A drained I/O is filed in the window's last second, not a second
        // after it.
        let since_start = match plan.runtime {
            Some(r) if at - measure_start >= r => r.saturating_sub(Duration::from_nanos(1)),
            _ => at - measure_start,
        };
        stats.record(d.unit.dir, bytes, lat, since_start);
        counter.count(bytes, lat);
        last_counted = at;
        Ok(())
    };

    loop {
        let mut now = Instant::now();
        if cpu_at_start.is_none() && now >= measure_start {
            cpu_at_start = Some(iomark_host::thread_run_and_wait());
        }
        if issuing
            && (stop.load(Ordering::Relaxed)
                || thread_stop.load(Ordering::Relaxed)
                || deadline.is_some_and(|dl| now >= dl)
                || budget == Some(0))
        {
            issuing = false;
            cpu_at_end = Some(iomark_host::thread_run_and_wait());
        }
        if issuing {
            // Issue every free unit once, then go round to look at the clock.
            let mut batch = 0u64;
            let mut uncommitted = 0u32;
            for _ in 0..free.len() {
                let Some(mut unit) = free.pop() else { break };
                if let Some(b) = budget.as_mut() {
                    if *b == 0 {
                        free.push(unit);
                        break;
                    }
                    *b = b.saturating_sub(unit.len as u64);
                }
                let (mut offset, dir) = work.next();
                if dir == Dir::Write {
                    let len = unit.len as usize;
                    if let Some(ledger) = plan.ledger {
                        // A block already being written is skipped: the
                        // device may apply two writes in flight in either
                        // order, so the ledger could not say which holds.
                        while writing.contains(&offset) {
                            offset = work.next_write();
                        }
                        let buf = &mut unit.buf.as_mut_slice()[..len];
                        scrambler.scramble(buf, offset);
                        sequence = sequence.checked_add(1).unwrap_or(1);
                        ledger.stamp(buf, offset, sequence);
                        writing.push(offset);
                    } else {
                        scrambler.scramble(&mut unit.buf.as_mut_slice()[..len], offset);
                    }
                }
                unit.offset = plan.base + offset;
                unit.dir = dir;
                unit.issued = now;
                depth_clock.advance(now, in_flight);
                in_flight += 1;
                match engine.queue(unit)? {
                    Queued::InFlight => {
                        batch += 1;
                        uncommitted += 1;
                        // The refill's last unit goes down with the wait
                        // for completions: one system call, not two.
                        if uncommitted >= policy.batch() && !free.is_empty() {
                            let inline = engine.commit()?;
                            policy.observe(uncommitted, inline);
                            uncommitted = 0;
                        }
                    }
                    Queued::Completed(d) => {
                        if now >= measure_start {
                            stats.record_depth(in_flight, 1);
                        }
                        now = Instant::now();
                        depth_clock.advance(now, in_flight);
                        in_flight -= 1;
                        if let Err(e) = complete(&d, now, &mut stats) {
                            first_error.get_or_insert(e);
                            issuing = false;
                        }
                        if verifying && d.unit.dir == Dir::Write {
                            forget(&mut writing, d.unit.offset - plan.base);
                        }
                        free.push(d.unit);
                    }
                }
            }
            // While batching by choice, the refill is submitted on its own
            // to see whether its I/Os still complete within the call; when
            // they do, the wait below finds them without a second call.
            if uncommitted > 0 && policy.submit_before_wait() {
                let inline = engine.commit()?;
                policy.observe(uncommitted, inline);
            }
            if batch > 0 && now >= measure_start {
                stats.record_depth(in_flight, batch);
                policy.issued(batch);
            }
        }
        if in_flight == 0 {
            if issuing {
                continue;
            }
            break;
        }
        // Batching by choice, wait for the whole refill, as t/io_uring does:
        // the few I/Os that did not complete inline (a cached page still
        // marked for readahead goes to the kernel's async path) would
        // otherwise sit in the ring's deferred work until the next wait,
        // and the refills shrink to the few that did.
        let want = if policy.submit_before_wait() {
            in_flight as usize
        } else {
            1
        };
        engine.reap(want, &mut done)?;
        let at = Instant::now();
        for d in done.drain(..) {
            depth_clock.advance(at, in_flight);
            in_flight -= 1;
            if let Err(e) = complete(&d, at, &mut stats) {
                first_error.get_or_insert(e);
                issuing = false;
            }
            if verifying && d.unit.dir == Dir::Write {
                forget(&mut writing, d.unit.offset - plan.base);
            }
            free.push(d.unit);
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    // A job stopped early (Ctrl-C, or steady state reached) measured up
    // to its last completion, not to its deadline.
    let stopped = stop.load(Ordering::Relaxed) || thread_stop.load(Ordering::Relaxed);
    stats.measured = match deadline {
        Some(dl) if !stopped => dl - measure_start,
        _ => last_counted.saturating_duration_since(measure_start),
    };
    stats.depth_area = depth_clock.area;
    stats.submit = policy.counts;
    let (run_end, wait_end) = cpu_at_end.unwrap_or_else(iomark_host::thread_run_and_wait);
    if let Some((run0, wait0)) = cpu_at_start.filter(|_| !stats.measured.is_zero()) {
        let wall = stats.measured.as_secs_f64();
        let ran = run_end.saturating_sub(run0).as_secs_f64();
        let waited = wait_end.saturating_sub(wait0).as_secs_f64();
        stats.cpu_share = ran / wall;
        stats.busy_share = (ran + waited) / wall;
    }
    Ok(stats)
}

/// The integral of the number of I/Os in flight over the measured window,
/// for the time-weighted mean depth: fio's depth at issue counts a depth
/// once per I/O, which overstates a queue that is full only at the moment
/// of each submission.
struct DepthClock {
    from: Instant,
    until: Option<Instant>,
    last: Instant,
    /// I/Os in flight times seconds.
    area: f64,
}

impl DepthClock {
    fn new(from: Instant, until: Option<Instant>) -> Self {
        DepthClock {
            from,
            until,
            last: from,
            area: 0.0,
        }
    }

    /// `in_flight` I/Os were in flight from the last change until `at`.
    #[inline]
    fn advance(&mut self, at: Instant, in_flight: u32) {
        let lo = self.last.max(self.from);
        let hi = self.until.map_or(at, |u| at.min(u));
        if hi > lo {
            self.area += f64::from(in_flight) * (hi - lo).as_secs_f64();
        }
        self.last = self.last.max(at);
    }
}
