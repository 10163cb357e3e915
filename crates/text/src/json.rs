//! The JSON layouts a script reads from the commands that do not measure:
//! `results list`, `results show`, `results compare`, `info` and
//! `engines` (docs/result-schema.md describes each key). Every one starts
//! with its own `schema_version`, raised on any change a reader could
//! notice, so a script can refuse a layout it does not know.
//!
//! Text from outside (labels, names, notes) is carried unchanged: JSON is
//! data, escaped by the JSON encoder, never terminal output; what the
//! encoder leaves raw and a reader could split a line at or reorder (U+2028,
//! U+0085, U+202E) is spelled as a `\u` escape by [`write()`].

use iomark_model::device::{DeviceReport, HostInfo};
use iomark_model::disk::EngineKind;
use iomark_model::figure::{Direction, Figure, FigureUnit};
use iomark_model::stored::{RunSummary, StoredRun, StoredWarning};
use iomark_model::WarningKind;
use iomark_stats::gate::Verdict;
use serde::Serialize;
use serde_json::Value;

use iomark_stats::lineup::{Baseline, Lineup, Matched};

/// Write `doc` as one pretty JSON document and a newline, with the line
/// separators and bidirectional controls serde_json leaves raw escaped
/// ([`iomark_model::escape::to_json_pretty`]). A failure is an
/// `io::Error`, so that a closed pipe (`iomark ... --json | head`) is
/// recognised as one.
pub fn write(out: &mut impl std::io::Write, doc: &impl Serialize) -> std::io::Result<()> {
    let text = iomark_model::escape::to_json_pretty(doc).map_err(std::io::Error::from)?;
    out.write_all(text.as_bytes())?;
    writeln!(out)
}

/// Layout version of `iomark results list --json`.
pub const LIST_SCHEMA_VERSION: u32 = 1;
/// Layout version of `iomark results show --json`.
pub const SHOW_SCHEMA_VERSION: u32 = 1;
/// Layout version of `iomark results compare --json`.
pub const COMPARE_SCHEMA_VERSION: u32 = 4;
/// Layout version of `iomark info --json`.
pub const INFO_SCHEMA_VERSION: u32 = 1;
/// Layout version of `iomark engines --json`.
pub const ENGINES_SCHEMA_VERSION: u32 = 1;

/// A run's summary row: what `results list` shows, every field.
#[derive(Debug, Serialize)]
pub struct RunRow<'a> {
    id: i64,
    started_at_ms: u64,
    finished_at_ms: u64,
    status: &'static str,
    kind: &'a str,
    tool: &'a str,
    tool_version: &'a str,
    labels: &'a [String],
    note: Option<&'a str>,
    target: Option<&'a str>,
    device: Option<&'a str>,
    warning_count: u32,
    profile: Option<&'a str>,
    headline: Option<HeadlineFigure<'a>>,
}

/// A run's headline figure in a list row: its first figure that is not a
/// CPU share, in base units.
#[derive(Debug, Serialize)]
pub struct HeadlineFigure<'a> {
    test: &'a str,
    metric: &'a str,
    unit: &'static str,
    value: f64,
}

impl<'a> From<&'a RunSummary> for RunRow<'a> {
    fn from(s: &'a RunSummary) -> Self {
        RunRow {
            id: s.id.0,
            started_at_ms: s.started_at_ms,
            finished_at_ms: s.finished_at_ms,
            status: s.status.as_str(),
            kind: &s.kind,
            tool: &s.tool,
            tool_version: &s.tool_version,
            labels: &s.labels,
            note: s.note.as_deref(),
            target: s.target.as_deref(),
            device: s.device.as_deref(),
            warning_count: s.warning_count,
            profile: s.profile.as_deref(),
            headline: s.headline.as_ref().map(|f| HeadlineFigure {
                test: &f.test,
                metric: &f.metric,
                unit: f.unit.as_str(),
                value: f.value,
            }),
        }
    }
}

/// `iomark results list --json`: the runs, oldest first.
#[derive(Debug, Serialize)]
pub struct RunList<'a> {
    schema_version: u32,
    runs: Vec<RunRow<'a>>,
}

/// The layout of `iomark results list --json`.
pub fn run_list(runs: &[RunSummary]) -> RunList<'_> {
    RunList {
        schema_version: LIST_SCHEMA_VERSION,
        runs: runs.iter().map(RunRow::from).collect(),
    }
}

/// A stored warning with the job or test it is about.
#[derive(Debug, Serialize)]
pub struct ScopedWarning<'a> {
    scope: &'a str,
    kind: WarningKind,
    message: &'a str,
}

impl<'a> From<&'a StoredWarning> for ScopedWarning<'a> {
    fn from(w: &'a StoredWarning) -> Self {
        ScopedWarning {
            scope: &w.scope,
            kind: w.warning.kind,
            message: &w.warning.message,
        }
    }
}

/// One stored figure with its direction.
#[derive(Debug, Serialize)]
pub struct FigureRow<'a> {
    test: &'a str,
    metric: &'a str,
    unit: FigureUnit,
    direction: Direction,
    /// Null when not a finite number, which JSON cannot carry.
    value: Option<f64>,
    spread: Option<(f64, f64)>,
}

/// A value JSON can carry: not NaN or infinite.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl<'a> From<&'a Figure> for FigureRow<'a> {
    fn from(f: &'a Figure) -> Self {
        FigureRow {
            test: &f.test,
            metric: &f.metric,
            unit: f.unit,
            direction: f.direction(),
            value: finite(f.value),
            spread: f.spread,
        }
    }
}

/// `iomark results show --json`.
#[derive(Debug, Serialize)]
pub struct RunDetail<'a> {
    schema_version: u32,
    run: RunRow<'a>,
    command_line: &'a [String],
    figures: Vec<FigureRow<'a>>,
    warnings: Vec<ScopedWarning<'a>>,
    document: Value,
}

/// The layout of `iomark results show --json`: the summary and command
/// line, the figures with their direction, the warnings and the stored
/// document.
pub fn run_detail(run: &StoredRun) -> RunDetail<'_> {
    // A document this version cannot read is still shown as stored.
    let document = match run.document() {
        Ok(doc) => serde_json::to_value(doc).unwrap_or(Value::Null),
        Err(_) => serde_json::from_str(&run.document_json).unwrap_or(Value::Null),
    };
    RunDetail {
        schema_version: SHOW_SCHEMA_VERSION,
        run: RunRow::from(&run.summary),
        command_line: &run.summary.command_line,
        figures: run.figures.iter().map(FigureRow::from).collect(),
        warnings: run.warnings.iter().map(ScopedWarning::from).collect(),
        document,
    }
}

/// One candidate figure beside the baseline's, judged.
#[derive(Debug, Serialize)]
pub struct MatchedRow<'a> {
    test: &'a str,
    metric: &'a str,
    unit: FigureUnit,
    /// The unit the candidate run printed a byte rate in (`MiB/s` for the
    /// block-size sweep, `KB/s` for MacBench, `MB/s` otherwise); values
    /// stay in `unit`. Absent for figures that are not byte rates.
    #[serde(skip_serializing_if = "Option::is_none")]
    printed_unit: Option<&'static str>,
    direction: Direction,
    run: i64,
    baseline_run: i64,
    /// The baseline's figure, or the mean of the pooled runs' figures.
    baseline: Option<f64>,
    /// How many baseline runs `baseline` pools: several runs of the
    /// device carrying the baseline label are judged as one baseline over
    /// time; 1 is the baseline run alone.
    baseline_pooled: usize,
    baseline_spread: Option<(f64, f64)>,
    baseline_noise: Option<(f64, f64)>,
    candidate: Option<f64>,
    candidate_spread: Option<(f64, f64)>,
    candidate_noise: Option<(f64, f64)>,
    difference: Option<f64>,
    ratio: Option<f64>,
    /// The 95% bounds of the ratio of the samples' means, when both
    /// figures' samples are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio_interval: Option<(f64, f64)>,
    within_noise: bool,
    verdict: Verdict,
}

impl<'a> From<&Matched<'a>> for MatchedRow<'a> {
    fn from(m: &Matched<'a>) -> Self {
        MatchedRow {
            test: &m.candidate.test,
            metric: &m.candidate.metric,
            unit: m.candidate.unit,
            printed_unit: m.printed.name_for(m.candidate.unit),
            direction: m.candidate.direction(),
            run: m.run.0,
            baseline_run: m.baseline_run.0,
            baseline: finite(m.baseline_value),
            baseline_pooled: m.pooled,
            baseline_spread: m.baseline.spread,
            baseline_noise: m.baseline.noise,
            candidate: finite(m.candidate.value),
            candidate_spread: m.candidate.spread,
            candidate_noise: m.candidate.noise,
            difference: finite(m.candidate.value - m.baseline_value),
            ratio: m.comparison.ratio,
            ratio_interval: m.comparison.interval.map(|iv| (iv.lo, iv.hi)),
            within_noise: m.within_noise(),
            verdict: m.verdict,
        }
    }
}

/// A compared run: its summary row, whether it is a baseline, the region
/// a disk run's jobs ran over and its warnings.
#[derive(Debug, Serialize)]
pub struct ComparedRun<'a> {
    #[serde(flatten)]
    run: RunRow<'a>,
    is_baseline: bool,
    region: Option<Region>,
    warnings: Vec<ScopedWarning<'a>>,
}

/// The region a disk run's jobs ran over: a fact of the device when
/// `from_device` (then not in the test names).
#[derive(Debug, Serialize)]
pub struct Region {
    bytes: u64,
    from_device: bool,
}

impl Region {
    /// A disk run's region, from its stored document.
    fn of(run: &StoredRun) -> Option<Region> {
        match run.document().ok()?.body {
            iomark_model::RunBody::Disk(d) => Some(Region {
                bytes: d.target.size.get(),
                from_device: d.target.size_from_device,
            }),
            _ => None,
        }
    }
}

/// The tests a run lacks that other runs have.
#[derive(Debug, Serialize)]
pub struct Unmatched<'a> {
    run: i64,
    missing_tests: Vec<&'a str>,
    /// Why, where the run has the same work at another setting: one per
    /// such test.
    reasons: Vec<UnmatchedReason<'a>>,
}

/// A missing test the run ran at another setting: the words its nearest
/// test differs in (`{"run_has": "256MiB", "missing": "1GiB"}`).
#[derive(Debug, Serialize)]
pub struct UnmatchedReason<'a> {
    test: &'a str,
    differs: Vec<WordDiffers<'a>>,
}

/// One word of a test's name, as the run has it and as the missing test.
#[derive(Debug, Serialize)]
pub struct WordDiffers<'a> {
    run_has: &'a str,
    missing: &'a str,
}

/// A candidate's tests that no baseline-labelled run has.
#[derive(Debug, Serialize)]
pub struct WithoutBaseline<'a> {
    run: i64,
    tests: Vec<&'a str>,
}

/// `iomark results compare --json`.
#[derive(Debug, Serialize)]
pub struct ComparisonDoc<'a> {
    schema_version: u32,
    baseline: Option<i64>,
    baseline_label: Option<&'a str>,
    fail_if_worse_pct: Option<f64>,
    runs: Vec<ComparedRun<'a>>,
    figures: Vec<MatchedRow<'a>>,
    unmatched: Vec<Unmatched<'a>>,
    without_baseline: Vec<WithoutBaseline<'a>>,
    regressed: bool,
    regressions: Vec<MatchedRow<'a>>,
}

/// The layout of `iomark results compare --json`: every matched figure of
/// every candidate beside the baseline's, judged; the tests each run
/// lacks; and the regressions past `--fail-if-worse`.
pub fn comparison<'a>(lineup: &Lineup<'a>) -> ComparisonDoc<'a> {
    let runs = lineup.runs();
    let regressions: Vec<MatchedRow> = lineup.regressions().iter().map(MatchedRow::from).collect();
    ComparisonDoc {
        schema_version: COMPARE_SCHEMA_VERSION,
        baseline: match lineup.baseline() {
            Baseline::FirstRun => runs.first().map(|r| r.summary.id.0),
            Baseline::Label(_) => None,
        },
        baseline_label: match lineup.baseline() {
            Baseline::FirstRun => None,
            Baseline::Label(l) => Some(l),
        },
        fail_if_worse_pct: lineup.threshold().map(|t| t.percent()),
        runs: runs
            .iter()
            .enumerate()
            .map(|(i, r)| ComparedRun {
                run: RunRow::from(&r.summary),
                is_baseline: lineup.is_baseline(i),
                region: Region::of(r),
                warnings: r.warnings.iter().map(ScopedWarning::from).collect(),
            })
            .collect(),
        figures: lineup.matched().iter().map(MatchedRow::from).collect(),
        unmatched: lineup
            .unmatched()
            .into_iter()
            .map(|(id, missing)| Unmatched {
                run: id.0,
                missing_tests: missing.iter().map(|m| m.test).collect(),
                reasons: missing
                    .iter()
                    .filter(|m| !m.differs.is_empty())
                    .map(|m| UnmatchedReason {
                        test: m.test,
                        differs: m
                            .differs
                            .iter()
                            .map(|&(run_has, missing)| WordDiffers { run_has, missing })
                            .collect(),
                    })
                    .collect(),
            })
            .collect(),
        without_baseline: match lineup.baseline() {
            Baseline::FirstRun => Vec::new(),
            Baseline::Label(_) => lineup
                .without_baseline()
                .into_iter()
                .map(|(id, tests)| WithoutBaseline { run: id.0, tests })
                .collect(),
        },
        regressed: !regressions.is_empty(),
        regressions,
    }
}

/// `iomark info --json`: the same host and device report a stored run
/// carries.
#[derive(Debug, Serialize)]
pub struct Info<'a> {
    schema_version: u32,
    host: &'a HostInfo,
    device: &'a DeviceReport,
}

/// `iomark info IFACE --json`: the host and the interface's chain.
#[derive(Debug, Serialize)]
pub struct NicInfo<'a> {
    schema_version: u32,
    host: &'a HostInfo,
    interface: &'a iomark_model::net::NicChain,
}

/// The layout of `iomark info IFACE --json`.
pub fn nic_info<'a>(host: &'a HostInfo, interface: &'a iomark_model::net::NicChain) -> NicInfo<'a> {
    NicInfo {
        schema_version: INFO_SCHEMA_VERSION,
        host,
        interface,
    }
}

/// The layout of `iomark info --json`.
pub fn info<'a>(host: &'a HostInfo, device: &'a DeviceReport) -> Info<'a> {
    Info {
        schema_version: INFO_SCHEMA_VERSION,
        host,
        device,
    }
}

/// An engine and whether it can run here.
#[derive(Debug, Serialize)]
pub struct Engine<'a> {
    name: &'static str,
    description: &'static str,
    available: bool,
    unavailable_reason: Option<&'a str>,
}

/// `iomark engines --json`.
#[derive(Debug, Serialize)]
pub struct Engines<'a> {
    schema_version: u32,
    engines: Vec<Engine<'a>>,
}

/// The layout of `iomark engines --json`: each engine with whether it can
/// run here and, when not, why.
pub fn engines(engines: &[(EngineKind, Result<(), String>)]) -> Engines<'_> {
    Engines {
        schema_version: ENGINES_SCHEMA_VERSION,
        engines: engines
            .iter()
            .map(|(e, available)| Engine {
                name: e.as_str(),
                description: e.description(),
                available: available.is_ok(),
                unavailable_reason: available.as_ref().err().map(String::as_str),
            })
            .collect(),
    }
}
