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

pub use compare::{comparison, gate_report, regression_lines, undecided_lines, GateReport};

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
/// oldest first.
pub fn run_list(runs: &[RunSummary]) -> String {
    let tz = jiff::tz::TimeZone::system();
    let header = [
        "ID", "STARTED", "STATUS", "KIND", "TOOL", "LABELS", "TARGET", "DEVICE", "WARN", "NOTE",
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
    let rows: Vec<[String; 10]> = std::iter::once(header.map(str::to_string))
        .chain(rows)
        .collect();
    // A plain aligned listing: thousands of rows through a table layout
    // engine cost more than the query.
    let mut width = [0; 10];
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let right = [
        true, false, false, false, false, false, false, false, true, false,
    ];
    let mut out = String::new();
    let mut line = String::new();
    for row in &rows {
        line.clear();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = width[i] - cell.chars().count();
            if right[i] {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if i + 1 < row.len() {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The first line of a note, cut to 40 characters.
fn short_note(n: &str) -> String {
    let line = esc(n.lines().next().unwrap_or("")).into_owned();
    if line.chars().count() > 40 {
        format!("{}…", line.chars().take(39).collect::<String>())
    } else {
        line
    }
}

/// `iomark results show`: where and how the run ran, its figures with
/// their spread, and its warnings.
pub fn run_detail(run: &StoredRun) -> String {
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
        line("note", &lines.join("\n          "));
    }
    if let Some(t) = &s.target {
        line("target", &esc(t));
    }
    if let Some(d) = &s.device {
        line("device", &esc(d));
    }
    let doc = run.document().ok();
    if let Some(iomark_model::RunBody::Disk(d)) = doc.as_ref().map(|doc| &doc.body) {
        line("region", &region(&d.target));
    }
    if let Some(h) = doc.as_ref().and_then(|doc| doc.host.as_ref()) {
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
    let cgroup = doc.as_ref().and_then(|doc| match &doc.body {
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
    out.push('\n');
    if run.figures.is_empty() {
        out.push_str("no figures were stored with this run\n");
    } else {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED).set_header([
            "test",
            "metric",
            "value",
            "spread (min – max)",
        ]);
        // Rates in the unit the run printed (a sweep's MiB/s, MacBench's KB/s).
        let printed = doc
            .as_ref()
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
                        .map(|(lo, hi)| format!("{} – {}", shown(lo), shown(hi)))
                        .unwrap_or_default(),
                ),
            ]);
        }
        let _ = writeln!(out, "{t}");
    }
    match run.document().ok().map(|d| d.body) {
        // A sweep's killed points have no figures: its table shows them.
        Some(iomark_model::RunBody::Mem(m)) => {
            if let Some(sweep) = &m.sweep {
                // A table of many lines: its line breaks are its own.
                let table = crate::mem_sweep::sweep_table(&m, sweep);
                out.push_str(&crate::escape_controls_keep_lines(&table));
                out.push('\n');
                // Each point's cgroup record (issue 32: it was in the live
                // text only).
                if let Some(limits) = crate::sweep_limits::table(sweep) {
                    out.push_str(&crate::escape_controls_keep_lines(&limits));
                    out.push('\n');
                }
            }
            if let Some(c) = &m.cluster {
                out.push_str(crate::cluster::mem_rank_table(c).trim_start_matches('\n'));
                out.push('\n');
            }
        }
        // A run across MPI ranks: what each rank did under the merged
        // figures, as the run printed it.
        Some(iomark_model::RunBody::Disk(d)) => {
            if let Some(c) = &d.cluster {
                out.push_str(crate::cluster::rank_table(c).trim_start_matches('\n'));
                out.push('\n');
            }
            let mut seen = String::new();
            crate::device_seen::section(&mut seen, &d);
            out.push_str(&crate::escape_controls_keep_lines(
                seen.trim_start_matches('\n'),
            ));
        }
        _ => {}
    }
    // A mem sweep's stored warning rows do not say which point raised
    // them: its document does (`31.99 MiB on heap: ...`).
    let sweep = doc
        .as_ref()
        .filter(|d| matches!(&d.body, iomark_model::RunBody::Mem(m) if m.sweep.is_some()));
    match sweep {
        Some(d) => {
            for (scope, w) in d.scoped_warnings() {
                let scope = if scope == "run" || scope == "mem" {
                    ""
                } else {
                    &scope
                };
                let _ = writeln!(out, "warning: {}", scoped(scope, &w.message));
            }
        }
        None => {
            for w in &run.warnings {
                let _ = writeln!(out, "warning: {}", scoped(&w.scope, &w.warning.message));
            }
        }
    }
    out
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
            let table = comparison(&Lineup::new(runs, None), TableStyle::Markdown);
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
