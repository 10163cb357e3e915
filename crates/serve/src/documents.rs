//! What `iomark results compare` and `export` and the server's compare
//! page and API read from the store, written once so that they cannot
//! drift: the runs named, resolved and loaded as the command line names
//! them, and their lineup against a baseline. (The JSON documents themselves are
//! `iomark_text::json`'s, used by both.)

use iomark_stats::gate::WorseThreshold;
use iomark_stats::lineup::{by_label, Baseline, Lineup, LineupError};
use iomark_store::{RunId, RunQuery, RunSelection, Store, StoreError, StoredRun};
use iomark_text::escape_controls as esc;
use iomark_text::results::{self, ExportFormat, TableStyle};

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

/// What a table of runs is divided by and which rows it keeps: `results
/// compare`'s, the Markdown export's (the same table), the compare page's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Against {
    /// The run the others are divided by (default: the first named).
    pub baseline: Option<RunId>,
    /// Divide by the runs carrying this label instead.
    pub baseline_label: Option<String>,
    /// Only rows of these metrics (none: every row).
    pub metrics: Vec<String>,
}

/// Why runs cannot be exported as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A baseline or metrics asked of a format that is not a table.
    #[error(
        "--baseline, --baseline-label and --metric shape the Markdown table: add --format \
         markdown (json and csv export every figure)"
    )]
    NotATable,
    /// The store could not give the runs, or they cannot be lined up.
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// Writing the export failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<StoreError> for ExportError {
    fn from(e: StoreError) -> Self {
        ExportError::Compare(e.into())
    }
}

/// `iomark results export`: the runs `ids` in `format` to `out`; as
/// Markdown, the comparison table lined up as `against` says, the one
/// `results compare` prints (one run alone included).
pub fn export(
    store: &mut dyn Store,
    ids: &[RunId],
    format: ExportFormat,
    against: &Against,
    out: &mut impl std::io::Write,
) -> Result<(), ExportError> {
    let markdown = format == ExportFormat::Markdown;
    if !markdown && *against != Against::default() {
        return Err(ExportError::NotATable);
    }
    let selection = RunSelection {
        baseline: against.baseline,
        ..RunSelection::of(ids)
    };
    let ids = selection.resolve(store)?;
    let mut runs = RunSelection::of(&ids).load(store)?;
    if !markdown {
        return Ok(results::export(&runs, format, out)?);
    }
    let label = against.baseline_label.as_deref();
    let lineup = lineup(&mut runs, label, None, &against.metrics)?;
    let table = results::comparison(&lineup, TableStyle::Markdown, results::View::ALL);
    Ok(out.write_all(table.as_bytes())?)
}

/// `iomark results list`: the runs `q` matches in the store at `db`, as
/// JSON or as a table fitted to `width` columns, to `out`; what to say on
/// stderr when there are none (nothing stored yet is an empty list, not
/// an error).
pub fn list(
    db: Option<&str>,
    q: &RunQuery,
    as_json: bool,
    width: usize,
    out: &mut impl std::io::Write,
) -> Result<Option<String>, ExportError> {
    let (runs, note) = match iomark_store::open_read_only(db) {
        Ok(mut store) => {
            let runs = store.list(q)?;
            let note = runs
                .is_empty()
                .then(|| format!("no stored runs match in {}", esc(&store.location())));
            (runs, note)
        }
        Err(StoreError::NoDatabase { path }) => {
            let note = format!(
                "no stored runs: there is no results database at {} yet",
                esc(&path)
            );
            (Vec::new(), Some(note))
        }
        Err(e) => return Err(e.into()),
    };
    if as_json {
        iomark_text::json::write(out, &iomark_text::json::run_list(&runs))?;
    } else if !runs.is_empty() {
        out.write_all(results::run_list(&runs, Some(width)).as_bytes())?;
    }
    Ok(note)
}
