//! A report of runs as the store keeps them: each run's document with its
//! stored figures, and, against a baseline run or label, the table of
//! every figure paired as `iomark results compare` pairs it.

use iomark_model::stored::{RunId, StoredRun};
use iomark_stats::lineup::{by_label, Baseline, Lineup};

use crate::{Comparison, Report, ReportError, ReportRun};

impl Report {
    /// A report of `runs` in the order given, `baseline` moved first. With
    /// `baseline` or `baseline_label` (columns then grouped by label,
    /// refused as `results compare --baseline-label` refuses), relative
    /// charts divide by the baseline and the page has the comparison
    /// table.
    pub fn of_stored(
        mut runs: Vec<StoredRun>,
        baseline: Option<RunId>,
        baseline_label: Option<&str>,
    ) -> Result<Report, ReportError> {
        if let Some(b) = baseline {
            if let Some(i) = runs.iter().position(|r| r.summary.id == b) {
                runs[..=i].rotate_right(1);
            }
        }
        let against = match baseline_label {
            Some(l) => Some(by_label(&mut runs, l)?),
            None => baseline.map(|_| Baseline::FirstRun),
        };
        let comparison = against.map(|b| Comparison::of(&Lineup::against(&runs, b, None)));
        let mut report_runs = Vec::with_capacity(runs.len());
        for s in runs {
            let doc = s.document()?;
            report_runs.push(ReportRun::new(s.summary.id, doc).with_figures(s.figures));
        }
        let report = Report::new(report_runs, baseline.map(|b| b.to_string()).as_deref())?;
        Ok(match comparison {
            Some(c) => report.with_comparison(c),
            None => report,
        })
    }
}

#[cfg(test)]
#[path = "stored_tests.rs"]
mod tests;
