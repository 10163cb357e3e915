//! `iomark results compare` and the Markdown export: tests as rows, runs
//! as columns, each figure with its value, its ratio to its baseline's and
//! the difference in its unit; a terminal table split to fit 100 columns;
//! then what has no baseline, the legend and the runs' warnings, one line
//! per kind.

use std::fmt::Write as _;

use comfy_table::presets::{ASCII_MARKDOWN, UTF8_FULL_CONDENSED};
use comfy_table::{Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table};
use iomark_model::figure::{device_link, Direction};
use iomark_model::stored::StoredRun;
use iomark_model::{RunBody, RunStatus, WarningKind};
use iomark_stats::compare::format_ratio;

use super::{scoped_in, TableStyle};
use crate::escape_controls as esc;
use iomark_stats::gate::WorseThreshold;
use iomark_stats::lineup::{Baseline, Lineup, LineupError, Matched, RowKey};

/// The width a terminal table is laid out to: the common 100-column
/// terminal, so a table of many runs is split instead of wrapping into
/// unreadable lines.
pub const TERMINAL_WIDTH: u16 = 100;

/// The widest a run's header line counts when fitting columns: longer
/// ones wrap.
const HEADER_WRAP: usize = 16;

/// The narrowest the test column is made (its names wrap within it) when
/// deciding how many run columns fit beside it.
const TEST_COLUMN_MIN: usize = 24;

/// The comparison: tests as rows, runs as columns, each figure with its
/// ratio to its baseline and whether that is better or worse, then the
/// tests without a baseline, the legend and the runs' warnings. On a
/// terminal, the runs whose columns do not fit beside the test's name in
/// `TERMINAL_WIDTH` go to further tables.
pub fn comparison(lineup: &Lineup, style: TableStyle) -> String {
    let runs = lineup.runs();
    let all = lineup.columns();
    let mut out = String::new();
    match style {
        TableStyle::Terminal => {
            for (n, chunk) in terminal_chunks(lineup, &all).iter().enumerate() {
                if n > 0 {
                    out.push('\n');
                }
                let mut t = comparison_table(lineup, style, chunk);
                t.load_preset(UTF8_FULL_CONDENSED)
                    .set_content_arrangement(ContentArrangement::Dynamic)
                    .set_width(TERMINAL_WIDTH);
                // The metric and the runs' cells keep their lines whole
                // (terminal_chunks made room for them); the test's name
                // wraps in what is left.
                for c in t.column_iter_mut().skip(1) {
                    c.set_constraint(ColumnConstraint::ContentWidth);
                }
                let _ = writeln!(out, "{t}");
            }
        }
        TableStyle::Markdown => {
            let mut t = comparison_table(lineup, style, &all);
            t.load_preset(ASCII_MARKDOWN);
            // Markdown cells cannot span lines.
            if let Some(h) = t.header() {
                let cells: Vec<String> = h
                    .cell_iter()
                    .map(|c| c.content().replace('\n', " "))
                    .collect();
                t.set_header(cells);
            }
            let _ = writeln!(out, "{t}");
            if runs.len() > 1 {
                out.push('\n');
            }
        }
    }
    out += &unmatched(lineup, style);
    out + &legend(lineup, style)
}

/// The runs split into tables that fit [`TERMINAL_WIDTH`]: each run
/// column as wide as its widest cell line, beside a metric column as wide as
/// its widest name and a test column of at least [`TEST_COLUMN_MIN`];
/// at least one column per table.
fn terminal_chunks(lineup: &Lineup, columns: &[Vec<usize>]) -> Vec<Vec<Vec<usize>>> {
    let style = TableStyle::Terminal;
    let widest = |text: &str| text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let metric = lineup
        .keys()
        .iter()
        .map(|k| widest(&style.text(k.1)))
        .max()
        .unwrap_or(0)
        .max("metric".len());
    // Each column costs its content, a space either side and a border.
    let room = usize::from(TERMINAL_WIDTH).saturating_sub(1 + (TEST_COLUMN_MIN + 3) + (metric + 3));
    let mut chunks: Vec<Vec<Vec<usize>>> = Vec::new();
    let mut used = 0;
    for col in columns {
        // A long header line (a device's chain) wraps: it does not set the
        // width on its own.
        let mut w = widest(&column_header(lineup, col, style)).min(HEADER_WRAP);
        for &k in lineup.keys() {
            w = w.max(widest(&cell_text(lineup, style, col, k)));
        }
        let w = w + 3;
        match chunks.last_mut() {
            Some(c) if used + w <= room => c.push(col.clone()),
            _ => {
                chunks.push(vec![col.clone()]);
                used = 0;
            }
        }
        used += w;
    }
    chunks
}

/// Column `col`'s cell on row `k`: `-`, the value of its run that has the
/// row, or that value judged against its baseline.
fn cell_text(lineup: &Lineup, style: TableStyle, col: &[usize], k: RowKey) -> String {
    let Some(i) = lineup.in_column(col, k) else {
        return "-".to_string();
    };
    match (lineup.figure(i, k), lineup.judged(i, k)) {
        (None, _) => "-".to_string(),
        (Some(_), Some(m)) => judged_cell(&m, style),
        (Some(f), None) => lineup.printed(i).format_figure(f),
    }
}

/// A column's header: its runs' `#ids` (`#1 #2`: one device's runs of one
/// set of labels, merged), then as [`run_header`] of its first run, and
/// each run's region where they differ.
fn column_header(lineup: &Lineup, col: &[usize], style: TableStyle) -> String {
    let runs = lineup.runs();
    let ids: Vec<String> = col
        .iter()
        .map(|&i| format!("#{}", runs[i].summary.id))
        .collect();
    let first = run_header(&runs[col[0]], style);
    let rest = first.split_once('\n').map_or("", |(_, r)| r);
    let mut h = ids.join(" ");
    if !rest.is_empty() {
        h += "\n";
        h += rest;
    }
    h
}

/// `#12`, the labels, the tool when not iomark, what the run measured
/// through (`Samsung T7, USB 3.2 10 Gb/s, uas`; a network run's
/// interface) and the region, a fact of the device its test names leave
/// out.
fn run_header(run: &StoredRun, style: TableStyle) -> String {
    let s = &run.summary;
    let mut h = format!("#{}", s.id);
    if !s.labels.is_empty() {
        h += &format!("\n{}", style.text(&s.labels.join(",")));
    }
    if s.tool != "iomark" {
        h += &format!("\n({})", style.text(&s.tool));
    }
    let doc = run.document().ok();
    if let Some(d) = doc.as_ref().and_then(device_link) {
        h += &format!("\n{}", style.text(&d));
    } else if let Some(d) = &s.device {
        h += &format!("\n{}", style.text(d));
    }
    if let Some(RunBody::Disk(d)) = doc.as_ref().map(|d| &d.body) {
        if d.target.size_from_device {
            h += &format!("\nregion {}", d.target.size);
        }
        // A run under a memory limit measures another thing than the
        // same test without one (issue 46).
        if let Some(c) = &d.cgroup {
            h += &format!("\nmem limit {}", c.limit);
        }
    }
    h
}

/// Rows without a baseline: per run, the tests other runs have and it has
/// not (a different test size, engine or depth is a different test); by
/// label, the tests of a run no baseline-labelled run has. Empty when
/// every row has its baseline.
fn unmatched(lineup: &Lineup, style: TableStyle) -> String {
    let mut out = String::new();
    match lineup.baseline() {
        Baseline::FirstRun => {
            for (id, missing) in lineup.unmatched() {
                let missing: Vec<String> = missing.iter().map(|t| style.text(t)).collect();
                let _ = writeln!(out, "not in #{id}: {}", missing.join("; "));
            }
        }
        Baseline::Label(l) => {
            for (id, missing) in lineup.without_baseline() {
                let missing: Vec<String> = missing.iter().map(|t| style.text(t)).collect();
                let _ = writeln!(
                    out,
                    "no run labelled {} has these tests of #{id}: {}",
                    style.text(l),
                    missing.join("; ")
                );
            }
        }
    }
    out
}

/// Tests as rows, the columns `cols` (each runs of the lineup, from
/// [`Lineup::columns`]) as columns.
fn comparison_table(lineup: &Lineup, style: TableStyle, cols: &[Vec<usize>]) -> Table {
    let mut t = Table::new();
    let mut header = vec![Cell::new("test"), Cell::new("metric")];
    header.extend(cols.iter().map(|col| {
        let mut h = column_header(lineup, col, style);
        if lineup.is_baseline(col[0]) {
            h += "\n(baseline)";
        }
        Cell::new(h)
    }));
    t.set_header(header);
    for &k in lineup.keys() {
        // A split table leaves out the rows none of its runs has.
        if cols.iter().all(|col| lineup.in_column(col, k).is_none()) {
            continue;
        }
        let mut row = vec![
            Cell::new(test_cell(lineup, style, k.0)),
            Cell::new(style.text(k.1)),
        ];
        for col in cols {
            let text = cell_text(lineup, style, col, k);
            row.push(Cell::new(text).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    t
}

/// A test's name and, in brackets, the names its runs printed and warned
/// under (`(Seq read)`), so the row and the run's own output are visibly
/// one test.
fn test_cell(lineup: &Lineup, style: TableStyle, test: &str) -> String {
    let own = lineup.own_names(test);
    if own.is_empty() {
        return style.text(test);
    }
    let own: Vec<String> = own.iter().map(|n| style.text(n)).collect();
    let sep = match style {
        TableStyle::Terminal => "\n",
        TableStyle::Markdown => " ",
    };
    format!("{}{sep}({})", style.text(test), own.join("; "))
}

/// A figure with its ratio to the baseline's, `~` where the difference is
/// inside both spreads, what that means in words (`1.73x` on a latency is a
/// loss, and only the words say so), and the difference in the figure's
/// unit (`UASP gains 70 MB/s at QD1` without arithmetic by hand). On a
/// terminal the difference is on a line of its own, so a column stays
/// narrow enough for several beside the test's name.
fn judged_cell(m: &Matched, style: TableStyle) -> String {
    let sep = match style {
        TableStyle::Terminal => "\n",
        // Markdown cells cannot span lines.
        TableStyle::Markdown => " ",
    };
    let diff = m.difference_text();
    match m.judgement() {
        Some(j) => format!("{} {j}{sep}({diff})", m.value_text()),
        None => format!("{}{sep}({diff})", m.value_text()),
    }
}

/// The regressed figures, one line each, for stderr.
pub fn regression_lines(lineup: &Lineup) -> Vec<String> {
    let Some(t) = lineup.threshold() else {
        return Vec::new();
    };
    lineup
        .regressions()
        .iter()
        .map(|m| {
            let r = m.comparison.ratio.unwrap_or(f64::NAN);
            let worse = match m.candidate.direction() {
                Direction::LowerIsBetter => r - 1.0,
                _ => 1.0 - r,
            };
            format!(
                "regressed: #{} {} {}: {} against {} in #{} ({}, {:.1}% worse, more than {t})",
                m.run,
                esc(&m.candidate.test),
                esc(&m.candidate.metric),
                m.printed.format_figure(m.candidate),
                m.baseline_printed.format_figure(m.baseline),
                m.baseline_run,
                format_ratio(r),
                worse * 100.0,
            )
        })
        .collect()
}

/// The figures the gate could not judge, one line each, for stderr: the
/// ratio and its interval, which holds both no change and a loss past the
/// threshold.
pub fn undecided_lines(lineup: &Lineup) -> Vec<String> {
    let Some(t) = lineup.threshold() else {
        return Vec::new();
    };
    lineup
        .undecided()
        .iter()
        .map(|m| {
            let r = m.comparison.ratio.unwrap_or(f64::NAN);
            let within = match m.comparison.interval {
                Some(iv) => format!(
                    "the ratio lies between {} and {}",
                    format_ratio(iv.lo),
                    format_ratio(iv.hi)
                ),
                None => "the noise bands overlap".to_string(),
            };
            format!(
                "cannot tell: #{} {} {}: {} against {} in #{} ({}; {within}: \
                 no change and a loss of more than {t} both fit)",
                m.run,
                esc(&m.candidate.test),
                esc(&m.candidate.metric),
                m.printed.format_figure(m.candidate),
                m.baseline_printed.format_figure(m.baseline),
                m.baseline_run,
                format_ratio(r),
            )
        })
        .collect()
}

/// What `--fail-if-worse` says on stderr: each regressed figure
/// ([`regression_lines`]), each it could not judge ([`undecided_lines`]),
/// then how many regressed, or that none did, or that it cannot tell and
/// how to make it tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateReport {
    /// The lines to print, the count last.
    pub lines: Vec<String>,
    /// How many figures regressed: the gate fails when any did.
    pub regressed: usize,
    /// How many figures it could not judge: where none regressed, the
    /// gate says it cannot tell rather than pass.
    pub undecided: usize,
}

/// The gate's verdict on `lineup` (lined up with `threshold`) in words.
/// Refused ([`LineupError::NothingToJudge`]) when a candidate shares no
/// judged figure with its baseline: a gate that compared nothing must not
/// pass.
pub fn gate_report(lineup: &Lineup, threshold: WorseThreshold) -> Result<GateReport, LineupError> {
    lineup.check_gated()?;
    let mut lines = regression_lines(lineup);
    let regressed = lines.len();
    let undecided_lines = undecided_lines(lineup);
    let undecided = undecided_lines.len();
    lines.extend(undecided_lines);
    let fix = "more samples decide: run baseline and candidate again with --repeat 5 \
               (or a longer --runtime)";
    lines.push(match (regressed, undecided) {
        (0, 0) => format!(
            "no figure is worse than the baseline by more than {threshold} outside the noise"
        ),
        (0, 1) => format!(
            "cannot tell whether 1 figure is worse by more than {threshold}: \
             too few or too scattered samples; {fix}"
        ),
        (0, n) => format!(
            "cannot tell whether {n} figures are worse by more than {threshold}: \
             too few or too scattered samples; {fix}"
        ),
        (1, _) => format!("1 figure regressed by more than {threshold}"),
        (n, _) => format!("{n} figures regressed by more than {threshold}"),
    });
    Ok(GateReport {
        lines,
        regressed,
        undecided,
    })
}

/// What the ratios are against, the words, the gate's threshold, the
/// runs' warnings grouped by kind ([`warning_lines`]) and the runs that did
/// not complete.
fn legend(lineup: &Lineup, style: TableStyle) -> String {
    let runs = lineup.runs();
    let against = match lineup.baseline() {
        Baseline::FirstRun => format!("ratios are run / baseline #{}", runs[0].summary.id),
        Baseline::Label(l) => {
            let pairs: Vec<String> = lineup
                .baselines_used()
                .iter()
                .map(|(id, used)| {
                    let used: Vec<String> = used.iter().map(|b| format!("#{b}")).collect();
                    format!("#{id} against {}", used.join(", "))
                })
                .collect();
            format!(
                "ratios are run / the run labelled {} of the same device and test (of another device when none of the same has it): {}",
                style.text(l),
                if pairs.is_empty() {
                    "none".to_string()
                } else {
                    pairs.join("; ")
                }
            )
        }
    };
    let mut out = format!(
        "{against}; better and worse: bandwidth, IOPS and MFLOPS are better higher, latency and time lower; counts and percentages are only higher or lower; ~ marks a difference within noise: the 95% interval of the ratio of both runs' sample means (per-second samples, passes or repeats) holds no change and rules out a loss of the threshold (5% without one); cannot tell: the samples can neither show nor rule out such a loss; a figure whose baseline is 0 has no ratio, only its difference\n",
    );
    if let Some(t) = lineup.threshold() {
        let _ = writeln!(
            out,
            "regressed: worse than the baseline by more than {t} and outside the spread"
        );
    }
    for l in warning_lines(runs, style) {
        let _ = writeln!(out, "{l}");
    }
    for r in runs {
        if r.summary.status != RunStatus::Complete {
            let _ = writeln!(
                out,
                "warning: #{} is {}: its figures cover only what finished",
                r.summary.id,
                r.summary.status.as_str()
            );
        }
    }
    out
}

/// The runs' stored warnings, one line per kind: a kind raised once is
/// shown whole (`warning: #3 SEQ1M Q8T1 read: ...`); a kind raised several
/// times lists where (each run with its tests) and shows its first message
/// as an example, the rest being in `results show`.
pub(crate) fn warning_lines(runs: &[StoredRun], style: TableStyle) -> Vec<String> {
    // Kinds in first-seen order, each with where it was raised.
    let mut kinds: Vec<(WarningKind, Vec<Raised>)> = Vec::new();
    for r in runs {
        for w in &r.warnings {
            let entry = (r.summary.id.0, w.scope.as_str(), w.warning.message.as_str());
            match kinds.iter_mut().find(|(k, _)| *k == w.warning.kind) {
                Some((_, v)) => v.push(entry),
                None => kinds.push((w.warning.kind, vec![entry])),
            }
        }
    }
    kinds
        .into_iter()
        .map(|(kind, all)| {
            if let [(id, scope, msg)] = all[..] {
                return format!("warning: #{id} {}", scoped_in(style, scope, msg));
            }
            // Per run, its tests (scopes), each once; run-wide ones name
            // only the run.
            let mut per_run: Vec<(i64, Vec<&str>)> = Vec::new();
            for &(id, scope, _) in &all {
                let at = match per_run.iter().position(|(r, _)| *r == id) {
                    Some(at) => at,
                    None => {
                        per_run.push((id, Vec::new()));
                        per_run.len() - 1
                    }
                };
                let scopes = &mut per_run[at].1;
                if !scope.is_empty() && !scopes.contains(&scope) {
                    scopes.push(scope);
                }
            }
            let wher: Vec<String> = per_run
                .iter()
                .map(|(id, scopes)| {
                    if scopes.is_empty() {
                        return format!("#{id}");
                    }
                    let scopes: Vec<String> = scopes.iter().map(|s| style.text(s)).collect();
                    format!("#{id} ({})", scopes.join("; "))
                })
                .collect();
            let (id, scope, msg) = all[0];
            format!(
                "warning: {} ×{}: {}; the first: #{id} {}",
                kind_words(kind),
                all.len(),
                wher.join(", "),
                scoped_in(style, scope, msg)
            )
        })
        .collect()
}

/// Where a warning was raised: the run, the scope (a test or job; empty
/// for the whole run) and its message.
type Raised<'a> = (i64, &'a str, &'a str);

/// A warning kind in words: `cache suspected`.
fn kind_words(kind: WarningKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_else(|| format!("{kind:?}"))
}

#[cfg(test)]
pub(super) mod tests;
