//! The sustained-write profile's result: where a drive's write cache runs
//! out.
//!
//! A QLC SSD or a USB stick writes fast into its cache (SLC, DRAM) and
//! slowly once the cache is full; a one-gigabyte benchmark only ever sees
//! the cache. The profile writes sequentially until the rate has fallen and
//! settled, and keeps the series of bytes written over time, so the cliff
//! can be found ([`Cliff`]) and drawn (rate over bytes written).

use serde::{Deserialize, Serialize};

use crate::units::{Bytes, BytesPerSec, Nanos};

/// Bytes written by a point in time: one point of a cumulative series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenAt {
    /// Time since the pass started.
    pub time: Nanos,
    /// Bytes completed by then.
    pub bytes: Bytes,
}

/// A job's bytes-written series summed over the processes that ran it (one
/// alone), and how long they all wrote: the first to end its part ends the
/// stretch whose rate is every process's together; what the others wrote
/// after it is counted but is not their joint rate.
#[derive(Debug, Clone, PartialEq)]
pub struct SummedSeries {
    /// Bytes written by each time, from the first process's start.
    pub points: Vec<WrittenAt>,
    /// When the first process's part ended.
    pub together_until: Nanos,
}

impl SummedSeries {
    /// One process's series.
    pub fn alone(points: Vec<WrittenAt>) -> Self {
        let together_until = points.last().map_or(Nanos(0), |p| p.time);
        SummedSeries {
            points,
            together_until,
        }
    }

    /// The points up to [`together_until`](Self::together_until): what a
    /// rate over the processes together is read from.
    pub fn together(&self) -> &[WrittenAt] {
        let n = self
            .points
            .partition_point(|p| p.time <= self.together_until);
        &self.points[..n]
    }
}

/// Where the rate fell: the cache size and the rates on either side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// Bytes written at the fast rate before it fell: the cache size.
    pub at: Bytes,
    /// When the rate fell, from the start of the pass.
    pub time: Nanos,
    /// The rate before the fall.
    pub rate_before: BytesPerSec,
    /// The steady rate after it.
    pub rate_after: BytesPerSec,
    /// Whether the rate slid over a long stretch rather than fell at once;
    /// `at` is then where the two straight lines through the fast and slow
    /// stretches meet.
    pub gradual: bool,
}

/// Why a sustained pass ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassEnd {
    /// The whole region was written.
    Region,
    /// `--until-steady`: the rate had been steady for a while after a drop.
    Steady,
    /// The recovery pass had seen what it needed: a drop and a steady rate
    /// after it, a steady slow rate from the start, or twice the first
    /// pass's cache written at the fast rate.
    Enough,
    /// Ctrl-C.
    Interrupted,
}

/// One sequential pass: its series and what it showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SustainedPass {
    /// Bytes written.
    pub written: Bytes,
    /// Time taken.
    pub elapsed: Nanos,
    /// The mean rate over the pass.
    pub mean_rate: BytesPerSec,
    /// The cliff, when the rate fell; none means the rate held over
    /// `written` bytes ("no cliff in N GiB").
    pub cliff: Option<Cliff>,
    /// Why the pass ended.
    pub end: PassEnd,
    /// Bytes written over time, from `(0, 0)`, about four points a second
    /// (fewer on long passes): the rate-over-bytes chart.
    pub series: Vec<WrittenAt>,
    /// Index of the pass's job in `DiskRun::jobs` (its per-second samples).
    pub job: usize,
}

/// What came back after the idle period of `--recover`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// The idle time before the second pass.
    pub idle: Nanos,
    /// Bytes the second pass wrote at the fast rate before it fell again
    /// (0 when it started at the slow rate).
    pub recovered: Bytes,
    /// Whether the fast rate held for the whole second pass, so
    /// `recovered` is a lower bound.
    pub at_least: bool,
}

/// The sustained-write profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SustainedResult {
    /// Bytes per write.
    pub bs: Bytes,
    /// Writes in flight.
    pub depth: u32,
    /// The region the passes write, from offset 0.
    pub region: Bytes,
    /// Whether `--until-steady` was asked for.
    pub until_steady: bool,
    /// The first pass.
    pub pass: SustainedPass,
    /// The second pass after `--recover`'s idle period, when it ran.
    pub recover_pass: Option<SustainedPass>,
    /// What the second pass showed, when it ran and the first had a cliff.
    pub recovery: Option<Recovery>,
    /// Set when this is SNIA PTS's write-saturation test (`pts-wsat`):
    /// random writes by several threads, each writing the region once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wsat: Option<Wsat>,
    /// SNIA PTS's host idle recovery after the saturated pass (`--hir`),
    /// when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hir: Option<Hir>,
}

/// SNIA PTS's host idle recovery (section 10): after write saturation,
/// bursts of the same writes with idle time between them, the idle time
/// growing from one wait state to the next, and continuous writing
/// between the states to bring the device back to its saturated rate. A
/// drive that cleans up while idle writes its bursts faster the longer it
/// idles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hir {
    /// Each burst's length (the specification's 5 s).
    pub burst: Nanos,
    /// The saturated rate the bursts are held to: the saturated pass's
    /// rate after its cliff, or its mean rate without one.
    pub baseline: BytesPerSec,
    /// The wait states, in the order they ran.
    pub states: Vec<HirState>,
}

/// One wait state of [`Hir`]: its bursts, each after the same idle time,
/// then the return to the saturated rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HirState {
    /// The idle time before each burst.
    pub idle: Nanos,
    /// The bursts, in order.
    pub bursts: Vec<HirBurst>,
    /// The mean rate of the continuous writing after the bursts (as long
    /// as the bursts took together, the specification's 1,800 s), when it
    /// ran.
    pub return_rate: Option<BytesPerSec>,
}

/// One burst of writes of a wait state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HirBurst {
    /// When it began, from the start of the first wait state.
    pub at: Nanos,
    /// Its rate.
    pub rate: BytesPerSec,
}

impl HirState {
    /// The bursts' mean rate; none before the first burst ended.
    pub fn mean(&self) -> Option<BytesPerSec> {
        let n = self.bursts.len();
        (n > 0).then(|| BytesPerSec(self.bursts.iter().map(|b| b.rate.0).sum::<f64>() / n as f64))
    }
}

/// What SNIA PTS's write-saturation test adds to a sustained pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wsat {
    /// Threads, each writing the region once in random blocks: the pass
    /// writes this many times the region.
    pub threads: u32,
    /// The purge before it.
    pub purge: crate::pts::Purge,
}
