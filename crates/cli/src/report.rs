//! `iomark report`: stored runs as one self-contained HTML page and as PNG
//! charts.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use iomark_report::{Report, ReportRun};
use iomark_store::{RunId, RunSelection};

use crate::exit::Exit;
use crate::record::parse_label;

/// The raw arguments of `iomark report`.
#[derive(Debug, Args)]
#[command(
    long_about = "Draw stored runs: one self-contained HTML page (device and link table with \
    ceilings, warnings, the charts that fit each run's profile, every stored figure) and/or \
    the same charts as PNG files.\n\n\
    Examples:\n  iomark report 3 4 --html usb.html\n  \
    iomark report --label usb2 --label usb3 --png charts/\n  \
    iomark report 7 8 9 --baseline 7 --html sweep.html"
)]
pub struct ReportArgs {
    /// Runs to report (from `iomark results list`).
    #[arg(value_name = "ID")]
    ids: Vec<RunId>,
    /// Also report every run carrying this label; repeat for more.
    #[arg(long = "label", value_name = "LABEL", value_parser = parse_label)]
    labels: Vec<String>,
    /// The run relative charts divide by (it is added to the report).
    #[arg(long, value_name = "ID")]
    baseline: Option<RunId>,
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
    let mut runs = Vec::new();
    for stored in selection.load(store.as_mut())? {
        let doc = stored.document()?;
        runs.push(ReportRun::new(stored.summary.id, doc).with_figures(stored.figures));
    }
    let report = Report::new(runs, args.baseline.map(|b| b.to_string()).as_deref())?;
    if let Some(path) = &args.html {
        let page = report.html();
        if path.as_os_str() == "-" {
            use std::io::Write;
            std::io::stdout().write_all(&page)?;
        } else {
            std::fs::write(path, page)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    if let Some(dir) = &args.png {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))?;
        let files = report.pngs(args.png_scale)?;
        if files.is_empty() {
            eprintln!("no charts fit these runs; no PNG written");
        }
        for (name, bytes) in files {
            let path = dir.join(name);
            std::fs::write(&path, bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(Exit::Success)
}
