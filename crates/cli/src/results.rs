//! `iomark results`: list, show, compare, export, import and delete stored
//! runs.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use comfy_table::presets::{ASCII_MARKDOWN, UTF8_FULL_CONDENSED};
use comfy_table::{Cell, CellAlignment, Table};
use iomark_model::figure::Figure;
use iomark_stats::compare::{compare, format_ratio, Measured};
use iomark_store::{RunId, RunQuery, RunSummary, Store, StoreError, StoredRun};

use crate::exit::Exit;
use crate::record::parse_label;
use iomark_text::escape_controls as esc;

/// The raw arguments of `iomark results`.
#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// Results database: a SQLite file (PATH or sqlite://PATH) or
    /// postgres://user@host:port/db[?sslmode=verify-full&sslrootcert=CA.pem].
    ///
    /// Default: $XDG_DATA_HOME/iomark/results.db (~/.local/share/iomark/results.db).
    /// list, show, compare and export only read: they open the database
    /// read-only and never create one.
    #[arg(long, global = true, value_name = "PATH|URL")]
    db: Option<String>,
    #[command(subcommand)]
    command: ResultsCommand,
}

#[derive(Debug, Subcommand)]
enum ResultsCommand {
    /// List stored runs, oldest first.
    List(ListArgs),
    /// Show one run: where it ran, its figures and warnings.
    Show {
        /// The run's id (from `iomark results list`).
        id: RunId,
    },
    /// Compare runs side by side: tests as rows, runs as columns, ratios to a baseline.
    #[command(
        long_about = "Compare runs side by side: tests as rows, runs as columns.\n\n\
        Each figure shows its ratio to the baseline run (the first ID, or --baseline), \
        e.g. 1.68x. A ~ after the ratio marks a difference inside the spread of the \
        passes or per-second samples of both runs: not a real difference.\n\n\
        Example: iomark results compare 12 15 --baseline 9"
    )]
    Compare {
        /// Runs to compare.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<RunId>,
        /// The run the others are divided by (default: the first ID).
        #[arg(long, value_name = "ID")]
        baseline: Option<RunId>,
    },
    /// Export runs as JSON (the stored documents), CSV (one row per figure) or Markdown.
    Export {
        /// Runs to export.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<RunId>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
        format: ExportFormat,
    },
    /// Import fio JSON (--output-format=json or json+), iperf3 -J or iomark --json output as stored runs.
    Import {
        /// Files to import; each is checked whole before anything is stored.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Label the imported runs; repeat for more.
        #[arg(long = "label", value_name = "LABEL", value_parser = parse_label)]
        labels: Vec<String>,
        /// A free note stored with the imported runs.
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
    },
    /// Delete stored runs.
    Delete {
        /// Runs to delete.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<RunId>,
    },
}

/// `iomark results list` filters.
#[derive(Debug, Args)]
struct ListArgs {
    /// Only runs with this label; repeat to require several.
    #[arg(long = "label", value_name = "LABEL")]
    labels: Vec<String>,
    /// Only runs whose device or target mentions this text (sda, T7, usb, /mnt/x).
    #[arg(long, value_name = "TEXT")]
    device: Option<String>,
    /// Only runs started since a date (2026-11-01, "2026-11-01 14:00") or for a span (7d, 24h).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only the newest N runs.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    Json,
    Csv,
    Markdown,
}

/// Run `iomark results ...`.
pub fn run(args: ResultsArgs) -> anyhow::Result<Exit> {
    let db = args.db.as_deref();
    let out = &mut std::io::stdout().lock();
    match args.command {
        ResultsCommand::List(l) => {
            // Validate before opening the database.
            let query = RunQuery {
                labels: l.labels,
                device: l.device,
                since_ms: l.since.as_deref().map(parse_since).transpose()?,
                limit: l.limit,
            };
            match iomark_store::open_read_only(db) {
                Ok(mut store) => list(store.as_mut(), &query, out)?,
                // Nothing stored yet is an empty list, not an error.
                Err(StoreError::NoDatabase { path }) => {
                    eprintln!(
                        "no stored runs: there is no results database at {} yet",
                        esc(&path)
                    );
                }
                Err(e) => return Err(e.into()),
            }
        }
        ResultsCommand::Show { id } => show(&iomark_store::open_read_only(db)?.load(id)?, out)?,
        ResultsCommand::Compare { ids, baseline } => {
            let runs =
                load_for_compare(iomark_store::open_read_only(db)?.as_mut(), &ids, baseline)?;
            let mut t = comparison_table(&runs);
            t.load_preset(UTF8_FULL_CONDENSED);
            writeln!(out, "{t}")?;
            legend(&runs, out)?;
        }
        ResultsCommand::Export { ids, format } => {
            export(
                iomark_store::open_read_only(db)?.as_mut(),
                &ids,
                format,
                out,
            )?;
        }
        ResultsCommand::Import {
            files,
            labels,
            note,
        } => import(db, &files, &labels, note.as_deref())?,
        ResultsCommand::Delete { ids } => {
            let mut store = iomark_store::open(db)?;
            for id in dedup(&ids) {
                store.delete(id)?;
                eprintln!("deleted run {id}");
            }
        }
    }
    out.flush()?;
    Ok(Exit::Success)
}

fn dedup(ids: &[RunId]) -> Vec<RunId> {
    let mut seen = Vec::new();
    for id in ids {
        if !seen.contains(id) {
            seen.push(*id);
        }
    }
    seen
}

/// `--since`: a span back from now (`7d`, `24h`, `2 weeks`) or a local date
/// or date and time.
fn parse_since(s: &str) -> anyhow::Result<u64> {
    let tz = jiff::tz::TimeZone::system();
    let now = jiff::Timestamp::now();
    let ms = if let Ok(span) = s.parse::<jiff::Span>() {
        let then = now
            .to_zoned(tz)
            .checked_sub(span)
            .with_context(|| format!("--since {s} reaches too far back"))?;
        then.timestamp().as_millisecond()
    } else if let Ok(dt) = s.replace(' ', "T").parse::<jiff::civil::DateTime>() {
        dt.to_zoned(tz)?.timestamp().as_millisecond()
    } else if let Ok(d) = s.parse::<jiff::civil::Date>() {
        d.to_zoned(tz)?.timestamp().as_millisecond()
    } else {
        bail!("--since '{s}' is neither a date nor a span: use 2026-11-01, \"2026-11-01 14:00\", 7d or 24h");
    };
    Ok(ms.max(0) as u64)
}

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

fn list(store: &mut dyn Store, q: &RunQuery, out: &mut impl Write) -> anyhow::Result<()> {
    let runs = store.list(q)?;
    if runs.is_empty() {
        eprintln!("no stored runs match in {}", esc(&store.location()));
        return Ok(());
    }
    let tz = jiff::tz::TimeZone::system();
    let header = [
        "ID", "STARTED", "STATUS", "KIND", "TOOL", "LABELS", "TARGET", "DEVICE", "WARN", "NOTE",
    ];
    let rows: Vec<[String; 10]> = runs
        .iter()
        .map(|r| {
            [
                r.id.to_string(),
                when(r.started_at_ms, &tz),
                r.status.as_str().to_string(),
                esc(&r.kind).into_owned(),
                esc(&r.tool).into_owned(),
                esc(&r.labels.join(",")).into_owned(),
                r.target
                    .as_deref()
                    .map_or_else(|| "-".into(), |t| esc(t).into_owned()),
                r.device
                    .as_deref()
                    .map_or_else(|| "-".into(), |d| esc(d).into_owned()),
                if r.warning_count > 0 {
                    r.warning_count.to_string()
                } else {
                    String::new()
                },
                r.note.as_deref().map(short_note).unwrap_or_default(),
            ]
        })
        .collect();
    // A plain aligned listing: thousands of rows through a table layout
    // engine cost more than the query.
    let mut width = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let right = [
        true, false, false, false, false, false, false, false, true, false,
    ];
    let mut line = String::new();
    let cells = std::iter::once(header.map(str::to_string)).chain(rows);
    for row in cells {
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
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn short_note(n: &str) -> String {
    let line = esc(n.lines().next().unwrap_or("")).into_owned();
    if line.chars().count() > 40 {
        format!("{}…", line.chars().take(39).collect::<String>())
    } else {
        line
    }
}

fn show(run: &StoredRun, out: &mut impl Write) -> anyhow::Result<()> {
    let s = &run.summary;
    let tz = jiff::tz::TimeZone::system();
    let secs = s.finished_at_ms.saturating_sub(s.started_at_ms) as f64 / 1e3;
    writeln!(
        out,
        "run {}  {}  {} run by {} {}",
        s.id,
        s.status.as_str(),
        esc(&s.kind),
        esc(&s.tool),
        esc(&s.tool_version)
    )?;
    writeln!(
        out,
        "started   {} ({secs:.0} s)",
        when(s.started_at_ms, &tz)
    )?;
    if !s.command_line.is_empty() {
        writeln!(out, "command   {}", esc(&s.command_line.join(" ")))?;
    }
    if !s.labels.is_empty() {
        writeln!(out, "labels    {}", esc(&s.labels.join(", ")))?;
    }
    if let Some(n) = &s.note {
        // A note of several lines keeps them, each escaped.
        let lines: Vec<_> = n.lines().map(esc).collect();
        writeln!(out, "note      {}", lines.join("\n          "))?;
    }
    if let Some(t) = &s.target {
        writeln!(out, "target    {}", esc(t))?;
    }
    if let Some(d) = &s.device {
        writeln!(out, "device    {}", esc(d))?;
    }
    if let Ok(doc) = run.document() {
        if let Some(h) = &doc.host {
            writeln!(
                out,
                "host      {} ({}, {} CPUs, {} RAM), kernel {}",
                esc(&h.hostname),
                esc(&h.cpu_model),
                h.cpu_count,
                h.memory_total,
                esc(&h.kernel_release)
            )?;
        }
    }
    writeln!(out)?;
    if run.figures.is_empty() {
        writeln!(out, "no figures were stored with this run")?;
    } else {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED).set_header([
            "test",
            "metric",
            "value",
            "spread (min – max)",
        ]);
        for f in &run.figures {
            t.add_row([
                Cell::new(esc(&f.test)),
                Cell::new(esc(&f.metric)),
                Cell::new(f.display_value()).set_alignment(CellAlignment::Right),
                Cell::new(
                    f.spread
                        .map(|(lo, hi)| format!("{} – {}", f.unit.format(lo), f.unit.format(hi)))
                        .unwrap_or_default(),
                ),
            ]);
        }
        writeln!(out, "{t}")?;
    }
    for w in &run.warnings {
        writeln!(out, "warning: {}", scoped(&w.scope, &w.warning.message))?;
    }
    Ok(())
}

/// A stored warning for the terminal, escaped.
fn scoped(scope: &str, msg: &str) -> String {
    if scope.is_empty() {
        esc(msg).into_owned()
    } else {
        format!("{}: {}", esc(scope), esc(msg))
    }
}

/// The runs to compare, the baseline first.
fn load_for_compare(
    store: &mut dyn Store,
    ids: &[RunId],
    baseline: Option<RunId>,
) -> anyhow::Result<Vec<StoredRun>> {
    let mut order = Vec::new();
    if let Some(b) = baseline {
        order.push(b);
    }
    order.extend(dedup(ids).into_iter().filter(|id| Some(*id) != baseline));
    if order.len() < 2 {
        bail!("compare needs two runs or more: iomark results compare ID ID... [--baseline ID]");
    }
    order.into_iter().map(|id| Ok(store.load(id)?)).collect()
}

fn column_header(s: &RunSummary) -> String {
    let mut h = format!("#{}", s.id);
    if !s.labels.is_empty() {
        h += &format!("\n{}", esc(&s.labels.join(",")));
    }
    if s.tool != "iomark" {
        h += &format!("\n({})", esc(&s.tool));
    }
    h
}

/// Tests as rows, runs as columns; the first run is the baseline.
fn comparison_table(runs: &[StoredRun]) -> Table {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    let mut by_run: Vec<HashMap<(&str, &str), &Figure>> = Vec::new();
    for r in runs {
        let mut m = HashMap::new();
        for f in &r.figures {
            let k = (f.test.as_str(), f.metric.as_str());
            if !keys.contains(&k) {
                keys.push(k);
            }
            m.entry(k).or_insert(f);
        }
        by_run.push(m);
    }
    let mut t = Table::new();
    let mut header = vec![Cell::new("test"), Cell::new("metric")];
    header.extend(runs.iter().enumerate().map(|(i, r)| {
        let mut h = column_header(&r.summary);
        if i == 0 {
            h += "\n(baseline)";
        }
        Cell::new(h)
    }));
    t.set_header(header);
    for k in keys {
        let base = by_run[0].get(&k);
        let mut row = vec![Cell::new(esc(k.0)), Cell::new(esc(k.1))];
        for (i, m) in by_run.iter().enumerate() {
            let text = match (m.get(&k), base) {
                (None, _) => "-".to_string(),
                (Some(f), _) if i == 0 => f.display_value(),
                (Some(f), None) => f.display_value(),
                (Some(f), Some(b)) => {
                    let c = compare(measured(b), measured(f));
                    match c.ratio {
                        Some(r) => format!(
                            "{} {}{}",
                            f.display_value(),
                            format_ratio(r),
                            if c.within_noise { "~" } else { "" }
                        ),
                        None => f.display_value(),
                    }
                }
            };
            row.push(Cell::new(text).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    t
}

fn measured(f: &Figure) -> Measured {
    Measured {
        value: f.value,
        spread: f.spread,
    }
}

fn legend(runs: &[StoredRun], out: &mut impl Write) -> anyhow::Result<()> {
    writeln!(
        out,
        "ratios are run / baseline #{}; ~ marks a difference inside the spread (min – max) of both runs' passes or per-second samples: not a real difference",
        runs[0].summary.id
    )?;
    for r in runs {
        for w in &r.warnings {
            writeln!(
                out,
                "warning: #{} {}",
                r.summary.id,
                scoped(&w.scope, &w.warning.message)
            )?;
        }
        if r.summary.status != iomark_model::RunStatus::Complete {
            writeln!(
                out,
                "warning: #{} is {}: its figures cover only what finished",
                r.summary.id,
                r.summary.status.as_str()
            )?;
        }
    }
    Ok(())
}

fn export(
    store: &mut dyn Store,
    ids: &[RunId],
    format: ExportFormat,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let runs = dedup(ids)
        .into_iter()
        .map(|id| Ok(store.load(id)?))
        .collect::<anyhow::Result<Vec<_>>>()?;
    match format {
        ExportFormat::Json => {
            // The stored documents with their stored status (a killed run's
            // document still says what its writer last set); verbatim when
            // this version cannot read one, so nothing is lost.
            write!(out, "[")?;
            for (i, r) in runs.iter().enumerate() {
                if i > 0 {
                    write!(out, ",")?;
                }
                let text = match r.document() {
                    Ok(doc) => serde_json::to_string(&doc)?,
                    Err(_) => r.document_json.clone(),
                };
                write!(out, "\n{text}")?;
            }
            writeln!(out, "\n]")?;
        }
        ExportFormat::Csv => {
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
            ])?;
            for r in &runs {
                let s = &r.summary;
                for f in &r.figures {
                    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
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
                    ])?;
                }
            }
            w.flush()?;
        }
        ExportFormat::Markdown => {
            let mut t = comparison_table(&runs);
            t.load_preset(ASCII_MARKDOWN);
            // Markdown cells cannot span lines.
            if let Some(h) = t.header() {
                let cells: Vec<String> = h
                    .cell_iter()
                    .map(|c| c.content().replace('\n', " "))
                    .collect();
                t.set_header(cells);
            }
            writeln!(out, "{t}")?;
            if runs.len() > 1 {
                writeln!(out)?;
            }
            legend(&runs, out)?;
        }
    }
    Ok(())
}

fn import(
    db: Option<&str>,
    files: &[PathBuf],
    labels: &[String],
    note: Option<&str>,
) -> anyhow::Result<()> {
    // Convert every file first, so one bad file stores nothing at all.
    let mut docs = Vec::new();
    for f in files {
        let converted = iomark_store::import::import_file(f)
            .with_context(|| format!("cannot import {}", f.display()))?;
        for mut doc in converted {
            // iomark's own documents keep the command line that measured them.
            if doc.command_line.is_empty() {
                doc.command_line = std::env::args().collect();
            }
            for l in labels {
                if !doc.labels.contains(l) {
                    doc.labels.push(l.clone());
                }
            }
            if let Some(n) = note {
                doc.note = Some(n.to_string());
            }
            docs.push((f, doc));
        }
    }
    let mut store = iomark_store::open(db)?;
    for (f, doc) in docs {
        let id = store.insert_complete(&doc)?;
        println!(
            "imported {} as run {id} ({} {}, {} figures)",
            esc(&f.display().to_string()),
            esc(&doc.tool),
            esc(&doc.tool_version),
            doc.body.figures().len()
        );
    }
    Ok(())
}
