//! What a job measured: per-thread counts of bytes, I/Os, latencies,
//! queue depths and per-interval samples; their merge over threads; and
//! the job's result built from them, with the process's CPU time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use iomark_host::machine::{machine_warnings, CpuQuotaWatch};
use iomark_host::StatTicks;
use iomark_model::cpu::CpuThrottle;
use iomark_model::cpu::HostCpu;
use iomark_model::disk::{CpuUsage, DirectionResult, DiskJobResult, DiskJobSpec, IntervalSample};
use iomark_model::knee::QueueFigures;
use iomark_model::units::{Bytes, BytesPerSec, Iops, Nanos};
use iomark_model::{Warning, WarningKind};
use iomark_stats::histogram::LatencyHistogram;
use iomark_stats::interval_latency::{IntervalLatencies, SparseLatencies};

use super::submit::SubmitCounts;
use super::{Plan, SAMPLE_INTERVAL};
use crate::engine::Dir;

/// fio's `iodepth_level` buckets: depth 1, 2-3, 4-7, ..., 32-63, 64 and up.
const DEPTH_LABELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];

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
pub(super) struct ThreadStats {
    read: DirStats,
    write: DirStats,
    intervals: Vec<IntervalStats>,
    /// Latencies of the interval in progress (`lat_now_idx`), for the
    /// per-interval p99 that gives a run's p99 its spread.
    lat_now: IntervalLatencies,
    lat_now_idx: usize,
    /// Latencies of each finished interval.
    interval_lat: Vec<SparseLatencies>,
    depth_levels: [u64; 7],
    depth_sum: u64,
    issued_measured: u64,
    pub(super) measured: Duration,
    /// I/Os in flight times seconds over the measured time, summed over
    /// threads.
    pub(super) depth_area: f64,
    /// CPU time of the busiest thread over its measured time.
    pub(super) cpu_share: f64,
    /// Time on or waiting for a CPU of the busiest thread over its measured
    /// time.
    pub(super) busy_share: f64,
    /// How this thread's I/Os were submitted.
    pub(super) submit: SubmitCounts,
}

impl ThreadStats {
    pub(super) fn new(plan: &Plan) -> Self {
        let expected = plan.runtime.map_or(16, |r| {
            (r.as_secs_f64() / SAMPLE_INTERVAL.as_secs_f64()).ceil() as usize
        });
        ThreadStats {
            read: DirStats::new(),
            write: DirStats::new(),
            intervals: Vec::with_capacity(expected + 1),
            lat_now: IntervalLatencies::default(),
            lat_now_idx: 0,
            interval_lat: Vec::with_capacity(expected + 1),
            depth_levels: [0; 7],
            depth_sum: 0,
            issued_measured: 0,
            measured: Duration::ZERO,
            depth_area: 0.0,
            cpu_share: 0.0,
            busy_share: 0.0,
            submit: SubmitCounts::default(),
        }
    }

    /// Reads counted, and the longest read latency counted.
    #[cfg(test)]
    pub(super) fn reads(&self) -> (u64, u64) {
        (self.read.ios, self.read.clat.max())
    }

    /// Count `n` I/Os issued while `depth` were in flight. Like fio, the
    /// depth of a batch is taken after the whole batch is queued.
    #[inline]
    pub(super) fn record_depth(&mut self, depth: u32, n: u64) {
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
    pub(super) fn record(&mut self, dir: Dir, bytes: u64, lat_ns: u64, since_start: Duration) {
        let d = match dir {
            Dir::Read => &mut self.read,
            Dir::Write => &mut self.write,
        };
        d.bytes += bytes;
        d.ios += 1;
        d.clat.record(lat_ns);
        // Samples are a second apart, so the index is the whole seconds:
        // as_nanos' 128-bit division per I/O was 0.6% of the null
        // engine's time.
        const _: () = assert!(SAMPLE_INTERVAL.as_nanos() == 1_000_000_000);
        let idx = since_start.as_secs() as usize;
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
        if idx != self.lat_now_idx {
            self.next_interval(idx);
        }
        self.lat_now.record(lat_ns);
    }

    /// Keep the finished interval's latencies and start interval `idx`.
    #[cold]
    #[inline(never)]
    fn next_interval(&mut self, idx: usize) {
        self.keep_interval_latencies();
        self.lat_now_idx = idx;
    }

    fn keep_interval_latencies(&mut self) {
        let done = self.lat_now.take();
        if done.count() == 0 {
            return;
        }
        let at = self.lat_now_idx;
        if at >= self.interval_lat.len() {
            self.interval_lat.resize(at + 1, SparseLatencies::default());
        }
        self.interval_lat[at].merge(&done);
    }

    pub(super) fn merge(&mut self, mut o: ThreadStats) {
        self.keep_interval_latencies();
        o.keep_interval_latencies();
        if o.interval_lat.len() > self.interval_lat.len() {
            self.interval_lat
                .resize(o.interval_lat.len(), SparseLatencies::default());
        }
        for (a, b) in self.interval_lat.iter_mut().zip(&o.interval_lat) {
            a.merge(b);
        }
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
        self.submit.merge(&o.submit);
        self.measured = self.measured.max(o.measured);
        self.depth_area += o.depth_area;
        self.cpu_share = self.cpu_share.max(o.cpu_share);
        self.busy_share = self.busy_share.max(o.busy_share);
    }

    pub(super) fn into_result(
        mut self,
        spec: &DiskJobSpec,
        plan: &Plan,
        bypassed: bool,
        cpu: CpuSpent,
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
        self.keep_interval_latencies();
        let interval_lat = &self.interval_lat;
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
                    lat_p99: interval_lat
                        .get(i)
                        .and_then(|l| l.value_at_percentile(99.0))
                        .map(Nanos),
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
        let measured_s = self.measured.as_secs_f64();
        let threads = f64::from(plan.spec.numjobs.max(1));
        // The time-weighted depth: the I/Os in flight, averaged over the
        // window and the threads.
        let engine_depth = (measured_s > 0.0).then(|| self.depth_area / (threads * measured_s));
        // fio's depth at issue has no sample when no I/O was issued in the
        // window (the device, or the worker, held every I/O across it). The
        // queue was then as full as the time-weighted depth says, not empty:
        // a 0 here was an IOmeter point at QD4 "achieving" 0.0 under load.
        let mean_depth = if self.issued_measured > 0 {
            self.depth_sum as f64 / issued
        } else {
            engine_depth.unwrap_or(0.0)
        };
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
        let cpu_spent = cpu;
        let host_cpu = cpu_spent.host;
        let cpu = if measured_s > 0.0 {
            CpuUsage {
                user_pct: 100.0 * cpu_spent.user.as_secs_f64() / measured_s,
                system_pct: 100.0 * cpu_spent.system.as_secs_f64() / measured_s,
            }
        } else {
            CpuUsage::default()
        };
        warnings.extend(machine_warnings(
            "",
            self.measured,
            cpu,
            host_cpu.as_ref(),
            cpu_spent.throttled.as_ref(),
            cpu_spent.quota_unchecked.as_deref(),
        ));
        let queue = engine_depth.map(|engine_depth| QueueFigures {
            engine_depth,
            busiest_thread_cpu_pct: 100.0 * self.cpu_share,
            busiest_thread_busy_pct: (100.0 * self.busy_share).min(100.0),
            device: None,
        });
        DiskJobResult {
            spec: spec.clone(),
            read,
            write,
            samples,
            cpu,
            host_cpu,
            iodepth_level,
            mean_depth,
            queue,
            submission: self
                .submit
                .submission(plan.spec.iodepth_batch == DiskJobSpec::ADAPTIVE_BATCH),
            device_io: None,
            page_cache_bypassed: bypassed,
            interrupted: stop.load(Ordering::Relaxed),
            warnings,
            repeats: Vec::new(),
            steady_state: None,
        }
    }
}

/// User and system CPU time of the whole process, the machine's
/// `/proc/stat` ticks, and the throttling counters of iomark's cpu cgroup.
#[derive(Debug, Clone)]
pub(super) struct CpuClock {
    user: Duration,
    system: Duration,
    stat: Option<StatTicks>,
    quota: Option<CpuQuotaWatch>,
}

/// The CPU spent between two [`CpuClock`] readings.
#[derive(Debug, Clone)]
pub(super) struct CpuSpent {
    user: Duration,
    system: Duration,
    host: Option<HostCpu>,
    throttled: Option<CpuThrottle>,
    quota_unchecked: Option<String>,
}

impl CpuClock {
    /// A reading that ends a measured time.
    pub(super) fn now() -> Self {
        let (user, system) = iomark_host::process_cpu_time();
        CpuClock {
            user,
            system,
            stat: StatTicks::now(),
            quota: None,
        }
    }

    /// A reading that starts a measured time: the cgroup's throttling
    /// counters too, which [`since`](Self::since) compares with now.
    pub(super) fn starting() -> Self {
        CpuClock {
            quota: CpuQuotaWatch::start(),
            ..CpuClock::now()
        }
    }

    /// The CPU time spent between `earlier` and this reading.
    pub(super) fn since(&self, earlier: &CpuClock) -> CpuSpent {
        CpuSpent {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            host: match (&self.stat, &earlier.stat) {
                (Some(now), Some(then)) => now.since(then),
                _ => None,
            },
            throttled: earlier.quota.as_ref().and_then(CpuQuotaWatch::throttled),
            quota_unchecked: earlier
                .quota
                .as_ref()
                .and_then(|q| q.unchecked().map(str::to_owned)),
        }
    }
}
