//! `iomark report`: stored runs as one self-contained HTML page and as PNG
//! charts.

use std::path::PathBuf;

use anyhow::{anyhow, bail};
use clap::Args;
use iomark_report::Report;
use iomark_store::{RunId, RunSelection};

use crate::exit::Exit;
use crate::record::{check_user_text, parse_label};
use iomark_report::replace::{replace_all, ReplaceError, Targets};

/// The raw arguments of `iomark report`.
#[derive(Debug, Args)]
#[command(
    long_about = "Draw stored runs: one self-contained HTML page (device and link table with \
    ceilings, warnings, the charts that fit each run's profile, every stored figure) and/or \
    the same charts as PNG files.\n\n\
    Examples:\n  iomark report 3 4 --html usb.html\n  \
    iomark report --label usb2 --label usb3 --png charts/\n  \
    iomark report 7 8 9 --baseline 7 --html sweep.html\n  \
    iomark report 1 2 3 4 --baseline-label usb2 --html usb.html\n\n\
    With --baseline or --baseline-label the page has a table of every figure against its \
    baseline (ratio, verdict and difference in the unit the run printed), paired as \
    `iomark results compare` pairs them."
)]
pub struct ReportArgs {
    /// Runs to report (from `iomark results list`).
    #[arg(value_name = "ID")]
    ids: Vec<RunId>,
    /// Also report every run carrying this label; repeat for more.
    #[arg(long = "label", value_name = "LABEL", value_parser = parse_label)]
    labels: Vec<String>,
    /// The run relative charts and the comparison table divide by (it is
    /// added to the report).
    #[arg(long, value_name = "ID", conflicts_with = "baseline_label")]
    baseline: Option<RunId>,
    /// Divide each run's figures by those of the run carrying this label
    /// that measured the same device and test, as `results compare
    /// --baseline-label` does; columns grouped by label.
    #[arg(long, value_name = "LABEL", value_parser = parse_label)]
    baseline_label: Option<String>,
    /// Results database: a SQLite file or postgres://user@host/db.
    ///
    /// Default: $IOMARK_DB when set (empty is refused), else
    /// $XDG_DATA_HOME/iomark/results.db (~/.local/share/iomark/results.db).
    #[arg(long, value_name = "PATH|URL")]
    db: Option<String>,
    /// Write the HTML page to FILE (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Write each chart as `DIR/<chart>.png` (the directory is created).
    #[arg(long, value_name = "DIR")]
    png: Option<PathBuf>,
    /// PNG size as a multiple of the 800x420 chart.
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..=4))]
    png_scale: u32,
}

/// Run `iomark report ...`.
pub fn run(args: ReportArgs) -> anyhow::Result<Exit> {
    if args.html.is_none() && args.png.is_none() {
        bail!("nothing to write: add --html FILE or --png DIR");
    }
    check_user_text(&args.labels, None)?;
    // A report only reads: a read-only database, or one on a read-only
    // mount, is enough, and none is created where there is none.
    let mut store = iomark_store::open_read_only(args.db.as_deref())?;
    if args.ids.is_empty() && args.labels.is_empty() && args.baseline.is_none() {
        bail!("no runs named: give run IDs (from `iomark results list`) or --label LABEL");
    }
    let selection = RunSelection {
        ids: args.ids,
        labels: args.labels,
        baseline: args.baseline,
    };
    let stored = selection.load(store.as_mut())?;
    let report = Report::of_stored(stored, args.baseline, args.baseline_label.as_deref())?;
    if let Some(path) = &args.html {
        let page = report.html();
        if path.as_os_str() == "-" {
            use std::io::Write;
            std::io::stdout().write_all(&page)?;
        } else {
            replace_all(&[(path.clone(), page)])
                .map_err(|e| anyhow!(e.explain(&Targets::One(path.clone()))))?;
            eprintln!("wrote {}", path.display());
        }
    }
    if let Some(dir) = &args.png {
        let files = report.pngs(args.png_scale)?;
        let targets = Targets::Set {
            each: format!("PNG in {}", dir.display()),
            all: format!("the PNGs in {}", dir.display()),
            count: files.len(),
        };
        std::fs::create_dir_all(dir).map_err(|cause| {
            let e = ReplaceError {
                path: dir.clone(),
                cause,
                replaced: 0,
            };
            anyhow!(e.explain(&targets))
        })?;
        if files.is_empty() {
            eprintln!("no charts fit these runs; no PNG written");
        }
        let files: Vec<(PathBuf, Vec<u8>)> = files
            .into_iter()
            .map(|(name, bytes)| (dir.join(name), bytes))
            .collect();
        replace_all(&files).map_err(|e| anyhow!(e.explain(&targets)))?;
        for (path, _) in &files {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(Exit::Success)
}
