//! Stored runs for a terminal and for other programs: the run list, one
//! run in detail, runs side by side with ratios to a baseline, and the
//! exports (the stored JSON documents, CSV with one row per figure,
//! Markdown).

use std::fmt::Write as _;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Table};
use iomark_model::figure::RateUnit;
use iomark_model::stored::{RunId, RunSummary, StoredRun};
use iomark_model::RunDocument;
use iomark_stats::lineup::Lineup;

use crate::escape_controls as esc;

mod compare;
#[cfg(test)]
mod tests;

pub use compare::{
    comparison, gate_report, regression_lines, undecided_lines, verdicts, GateReport, View,
};

/// A time for people, in the local zone: `2026-11-21 21:40`.
fn when(ms: u64, tz: &jiff::tz::TimeZone) -> String {
    match jiff::Timestamp::from_millisecond(ms as i64) {
        Ok(t) => t
            .to_zoned(tz.clone())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => "?".into(),
    }
}

/// `iomark results list`: one aligned line per run under a header, the
/// oldest first. The TOOL and NOTE columns only where some run has one
/// (another tool than iomark, a note). Fitted to `width` columns where
/// given: the widest of LABELS, TARGET, DEVICE, TOOL and NOTE gives up a
/// column at a time, down to a floor (NOTE goes when even that is too
/// wide), and a cell cut short ends in `…` (a target keeps its end, the
/// part of a path that names it).
pub fn run_list(runs: &[RunSummary], width: Option<usize>) -> String {
    const COLUMNS: usize = 10;
    let tz = jiff::tz::TimeZone::system();
    let header = [
        "ID", "STARTED", "STATUS", "KIND", "TOOL", "LABELS", "TARGET", "DEVICE", "WARN", "NOTE",
    ];
    // Columns that give up width, with the least each keeps, and which
    // keep their end when cut.
    const FLEXIBLE: [(usize, usize); 5] = [(4, 6), (5, 8), (6, 12), (7, 6), (9, 12)];
    const TARGET: usize = 6;
    const NOTE: usize = 9;
    let mut shown = [
        true,
        true,
        true,
        true,
        runs.iter().any(|r| r.tool != "iomark"),
        true,
        true,
        true,
        true,
        runs.iter().any(|r| r.note.is_some()),
    ];
    let or_dash = |s: Option<&str>| s.map_or_else(|| "-".into(), |t| esc(t).into_owned());
    let rows = runs.iter().map(|r| {
        [
            r.id.to_string(),
            when(r.started_at_ms, &tz),
            r.status.as_str().to_string(),
            esc(&r.kind).into_owned(),
            esc(&r.tool).into_owned(),
            esc(&r.labels.join(",")).into_owned(),
            or_dash(r.target.as_deref()),
            or_dash(r.device.as_deref()),
            if r.warning_count > 0 {
                r.warning_count.to_string()
            } else {
                String::new()
            },
            r.note.as_deref().map(short_note).unwrap_or_default(),
        ]
    });
    let rows: Vec<[String; COLUMNS]> = std::iter::once(header.map(str::to_string))
        .chain(rows)
        .collect();
    // A plain aligned listing: thousands of rows through a table layout
    // engine cost more than the query.
    let mut widths = [0; COLUMNS];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    if let Some(limit) = width {
        let natural = widths;
        let total = |widths: &[usize; COLUMNS], shown: &[bool; COLUMNS]| {
            let cols: Vec<usize> = (0..COLUMNS).filter(|&i| shown[i]).collect();
            cols.iter().map(|&i| widths[i]).sum::<usize>() + 2 * (cols.len() - 1)
        };
        loop {
            while total(&widths, &shown) > limit {
                let widest = FLEXIBLE
                    .iter()
                    .filter(|&&(i, least)| shown[i] && widths[i] > least)
                    .max_by_key(|&&(i, _)| widths[i]);
                match widest {
                    Some(&(i, _)) => widths[i] -= 1,
                    None => break,
                }
            }
            // Too narrow for the notes too: they go (results show has
            // them), and the rest get their room back.
            if total(&widths, &shown) <= limit || !shown[NOTE] {
                break;
            }
            shown[NOTE] = false;
            widths = natural;
        }
    }
    let right = [
        true, false, false, false, false, false, false, false, true, false,
    ];
    let mut out = String::new();
    let mut line = String::new();
    for row in &rows {
        line.clear();
        for (i, cell) in row.iter().enumerate().filter(|&(i, _)| shown[i]) {
            if i > 0 {
                line.push_str("  ");
            }
            let cell = cut(cell, widths[i], i == TARGET);
            let pad = widths[i] - cell.chars().count();
            if right[i] {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(&cell);
            } else {
                line.push_str(&cell);
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `cell` in at most `width` characters, ending (or with `keep_end`,
/// beginning) in `…` where it was cut.
fn cut(cell: &str, width: usize, keep_end: bool) -> String {
    let n = cell.chars().count();
    if n <= width {
        return cell.to_string();
    }
    let kept = width.saturating_sub(1);
    if keep_end {
        format!("…{}", cell.chars().skip(n - kept).collect::<String>())
    } else {
        format!("{}…", cell.chars().take(kept).collect::<String>())
    }
}

fn short_note(n: &str) -> String {
    let line = esc(n.lines().next().unwrap_or("")).into_owned();
    if line.chars().count() > 40 {
        format!("{}…", line.chars().take(39).collect::<String>())
    } else {
        line
    }
}

/// `iomark results show`: where and how the run ran, then the run as it
/// printed itself (CrystalDiskMark's grid under CrystalDiskMark's names,
/// STREAM's table, the rank table of a run across MPI ranks, its warnings
/// a line per kind). A network run, whose text iperf3's layout printed as
/// it went, shows its figures' table. `verbose` adds the run's own
/// verbose text, the table of every stored figure under its stored
/// (fio-style) name with its spread, and what the device saw. `width`: a
/// terminal's columns, which tables and prose are fitted to; none leaves
/// lines whole.
pub fn run_detail(run: &StoredRun, verbose: bool, width: Option<usize>) -> String {
    // The stored document, parsed once for the header and the body.
    let doc = run.document().ok();
    let mut out = run_header(run, doc.as_ref(), width);
    out.push('\n');
    let own = doc
        .as_ref()
        .and_then(|d| crate::Output::Text { verbose }.render(d).ok())
        .filter(|text| !text.trim().is_empty());
    if let Some(text) = &own {
        out.push_str(text);
    }
    if own.is_none() || verbose {
        if own.is_some() {
            out.push('\n');
        }
        out.push_str(&figure_table(run, doc.as_ref(), width));
    }
    if verbose {
        // A profile's verbose text has it already; a custom job's names
        // the device per job only.
        if let Some(iomark_model::RunBody::Disk(d)) = doc.as_ref().map(|doc| &doc.body) {
            if d.profile_result.is_none() {
                let mut seen = String::new();
                crate::device_seen::section(&mut seen, d);
                out.push_str(&crate::escape_controls_keep_lines(&seen));
            }
        }
    }
    if own.is_none() {
        if verbose {
            for w in &run.warnings {
                let _ = writeln!(out, "warning: {}", scoped(&w.scope, &w.warning.message));
            }
        } else {
            let style = TableStyle::Terminal;
            for l in compare::warning_lines(std::slice::from_ref(run), style, false) {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    match width {
        Some(w) => crate::fit_prose(&out, w),
        None => out,
    }
}

/// The lines above a shown run's figures: its id and status, when, the
/// command, labels, note, target, device, region, host and memory limit;
/// a value too long for `width` wraps under itself.
fn run_header(run: &StoredRun, doc: Option<&RunDocument>, width: Option<usize>) -> String {
    let s = &run.summary;
    let tz = jiff::tz::TimeZone::system();
    let secs = s.finished_at_ms.saturating_sub(s.started_at_ms) as f64 / 1e3;
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(
        out,
        "run {}  {}  {} run by {} {}",
        s.id,
        s.status.as_str(),
        esc(&s.kind),
        esc(&s.tool),
        esc(&s.tool_version)
    );
    let mut line = |key: &str, value: &str| {
        let value = match width {
            Some(w) => crate::fit_prose(value, w.saturating_sub(10).max(20)),
            None => value.to_string(),
        };
        let value = value.replace('\n', "\n          ");
        let _ = writeln!(out, "{key:<10}{value}");
    };
    line(
        "started",
        &format!("{} ({secs:.0} s)", when(s.started_at_ms, &tz)),
    );
    if !s.command_line.is_empty() {
        line("command", &esc(&s.command_line.join(" ")));
    }
    if !s.labels.is_empty() {
        line("labels", &esc(&s.labels.join(", ")));
    }
    if let Some(n) = &s.note {
        // A note of several lines keeps them, each escaped.
        let lines: Vec<_> = n.lines().map(esc).collect();
        line("note", &lines.join("\n"));
    }
    if let Some(t) = &s.target {
        line("target", &esc(t));
    }
    if let Some(d) = &s.device {
        line("device", &esc(d));
    }
    if let Some(iomark_model::RunBody::Disk(d)) = doc.map(|doc| &doc.body) {
        line("region", &region(&d.target));
    }
    if let Some(h) = doc.and_then(|doc| doc.host.as_ref()) {
        line(
            "host",
            &format!(
                "{} ({}, {} CPUs, {} RAM), kernel {}",
                esc(&h.hostname),
                esc(&h.cpu_model),
                h.cpu_count,
                h.memory_total,
                esc(&h.kernel_release)
            ),
        );
    }
    // The memory limit's record, kept with the run (issue 32: it was in
    // the live text only).
    let cgroup = doc.and_then(|doc| match &doc.body {
        iomark_model::RunBody::Disk(d) => d.cgroup.as_deref(),
        iomark_model::RunBody::Mem(m) => m.cgroup.as_deref(),
        _ => None,
    });
    if let Some(cg) = cgroup {
        line(
            "mem limit",
            &format!(
                "{}, {} OOM kills",
                crate::disk::limit_record(cg),
                cg.oom_kills
            ),
        );
    }
    out
}

/// Every stored figure under its stored name, with its spread, in the
/// unit its run printed rates in; fitted to `width` (its names wrap).
fn figure_table(run: &StoredRun, doc: Option<&RunDocument>, width: Option<usize>) -> String {
    if run.figures.is_empty() {
        return "no figures were stored with this run\n".to_string();
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header([
        "test",
        "metric",
        "value",
        "spread (min – max)",
    ]);
    if let Some(w) = width {
        t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
            .set_width(u16::try_from(w).unwrap_or(u16::MAX));
    }
    // Rates in the unit the run printed (a sweep's MiB/s, MacBench's KB/s).
    let printed = doc
        .map(|d| RateUnit::printed_by(&d.body))
        .unwrap_or_default();
    for f in &run.figures {
        let shown = |v: f64| printed.format(f.unit, v);
        t.add_row([
            Cell::new(esc(&f.test)),
            Cell::new(esc(&f.metric)),
            Cell::new(shown(f.value)).set_alignment(CellAlignment::Right),
            Cell::new(
                f.spread
                    .map(|(lo, hi)| spread(&shown(lo), &shown(hi)))
                    .unwrap_or_default(),
            ),
        ]);
    }
    format!("{t}\n")
}

/// `lo – hi`, the unit once when both have the same: `63.84 – 70.56 MB/s`.
fn spread(lo: &str, hi: &str) -> String {
    match lo.split_once(' ') {
        Some((number, unit)) if hi.ends_with(&format!(" {unit}")) => format!("{number} – {hi}"),
        _ => format!("{lo} – {hi}"),
    }
}

/// The region a disk run's jobs ran over, and whose choice it was: a
/// whole device's or file's size is a fact of the device, left out of the
/// test names; a size asked for is part of them.
fn region(t: &iomark_model::disk::DiskTarget) -> String {
    use iomark_model::disk::TargetKind;
    let whose = match (t.size_from_device, t.kind) {
        (true, TargetKind::BlockDevice) => "the whole device, not in the test names",
        (true, _) => "the whole file, not in the test names",
        (false, TargetKind::TestFile) => "the test file",
        (false, _) => "as asked (--size)",
    };
    format!("{} ({whose})", t.size)
}

/// A stored warning for the terminal, escaped.
fn scoped(scope: &str, msg: &str) -> String {
    scoped_in(TableStyle::Terminal, scope, msg)
}

/// A stored warning, escaped for `style`.
pub(crate) fn scoped_in(style: TableStyle, scope: &str, msg: &str) -> String {
    if scope.is_empty() {
        style.text(msg)
    } else {
        format!("{}: {}", style.text(scope), style.text(msg))
    }
}

/// How a comparison is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableStyle {
    /// Box-drawing characters, headers over several lines.
    Terminal,
    /// A Markdown table, each header on one line.
    Markdown,
}

impl TableStyle {
    /// Text from outside (a label, a device, a host, a path, a test's
    /// name) fit for this style: control characters shown, not sent; in
    /// Markdown also nothing that ends a cell or makes a link or HTML.
    pub(crate) fn text(self, s: &str) -> String {
        match self {
            TableStyle::Terminal => esc(s).into_owned(),
            TableStyle::Markdown => crate::escape_markdown(s),
        }
    }
}

/// What `iomark results export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// The stored documents ([`export_json`]).
    Json,
    /// One row per figure ([`export_csv`]).
    Csv,
    /// The comparison table against the first run, in Markdown.
    Markdown,
}

impl ExportFormat {
    /// The formats' names, as `--format` takes them.
    pub const NAMES: [&'static str; 3] = ["json", "csv", "markdown"];
}

/// A `--format` that names no export format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an export format: use json, csv or markdown")]
pub struct UnknownExportFormat(String);

impl std::str::FromStr for ExportFormat {
    type Err = UnknownExportFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(ExportFormat::Json),
            "csv" => Ok(ExportFormat::Csv),
            "markdown" => Ok(ExportFormat::Markdown),
            _ => Err(UnknownExportFormat(s.to_string())),
        }
    }
}

/// `runs` as `format` to `out`. A failure is an `io::Error`, so that a
/// closed pipe is recognised as one.
pub fn export(
    runs: &[StoredRun],
    format: ExportFormat,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    match format {
        ExportFormat::Json => out.write_all(export_json(runs)?.as_bytes()),
        // A write error keeps its kind, so a closed pipe is seen as one.
        ExportFormat::Csv => export_csv(runs, out).map_err(|e| {
            let kind = match e.kind() {
                csv::ErrorKind::Io(io) => io.kind(),
                _ => std::io::ErrorKind::Other,
            };
            std::io::Error::new(kind, e)
        }),
        ExportFormat::Markdown => {
            let table = comparison(&Lineup::new(runs, None), TableStyle::Markdown, View::ALL);
            out.write_all(table.as_bytes())
        }
    }
}

/// `iomark results import`'s line for one stored run: `imported
/// fio.json as run 7 (fio fio-3.33, 4 figures)`.
pub fn imported(file: &str, id: RunId, doc: &RunDocument) -> String {
    format!(
        "imported {} as run {id} ({} {}, {} figures)\n",
        esc(file),
        esc(&doc.tool),
        esc(&doc.tool_version),
        doc.body.figures().len()
    )
}

/// The stored documents as one JSON array, each with its stored status (a
/// killed run's document still says what its writer last set); verbatim
/// where this version cannot read one, so nothing is lost. The line
/// separators and bidirectional controls serde_json (or an older iomark)
/// left raw in the text are escaped ([`iomark_model::escape::json_escaped`]).
pub fn export_json(runs: &[StoredRun]) -> serde_json::Result<String> {
    let mut out = String::from("[");
    for (i, r) in runs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let text = match r.document() {
            Ok(doc) => serde_json::to_string(&doc)?,
            Err(_) => r.document_json.clone(),
        };
        out.push('\n');
        out.push_str(&text);
    }
    out.push_str("\n]\n");
    Ok(iomark_model::escape::json_escaped(out))
}

/// One CSV row per stored figure, with its run's identity.
pub fn export_csv(runs: &[StoredRun], out: impl std::io::Write) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "run_id",
        "started_at_ms",
        "status",
        "tool",
        "labels",
        "target",
        "device",
        "test",
        "metric",
        "unit",
        "value",
        "spread_min",
        "spread_max",
        "printed_unit",
        "printed_value",
    ])?;
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    for r in runs {
        let s = &r.summary;
        let printed = r
            .document()
            .map(|d| RateUnit::printed_by(&d.body))
            .unwrap_or_default();
        for f in &r.figures {
            // A byte rate as the run printed it (`20.00` in `MiB/s`), the
            // value staying in base units for spreadsheets.
            let (printed_unit, printed_value) = match printed.name_for(f.unit) {
                Some(name) => (
                    name.to_string(),
                    printed.of_bytes_per_sec(f.value).to_string(),
                ),
                None => (String::new(), String::new()),
            };
            w.write_record([
                s.id.to_string(),
                s.started_at_ms.to_string(),
                s.status.as_str().to_string(),
                s.tool.clone(),
                s.labels.join(","),
                s.target.clone().unwrap_or_default(),
                s.device.clone().unwrap_or_default(),
                f.test.clone(),
                f.metric.clone(),
                f.unit.as_str().to_string(),
                f.value.to_string(),
                opt(f.spread.map(|s| s.0)),
                opt(f.spread.map(|s| s.1)),
                printed_unit,
                printed_value,
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}
