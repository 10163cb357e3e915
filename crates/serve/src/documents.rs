//! What `iomark results compare` and the server's compare page and API
//! read from the store, written once so that they cannot drift: the runs
//! named, resolved and loaded as the command line names them, and their
//! lineup against a baseline. (The JSON documents themselves are
//! `iomark_text::json`'s, used by both.)

use iomark_stats::gate::WorseThreshold;
use iomark_stats::lineup::{by_label, Baseline, Lineup, LineupError};
use iomark_store::{RunId, RunSelection, Store, StoreError, StoredRun};

/// Why runs cannot be compared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    /// Fewer than two runs named.
    #[error("compare needs two runs or more: iomark results compare ID ID... [--baseline ID]")]
    TooFew,
    /// The store could not give the runs.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The runs cannot be lined up as asked.
    #[error(transparent)]
    Lineup(#[from] LineupError),
}

/// The runs `ids` name with `baseline` first, each once, loaded; two at
/// least.
pub fn compared_runs(
    store: &mut dyn Store,
    ids: &[RunId],
    baseline: Option<RunId>,
) -> Result<Vec<StoredRun>, CompareError> {
    let selection = RunSelection {
        baseline,
        ..RunSelection::of(ids)
    };
    let ids = selection.resolve(store)?;
    if ids.len() < 2 {
        return Err(CompareError::TooFew);
    }
    Ok(RunSelection::of(&ids).load(store)?)
}

/// `runs` lined up against the first, or against the runs carrying
/// `baseline_label` (which reorders `runs`), judged with `threshold`,
/// keeping only `metrics` when any are named.
pub fn lineup<'a>(
    runs: &'a mut [StoredRun],
    baseline_label: Option<&'a str>,
    threshold: Option<WorseThreshold>,
    metrics: &[String],
) -> Result<Lineup<'a>, CompareError> {
    let against = match baseline_label {
        Some(l) => by_label(runs, l)?,
        None => Baseline::FirstRun,
    };
    let runs: &'a [StoredRun] = runs;
    let mut lineup = Lineup::against(runs, against, threshold);
    lineup.keep_metrics(metrics)?;
    Ok(lineup)
}
