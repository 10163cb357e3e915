//! `iomark results`: list, show, compare, export, import and delete stored
//! runs.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand};
use iomark_serve::documents::{self, compared_runs, lineup};
use iomark_stats::gate::WorseThreshold;
use iomark_store::import::ImportOptions;
use iomark_store::{RunId, RunQuery, RunSelection};
use iomark_text::json;
use iomark_text::results::{self, ExportFormat, TableStyle};

use crate::exit::Exit;
use crate::record::{check_user_text, parse_label};

/// The raw arguments of `iomark results`.
#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// Results database: a SQLite file (PATH or sqlite://PATH) or
    /// postgres://user@host:port/db[?sslmode=verify-full&sslrootcert=CA.pem].
    ///
    /// Default: $IOMARK_DB when set (empty is refused), else
    /// $XDG_DATA_HOME/iomark/results.db (~/.local/share/iomark/results.db).
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
        /// Also every stored figure under its fio-style name with its
        /// spread, what the device saw, and every warning in full.
        #[arg(short, long)]
        verbose: bool,
        /// Print one JSON document (docs/result-schema.md) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compare runs side by side: tests as rows, runs as columns, ratios to a baseline.
    #[command(long_about = include_str!("../help/results-compare.txt"))]
    Compare {
        /// Runs to compare.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<RunId>,
        #[command(flatten)]
        against: LineupArgs,
        /// Exit with code 1 when a figure is worse than the baseline's by more
        /// than this (e.g. 5%) and outside the noise of both runs.
        #[arg(long, value_name = "PCT")]
        fail_if_worse: Option<WorseThreshold>,
        /// Also the rows of CPU figures, each test's stored (fio-style)
        /// name, and the legend in full.
        #[arg(short, long)]
        verbose: bool,
        /// Print one JSON document (docs/result-schema.md) instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Export runs as JSON (the stored documents), CSV (one row per figure) or Markdown.
    Export {
        /// Runs to export.
        #[arg(required = true, value_name = "ID")]
        ids: Vec<RunId>,
        /// Output format.
        #[arg(long, default_value = "json",
              value_parser = PossibleValuesParser::new(ExportFormat::NAMES).try_map(|s| s.parse::<ExportFormat>()))]
        format: ExportFormat,
        /// Markdown only: the table as `results compare` lines it up.
        #[command(flatten)]
        against: LineupArgs,
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

/// What a table of runs is divided by and which rows it keeps: `results
/// compare`'s, and the Markdown export's (the same table).
#[derive(Debug, Args)]
struct LineupArgs {
    /// The run the others are divided by (default: the first ID).
    #[arg(long, value_name = "ID", conflicts_with = "baseline_label")]
    baseline: Option<RunId>,
    /// Divide each run's figures by those of the run carrying this label
    /// that measured the same device and test; group columns by label.
    #[arg(long, value_name = "LABEL", value_parser = parse_label)]
    baseline_label: Option<String>,
    /// Only rows of this metric: `bw` keeps `read bw` and `write bw`,
    /// `read lat p99` that one; repeat for more. The gate and the JSON
    /// judge only these.
    #[arg(long = "metric", value_name = "METRIC")]
    metrics: Vec<String>,
}

impl From<LineupArgs> for documents::Against {
    fn from(a: LineupArgs) -> Self {
        let (baseline, baseline_label, metrics) = (a.baseline, a.baseline_label, a.metrics);
        documents::Against {
            baseline,
            baseline_label,
            metrics,
        }
    }
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
    /// Only runs on a host whose name mentions this text.
    #[arg(long, value_name = "TEXT")]
    host: Option<String>,
    /// Only disk runs of this profile (cdm, custom, sweep, ...).
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// Only runs of this kind.
    #[arg(long, value_name = "KIND", value_parser = ["disk", "mem", "net"])]
    kind: Option<String>,
    /// Only runs started since a date (2026-11-01, "2026-11-01 14:00") or for a span (7d, 24h).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only runs started before a date (2026-12-01) or a span ago (7d).
    #[arg(long, value_name = "WHEN")]
    until: Option<String>,
    /// Only the newest N runs.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Print one JSON document (docs/result-schema.md) instead of text.
    #[arg(long)]
    json: bool,
}

/// Run `iomark results ...`.
pub fn run(args: ResultsArgs) -> anyhow::Result<Exit> {
    let db = args.db.as_deref();
    let out = &mut std::io::stdout().lock();
    match args.command {
        ResultsCommand::List(l) => {
            // Validate before opening the database.
            check_user_text(&l.labels, None)?;
            let query = RunQuery {
                labels: l.labels,
                device: l.device,
                host: l.host,
                profile: l.profile,
                kind: l.kind,
                since_ms: l.since.as_deref().map(iomark_store::since_ms).transpose()?,
                until_ms: l.until.as_deref().map(iomark_store::since_ms).transpose()?,
                limit: l.limit,
                ..RunQuery::default()
            };
            let width = iomark_text::terminal::text_width();
            if let Some(note) = documents::list(db, &query, l.json, width, out)? {
                eprintln!("{note}");
            }
        }
        ResultsCommand::Show {
            id,
            verbose,
            json: as_json,
        } => {
            let run = iomark_store::open_read_only(db)?.load(id)?;
            if as_json {
                json::write(out, &json::run_detail(&run))?;
            } else {
                let text =
                    results::run_detail(&run, verbose, Some(iomark_text::terminal::text_width()));
                out.write_all(text.as_bytes())?;
            }
        }
        ResultsCommand::Compare {
            ids,
            against: a,
            fail_if_worse,
            verbose,
            json: as_json,
        } => {
            let mut store = iomark_store::open_read_only(db)?;
            let mut runs = compared_runs(store.as_mut(), &ids, a.baseline)?;
            let lineup = lineup(
                &mut runs,
                a.baseline_label.as_deref(),
                fail_if_worse,
                &a.metrics,
            )?;
            if as_json {
                json::write(out, &json::comparison(&lineup))?;
            } else {
                let view = results::View {
                    width: iomark_text::terminal::text_width(),
                    verbose,
                };
                let text = results::comparison(&lineup, TableStyle::Terminal, view);
                out.write_all(text.as_bytes())?;
            }
            out.flush()?;
            if let Some(t) = fail_if_worse {
                // The gate's verdict on stderr, and in the exit code.
                let report = results::gate_report(&lineup, t)?;
                report.lines.iter().for_each(|l| eprintln!("{l}"));
                if report.regressed > 0 {
                    return Ok(Exit::Regression);
                }
                if report.undecided > 0 {
                    return Ok(Exit::CannotTell);
                }
            }
        }
        ResultsCommand::Export {
            ids,
            format,
            against,
        } => {
            let mut store = iomark_store::open_read_only(db)?;
            documents::export(store.as_mut(), &ids, format, &against.into(), out)?;
        }
        ResultsCommand::Import {
            files,
            labels,
            note,
        } => import(db, &files, &labels, note.as_deref())?,
        ResultsCommand::Delete { ids } => {
            let mut store = iomark_store::open(db)?;
            for id in RunSelection::of(&ids).resolve(store.as_mut())? {
                store.delete(id)?;
                eprintln!("deleted run {id}");
            }
        }
    }
    out.flush()?;
    Ok(Exit::Success)
}

fn import(
    db: Option<&str>,
    files: &[PathBuf],
    labels: &[String],
    note: Option<&str>,
) -> anyhow::Result<()> {
    check_user_text(labels, note)?;
    // Convert every file first, so one bad file stores nothing at all.
    let mut docs = Vec::new();
    let program = crate::record::command_line().into_iter().next();
    for f in files {
        let program = program.as_deref().unwrap_or("iomark");
        let options = ImportOptions::of_file(program, f, labels, note);
        let converted = iomark_store::import::import_file(f)
            .with_context(|| format!("cannot import {}", f.display()))?;
        docs.extend(converted.into_iter().map(|d| (f, options.applied(d))));
    }
    let mut store = iomark_store::open(db)?;
    for (f, doc) in docs {
        let id = store.insert_complete(&doc)?;
        crate::exit::print(&results::imported(&f.display().to_string(), id, &doc))?;
    }
    Ok(())
}
