//! Results of the classic profiles (CrystalDiskMark, IOmeter's depth sweep,
//! GNOME Disks, MacBench, the block-size sweep), in the shape those tools
//! report them.
//!
//! The measured jobs of a profile stay in [`DiskRun::jobs`](crate::disk::DiskRun)
//! so generic views keep working; a profile result adds the statistic the
//! original tool reports (CrystalDiskMark's maximum over passes, MacBench's
//! KB/s, GNOME's means and chart series) and points back into `jobs` by index.

use serde::{Deserialize, Serialize};

use crate::artefact::{PatternRates, ProbeVerdict};
use crate::units::{Bytes, BytesPerSec, Iops, Nanos};
use crate::workload::{DataPattern, EngineKind, RwMode};

/// What a profile measured, by profile family.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum ProfileResult {
    /// CrystalDiskMark 8 (`cdm`, `cdm-nvme`, `cdm-peak`, `cdm-real`) and 3.0 (`cdm3`).
    Cdm(CdmResult),
    /// IOmeter's queue-depth sweep.
    Iometer(IometerResult),
    /// GNOME Disks' benchmark.
    Gnome(GnomeResult),
    /// MacBench 5.0's disk test.
    Macbench(MacbenchResult),
    /// The block-size sweep, per engine.
    Sweep(SweepResult),
    /// The compression and deduplication probe.
    Artefacts(ArtefactsResult),
    /// The sustained-write test: where the write cache runs out.
    Sustained(crate::sustained::SustainedResult),
    /// The data check: corruption and fake capacity (f3, h2testw).
    Verify(crate::verify::VerifyResult),
    /// SNIA PTS's IOPS, throughput and latency tests: rounds until the
    /// steady-state window (`pts_iops` as the IOPS test's first results
    /// were stored).
    #[serde(alias = "pts_iops")]
    Pts(crate::pts::PtsResult),
}

/// Which way a test moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestDir {
    /// Reads only.
    Read,
    /// Writes only.
    Write,
    /// Reads and writes mixed.
    Mix,
}

impl TestDir {
    /// `read`, `write` or `mix`.
    pub fn as_str(self) -> &'static str {
        match self {
            TestDir::Read => "read",
            TestDir::Write => "write",
            TestDir::Mix => "mix",
        }
    }
}

/// The CrystalDiskMark profiles by name, with the title their header shows.
pub const CDM_TITLES: [(&str, &str); 5] = [
    ("cdm", "CrystalDiskMark 8, Default"),
    ("cdm-nvme", "CrystalDiskMark 8, NVMe SSD"),
    ("cdm-peak", "CrystalDiskMark 8, Peak Performance"),
    ("cdm-real", "CrystalDiskMark 8, Real World Performance"),
    ("cdm3", "CrystalDiskMark 3.0"),
];

/// The header title of CrystalDiskMark profile `profile`; `None` for
/// another profile.
pub fn cdm_title(profile: &str) -> Option<&'static str> {
    CDM_TITLES
        .iter()
        .find(|(name, _)| *name == profile)
        .map(|(_, title)| *title)
}

/// Passes over which a CrystalDiskMark test's spread counts as high, as a
/// fraction of the maximum (the text summary marks such tests in its spread
/// column).
pub const CDM_HIGH_SPREAD: f64 = 0.10;

/// Bytes per I/O of the block-size sweep's sequential tests.
pub const SWEEP_SEQ_BS: u64 = 1 << 20;

/// A CrystalDiskMark run: the settings shown in its header and one entry per
/// finished test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CdmResult {
    /// The profile's name (`cdm`, `cdm-nvme`, ...).
    pub profile: String,
    /// The rows of the grid, in order, such as `SEQ1M Q8T1`.
    pub rows: Vec<String>,
    /// Whether the grid also shows IOPS and latency (µs).
    pub shows_iops: bool,
    /// Test file (or region) size.
    pub size: Bytes,
    /// The data pattern written.
    pub data: DataPattern,
    /// Measured passes per test.
    pub passes: u32,
    /// Length of each pass.
    pub pass_time: Nanos,
    /// Pause between tests.
    pub interval: Nanos,
    /// Read share of the mix test in percent, when the mix test ran.
    pub mix_read: Option<u8>,
    /// Whether `--quick` shortened the procedure.
    pub quick: bool,
    /// Every finished test, in the order run.
    pub tests: Vec<CdmTest>,
}

/// One test of a CrystalDiskMark row (read, write or mix).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CdmTest {
    /// The row, such as `RND4K Q32T1`.
    pub row: String,
    /// Read, write or mix.
    pub dir: TestDir,
    /// Bytes per I/O.
    pub bs: Bytes,
    /// Queue depth per thread.
    pub queues: u32,
    /// Threads.
    pub threads: u32,
    /// Bandwidth of each measured pass, in order.
    pub pass_bw: Vec<BytesPerSec>,
    /// Mean completion latency of each measured pass, in nanoseconds.
    pub pass_lat_mean_ns: Vec<f64>,
    /// The reported figure: the maximum bandwidth over the passes.
    pub bw: BytesPerSec,
    /// IOPS derived from the reported bandwidth and the block size.
    pub iops: Iops,
    /// The minimum mean latency over the passes, in nanoseconds.
    pub lat_mean_ns: f64,
    /// Index in `DiskRun::jobs` of the first measured pass; the others follow.
    pub first_job: usize,
}

impl CdmTest {
    /// The lowest and highest pass bandwidth.
    pub fn bw_spread(&self) -> Option<(BytesPerSec, BytesPerSec)> {
        let min = self
            .pass_bw
            .iter()
            .map(|b| b.0)
            .fold(f64::INFINITY, f64::min);
        let max = self.pass_bw.iter().map(|b| b.0).fold(0.0, f64::max);
        (!self.pass_bw.is_empty()).then_some((BytesPerSec(min), BytesPerSec(max)))
    }
}

/// IOmeter's "cycle the number of outstanding I/Os".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IometerResult {
    /// The depths asked for, in order.
    pub depths: Vec<u32>,
    /// Time run before each point, not counted.
    pub ramp: Nanos,
    /// Measured time of each point.
    pub runtime: Nanos,
    /// Every finished point.
    pub points: Vec<IometerPoint>,
}

/// One point of the sweep: one pattern at one depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IometerPoint {
    /// `2 MiB sequential read`, `4 KiB random write`, ...
    pub pattern: String,
    /// Access pattern.
    pub rw: RwMode,
    /// Bytes per I/O.
    pub bs: Bytes,
    /// Outstanding I/Os asked for.
    pub depth: u32,
    /// Mean I/Os in flight when one was issued.
    pub achieved_depth: f64,
    /// Bandwidth.
    pub bw: BytesPerSec,
    /// I/Os per second.
    pub iops: Iops,
    /// Mean completion latency, nanoseconds.
    pub lat_mean_ns: f64,
    /// 99th percentile completion latency, nanoseconds.
    pub lat_p99_ns: u64,
    /// CPU time, user plus system, percent of one CPU.
    pub cpu_pct: f64,
    /// Index of the job in `DiskRun::jobs`.
    pub job: usize,
}

/// GNOME Disks' benchmark: transfer rate over the surface and access time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GnomeResult {
    /// Bytes read (and written back) per sample.
    pub sample_size: Bytes,
    /// Transfer-rate samples asked for.
    pub samples_requested: u32,
    /// Access-time samples asked for.
    pub access_samples_requested: u32,
    /// Whether the write test was asked for and allowed.
    pub write: bool,
    /// Mean of the read-rate samples.
    pub avg_read: Option<BytesPerSec>,
    /// Mean of the write-rate samples.
    pub avg_write: Option<BytesPerSec>,
    /// Mean access time.
    pub avg_access: Option<Nanos>,
    /// Transfer-rate samples: the rate-vs-position series.
    pub transfer: Vec<GnomeTransferSample>,
    /// Access-time samples, in order; every one after the first carries the
    /// seek distance from the previous one (the access-time-vs-distance
    /// series).
    pub access: Vec<GnomeAccessSample>,
}

/// One transfer-rate sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GnomeTransferSample {
    /// Byte offset of the sample.
    pub offset: u64,
    /// Its position in percent of the target.
    pub position_pct: f64,
    /// Read rate of the timed read.
    pub read: BytesPerSec,
    /// Write rate (write plus fsync), when writing.
    pub write: Option<BytesPerSec>,
}

/// One access-time sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GnomeAccessSample {
    /// Byte offset of the 4 KiB read.
    pub offset: u64,
    /// Time of the read.
    pub time: Nanos,
    /// Distance from the previous sample in percent of the target; `None`
    /// for the first sample, which GNOME Disks does not plot.
    pub distance_pct: Option<f64>,
}

/// MacBench 5.0's disk test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MacbenchResult {
    /// Measured time of each test.
    pub runtime: Nanos,
    /// Every finished test.
    pub tests: Vec<MacbenchTest>,
}

/// One MacBench test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MacbenchTest {
    /// `Sequential read`, `Random write`, ...
    pub name: String,
    /// Mean bandwidth over the run (shown in KB/s, 10^3 bytes/s).
    pub bw: BytesPerSec,
    /// Index of the job in `DiskRun::jobs`.
    pub job: usize,
}

/// The block-size sweep of the PCIe SSD paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// Engines compared, in order.
    pub engines: Vec<EngineKind>,
    /// Measured time of each point.
    pub runtime: Nanos,
    /// Every finished point.
    pub points: Vec<SweepPoint>,
}

/// One point of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The engine.
    pub engine: EngineKind,
    /// Access pattern.
    pub rw: RwMode,
    /// Bytes per I/O.
    pub bs: Bytes,
    /// Bandwidth (shown in MiB/s).
    pub bw: BytesPerSec,
    /// Index of the job in `DiskRun::jobs`.
    pub job: usize,
}

/// The artefacts probe: one region written with each data pattern and read
/// back, round after round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtefactsResult {
    /// Bytes written per pattern and round.
    pub region: Bytes,
    /// Rounds run (the best of each pattern's rounds is kept).
    pub rounds: u32,
    /// Whether `--quick` (or the short probe before the default profile)
    /// shortened it.
    pub quick: bool,
    /// Each pattern's best rates, random data first.
    pub patterns: Vec<PatternRates>,
    /// What the rates show; none when random data did not finish.
    pub verdict: Option<ProbeVerdict>,
}
