//! The runner: fio's `td_io_*` role. It owns time, counts and depth.
//!
//! Each of the job's `numjobs` threads builds its own engine and a pool of
//! `iodepth` units, waits at a start gate so all start together, then keeps the
//! pool busy: issue every free unit, submitting each (or each batch) at
//! once, wait for at least one completion, account each completion, reissue.
//!
//! Submitting each I/O as soon as its unit is free is fio's default and
//! matters on real devices: when a whole batch goes down in one call, the
//! device tends to finish it together and the next batch waits for the
//! slowest, so the queue runs in lockstep. On this project's virtio disk a
//! 4k QD32 random read ran about 20% slower that way (docs/architecture.md).
//! Where I/Os complete within the call that submits them (page cache,
//! zram) there is no queue to keep fed, and one call per refill is what
//! reaches the kernel's limit; `submit` chooses between the two from what
//! the completions do, unless `--iodepth-batch` forces a batch.
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
//!
//! The module is split by concern: this file starts a job's threads,
//! watches them and merges what they measured; `worker` is one thread's
//! loop (engine, units, offsets); `gate` is the start gate; `stats` counts
//! and turns the counts into the job's result.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iomark_model::blockio::DeviceIo;
use iomark_model::disk::{DiskJobResult, DiskJobSpec};
use iomark_model::knee::DeviceQueue;
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{Warning, WarningKind};

use crate::engine::EngineSetup;
use crate::target::OpenTarget;
use crate::verify::writes::WriteLedger;
use crate::DiskError;

mod gate;
mod live;
mod stats;
mod steady;
mod submit;
#[cfg(test)]
mod tests;
mod worker;

use gate::StartGate;
use iomark_pipeline::Progress;
pub use live::{Interval, LatencyCounts};
use live::{LiveCounter, Sampler};
use stats::{CpuClock, ThreadStats};
use worker::worker;

/// Length of one per-interval sample.
const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);

/// Receives progress from a running job, a few times a second.
pub trait Observer {
    /// Called from the thread that started the job.
    fn progress(&mut self, p: &Progress);
    /// Each second of the measured time, as it ends (the last one at the
    /// job's end, shorter), from the same thread.
    fn interval(&mut self, _iv: &Interval) {}
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
    run_job_stamped(spec, target, stop, observer, None)
}

/// Run one job as [`run_job`] does, stamping every write with the verify
/// header and recording it in `ledger` (`--verify`): each thread then
/// writes only its own stretch of the region, never two writes of one
/// block at once (crate::verify::writes).
pub(crate) fn run_job_stamped(
    spec: &DiskJobSpec,
    target: &OpenTarget,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
    ledger: Option<&WriteLedger>,
) -> Result<DiskJobResult, DiskError> {
    let mut warnings = Vec::new();
    let depth = effective_depth(spec, &mut warnings);
    let bypassed = target.bypasses_cache(spec.engine);
    // A fallback to buffered I/O is already explained by the target.
    let explained = target
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::BufferedIo);
    if !bypassed && !explained {
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
    let threads = u64::from(spec.numjobs.max(1));
    if ledger.is_some() && blocks / threads <= u64::from(depth) {
        return Err(DiskError::Invalid(format!(
            "--verify: each thread's share of the region ({} blocks) must exceed --iodepth ({depth}): \
             raise --size or lower --iodepth or --numjobs",
            blocks / threads
        )));
    }
    let setup = EngineSetup {
        file: target.engine_file(),
        region,
        depth,
        writable: target.writable,
        random: spec.rw.is_random(),
    };
    let plan = Plan {
        spec: spec.clone(),
        depth,
        blocks,
        align: target.info.logical_block_size as usize,
        ramp: spec.ramp.as_duration(),
        runtime: spec.runtime.map(Nanos::as_duration),
        bytes_per_thread: spec.runtime.is_none().then_some(region),
        base: target.region_base.get(),
        ledger,
    };
    let threads = spec.numjobs.max(1) as usize;
    let counters: Vec<LiveCounter> = (0..threads).map(|_| LiveCounter::default()).collect();
    let gate = StartGate::new(threads + 1);
    let thread_stop = AtomicBool::new(false);
    let mut device = iomark_host::BlockStat::for_path(&target.info.path).map(DeviceWatch::new);

    // Each worker says when it is done (also by panicking: the sender goes
    // with its thread), so a short job is not held to the next progress
    // tick: a 10 ms job took 100 ms, a file of 5,000 such jobs minutes.
    let (finished_tx, finished) = std::sync::mpsc::channel::<()>();
    let outcome = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads);
        for (idx, counter) in counters.iter().enumerate() {
            let (plan, setup, gate) = (&plan, &setup, &gate);
            let thread_stop = &thread_stop;
            let finished_tx = finished_tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("iomark-job-{idx}"))
                .spawn_scoped(s, move || {
                    let _says_done = finished_tx;
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
        // Without a ramp the device's counters are read while the workers
        // still wait at the gate: read after it, a loaded machine let them
        // complete hundreds of I/Os first, which the device then missed.
        if plan.ramp.is_zero() {
            if let Some(d) = device.as_mut() {
                d.start();
            }
        }
        gate.arrive(stop);
        let start = Instant::now();
        let total = plan.runtime.map(|r| r + plan.ramp);
        let mut sampler =
            Sampler::new(start + plan.ramp, total.map(|t| start + t), SAMPLE_INTERVAL);
        let mut steady = spec.steady_state.map(steady::SteadyWatch::new);
        let bytes_total = plan.bytes_per_thread.map(|b| b * threads as u64);
        // CPU time counts from the end of the ramp.
        let mut cpu_start = plan.ramp.is_zero().then(CpuClock::starting);
        drop(finished_tx);
        while !handles.iter().all(|h| h.is_finished()) {
            // A progress tick, or sooner when a worker ends (its sender is
            // dropped; once all are, the wait returns at once).
            // While ramping, wake at its end too: the device's counters
            // start when iomark's do, not up to a tick later.
            let tick = Duration::from_millis(100);
            let tick = match plan.ramp.checked_sub(start.elapsed()) {
                Some(left) if cpu_start.is_none() => tick.min(left),
                // An interval ends on time, not up to a tick late.
                _ => tick.min(sampler.next_due().saturating_duration_since(Instant::now())),
            };
            let _ = finished.recv_timeout(tick);
            let elapsed = start.elapsed();
            let ramping = elapsed < plan.ramp;
            if !ramping && cpu_start.is_none() {
                cpu_start = Some(CpuClock::starting());
                if let Some(d) = device.as_mut() {
                    d.start();
                }
            }
            if !ramping && total.is_none_or(|t| elapsed < t) {
                if let Some(d) = device.as_mut() {
                    d.sample();
                }
            }
            let bytes = counters.iter().map(LiveCounter::bytes).sum();
            observer.progress(&Progress {
                elapsed,
                total,
                ramping,
                bytes,
                bytes_total,
            });
            // After the progress, so the interval's time left is this tick's.
            if !ramping {
                if let Some(iv) = sampler.due(Instant::now(), &counters) {
                    let whole = steady::is_whole(&iv, SAMPLE_INTERVAL);
                    if let Some(watch) = steady.as_mut().filter(|_| whole) {
                        if watch.observe(&iv) {
                            // Steady: the job ends here, as fio's does.
                            thread_stop.store(true, Ordering::Relaxed);
                        }
                    }
                    observer.interval(&iv);
                }
            }
        }
        let cpu_end = CpuClock::now();
        if let Some(iv) = sampler.last(Instant::now(), &counters) {
            observer.interval(&iv);
        }
        let device = device.and_then(DeviceWatch::finish);
        let cpu_start = cpu_start.unwrap_or_else(|| cpu_end.clone());
        let results: Vec<Result<ThreadStats, DiskError>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(DiskError::WorkerPanicked)))
            .collect();
        let steady = steady.map(steady::SteadyWatch::outcome);
        Ok((results, cpu_end.since(&cpu_start), device, steady))
    });

    let (results, cpu, device, steady) = outcome?;
    let mut merged = ThreadStats::new(&plan);
    for r in results {
        merged.merge(r?);
    }
    let mut result = merged.into_result(spec, &plan, bypassed, cpu, stop, warnings);
    result.steady_state = steady;
    if let Some((queue, seen)) = device {
        if let Some(q) = result.queue.as_mut() {
            q.device = Some(queue);
        }
        let on_file = target.info.kind != iomark_model::disk::TargetKind::BlockDevice;
        let own = crate::device_seen::OwnIo::of(&result, depth, on_file);
        result
            .warnings
            .extend(crate::device_seen::check(&own, &seen));
        result.device_io = Some(seen);
    }
    Ok(result)
}

/// The target's block device watched over the measured time: its counters
/// at the start and end, its requests in flight at each look of the
/// monitoring loop (ten a second), and the stretches in which it held
/// requests and completed none.
struct DeviceWatch {
    stat: iomark_host::BlockStat,
    start: Option<(Instant, iomark_host::BlockCounters)>,
    inflight_sum: u64,
    looks: u64,
    stalls: iomark_host::StallWatch,
}

/// A stretch without a completion is a stall only when it is this many
/// times longer than the device's mean request: a slow device at a low
/// queue depth goes as long between completions every time.
const STALL_OVER_MEAN_REQUEST: u32 = 10;

impl DeviceWatch {
    fn new(stat: iomark_host::BlockStat) -> Self {
        DeviceWatch {
            stat,
            start: None,
            inflight_sum: 0,
            looks: 0,
            stalls: iomark_host::StallWatch::default(),
        }
    }

    fn start(&mut self) {
        self.start = self.stat.counters().map(|c| {
            let at = Instant::now();
            self.stalls.look(at, &c);
            (at, c)
        });
    }

    fn sample(&mut self) {
        if let Some(c) = self.stat.counters() {
            self.stalls.look(Instant::now(), &c);
            self.inflight_sum += c.in_flight;
            self.looks += 1;
        }
    }

    /// The device's queue and what it counted over the watch; none if it
    /// never started (a job shorter than its ramp) or sysfs stopped
    /// answering.
    fn finish(self) -> Option<(DeviceQueue, DeviceIo)> {
        let (at, begin) = self.start?;
        let end = self.stat.counters()?;
        let wall = at.elapsed();
        let (queue_size, utilization_pct) = end.queue_and_utilization(&begin, wall);
        let queue = DeviceQueue {
            name: self.stat.name().to_string(),
            queue_size,
            utilization_pct,
            inflight: if self.looks == 0 {
                0.0
            } else {
                self.inflight_sum as f64 / self.looks as f64
            },
        };
        let mut seen = end.since(&begin, wall, &self.stat);
        let mut stalls = self.stalls;
        stalls.look(Instant::now(), &end);
        let bar = seen.mean_request_time().unwrap_or_default() * STALL_OVER_MEAN_REQUEST;
        seen.stalled = Nanos::from_duration(stalls.stalled(bar));
        Some((queue, seen))
    }
}

/// A synchronous engine keeps one I/O in flight whatever was asked; say so.
fn effective_depth(spec: &DiskJobSpec, warnings: &mut Vec<Warning>) -> u32 {
    let depth = spec.depth_run();
    if depth < spec.iodepth {
        warnings.push(Warning::new(
            WarningKind::SyncEngineDepth,
            format!(
                "{} is synchronous: it runs at queue depth 1 per thread, not {} \
                 (use --engine io_uring for a real queue depth)",
                spec.engine, spec.iodepth
            ),
        ));
    }
    depth
}

/// Everything a worker needs to know, computed once.
#[derive(Debug)]
struct Plan<'l> {
    spec: DiskJobSpec,
    depth: u32,
    blocks: u64,
    align: usize,
    ramp: Duration,
    runtime: Option<Duration>,
    bytes_per_thread: Option<u64>,
    /// Added to every offset: where the target's region starts.
    base: u64,
    /// Where `--verify` stamps and records each write.
    ledger: Option<&'l WriteLedger>,
}
