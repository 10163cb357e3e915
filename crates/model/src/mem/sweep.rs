//! A sweep's points and table, and the all-in-memory baseline a run or a
//! point is compared with (its `--repeat` pairs included).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Backing, KernelResult, MemOutcome, MemRun};
use crate::units::{Bytes, Nanos};

/// What a sweep's x axis counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepAxis {
    /// `--sizes`: the kernel's data in bytes.
    Size,
    /// `--ratios`: the data over the memory limit.
    Ratio,
}

/// A sweep over data sizes (or size/limit ratios) crossed with backings,
/// as the paper draws its relative-time curves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemSweep {
    /// What the x axis counts.
    pub axis: SweepAxis,
    /// The backings, in the order given (the table's columns).
    pub backings: Vec<Backing>,
    /// One point per x value and backing, x by x, each x's backings in
    /// order.
    pub points: Vec<MemSweepPoint>,
}

/// One point of a sweep: an x value on one backing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemSweepPoint {
    /// The x value: bytes for [`SweepAxis::Size`], data/limit for
    /// [`SweepAxis::Ratio`].
    pub x: f64,
    /// The kernel's data at this point (its size rounded to the kernel's
    /// grid).
    pub data: Bytes,
    /// The run, with its all-in-memory baseline (same size, heap, no limit)
    /// and relative time; an OOM kill is kept as one.
    pub run: MemRun,
}

/// One cell of a sweep's table: a point as the paper draws it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SweepCell {
    /// Completed: execution time over the all-in-memory run's.
    Relative(f64),
    /// The OOM killer ended it: the paper's most telling point.
    Killed,
    /// Stopped by Ctrl-C, or never run after a stop.
    Interrupted,
    /// Completed with a failed check, or without a baseline time.
    NoFigure,
}

impl fmt::Display for SweepCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepCell::Relative(t) => write!(f, "{t:.2}"),
            SweepCell::Killed => f.write_str("killed"),
            SweepCell::Interrupted => f.write_str("-"),
            SweepCell::NoFigure => f.write_str("n/a"),
        }
    }
}

/// One row of a sweep's table: an x value, its data, a cell per backing.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// The x value (bytes or ratio).
    pub x: f64,
    /// The kernel's data at this x.
    pub data: Bytes,
    /// One cell per backing, in the sweep's order.
    pub cells: Vec<SweepCell>,
}

impl MemSweep {
    /// The table the paper draws: a row per x value, a cell per backing.
    pub fn rows(&self) -> Vec<SweepRow> {
        let mut rows: Vec<SweepRow> = Vec::new();
        for p in &self.points {
            let column = self.column_of(&p.run.spec.backing);
            if rows.last().is_none_or(|r| r.x != p.x) {
                rows.push(SweepRow {
                    x: p.x,
                    data: p.data,
                    cells: vec![SweepCell::Interrupted; self.backings.len()],
                });
            }
            let row = rows.last_mut().expect("pushed above");
            row.cells[column] = p.cell();
        }
        rows
    }

    /// The column of a point's backing: the backing itself, or (runs
    /// stored before a swap backing recorded its device) the first of its
    /// kind.
    pub fn column_of(&self, backing: &Backing) -> usize {
        self.backings
            .iter()
            .position(|b| b == backing)
            .or_else(|| {
                self.backings
                    .iter()
                    .position(|b| b.kind() == backing.kind())
            })
            .unwrap_or(0)
    }

    /// Whether the sweep holds several swap backings, whose points' test
    /// names then name their devices ([`Backing::label`]); with one, its
    /// points keep the name `swap`, so they line up with sweeps on other
    /// devices and runs stored before devices were recorded.
    pub fn several_swaps(&self) -> bool {
        self.backings
            .iter()
            .filter(|b| matches!(b, Backing::Swap { .. }))
            .count()
            > 1
    }

    /// How an x value is written: `256 MiB` or `0.5`.
    pub fn x_label(&self, x: f64) -> String {
        match self.axis {
            SweepAxis::Size => Bytes(x as u64).to_string(),
            SweepAxis::Ratio => format!("{x}"),
        }
    }
}

impl MemSweepPoint {
    /// The point's cell in the table.
    pub fn cell(&self) -> SweepCell {
        match (&self.run.outcome, self.relative_time()) {
            (MemOutcome::OomKilled { .. }, _) => SweepCell::Killed,
            (MemOutcome::Interrupted, _) => SweepCell::Interrupted,
            (MemOutcome::Completed { result, .. }, Some(t)) if !result.validation().is_failed() => {
                SweepCell::Relative(t)
            }
            _ => SweepCell::NoFigure,
        }
    }

    /// The relative time, or `None` for a point killed, interrupted or
    /// without a baseline.
    pub fn relative_time(&self) -> Option<f64> {
        self.run.baseline.as_ref().and_then(|b| b.relative_time)
    }

    /// Whether the OOM killer ended it.
    pub fn killed(&self) -> bool {
        matches!(self.run.outcome, MemOutcome::OomKilled { .. })
    }
}

/// The all-in-memory run `--relative` compares against. The constrained
/// run does the same work: the same passes or sweeps (for Himeno with a
/// time target, exactly the baseline's timed sweeps).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemBaseline {
    /// Its figures.
    pub result: KernelResult,
    /// Its execution time, counted as the constrained run's (initialisation
    /// plus the counted work; see [`MemOutcome::Completed`]).
    pub execution: Nanos,
    /// The constrained run's execution time over this one (the paper's
    /// "relative execution time", on equal work); `None` when the
    /// constrained run did not complete. With `--repeat N`, the median of
    /// the pairs' relative times.
    pub relative_time: Option<f64>,
    /// With `--repeat N` (N >= 2): every pair of an all-in-memory run and
    /// the constrained run right after it, in the order run. `result` and
    /// `execution` above are the first pair's baseline, the run's outcome
    /// the first pair's constrained run. Empty for one pair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<RepeatPair>,
}

/// One alternated pair of `--repeat`: the all-in-memory run and the
/// constrained run that followed it, on the same work.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RepeatPair {
    /// The all-in-memory run's execution time.
    pub baseline: Nanos,
    /// The constrained run's execution time.
    pub constrained: Nanos,
}

impl RepeatPair {
    /// `constrained / baseline`.
    pub fn relative(&self) -> f64 {
        self.constrained.get() as f64 / self.baseline.get().max(1) as f64
    }
}

impl MemBaseline {
    /// The lowest and highest relative time over the repeats (`None` for
    /// one pair).
    pub fn spread(&self) -> Option<(f64, f64)> {
        if self.repeats.len() < 2 {
            return None;
        }
        let rel = self.repeats.iter().map(RepeatPair::relative);
        let lo = rel.clone().fold(f64::INFINITY, f64::min);
        let hi = rel.fold(f64::NEG_INFINITY, f64::max);
        Some((lo, hi))
    }
}

/// The median of `values` (the mean of the middle two for an even count);
/// `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}
