//! What a lineup refuses, each with the fix: a baseline label that would
//! divide nothing, a metric no row has, and a gate that would judge
//! nothing. `results compare` and `report` refuse in the same words.

use iomark_model::escape::escape_controls as esc;
use iomark_model::stored::{RunId, StoredRun};

use super::{group_by_label, Baseline, Lineup};

/// Why runs cannot be lined up or judged as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineupError {
    /// Every run carries the baseline label: nothing is divided by it.
    #[error(
        "--baseline-label {}: every run given is labelled {0}, so none is compared with them; add runs with another label",
        esc(.label)
    )]
    EveryRunLabelled {
        /// The baseline label.
        label: String,
    },
    /// No run carries the baseline label: nothing to divide by.
    #[error(
        "--baseline-label {}: none of {} is labelled {0}; {}",
        esc(.label),
        run_list(.runs),
        if .labels.is_empty() {
            "they have no labels: label runs with --label when storing or importing them".to_string()
        } else {
            format!("their labels are {}", esc(&.labels.join(", ")))
        }
    )]
    NoRunLabelled {
        /// The baseline label.
        label: String,
        /// The runs given.
        runs: Vec<RunId>,
        /// The labels they carry, sorted, each once.
        labels: Vec<String>,
    },
    /// `--metric` names no metric of any row.
    #[error(
        "--metric {}: no row of these runs has that metric; their metrics are {}",
        esc(&.wanted.join(", ")),
        esc(&.there.join(", "))
    )]
    NoSuchMetric {
        /// The metrics asked for.
        wanted: Vec<String>,
        /// The metrics the rows have, sorted, each once.
        there: Vec<String>,
    },
    /// A candidate shares no judged figure with its baseline: a gate on it
    /// would pass having compared nothing.
    #[error(
        "--fail-if-worse has nothing to judge: {} shares no bandwidth, IOPS, MFLOPS or latency figure of the same test with baseline #{baseline}; compare runs of the same test (same rw, bs, depth, engine, size)",
        run_list(.ungated)
    )]
    NothingToJudge {
        /// The candidates with no judged figure.
        ungated: Vec<RunId>,
        /// The baseline run.
        baseline: RunId,
    },
}

/// `#3, #4`.
fn run_list(ids: &[RunId]) -> String {
    ids.iter()
        .map(|id| format!("#{id}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The baseline `--baseline-label label` asks for, with `runs` put in
/// column groups by label ([`group_by_label`]). Refused unless some run
/// carries `label`, to divide by, and some run does not, to be divided.
pub fn by_label<'l>(runs: &mut [StoredRun], label: &'l str) -> Result<Baseline<'l>, LineupError> {
    let has = |r: &StoredRun| r.summary.labels.iter().any(|l| l == label);
    if runs.iter().all(has) {
        return Err(LineupError::EveryRunLabelled {
            label: label.to_string(),
        });
    }
    if !runs.iter().any(has) {
        let mut labels: Vec<String> = runs
            .iter()
            .flat_map(|r| r.summary.labels.iter().cloned())
            .collect();
        labels.sort_unstable();
        labels.dedup();
        return Err(LineupError::NoRunLabelled {
            label: label.to_string(),
            runs: runs.iter().map(|r| r.summary.id).collect(),
            labels,
        });
    }
    group_by_label(runs, label);
    Ok(Baseline::Label(label))
}

impl Lineup<'_> {
    /// Keep only the rows of `metrics` ([`Lineup::only_metrics`]); none
    /// keeps every row. Refused, naming the metrics there are, when no row
    /// has one of them.
    pub fn keep_metrics(&mut self, metrics: &[String]) -> Result<(), LineupError> {
        if metrics.is_empty() || self.only_metrics(metrics) {
            return Ok(());
        }
        let mut there: Vec<String> = self.keys.iter().map(|k| k.1.to_string()).collect();
        there.sort_unstable();
        there.dedup();
        Err(LineupError::NoSuchMetric {
            wanted: metrics.to_vec(),
            there,
        })
    }

    /// Refuse a gate when a candidate shares no judged figure with its
    /// baseline ([`Lineup::ungated`]): it must not pass having judged
    /// nothing.
    pub fn check_gated(&self) -> Result<(), LineupError> {
        let ungated = self.ungated();
        if ungated.is_empty() {
            return Ok(());
        }
        Err(LineupError::NothingToJudge {
            ungated,
            baseline: self.runs[0].summary.id,
        })
    }
}
