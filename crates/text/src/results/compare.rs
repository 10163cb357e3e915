//! `iomark results compare` and the Markdown export: tests as rows, runs
//! as columns, each figure with its value, its ratio to its baseline's and
//! the difference in its unit; on a terminal the verdict of each run first
//! and tables split to fit the terminal's width; then what has no
//! baseline, the legend and the runs' warnings, one line per kind.

use std::fmt::Write as _;

use comfy_table::presets::{ASCII_MARKDOWN, UTF8_FULL_CONDENSED};
use comfy_table::{Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};
use iomark_model::figure::{device_link, Direction};
use iomark_model::stored::StoredRun;
use iomark_model::{RunBody, RunStatus, WarningKind};
use iomark_stats::compare::format_ratio;
use iomark_stats::lineup::counterpart;

use super::{scoped_in, TableStyle};
use crate::escape_controls as esc;
use iomark_stats::gate::{Verdict, WorseThreshold};
use iomark_stats::lineup::{Baseline, Lineup, LineupError, Matched, RowKey};

/// How the comparison is drawn for a person: on a terminal of `width`
/// columns; `verbose` adds the rows of CPU figures and gives each test its
/// stored (fio-style) name beside the one its run printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    /// The terminal's columns: tables split and prose wraps to fit them.
    pub width: usize,
    /// CPU rows and stored names too.
    pub verbose: bool,
}

impl View {
    /// Everything, on a terminal of 100 columns (a Markdown export draws
    /// every row, and its width is the page's).
    pub const ALL: View = View {
        width: 100,
        verbose: true,
    };
}

/// The widest a run's header line counts when fitting columns: longer
/// ones wrap.
const HEADER_WRAP: usize = 16;

/// The widest the test column is made (its names wrap within it) when
/// deciding how many run columns fit beside it.
const TEST_COLUMN_MAX: usize = 24;

/// The comparison: first the verdict of each run against its baseline in
/// a line (hyperfine's "X ran 1.22 times faster than Y" first), then
/// tests as rows and runs as columns, each figure with its ratio to its
/// baseline and whether that is better or worse, then the tests without a
/// baseline, the legend and the runs' warnings. On a terminal, the runs
/// whose columns do not fit beside the test's name in `view.width` go to
/// further tables, and prose wraps at it.
pub fn comparison(lineup: &Lineup, style: TableStyle, view: View) -> String {
    let runs = lineup.runs();
    let all = lineup.columns();
    let keys = shown_keys(lineup, view);
    let mut out = String::new();
    match style {
        TableStyle::Terminal => {
            for line in verdict_lines(lineup, &keys, view) {
                out += &crate::fit_prose(&format!("{line}\n"), view.width);
            }
            if !out.is_empty() {
                out.push('\n');
            }
            // A judged cell on two lines (value and ratio, then the
            // difference), or where that splits the runs into more tables
            // than need be, on three.
            let mut stacked = false;
            let mut chunks = terminal_chunks(lineup, &all, &keys, view, false);
            if chunks.len() > 1 {
                let narrower = terminal_chunks(lineup, &all, &keys, view, true);
                if narrower.len() < chunks.len() {
                    (chunks, stacked) = (narrower, true);
                }
            }
            for (n, chunk) in chunks.iter().enumerate() {
                if n > 0 {
                    out.push('\n');
                }
                let mut t = comparison_table(lineup, style, chunk, &keys, view, stacked);
                t.load_preset(UTF8_FULL_CONDENSED)
                    .set_content_arrangement(ContentArrangement::Dynamic)
                    .set_width(u16::try_from(view.width).unwrap_or(u16::MAX));
                // The metric and the runs' cells keep their lines whole
                // (terminal_chunks made room for them), a run's header
                // wraps within its cells' width; the test's name wraps in
                // what is left.
                let widths: Vec<usize> = chunk
                    .iter()
                    .map(|col| column_width(lineup, col, &keys, view, stacked))
                    .collect();
                for (i, c) in t.column_iter_mut().enumerate().skip(1) {
                    c.set_constraint(match i {
                        1 => ColumnConstraint::ContentWidth,
                        // Its content and a space either side.
                        i => ColumnConstraint::Absolute(Width::Fixed(
                            u16::try_from(widths[i - 2] + 2).unwrap_or(u16::MAX),
                        )),
                    });
                }
                let _ = writeln!(out, "{t}");
            }
            let rest = unmatched(lineup, style) + &legend(lineup, style, &keys, view);
            out += &crate::fit_prose(&rest, view.width);
            return out;
        }
        TableStyle::Markdown => {
            let mut t = comparison_table(lineup, style, &all, &keys, view, false);
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
    out + &legend(lineup, style, &keys, view)
}

/// The rows drawn: all of them but, unless `verbose`, those of CPU figures
/// (how busy the CPUs were is evidence, read under `-v`, not the result).
fn shown_keys<'a>(lineup: &Lineup<'a>, view: View) -> Vec<RowKey<'a>> {
    lineup
        .keys()
        .iter()
        .copied()
        .filter(|k| view.verbose || !k.1.starts_with("cpu"))
        .collect()
}

/// The verdict lines alone, for a page that draws its own table: a line
/// per run against its baseline, every figure counted (CPU rows too), the
/// tests by the names their runs printed, each line whole.
pub fn verdicts(lineup: &Lineup) -> Vec<String> {
    let view = View {
        width: usize::MAX,
        verbose: false,
    };
    verdict_lines(lineup, lineup.keys(), view)
}

/// A line per run that has a baseline: how many of its figures are
/// better, worse, regressed, within noise or cannot be told, and the one
/// that lost most.
fn verdict_lines(lineup: &Lineup, keys: &[RowKey], view: View) -> Vec<String> {
    let runs = lineup.runs();
    let mut lines = Vec::new();
    for col in lineup.columns() {
        for &i in &col {
            if lineup.is_baseline(i) {
                continue;
            }
            let judged: Vec<Matched> = keys
                .iter()
                .filter_map(|&k| lineup.judged(i, k))
                .filter(|m| m.comparison.ratio.is_some())
                .collect();
            if judged.is_empty() {
                // A first-run baseline with no test in common: say so
                // first, and what makes the tests differ, rather than a
                // table of dashes.
                if matches!(lineup.baseline(), Baseline::FirstRun) {
                    lines.push(format!(
                        "#{} against #{}: no test in common{}; nothing compared",
                        runs[i].summary.id,
                        runs[0].summary.id,
                        differing_words(&runs[i], &runs[0])
                    ));
                }
                continue;
            }
            let count = |v: Verdict| judged.iter().filter(|m| m.verdict == v).count();
            let mut parts: Vec<String> = [
                Verdict::Better,
                Verdict::Worse,
                Verdict::Regressed,
                Verdict::WithinNoise,
                Verdict::CannotTell,
                Verdict::Same,
            ]
            .into_iter()
            .map(|v| (count(v), v))
            .filter(|(n, _)| *n > 0)
            .map(|(n, v)| format!("{n} {}", v.words()))
            .collect();
            let worst = judged
                .iter()
                .filter(|m| matches!(m.verdict, Verdict::Worse | Verdict::Regressed))
                .max_by(|a, b| loss(a).total_cmp(&loss(b)));
            if let Some(m) = worst {
                parts.push(format!(
                    "most lost: {} {} {}",
                    row_name(lineup, TableStyle::Terminal, &m.candidate.test, view),
                    esc(&m.candidate.metric),
                    format_ratio(m.comparison.ratio.unwrap_or(f64::NAN))
                ));
            }
            let mut against: Vec<String> = judged
                .iter()
                .map(|m| format!("#{}", m.baseline_run))
                .collect();
            against.dedup();
            lines.push(format!(
                "#{} against {}: {}",
                runs[i].summary.id,
                against.join(", "),
                parts.join(", ")
            ));
        }
    }
    lines
}

/// What tells run `a`'s first test from run `b`'s, as ` (#A ran QD8
/// where #B ran QD1)`: the words of each name the other lacks, at most
/// three each; empty when nothing tells them apart.
fn differing_words(a: &StoredRun, b: &StoredRun) -> String {
    let words = |r: &StoredRun| -> Vec<String> {
        r.figures.first().map_or_else(Vec::new, |f| {
            f.test
                .split([' ', ','])
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect()
        })
    };
    let (wa, wb) = (words(a), words(b));
    let only = |x: &[String], y: &[String]| -> String {
        let own: Vec<&str> = x
            .iter()
            .filter(|w| !y.contains(w))
            .take(3)
            .map(String::as_str)
            .collect();
        own.join(" ")
    };
    let (oa, ob) = (only(&wa, &wb), only(&wb, &wa));
    if oa.is_empty() || ob.is_empty() {
        return String::new();
    }
    format!(
        " (#{} ran {} where #{} ran {})",
        a.summary.id,
        esc(&oa),
        b.summary.id,
        esc(&ob)
    )
}

/// How much worse a figure is, as a fraction, in its direction.
fn loss(m: &Matched) -> f64 {
    let r = m.comparison.ratio.unwrap_or(1.0);
    match m.candidate.direction() {
        Direction::LowerIsBetter => r - 1.0,
        _ => 1.0 - r,
    }
}

/// The runs split into tables that fit `view.width`: each run column as
/// wide as its widest cell line, beside a metric column as wide as its
/// widest name and a test column as wide as its widest name (at most
/// [`TEST_COLUMN_MAX`]); at least one column per table.
fn terminal_chunks(
    lineup: &Lineup,
    columns: &[Vec<usize>],
    keys: &[RowKey],
    view: View,
    stacked: bool,
) -> Vec<Vec<Vec<usize>>> {
    let style = TableStyle::Terminal;
    let widest = |text: &str| text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let metric = keys
        .iter()
        .map(|k| widest(&style.text(k.1)))
        .max()
        .unwrap_or(0)
        .max("metric".len());
    let test = keys
        .iter()
        .map(|k| widest(&row_name(lineup, style, k.0, view)))
        .max()
        .unwrap_or(0)
        .clamp("test".len(), TEST_COLUMN_MAX);
    // Each column costs its content, a space either side and a border.
    let room = view.width.saturating_sub(1 + (test + 3) + (metric + 3));
    let mut chunks: Vec<Vec<Vec<usize>>> = Vec::new();
    let mut used = 0;
    for col in columns {
        let w = column_width(lineup, col, keys, view, stacked) + 3;
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

/// How wide column `col`'s text is: its widest cell line, or its header's
/// up to [`HEADER_WRAP`] (a fifth of a wider terminal's width): a long
/// header line, a device's chain, wraps: it does not set the width on its
/// own.
fn column_width(
    lineup: &Lineup,
    col: &[usize],
    keys: &[RowKey],
    view: View,
    stacked: bool,
) -> usize {
    let style = TableStyle::Terminal;
    let widest = |text: &str| text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let wrap = HEADER_WRAP.max(view.width / 5);
    let mut w = widest(&column_header(lineup, col, style)).min(wrap);
    if lineup.is_baseline(col[0]) {
        w = w.max("(baseline)".len());
    }
    for &k in keys {
        w = w.max(widest(&cell_text(lineup, style, col, k, stacked)));
    }
    w
}

/// Column `col`'s cell on row `k`: `-`, the value of its run that has the
/// row, or that value judged against its baseline.
fn cell_text(
    lineup: &Lineup,
    style: TableStyle,
    col: &[usize],
    k: RowKey,
    stacked: bool,
) -> String {
    let Some(i) = lineup.in_column(col, k) else {
        return "-".to_string();
    };
    match (lineup.figure(i, k), lineup.judged(i, k)) {
        (None, _) => "-".to_string(),
        (Some(_), Some(m)) => judged_cell(&m, style, stacked),
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
                for (differs, tests) in counterpart::by_reason(&missing) {
                    let tests: Vec<String> = tests.iter().map(|t| style.text(t)).collect();
                    let why = counterpart::reason("which", differs, tests.len())
                        .map(|r| format!(", {}", style.text(&r)))
                        .unwrap_or_default();
                    let _ = writeln!(out, "not in #{id}{why}: {}", tests.join("; "));
                }
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

/// Tests as rows (those of `keys`), the columns `cols` (each runs of the
/// lineup, from [`Lineup::columns`]) as columns.
fn comparison_table(
    lineup: &Lineup,
    style: TableStyle,
    cols: &[Vec<usize>],
    keys: &[RowKey],
    view: View,
    stacked: bool,
) -> Table {
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
    for &k in keys {
        // A split table leaves out the rows none of its runs has.
        if cols.iter().all(|col| lineup.in_column(col, k).is_none()) {
            continue;
        }
        let mut row = vec![
            Cell::new(row_name(lineup, style, k.0, view)),
            Cell::new(style.text(k.1)),
        ];
        for col in cols {
            let text = cell_text(lineup, style, col, k, stacked);
            row.push(Cell::new(text).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    t
}

/// A test's row name: the names its runs printed it under (CrystalDiskMark's
/// `SEQ1M Q8T1 read`), so the row and the run's own output are visibly
/// one test; with `verbose`, or where the runs printed none, its stored
/// name, the printed ones in brackets after it.
fn row_name(lineup: &Lineup, style: TableStyle, test: &str, view: View) -> String {
    let own = lineup.own_names(test);
    if own.is_empty() {
        return style.text(test);
    }
    let own: Vec<String> = own.iter().map(|n| style.text(n)).collect();
    if !view.verbose {
        return own.join("; ");
    }
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
/// narrow enough for several beside the test's name; `stacked`, the
/// judgement too.
fn judged_cell(m: &Matched, style: TableStyle, stacked: bool) -> String {
    let sep = match style {
        TableStyle::Terminal => "\n",
        // Markdown cells cannot span lines.
        TableStyle::Markdown => " ",
    };
    let diff = m.difference_text();
    match m.judgement() {
        Some(j) if stacked => format!("{}{sep}{j}{sep}({diff})", m.value_text()),
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
                "regressed: #{} {} {}: {} against {} ({}, {:.1}% worse, more than {t})",
                m.run,
                esc(&m.candidate.test),
                esc(&m.candidate.metric),
                m.printed.format_figure(m.candidate),
                m.baseline_text(),
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
                "cannot tell: #{} {} {}: {} against {} ({}; {within}: \
                 no change and a loss of more than {t} both fit)",
                m.run,
                esc(&m.candidate.test),
                esc(&m.candidate.metric),
                m.printed.format_figure(m.candidate),
                m.baseline_text(),
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
    // A figure with no samples and no band (an import without its
    // intervals) gains nothing from --repeat: say what it lacks.
    let blind = lineup
        .undecided()
        .iter()
        .filter(|m| m.comparison.interval.is_none() && !m.comparison.bands_known)
        .count();
    // Against a pool of runs over time, the runs' own spread decides, not
    // the samples within one run: more runs in the pool narrow it.
    let pooled = lineup
        .undecided()
        .iter()
        .filter(|m| m.pooled > 1)
        .map(|m| m.pooled)
        .max();
    let why = if let Some(n) = pooled.filter(|_| blind == 0) {
        format!(
            "the {n} baseline runs pooled differ from each other too much to show or \
             rule out such a loss; more runs labelled as the baseline narrow that, where \
             the machine's level drifts between runs by less than the threshold"
        )
    } else if blind == undecided {
        "no samples are stored to weigh (an import without its intervals): compare runs \
         that keep their seconds, as iomark's own do"
            .to_string()
    } else {
        let mut why = "too few or too scattered samples; more samples decide: run baseline \
                       and candidate again with --repeat 5 (or a longer --runtime)"
            .to_string();
        if blind > 0 {
            why += "; those with no samples stored (an import without its intervals) need \
                    runs that keep their seconds";
        }
        why
    };
    lines.push(match (regressed, undecided) {
        (0, 0) => format!(
            "no figure is worse than the baseline by more than {threshold} outside the noise"
        ),
        (0, 1) => format!("cannot tell whether 1 figure is worse by more than {threshold}: {why}"),
        (0, n) => {
            format!("cannot tell whether {n} figures are worse by more than {threshold}: {why}")
        }
        (1, _) => format!("1 figure regressed by more than {threshold}"),
        (n, _) => format!("{n} figures regressed by more than {threshold}"),
    });
    Ok(GateReport {
        lines,
        regressed,
        undecided,
    })
}

/// What the ratios are against, the words (in full under `verbose`,
/// `--help` has them too), the gate's threshold, the runs' warnings
/// grouped by kind ([`warning_lines`]), the rows left out and the runs
/// that did not complete.
fn legend(lineup: &Lineup, style: TableStyle, keys: &[RowKey], view: View) -> String {
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
                "ratios are run / the run labelled {} of the same device and test (their mean when several, a baseline over time; of another device when none of the same has it): {}",
                style.text(l),
                if pairs.is_empty() {
                    "none".to_string()
                } else {
                    pairs.join("; ")
                }
            )
        }
    };
    let words = if view.verbose {
        "better and worse: bandwidth, IOPS and MFLOPS are better higher, latency and time lower; counts and percentages are only higher or lower; ~ marks a difference within noise: the 90% interval of the ratio of both runs' sample means (each end a one-sided 95% bound) (per-second samples, passes or repeats) holds no change and rules out a loss of the threshold (5% without one); cannot tell: the samples can neither show nor rule out such a loss; a figure whose baseline is 0 has no ratio, only its difference"
    } else {
        "~ within noise: no change, and a loss of the threshold (5% without one) ruled out; cannot tell: too few or too scattered samples to say (more with -v)"
    };
    let mut out = format!("{against}; {words}\n");
    let hidden = lineup.keys().len() - keys.len();
    if hidden > 0 {
        let rows = if hidden == 1 { "row" } else { "rows" };
        let _ = writeln!(out, "{hidden} {rows} of CPU figures with -v");
    }
    if let Some(t) = lineup.threshold() {
        let _ = writeln!(
            out,
            "regressed: worse than the baseline by more than {t} and outside the spread"
        );
    }
    for l in warning_lines(runs, style, view.verbose) {
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
/// times names where (each run with up to [`NAMED`] of its tests, then how
/// many more) and what the first one saw, up to the first colon of its
/// message, the rest being in `results show -v`. `verbose`: every warning
/// whole, a line each.
pub(crate) fn warning_lines(runs: &[StoredRun], style: TableStyle, verbose: bool) -> Vec<String> {
    if verbose {
        return runs
            .iter()
            .flat_map(|r| {
                r.warnings.iter().map(move |w| {
                    format!(
                        "warning: #{} {}",
                        r.summary.id,
                        scoped_in(style, &w.scope, &w.warning.message)
                    )
                })
            })
            .collect();
    }
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
                    let mut named: Vec<String> =
                        scopes.iter().take(NAMED).map(|s| style.text(s)).collect();
                    if scopes.len() > NAMED {
                        named.push(format!("{} more", scopes.len() - NAMED));
                    }
                    format!("#{id} ({})", named.join("; "))
                })
                .collect();
            let (id, scope, msg) = all[0];
            // The observation, before the detail and the remedy.
            let seen = crate::run_warnings::observation(msg);
            format!(
                "warning: {} ×{}: {}; the first: #{id} {}",
                kind_words(kind),
                all.len(),
                wher.join(", "),
                scoped_in(style, scope, seen)
            )
        })
        .collect()
}

/// Tests of a run named on a grouped warning's line before "N more".
const NAMED: usize = 3;

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
