//! The runner: fio's `td_io_*` role. It owns time, counts and depth.
//!
//! Each of the job's `numjobs` threads builds its own engine and a pool of
//! `iodepth` units, waits at a start gate so all start together, then keeps the
//! pool busy: issue every free unit, submitting each (or each batch of
//! `iodepth_batch`) at once, wait for at least one completion, account each
//! completion, reissue.
//!
//! Submitting each I/O as soon as its unit is free is fio's default and
//! matters on real devices: when a whole batch goes down in one call, the
//! device tends to finish it together and the next batch waits for the
//! slowest, so the queue runs in lockstep. On this project's virtio disk a
//! 4k QD32 random read ran about 20% slower that way (docs/architecture.md).
//!
//! Time: a unit is stamped when issued (for io_uring, just before it is
//! pushed, so the batch's preparation is inside its latency, as in fio),
//! and completions reaped in one batch share the time they were observed.
//! Completions before the end of the ramp are not counted; in time-based
//! jobs neither are completions after the deadline. Every figure is merged
//! over threads at the end (fio's `group_reporting`), and per-interval
//! samples are kept separately from the totals.
//!
//! Threads: a thread the kernel refuses (a pids cgroup limit, EAGAIN) ends
//! the job with an error naming the fix; the threads already started are
//! released from the start gate and joined. Nothing waits without also
//! watching `stop`, so SIGTERM and SIGHUP end a job as Ctrl-C does.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use iomark_model::disk::{CpuUsage, DirectionResult, DiskJobResult, DiskJobSpec, IntervalSample};
use iomark_model::units::{Bytes, BytesPerSec, Iops, Nanos};
use iomark_model::{Warning, WarningKind};
use iomark_stats::histogram::LatencyHistogram;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::buffer::AlignedBuf;
use crate::engine::{self, Dir, Done, Engine, EngineSetup, IoUnit, Queued};
use crate::pattern;
use crate::target::OpenTarget;
use crate::DiskError;

/// Length of one per-interval sample.
pub const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);

/// fio's `iodepth_level` buckets: depth 1, 2-3, 4-7, ..., 32-63, 64 and up.
const DEPTH_LABELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];

/// What a running job tells whoever watches it (the progress bar).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Time since the job started, ramp included.
    pub elapsed: Duration,
    /// How long the job will take in all, when it is time-based.
    pub total: Option<Duration>,
    /// Whether the ramp is still running.
    pub ramping: bool,
    /// Bytes completed and counted so far.
    pub bytes: u64,
    /// Bytes the job will move in all, when it is size-based.
    pub bytes_total: Option<u64>,
}

/// Receives progress from a running job, a few times a second.
pub trait Observer {
    /// Called from the thread that started the job.
    fn progress(&mut self, p: &Progress);
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Quiet;

impl Observer for Quiet {
    fn progress(&mut self, _p: &Progress) {}
}

/// Run one job on an open target until its runtime or size is done, or
/// `stop` is raised (then the result is marked interrupted).
pub fn run_job(
    spec: &DiskJobSpec,
    target: &OpenTarget,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<DiskJobResult, DiskError> {
    let mut warnings = Vec::new();
    let depth = effective_depth(spec, &mut warnings);
    // A fallback to buffered I/O is already explained by the target.
    let explained = target
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::BufferedIo);
    if !target.direct && !explained {
        let remedy = if spec.engine.is_mapped() {
            "a file mapping always goes through it; use --engine psync or io_uring to bypass it"
        } else {
            "run without --buffered to bypass it"
        };
        warnings.push(Warning::new(
            WarningKind::BufferedIo,
            format!(
                "buffered I/O: the page cache may be measured instead of the device ({remedy})"
            ),
        ));
    }
    let region = spec.size.get().min(target.info.size.get());
    let blocks = region / spec.bs.get();
    if blocks == 0 {
        return Err(DiskError::Invalid(format!(
            "the job's region ({}) is smaller than one block ({}): raise --size or lower --bs",
            Bytes(region),
            spec.bs
        )));
    }
    let setup = EngineSetup {
        file: Arc::clone(&target.file),
        region,
        depth,
        writable: target.writable,
        random: spec.rw.is_random(),
    };
    let plan = Plan {
        spec: spec.clone(),
        depth,
        submit_batch: spec.iodepth_batch.clamp(1, depth),
        blocks,
        align: target.info.logical_block_size as usize,
        ramp: spec.ramp.as_duration(),
        runtime: spec.runtime.map(Nanos::as_duration),
        bytes_per_thread: spec.runtime.is_none().then_some(region),
    };
    let threads = spec.numjobs.max(1) as usize;
    let counters: Vec<PaddedCounter> = (0..threads).map(|_| PaddedCounter::default()).collect();
    let gate = StartGate::new(threads + 1);
    let thread_stop = AtomicBool::new(false);

    let outcome = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads);
        for (idx, counter) in counters.iter().enumerate() {
            let (plan, setup, gate) = (&plan, &setup, &gate);
            let thread_stop = &thread_stop;
            let spawned = std::thread::Builder::new()
                .name(format!("iomark-job-{idx}"))
                .spawn_scoped(s, move || {
                    worker(idx, plan, setup, gate, counter, stop, thread_stop)
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // The scope joins the threads already started once
                    // they leave the gate.
                    thread_stop.store(true, Ordering::Relaxed);
                    gate.call_off();
                    return Err(DiskError::Io {
                        errno: e.raw_os_error().unwrap_or(0),
                        message: format!(
                            "cannot start thread {} of {threads}: {e}: \
                             lower --numjobs or raise the pids limit",
                            idx + 1
                        ),
                    });
                }
            }
        }
        gate.arrive(stop);
        let start = Instant::now();
        let total = plan.runtime.map(|r| r + plan.ramp);
        let bytes_total = plan.bytes_per_thread.map(|b| b * threads as u64);
        // CPU time counts from the end of the ramp.
        let mut cpu_start = plan.ramp.is_zero().then(CpuClock::now);
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(100));
            let elapsed = start.elapsed();
            let ramping = elapsed < plan.ramp;
            if !ramping && cpu_start.is_none() {
                cpu_start = Some(CpuClock::now());
            }
            let bytes = counters.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
            observer.progress(&Progress {
                elapsed,
                total,
                ramping,
                bytes,
                bytes_total,
            });
        }
        let cpu_end = CpuClock::now();
        let cpu_start = cpu_start.unwrap_or(cpu_end);
        let results: Vec<Result<ThreadStats, DiskError>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(DiskError::WorkerPanicked)))
            .collect();
        Ok((results, cpu_end.since(&cpu_start)))
    });

    let (results, cpu) = outcome?;
    let mut merged = ThreadStats::new(&plan);
    for r in results {
        merged.merge(r?);
    }
    Ok(merged.into_result(spec, &plan, target.direct, cpu, stop, warnings))
}

/// A synchronous engine keeps one I/O in flight whatever was asked; say so.
fn effective_depth(spec: &DiskJobSpec, warnings: &mut Vec<Warning>) -> u32 {
    if spec.engine.is_synchronous() && spec.iodepth > 1 {
        warnings.push(Warning::new(
            WarningKind::SyncEngineDepth,
            format!(
                "{} is synchronous: it runs at queue depth 1 per thread, not {} \
                 (use --engine io_uring for a real queue depth)",
                spec.engine, spec.iodepth
            ),
        ));
        1
    } else {
        spec.iodepth.max(1)
    }
}

/// Everything a worker needs to know, computed once.
#[derive(Debug)]
struct Plan {
    spec: DiskJobSpec,
    depth: u32,
    submit_batch: u32,
    blocks: u64,
    align: usize,
    ramp: Duration,
    runtime: Option<Duration>,
    bytes_per_thread: Option<u64>,
}

/// A progress counter on its own cache line, so threads do not share one.
#[derive(Debug, Default)]
#[repr(align(64))]
struct PaddedCounter(AtomicU64);

/// Picks where and which way each I/O goes.
struct Workload {
    rng: SmallRng,
    random: bool,
    bs: u64,
    blocks: u64,
    next_block: u64,
    read_percent: u8,
}

impl Workload {
    fn new(plan: &Plan, thread: usize) -> Self {
        let spec = &plan.spec;
        let threads = u64::from(spec.numjobs.max(1));
        Workload {
            rng: SmallRng::seed_from_u64(
                spec.seed ^ (thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            random: spec.rw.is_random(),
            bs: spec.bs.get(),
            blocks: plan.blocks,
            // Sequential threads start evenly spread over the region.
            next_block: plan.blocks * thread as u64 / threads,
            read_percent: spec.rw.read_percent(spec.rwmix_read),
        }
    }

    #[inline]
    fn next(&mut self) -> (u64, Dir) {
        let block = if self.random {
            self.rng.random_range(0..self.blocks)
        } else {
            let b = self.next_block;
            self.next_block = if b + 1 >= self.blocks { 0 } else { b + 1 };
            b
        };
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
        (block * self.bs, dir)
    }
}

/// Counts for one direction of one thread.
#[derive(Debug, Clone)]
struct DirStats {
    bytes: u64,
    ios: u64,
    clat: LatencyHistogram,
}

impl DirStats {
    fn new() -> Self {
        DirStats {
            bytes: 0,
            ios: 0,
            clat: LatencyHistogram::new(),
        }
    }

    fn merge(&mut self, o: &DirStats) {
        self.bytes += o.bytes;
        self.ios += o.ios;
        self.clat.merge(&o.clat);
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct IntervalStats {
    read_bytes: u64,
    read_ios: u64,
    write_bytes: u64,
    write_ios: u64,
    lat_sum_ns: u64,
}

/// What one thread measured.
#[derive(Debug)]
struct ThreadStats {
    read: DirStats,
    write: DirStats,
    intervals: Vec<IntervalStats>,
    depth_levels: [u64; 7],
    depth_sum: u64,
    issued_measured: u64,
    measured: Duration,
}

impl ThreadStats {
    fn new(plan: &Plan) -> Self {
        let expected = plan.runtime.map_or(16, |r| {
            (r.as_secs_f64() / SAMPLE_INTERVAL.as_secs_f64()).ceil() as usize
        });
        ThreadStats {
            read: DirStats::new(),
            write: DirStats::new(),
            intervals: Vec::with_capacity(expected + 1),
            depth_levels: [0; 7],
            depth_sum: 0,
            issued_measured: 0,
            measured: Duration::ZERO,
        }
    }

    /// Count `n` I/Os issued while `depth` were in flight. Like fio, the
    /// depth of a batch is taken after the whole batch is queued.
    #[inline]
    fn record_depth(&mut self, depth: u32, n: u64) {
        let bucket = match depth {
            0 | 1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        self.depth_levels[bucket] += n;
        self.depth_sum += u64::from(depth) * n;
        self.issued_measured += n;
    }

    #[inline]
    fn record(&mut self, dir: Dir, bytes: u64, lat_ns: u64, since_start: Duration) {
        let d = match dir {
            Dir::Read => &mut self.read,
            Dir::Write => &mut self.write,
        };
        d.bytes += bytes;
        d.ios += 1;
        d.clat.record(lat_ns);
        let idx = (since_start.as_nanos() / SAMPLE_INTERVAL.as_nanos()) as usize;
        if idx >= self.intervals.len() {
            self.intervals.resize(idx + 1, IntervalStats::default());
        }
        let iv = &mut self.intervals[idx];
        match dir {
            Dir::Read => {
                iv.read_bytes += bytes;
                iv.read_ios += 1;
            }
            Dir::Write => {
                iv.write_bytes += bytes;
                iv.write_ios += 1;
            }
        }
        iv.lat_sum_ns += lat_ns;
    }

    fn merge(&mut self, o: ThreadStats) {
        self.read.merge(&o.read);
        self.write.merge(&o.write);
        if o.intervals.len() > self.intervals.len() {
            self.intervals
                .resize(o.intervals.len(), IntervalStats::default());
        }
        for (a, b) in self.intervals.iter_mut().zip(&o.intervals) {
            a.read_bytes += b.read_bytes;
            a.read_ios += b.read_ios;
            a.write_bytes += b.write_bytes;
            a.write_ios += b.write_ios;
            a.lat_sum_ns += b.lat_sum_ns;
        }
        for (a, b) in self.depth_levels.iter_mut().zip(o.depth_levels) {
            *a += b;
        }
        self.depth_sum += o.depth_sum;
        self.issued_measured += o.issued_measured;
        self.measured = self.measured.max(o.measured);
    }

    fn into_result(
        self,
        spec: &DiskJobSpec,
        plan: &Plan,
        direct: bool,
        cpu: CpuClock,
        stop: &AtomicBool,
        mut warnings: Vec<Warning>,
    ) -> DiskJobResult {
        let runtime = Nanos::from_duration(self.measured);
        let direction = |d: &DirStats| DirectionResult {
            io_bytes: Bytes(d.bytes),
            ios: d.ios,
            runtime,
            bw: BytesPerSec::over(Bytes(d.bytes), runtime),
            iops: Iops::over(d.ios, runtime),
            clat: d.clat.summary(),
        };
        let read = spec.rw.reads().then(|| direction(&self.read));
        let write = spec.rw.writes().then(|| direction(&self.write));
        let samples = self
            .intervals
            .iter()
            .enumerate()
            .map(|(i, iv)| {
                let start = SAMPLE_INTERVAL * i as u32;
                let length = self.measured.saturating_sub(start).min(SAMPLE_INTERVAL);
                let ios = iv.read_ios + iv.write_ios;
                IntervalSample {
                    start: Nanos::from_duration(start),
                    length: Nanos::from_duration(length),
                    read_bytes: iv.read_bytes,
                    read_ios: iv.read_ios,
                    write_bytes: iv.write_bytes,
                    write_ios: iv.write_ios,
                    mean_lat_ns: if ios == 0 {
                        0.0
                    } else {
                        iv.lat_sum_ns as f64 / ios as f64
                    },
                }
            })
            .filter(|s| s.length > Nanos(0))
            .collect();
        let issued = self.issued_measured.max(1) as f64;
        let iodepth_level = DEPTH_LABELS
            .iter()
            .zip(self.depth_levels)
            .map(|(label, n)| (label.to_string(), 100.0 * n as f64 / issued))
            .collect();
        let mean_depth = self.depth_sum as f64 / issued;
        if !spec.engine.is_synchronous()
            && plan.depth > 1
            && self.issued_measured > 0
            && mean_depth < 0.9 * f64::from(plan.depth)
        {
            warnings.push(Warning::new(
                WarningKind::DepthNotReached,
                format!(
                    "asked for queue depth {} but reached {:.1} on average: \
                     the engine or the device could not keep that many I/Os in flight",
                    plan.depth, mean_depth
                ),
            ));
        }
        let measured_s = self.measured.as_secs_f64();
        let cpu = if measured_s > 0.0 {
            CpuUsage {
                user_pct: 100.0 * cpu.user.as_secs_f64() / measured_s,
                system_pct: 100.0 * cpu.system.as_secs_f64() / measured_s,
            }
        } else {
            CpuUsage::default()
        };
        DiskJobResult {
            spec: spec.clone(),
            read,
            write,
            samples,
            cpu,
            iodepth_level,
            mean_depth,
            page_cache_bypassed: direct,
            interrupted: stop.load(Ordering::Relaxed),
            warnings,
        }
    }
}

/// Where a job's threads wait for each other, so all start together. Unlike
/// `std::sync::Barrier` it can be called off, for a party that will never
/// come (a thread the kernel refused), and it opens when `stop` is raised.
#[derive(Debug)]
struct StartGate {
    parties: usize,
    state: Mutex<GateState>,
    opened: Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    arrived: usize,
    open: bool,
    called_off: bool,
}

/// How often a waiting thread looks at `stop`: the signal handler only
/// raises a flag, it cannot wake a condition variable.
const STOP_POLL: Duration = Duration::from_millis(50);

impl StartGate {
    fn new(parties: usize) -> Self {
        StartGate {
            parties,
            state: Mutex::new(GateState::default()),
            opened: Condvar::new(),
        }
    }

    /// Wait until every party arrived (true), or until the gate was called
    /// off or `stop` raised (false).
    fn arrive(&self, stop: &AtomicBool) -> bool {
        // A poisoned lock only means a thread panicked while holding it; the
        // counts stay meaningful.
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.arrived += 1;
        if st.arrived >= self.parties {
            st.open = true;
            self.opened.notify_all();
        }
        loop {
            if st.called_off {
                return false;
            }
            if st.open {
                return true;
            }
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            st = self
                .opened
                .wait_timeout(st, STOP_POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Release every waiting party without starting.
    fn call_off(&self) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.called_off = true;
        self.opened.notify_all();
    }
}

/// One thread of a job.
fn worker(
    thread: usize,
    plan: &Plan,
    setup: &EngineSetup,
    gate: &StartGate,
    counter: &PaddedCounter,
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
    // overwrite whatever is there.
    engine.register_buffers(&mut units)?;
    if plan.spec.rw.writes() {
        for unit in &mut units {
            pattern::fill(unit.buf.as_mut_slice(), plan.spec.data, &mut rng);
        }
    }
    Ok((engine, units))
}

fn drive(
    thread: usize,
    plan: &Plan,
    engine: &mut dyn Engine,
    mut free: Vec<IoUnit>,
    counter: &PaddedCounter,
    stop: &AtomicBool,
    thread_stop: &AtomicBool,
) -> Result<ThreadStats, DiskError> {
    let mut stats = ThreadStats::new(plan);
    let mut work = Workload::new(plan, thread);
    let start = Instant::now();
    let measure_start = start + plan.ramp;
    let deadline = plan.runtime.map(|r| measure_start + r);
    let mut budget = plan.bytes_per_thread;
    let mut done: Vec<Done> = Vec::with_capacity(free.len());
    let mut in_flight: u32 = 0;
    let mut issuing = true;
    let mut last_counted = measure_start;
    let mut first_error: Option<DiskError> = None;

    // Account one completion observed at `at`; false on an I/O error.
    let mut complete = |d: &Done, at: Instant, stats: &mut ThreadStats| -> Result<(), DiskError> {
        let bytes = match d.result {
            Ok(n) if n > 0 => u64::from(n),
            Ok(_) => return Err(DiskError::short_io(d.unit.dir, d.unit.offset, &plan.spec)),
            Err(errno) => return Err(DiskError::io(errno, d.unit.dir, d.unit.offset, &plan.spec)),
        };
        if at < measure_start || deadline.is_some_and(|dl| at > dl) {
            return Ok(());
        }
        let lat = at.saturating_duration_since(d.unit.issued).as_nanos() as u64;
        stats.record(d.unit.dir, bytes, lat, at - measure_start);
        counter.0.fetch_add(bytes, Ordering::Relaxed);
        last_counted = at;
        Ok(())
    };

    loop {
        let mut now = Instant::now();
        if issuing
            && (stop.load(Ordering::Relaxed)
                || thread_stop.load(Ordering::Relaxed)
                || deadline.is_some_and(|dl| now >= dl)
                || budget == Some(0))
        {
            issuing = false;
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
                let (offset, dir) = work.next();
                unit.offset = offset;
                unit.dir = dir;
                unit.issued = now;
                in_flight += 1;
                match engine.queue(unit)? {
                    Queued::InFlight => {
                        batch += 1;
                        uncommitted += 1;
                        // The refill's last unit goes down with the wait
                        // for completions: one system call, not two.
                        if uncommitted >= plan.submit_batch && !free.is_empty() {
                            engine.commit()?;
                            uncommitted = 0;
                        }
                    }
                    Queued::Completed(d) => {
                        if now >= measure_start {
                            stats.record_depth(in_flight, 1);
                        }
                        in_flight -= 1;
                        now = Instant::now();
                        if let Err(e) = complete(&d, now, &mut stats) {
                            first_error.get_or_insert(e);
                            issuing = false;
                        }
                        free.push(d.unit);
                    }
                }
            }
            if batch > 0 && now >= measure_start {
                stats.record_depth(in_flight, batch);
            }
        }
        if in_flight == 0 {
            if issuing {
                continue;
            }
            break;
        }
        engine.reap(1, &mut done)?;
        let at = Instant::now();
        for d in done.drain(..) {
            in_flight -= 1;
            if let Err(e) = complete(&d, at, &mut stats) {
                first_error.get_or_insert(e);
                issuing = false;
            }
            free.push(d.unit);
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    stats.measured = match deadline {
        Some(dl) if !stop.load(Ordering::Relaxed) => dl - measure_start,
        _ => last_counted.saturating_duration_since(measure_start),
    };
    Ok(stats)
}

/// User and system CPU time of the whole process.
#[derive(Debug, Clone, Copy)]
struct CpuClock {
    user: Duration,
    system: Duration,
}

impl CpuClock {
    fn now() -> Self {
        // SAFETY: getrusage only writes the struct we hand it.
        let usage = unsafe {
            let mut u: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut u);
            u
        };
        let d = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
        CpuClock {
            user: d(usage.ru_utime),
            system: d(usage.ru_stime),
        }
    }

    /// The CPU time spent between `earlier` and this reading.
    fn since(&self, earlier: &CpuClock) -> CpuClock {
        CpuClock {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::disk::{DataPattern, EngineKind, RwMode};

    fn plan(rw: RwMode, bs: u64, blocks: u64, numjobs: u32) -> Plan {
        Plan {
            spec: DiskJobSpec {
                name: "t".into(),
                rw,
                bs: Bytes(bs),
                iodepth: 1,
                iodepth_batch: 1,
                numjobs,
                size: Bytes(bs * blocks),
                runtime: None,
                ramp: Nanos(0),
                engine: EngineKind::Null,
                direct: false,
                data: DataPattern::Random,
                rwmix_read: 70,
                seed: 42,
            },
            depth: 1,
            submit_batch: 1,
            blocks,
            align: 4096,
            ramp: Duration::ZERO,
            runtime: None,
            bytes_per_thread: None,
        }
    }

    #[test]
    fn the_start_gate_waits_for_all_and_never_for_one_that_is_not_coming() {
        let stop = AtomicBool::new(false);
        let gate = StartGate::new(2);
        std::thread::scope(|s| {
            let h = s.spawn(|| gate.arrive(&stop));
            assert!(gate.arrive(&stop));
            assert!(h.join().unwrap());
        });
        // A party the kernel refused: the others are released.
        let gate = StartGate::new(3);
        std::thread::scope(|s| {
            let h = s.spawn(|| gate.arrive(&stop));
            std::thread::sleep(Duration::from_millis(20));
            gate.call_off();
            assert!(!h.join().unwrap());
        });
        // A stop signal releases a wait without starting.
        let t = Instant::now();
        assert!(!StartGate::new(2).arrive(&AtomicBool::new(true)));
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn random_offsets_are_aligned_in_range_and_uniform() {
        let blocks = 64;
        let p = plan(RwMode::RandRead, 4096, blocks, 1);
        let mut w = Workload::new(&p, 0);
        let mut hits = vec![0u32; blocks as usize];
        let n = 64_000;
        for _ in 0..n {
            let (off, dir) = w.next();
            assert_eq!(off % 4096, 0, "aligned to the block size");
            assert!(off + 4096 <= blocks * 4096, "inside the region");
            assert_eq!(dir, Dir::Read);
            hits[(off / 4096) as usize] += 1;
        }
        // Chi-square against uniform, 63 degrees of freedom: the 99.9%
        // quantile is about 103.4.
        let expected = f64::from(n) / blocks as f64;
        let chi2: f64 = hits
            .iter()
            .map(|&h| (f64::from(h) - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 103.4, "chi-square {chi2}");
    }

    #[test]
    fn sequential_threads_start_spread_and_wrap() {
        let p = plan(RwMode::Read, 1 << 20, 8, 2);
        let mut first = Workload::new(&p, 0);
        let mut second = Workload::new(&p, 1);
        let offs: Vec<u64> = (0..9).map(|_| first.next().0 >> 20).collect();
        assert_eq!(offs, vec![0, 1, 2, 3, 4, 5, 6, 7, 0]);
        assert_eq!(second.next().0 >> 20, 4);
    }

    #[test]
    fn mixes_follow_rwmix_read() {
        let p = plan(RwMode::RandRw, 4096, 1024, 1);
        let mut w = Workload::new(&p, 0);
        let reads = (0..100_000).filter(|_| w.next().1 == Dir::Read).count();
        assert!((reads as f64 / 1000.0 - 70.0).abs() < 1.0, "{reads}");
    }

    #[test]
    fn the_same_seed_repeats_the_same_offsets() {
        let p = plan(RwMode::RandRead, 4096, 1 << 20, 1);
        let a: Vec<u64> = {
            let mut w = Workload::new(&p, 0);
            (0..100).map(|_| w.next().0).collect()
        };
        let mut w = Workload::new(&p, 0);
        assert!(a.iter().all(|&o| o == w.next().0));
    }
}
