//! SNIA's Solid State Storage Performance Test Specification (PTS 2.0.2)
//! as iomark runs it (docs/pts.md): the rounds of the IOPS, throughput and
//! latency tests, the tracking variable's steady-state window, and the
//! tables the specification reports.

use serde::{Deserialize, Serialize};

use crate::units::{Bytes, BytesPerSec, Nanos};

/// What was done to the device before the test, as the specification's
/// first step asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "done", rename_all = "snake_case")]
pub enum Purge {
    /// Every block of the test's range discarded (BLKSECDISCARD when
    /// `secure`, else BLKDISCARD).
    Discarded {
        /// Whether the secure variant was accepted.
        secure: bool,
    },
    /// Not purged, and why.
    Skipped {
        /// The reason, as shown.
        why: String,
    },
}

/// The workload-independent preconditioning: sequential 128 KiB writes
/// over the test's range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preconditioning {
    /// Bytes asked for (twice the range by default; 0: skipped).
    pub asked: Bytes,
    /// Bytes written.
    pub written: Bytes,
    /// How long it took.
    pub took: Nanos,
}

/// Which of the specification's round-based tests ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PtsTest {
    /// IOPS: random I/O, every mix at every block size, tracking 4 KiB
    /// random writes' IOPS.
    #[default]
    Iops,
    /// Throughput: sequential reads and writes at one block size (1 MiB
    /// or 128 KiB, one test each), tracking the writes' bandwidth.
    Throughput,
    /// Latency: random I/O at QD1 T1, 0.5, 4 and 8 KiB, tracking 4 KiB
    /// random writes' mean latency.
    Latency,
}

impl PtsTest {
    /// The test's name in the specification: `IOPS`, `TP`, `LAT`.
    pub fn short(self) -> &'static str {
        match self {
            PtsTest::Iops => "IOPS",
            PtsTest::Throughput => "TP",
            PtsTest::Latency => "LAT",
        }
    }

    /// As a heading says it: `IOPS`, `throughput`, `latency`.
    pub fn name(self) -> &'static str {
        match self {
            PtsTest::Iops => "IOPS",
            PtsTest::Throughput => "throughput",
            PtsTest::Latency => "latency",
        }
    }

    /// The profile that runs it.
    pub fn profile(self) -> &'static str {
        match self {
            PtsTest::Iops => "pts-iops",
            PtsTest::Throughput => "pts-tp",
            PtsTest::Latency => "pts-lat",
        }
    }

    /// The tracking variable's figure in a cell: IOPS, bytes a second, or
    /// the mean latency in ns.
    pub fn tracked(self, cell: &PtsCell) -> f64 {
        match self {
            PtsTest::Iops => cell.iops,
            PtsTest::Throughput => cell.bw.0,
            PtsTest::Latency => cell.lat_mean_ns,
        }
    }

    /// The unit the tracking variable is shown in.
    pub fn unit(self) -> &'static str {
        match self {
            PtsTest::Iops => "IOPS",
            PtsTest::Throughput => "MB/s",
            PtsTest::Latency => "us",
        }
    }

    /// A tracking value (as [`tracked`](Self::tracked) gives it) in
    /// [`unit`](Self::unit).
    pub fn shown(self, value: f64) -> f64 {
        match self {
            PtsTest::Iops => value,
            PtsTest::Throughput => value / 1e6,
            PtsTest::Latency => value / 1e3,
        }
    }
}

/// One cell of a round: one read/write mix at one block size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PtsCell {
    /// Percentage of reads (100 is all reads).
    pub read_pct: u8,
    /// Bytes per I/O.
    pub bs: Bytes,
    /// I/Os a second, both directions.
    pub iops: f64,
    /// Bytes a second, both directions.
    pub bw: BytesPerSec,
    /// Mean completion latency, ns.
    pub lat_mean_ns: f64,
    /// The completion latency 99.999% of I/Os stayed under, ns (the
    /// latency test's "five nines"); over the window's I/Os in the table.
    #[serde(default)]
    pub lat_p99999_ns: f64,
    /// The slowest completion, ns; the window's slowest in the table.
    #[serde(default)]
    pub lat_max_ns: f64,
    /// The measured job in the run's `jobs`; none in the window's
    /// averages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<usize>,
}

/// One round: every cell once, in the specification's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PtsRound {
    /// From 1.
    pub round: u32,
    /// The cells run, in order.
    pub cells: Vec<PtsCell>,
    /// The tracking variable's value in this round (the test's
    /// [`tracked`](PtsTest::tracked) figure of its tracking cell).
    pub tracking: f64,
}

/// The measurement window: the last five rounds, judged by the
/// specification's rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PtsWindowFigures {
    /// The window's first round (from 1).
    pub first_round: u32,
    /// Its last round.
    pub last_round: u32,
    /// The tracking variable's average over it.
    pub average: f64,
    /// Its largest value less its smallest.
    pub data_excursion: f64,
    /// The best-fit line's slope, per round.
    pub slope: f64,
    /// The best-fit line at the window's first round.
    pub intercept: f64,
    /// How far the line moves across the window.
    pub slope_excursion: f64,
    /// Whether steady: data excursion within 20% of the average and the
    /// line's within 10%.
    pub steady: bool,
}

/// Where a round-based PTS test stands after a round, for the progress a
/// person watches for hours (`--json-stream`'s `round` event, the line on
/// a terminal): the round, the most it may run, the tracking variable's
/// value and the window that ends at this round, with the limits it is
/// held to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PtsRoundStatus {
    /// Which test.
    pub test: PtsTest,
    /// The round just measured (from 1).
    pub round: u32,
    /// The most rounds the test runs (`--passes`, 25 by the specification).
    pub max_rounds: u32,
    /// The tracking cell: its read share and block size.
    pub read_pct: u8,
    /// The tracking cell's block size.
    pub bs: Bytes,
    /// The tracking variable in this round (as [`PtsTest::tracked`]).
    pub tracking: f64,
    /// The rounds a window holds (5).
    pub window_rounds: u32,
    /// The window ending at this round, once there are rounds enough.
    pub window: Option<PtsWindowFigures>,
    /// The largest data excursion steady state allows, a fraction of the
    /// window's average (0.20).
    pub data_limit: f64,
    /// The largest slope excursion, a fraction of the average (0.10).
    pub slope_limit: f64,
}

/// A round-based PTS test: IOPS, throughput or latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PtsResult {
    /// Which test.
    #[serde(default)]
    pub test: PtsTest,
    /// Read percentages of the mixes, in order (100/0 to 0/100).
    pub mixes: Vec<u8>,
    /// Block sizes, in order (largest first, as the specification lists).
    pub block_sizes: Vec<Bytes>,
    /// Threads, each with `depth` I/Os in flight.
    pub threads: u32,
    /// I/Os in flight per thread.
    pub depth: u32,
    /// Measured time of each cell.
    pub cell_time: Nanos,
    /// Rounds after which the test stops unsteady.
    pub max_rounds: u32,
    /// Bytes of the test's range (the active range).
    pub range: Bytes,
    /// Whether the target is a block device; a file's figures are the
    /// plumbing's, not a PTS result.
    pub on_device: bool,
    /// The first step.
    pub purge: Purge,
    /// The second.
    pub preconditioning: Preconditioning,
    /// Every round run.
    pub rounds: Vec<PtsRound>,
    /// The first steady window, or the last window judged when none was
    /// steady; none before five rounds.
    pub window: Option<PtsWindowFigures>,
    /// Each cell averaged over the window's rounds (or over the rounds run
    /// when fewer than a window): the IOPS table.
    pub table: Vec<PtsCell>,
}

impl PtsResult {
    /// Whether steady state was reached.
    pub fn steady(&self) -> bool {
        self.window.is_some_and(|w| w.steady)
    }

    /// The tracking variable's cell: all writes, at 4 KiB (IOPS, latency)
    /// or at the throughput test's block size.
    pub fn tracking_cell(&self) -> (u8, Bytes) {
        tracking_cell(self.test, &self.block_sizes)
    }

    /// The tracking variable as a label says it: `IOPS (4 KiB, 0/100)`.
    pub fn tracking_label(&self) -> String {
        let (mix, bs) = self.tracking_cell();
        format!("{} ({}, {})", self.test.unit(), bs, mix_label(mix))
    }
}

/// Test `test`'s tracking cell among `block_sizes`.
pub fn tracking_cell(test: PtsTest, block_sizes: &[Bytes]) -> (u8, Bytes) {
    match test {
        PtsTest::Throughput => (0, block_sizes.first().copied().unwrap_or(Bytes(1 << 20))),
        PtsTest::Iops | PtsTest::Latency => (0, Bytes(4 << 10)),
    }
}

/// A mix as the specification writes it: `65/35` (reads/writes).
pub fn mix_label(read_pct: u8) -> String {
    format!("{read_pct}/{}", 100 - read_pct)
}
