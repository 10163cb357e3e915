//! Storage job specs and results, with fio's vocabulary and meaning.
//!
//! A [`DiskJobSpec`] is what one job does (fio's job section); a
//! [`DiskJobResult`] is what it measured, with every thread of the job merged
//! (fio's `group_reporting`). Every figure is kept in base units: bytes,
//! nanoseconds and operation counts; rates are derived from them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::cgroup::CgroupUsage;
use crate::knee::QueueFigures;
use crate::profile::ProfileResult;
use crate::units::{Bytes, BytesPerSec, Iops, Nanos};
use crate::warning::Warning;
pub use crate::workload::{DataPattern, EngineKind, RwMode};

/// One storage job: what to do, on what region, for how long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskJobSpec {
    /// A name for the job, such as `SEQ1M Q8T1 read` or `custom`.
    pub name: String,
    /// Access pattern.
    pub rw: RwMode,
    /// Bytes per I/O.
    pub bs: Bytes,
    /// I/Os each thread keeps in flight.
    pub iodepth: u32,
    /// I/Os queued before they are submitted to the kernel together (fio's
    /// `iodepth_batch_submit`). 1 submits each I/O as soon as it is ready,
    /// which keeps a device's queue evenly fed; a larger batch saves system
    /// calls but can make I/Os start and finish in lockstep.
    /// [`DiskJobSpec::ADAPTIVE_BATCH`] (0), the default, lets the runner
    /// choose from how completions arrive (see [`Submission`]). Runs stored
    /// before the choice existed read as 1, which is what they ran.
    #[serde(default = "one")]
    pub iodepth_batch: u32,
    /// Threads, each with its own queue (fio's `numjobs`, reported merged).
    pub numjobs: u32,
    /// The region of the target the job works on, from offset 0.
    pub size: Bytes,
    /// Measured time; the job loops over the region until it ends. `None`
    /// means one pass of `size` bytes per thread, as fio without `runtime`.
    pub runtime: Option<Nanos>,
    /// Time run before measuring starts; not counted.
    pub ramp: Nanos,
    /// The engine.
    pub engine: EngineKind,
    /// O_DIRECT: bypass the page cache.
    pub direct: bool,
    /// Content of written blocks.
    pub data: DataPattern,
    /// Percentage of reads in mixed modes.
    pub rwmix_read: u8,
    /// Seed for offsets and data, so runs repeat.
    pub seed: u64,
    /// End the job once steady (fio's `ss`, `ss_dur`, `ss_ramp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<crate::steady::SteadyStateSpec>,
}

impl DiskJobSpec {
    /// `iodepth_batch` when no batch was forced: the runner submits each
    /// I/O at once while the target completes I/Os asynchronously (a
    /// device), and the whole refill at once while I/Os complete within
    /// their submission (page-cache hits, zram).
    pub const ADAPTIVE_BATCH: u32 = 0;

    /// The queue depth per thread the job actually runs at: a synchronous
    /// engine (psync, mmap) keeps one I/O in flight whatever `iodepth`
    /// asks for (the job then carries a `sync_engine_depth` warning).
    pub fn depth_run(&self) -> u32 {
        if self.engine.is_synchronous() {
            1
        } else {
            self.iodepth.max(1)
        }
    }
}

fn one() -> u32 {
    1
}

/// Latency statistics of completed I/Os, in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of I/Os measured.
    pub count: u64,
    /// Fastest.
    pub min_ns: u64,
    /// Slowest.
    pub max_ns: u64,
    /// Arithmetic mean.
    pub mean_ns: f64,
    /// Standard deviation.
    pub stddev_ns: f64,
    /// Percentiles (fio's default list), each `(percent, ns)`.
    pub percentiles: Vec<Percentile>,
    /// The histogram behind the percentiles, `[ns, count]` per non-empty
    /// bucket (the bucket's midpoint, under 0.5% from any value in it), in
    /// order: what fio's `json+` prints as `bins`. Kept for a custom job or
    /// a job file's jobs only; a profile's many jobs drop them, which
    /// would make their documents ten times the size for no figure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bins: Vec<[u64; 2]>,
}

impl LatencySummary {
    /// The value at percentile `p` when it was computed.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|q| (q.percent - p).abs() < 1e-9)
            .map(|q| q.ns)
    }
}

/// One percentile of a latency distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    /// The percentile, 0 to 100.
    pub percent: f64,
    /// The latency at it, in nanoseconds.
    pub ns: u64,
}

/// What one direction (reads or writes) of a job measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionResult {
    /// Bytes moved during the measured time.
    pub io_bytes: Bytes,
    /// I/Os completed during the measured time.
    pub ios: u64,
    /// The measured time.
    pub runtime: Nanos,
    /// `io_bytes / runtime`.
    pub bw: BytesPerSec,
    /// `ios / runtime`.
    pub iops: Iops,
    /// Completion latency: from handing the I/O to the kernel to its end.
    pub clat: LatencySummary,
}

/// One interval of a job (normally one second), not cumulative.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalSample {
    /// Start of the interval, from the start of measurement.
    pub start: Nanos,
    /// Length of the interval.
    pub length: Nanos,
    /// Bytes read in the interval.
    pub read_bytes: u64,
    /// Reads completed in the interval.
    pub read_ios: u64,
    /// Bytes written in the interval.
    pub write_bytes: u64,
    /// Writes completed in the interval.
    pub write_ios: u64,
    /// Mean completion latency of the interval's I/Os, in nanoseconds.
    pub mean_lat_ns: f64,
    /// The 99th percentile of the interval's completion latencies (within
    /// 3%: a coarse histogram); absent in runs stored before it was kept
    /// and in imported ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p99: Option<Nanos>,
}

impl IntervalSample {
    /// Bytes per second over the interval, both directions.
    pub fn bw(&self) -> BytesPerSec {
        BytesPerSec::over(Bytes(self.read_bytes + self.write_bytes), self.length)
    }

    /// I/Os per second over the interval, both directions.
    pub fn iops(&self) -> Iops {
        Iops::over(self.read_ios + self.write_ios, self.length)
    }
}

pub use crate::cpu::CpuUsage;

/// Everything one job measured, every thread merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskJobResult {
    /// What was asked for.
    pub spec: DiskJobSpec,
    /// Reads, when the job read.
    pub read: Option<DirectionResult>,
    /// Writes, when the job wrote.
    pub write: Option<DirectionResult>,
    /// Per-interval figures, in order.
    pub samples: Vec<IntervalSample>,
    /// CPU use of the whole process over the measured time.
    pub cpu: CpuUsage,
    /// The whole machine's CPU over the measured time (none in runs stored
    /// before it was measured, and in imported ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu: Option<crate::cpu::HostCpu>,
    /// fio's `iodepth_level`: percent of I/Os issued while this many were
    /// in flight (keys `1`, `2`, `4`, `8`, `16`, `32`, `>=64`).
    pub iodepth_level: BTreeMap<String, f64>,
    /// Mean number of I/Os in flight per thread when one was issued.
    pub mean_depth: f64,
    /// The queue over time and the submitting threads' CPU (none in runs
    /// stored before these were measured, and in imported ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueFigures>,
    /// How I/Os were handed to the kernel (asynchronous engines only; none
    /// in runs stored before this was recorded, and in imported ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission: Option<Submission>,
    /// What the target's block device counted over the measured time
    /// (none off a block device, in runs stored before it was recorded,
    /// and in imported ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_io: Option<crate::blockio::DeviceIo>,
    /// Whether the page cache was bypassed (O_DIRECT took effect).
    pub page_cache_bypassed: bool,
    /// Whether the job ended early (Ctrl-C) and figures cover only part of it.
    pub interrupted: bool,
    /// Doubts about these figures.
    pub warnings: Vec<Warning>,
    /// With `--repeat N`: the figures of each of the N runs of this job, in
    /// order. The job's own figures are those of the median run (by
    /// throughput), the spread of the N gives its noise band.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatFigures>,
    /// How the job's steady-state criterion came out, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<crate::steady::SteadyStateOutcome>,
}

/// One run's figures of a job run several times (`--repeat`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatFigures {
    /// Reads, when the job read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<DirectionFigures>,
    /// Writes, when the job wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<DirectionFigures>,
}

/// The figures of one direction of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DirectionFigures {
    /// Throughput.
    pub bw: BytesPerSec,
    /// I/Os per second.
    pub iops: Iops,
    /// Mean completion latency, nanoseconds.
    pub lat_mean_ns: f64,
    /// 99th percentile of the completion latency, when any I/O completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p99: Option<Nanos>,
}

impl DirectionFigures {
    /// The figures `d` summarises.
    pub fn of(d: &DirectionResult) -> Self {
        DirectionFigures {
            bw: d.bw,
            iops: d.iops,
            lat_mean_ns: d.clat.mean_ns,
            lat_p99: d.clat.percentile(99.0).map(Nanos),
        }
    }
}

impl DiskJobSpec {
    /// An example job, for tests: `4k` random reads at
    /// depth 1, one thread, io_uring, direct, 1 GiB, 5 s.
    #[doc(hidden)]
    pub fn example() -> Self {
        DiskJobSpec {
            name: "example".into(),
            rw: RwMode::RandRead,
            bs: Bytes(4096),
            iodepth: 1,
            iodepth_batch: 1,
            numjobs: 1,
            size: Bytes(Bytes::GIB),
            runtime: Some(Nanos::from_secs(5)),
            ramp: Nanos(0),
            engine: EngineKind::IoUring,
            direct: true,
            data: DataPattern::Random,
            rwmix_read: 50,
            seed: 1,
            steady_state: None,
        }
    }
}

impl DiskJobResult {
    /// An example result of `spec` that measured nothing (no direction, no
    /// samples), for tests to fill in what they look at.
    #[doc(hidden)]
    pub fn example(spec: DiskJobSpec) -> Self {
        DiskJobResult {
            spec,
            read: None,
            write: None,
            samples: Vec::new(),
            cpu: CpuUsage::default(),
            host_cpu: None,
            iodepth_level: BTreeMap::new(),
            mean_depth: 1.0,
            queue: None,
            submission: None,
            page_cache_bypassed: true,
            interrupted: false,
            warnings: Vec::new(),
            repeats: Vec::new(),
            device_io: None,
            steady_state: None,
        }
    }

    /// Total bandwidth over both directions.
    pub fn total_bw(&self) -> BytesPerSec {
        let r = self.read.as_ref().map_or(0.0, |d| d.bw.0);
        let w = self.write.as_ref().map_or(0.0, |d| d.bw.0);
        BytesPerSec(r + w)
    }
}

/// How an asynchronous engine's I/Os were submitted over a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    /// Whether the runner chose the batch (`iodepth_batch` 0, the default)
    /// rather than `--iodepth-batch` forcing it.
    pub adaptive: bool,
    /// What was used over the measured time.
    pub mode: SubmitMode,
    /// Percent of the I/Os issued while submitting a whole refill at once.
    pub batched_pct: f64,
    /// Percent of the I/Os looked at (those submitted by a call that did not
    /// also wait) whose completion was ready when the submission returned:
    /// what the adaptive choice goes by. `None` when none were looked at.
    pub inline_pct: Option<f64>,
}

/// The submission a job used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubmitMode {
    /// Each I/O went to the kernel as soon as it was ready.
    PerIo,
    /// Queued I/Os went to the kernel together, in batches.
    Batched,
    /// Some of each: the adaptive choice changed during the job.
    Mixed,
}

impl SubmitMode {
    /// The mode of a job that issued `batched_pct` percent of its I/Os
    /// in batches: a few per cent either way is the probe, not a choice.
    pub fn from_batched_pct(batched_pct: f64) -> Self {
        if batched_pct >= 95.0 {
            SubmitMode::Batched
        } else if batched_pct <= 5.0 {
            SubmitMode::PerIo
        } else {
            SubmitMode::Mixed
        }
    }
}

impl std::fmt::Display for SubmitMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SubmitMode::PerIo => "per-I/O",
            SubmitMode::Batched => "batched",
            SubmitMode::Mixed => "mixed",
        })
    }
}

/// What kind of thing the benchmark ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A test file iomark created in a directory and removed afterwards.
    TestFile,
    /// An existing regular file.
    File,
    /// A block device.
    BlockDevice,
}

/// The target of a disk run, as resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskTarget {
    /// What the user named.
    pub given: String,
    /// The file actually opened (symlinks resolved; the test file's path).
    pub path: String,
    /// What kind of target it is.
    pub kind: TargetKind,
    /// Its size in bytes: the region the jobs ran over.
    pub size: Bytes,
    /// The logical block size of the device underneath: the O_DIRECT alignment.
    pub logical_block_size: u32,
    /// The region is the whole existing file or device as found, not a
    /// size the user gave (`--size`) or a test file's size. Such a size is
    /// a fact of the device, so it is left out of test names
    /// ([`crate::figure::disk_job_test_name_on`]): the same test on a
    /// 64 MiB and a 96 MiB device compares. False in runs stored before
    /// it was kept, whose names keep their size.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub size_from_device: bool,
}

impl DiskTarget {
    /// The region's size when it belongs in a test's name: the user chose
    /// it (or a test file's default); `None` when it is the device's own.
    pub fn chosen_size(&self) -> Option<Bytes> {
        (!self.size_from_device && self.size.get() > 0).then_some(self.size)
    }
}

/// A whole disk run: the target and each job's result, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskRun {
    /// `custom` for a hand-made workload, or the profile's name.
    pub profile: String,
    /// Where it ran.
    pub target: DiskTarget,
    /// Each job, in the order run.
    pub jobs: Vec<DiskJobResult>,
    /// What a classic profile reports (its statistic, series), when one ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile_result: Option<ProfileResult>,
    /// The memory cgroup the run was held in (`--mem-limit`), and what it
    /// recorded; boxed to keep `RunBody` variants of similar size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<Box<CgroupUsage>>,
    /// The short artefacts probe run before the default profile, when it
    /// ran (or what the store remembered of an earlier one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<crate::artefact::ProbeVerdict>,
    /// Where each queue-depth sweep of the run (IOmeter's patterns, a
    /// custom job given several depths) stops rising, and why; empty for
    /// runs without one and runs stored before it was worked out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub knees: Vec<crate::knee::Knee>,
    /// The ranks of a run under MPI (`mpirun -np N iomark disk`), whose
    /// merged figures the jobs hold; boxed to keep `RunBody` variants of
    /// similar size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Box<crate::cluster::ClusterRun>>,
    /// While a PTS test runs: where its steady state stood after each
    /// round so far, as each checkpoint stores it, for a view of the run as
    /// it goes (`iomark serve`'s live page). Absent from a run that
    /// finished or was stopped, whose rounds are in its result; a run that
    /// failed keeps its last checkpoint, these included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds_so_far: Vec<crate::pts::PtsRoundStatus>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rw_modes_parse_fio_names() {
        for m in RwMode::ALL {
            assert_eq!(m.as_str().parse::<RwMode>().unwrap(), m);
        }
        assert_eq!("rw".parse::<RwMode>().unwrap(), RwMode::ReadWrite);
        assert!("sideways".parse::<RwMode>().is_err());
    }

    #[test]
    fn read_share_follows_the_mode() {
        assert_eq!(RwMode::Read.read_percent(70), 100);
        assert_eq!(RwMode::RandWrite.read_percent(70), 0);
        assert_eq!(RwMode::RandRw.read_percent(70), 70);
    }

    #[test]
    fn data_patterns_round_trip_as_strings() {
        for s in ["random", "zeros", "compressible:50"] {
            let p: DataPattern = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<DataPattern>(&json).unwrap(), p);
        }
        assert!("compressible:101".parse::<DataPattern>().is_err());
        assert!("ones".parse::<DataPattern>().is_err());
    }

    #[test]
    fn engines_parse_and_say_if_synchronous() {
        assert_eq!(
            "io_uring".parse::<EngineKind>().unwrap(),
            EngineKind::IoUring
        );
        assert!(EngineKind::Psync.is_synchronous());
        assert!(!EngineKind::IoUring.is_synchronous());
        assert!("libaio".parse::<EngineKind>().is_err());
    }
}
