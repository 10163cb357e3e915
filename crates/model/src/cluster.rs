//! A benchmark run by many ranks in step (MPI): how the ranks shared the
//! target, and what each one did. The run's jobs hold the merged figures
//! (bytes and I/Os summed, latency histograms merged, the aggregate rate
//! over the first rank's start to the last rank's end, as IOR reports it);
//! this is the per-rank table behind them.

use serde::{Deserialize, Serialize};

use crate::device::DeviceReport;
// A memory run across ranks is the memory module's; named here too, with
// the disk runs across ranks.
pub use crate::mem::{MemCluster, MemRankResult};
use crate::units::{Bytes, BytesPerSec, Nanos};

/// How the ranks shared the storage, in IOR's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Each rank its own test file in the directory (IOR `-F`).
    FilePerRank,
    /// One shared file, a disjoint region per rank (IOR's segmented layout).
    SharedFile,
    /// Each rank its own path (`--per-rank-path 'DIR/{rank}'`).
    PerRankPath,
}

impl Layout {
    /// The name shown and stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::FilePerRank => "file-per-rank",
            Layout::SharedFile => "shared-file",
            Layout::PerRankPath => "per-rank-path",
        }
    }
}

/// The ranks of a run and what each one did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterRun {
    /// How many ranks ran.
    pub ranks: u32,
    /// How they shared the storage.
    pub layout: Layout,
    /// The window the aggregate rate is over: the first rank's start to
    /// the last rank's end.
    pub wall: Nanos,
    /// Each rank, by rank number.
    pub per_rank: Vec<RankResult>,
    /// Whether the run was stonewalled (`--stonewall`): every rank stopped
    /// when the first one finished its time or its size.
    #[serde(default, skip_serializing_if = "is_false")]
    pub stonewall: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One rank's share of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankResult {
    /// The rank number (0 stores the run).
    pub rank: u32,
    /// The host it ran on.
    pub host: String,
    /// Its target (the test file, or the shared file).
    pub path: String,
    /// Where its region starts in the target (shared file), else 0.
    pub offset: Bytes,
    /// Its start, after the common start, and its end.
    pub start: Nanos,
    /// Its end, after the common start.
    pub end: Nanos,
    /// Bytes it read.
    pub read_bytes: Bytes,
    /// Bytes it wrote.
    pub write_bytes: Bytes,
    /// Its read rate over its own time.
    pub read_bw: BytesPerSec,
    /// Its write rate over its own time.
    pub write_bw: BytesPerSec,
    /// Whether it was cut short.
    pub interrupted: bool,
    /// Whether another rank's finish stopped it before its own time or
    /// size was done (`--stonewall`): its bytes are what it managed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub stonewalled: bool,
    /// The device chain behind its target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceReport>,
    /// Its share of each job, in the run's order, when the run has more
    /// than one (a profile across ranks); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<RankJob>,
}

/// One rank's share of one job of a run of several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankJob {
    /// Its measured start, after the common start.
    pub start: Nanos,
    /// Its end, after the common start.
    pub end: Nanos,
    /// Bytes it read.
    pub read_bytes: Bytes,
    /// Bytes it wrote.
    pub write_bytes: Bytes,
}

impl ClusterRun {
    /// The slowest and fastest rank by total rate (read + write), when any.
    pub fn slowest_fastest(&self) -> Option<(&RankResult, &RankResult)> {
        let rate = |r: &&RankResult| r.read_bw.0 + r.write_bw.0;
        let slow = self
            .per_rank
            .iter()
            .min_by(|a, b| rate(a).total_cmp(&rate(b)))?;
        let fast = self
            .per_rank
            .iter()
            .max_by(|a, b| rate(a).total_cmp(&rate(b)))?;
        Some((slow, fast))
    }
}
