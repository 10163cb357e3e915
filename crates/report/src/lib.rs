//! Reports of stored iomark runs: one self-contained HTML page (inline CSS
//! and SVG, no scripts, nothing fetched) and PNG files of the same charts.
//!
//! This crate owns the drawing only. It takes run documents that someone
//! else loaded (the CLI, from the store) and plots the numbers stored in
//! them: a CrystalDiskMark bar is the stored `bw` of that test, a sweep
//! point is the stored point. Nothing is measured or re-aggregated here;
//! the only derived numbers are unit conversions and the ratios to a
//! baseline, which come from `iomark_stats::compare`. What it draws is
//! written with [`replace::replace_all`]: each file whole or not at all.

#![deny(missing_docs)]

mod chart_grid;
mod charts;
pub mod comparison;
mod contents;
mod device_seen;
mod figures;
mod html;
mod knees;
pub mod live;
mod naming;
mod png;
mod printed;
pub mod replace;
mod stored;
pub mod svg;
mod warnings;

use iomark_model::figure::Figure;
use iomark_model::RunDocument;

pub use charts::Chart;
pub use comparison::Comparison;
pub use html::CSS;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// No runs were given.
    #[error("no runs to report: name at least one run ID or --label")]
    NoRuns,
    /// The baseline is not one of the reported runs.
    #[error("baseline {0} is not among the reported runs: add it to the run IDs")]
    BaselineNotInReport(String),
    /// The runs cannot be lined up against the baseline label.
    #[error(transparent)]
    Lineup(#[from] iomark_stats::lineup::LineupError),
    /// A stored run's document cannot be read back.
    #[error(transparent)]
    Unreadable(#[from] iomark_model::stored::UnreadableDocument),
    /// A chart could not be turned into a PNG.
    #[error("cannot render chart {chart} as PNG: {reason}")]
    Png {
        /// The chart's id.
        chart: String,
        /// What went wrong, with the fix.
        reason: String,
    },
}

/// One run as it appears in a report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRun {
    /// The store's id of the run, as text.
    pub id: String,
    /// The name used in legends and titles: `run 12 (usb2, t7)`, or `run
    /// 12 (start date)` without labels; in a [`Report`], followed by the
    /// test's defining parameters where they differ between its runs.
    pub name: String,
    /// The stored document.
    pub doc: RunDocument,
    /// The run's flat figures as the store keeps them (the figure table).
    pub figures: Vec<Figure>,
    /// The run's colour index on the page ([`svg::colour`]): its position
    /// in the report, set by [`Report::new`], the same in every chart.
    pub colour: usize,
}

impl ReportRun {
    /// A run named by its id and labels, or its id and start date when it
    /// has none; its figures are the document's own (`RunBody::figures`) until
    /// [`ReportRun::with_figures`] gives the stored ones.
    pub fn new(id: impl ToString, doc: RunDocument) -> ReportRun {
        let id = id.to_string();
        let name = naming::base_name(&id, &doc);
        let figures = doc.body.figures();
        ReportRun {
            id,
            name,
            doc,
            figures,
            colour: 0,
        }
    }

    /// Use the figures the store kept for the run.
    pub fn with_figures(mut self, figures: Vec<Figure>) -> ReportRun {
        self.figures = figures;
        self
    }
}

/// `2026-11-21 22:55 UTC` from milliseconds since the epoch.
pub(crate) fn date(ms: u64) -> String {
    jiff::Timestamp::from_millisecond(ms as i64)
        .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|_| format!("{ms} ms"))
}

/// The runs of one report, and the run others are compared with.
#[derive(Debug, Clone)]
pub struct Report {
    runs: Vec<ReportRun>,
    baseline: Option<usize>,
    title: String,
    comparison: Option<Comparison>,
}

impl Report {
    /// A report of `runs`, in the order given; `baseline` is the id of one of
    /// them that relative charts divide by.
    pub fn new(runs: Vec<ReportRun>, baseline: Option<&str>) -> Result<Report, ReportError> {
        if runs.is_empty() {
            return Err(ReportError::NoRuns);
        }
        let baseline = match baseline {
            None => None,
            Some(b) => Some(
                runs.iter()
                    .position(|r| r.id == b)
                    .ok_or_else(|| ReportError::BaselineNotInReport(b.to_string()))?,
            ),
        };
        let mut runs = runs;
        naming::distinguish(&mut runs);
        for (i, r) in runs.iter_mut().enumerate() {
            r.colour = i;
        }
        let title = if runs.len() <= 4 {
            format!(
                "iomark report: {}",
                runs.iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" vs ")
            )
        } else {
            format!("iomark report: {} runs", runs.len())
        };
        Ok(Report {
            runs,
            baseline,
            title,
            comparison: None,
        })
    }

    /// The runs, in order.
    pub fn runs(&self) -> &[ReportRun] {
        &self.runs
    }

    /// The baseline run, if one was named.
    pub fn baseline(&self) -> Option<&ReportRun> {
        self.baseline.map(|i| &self.runs[i])
    }

    /// Add the comparison table: every figure against its baseline
    /// ([`Comparison::of`] a lineup of the same runs).
    pub fn with_comparison(mut self, comparison: Comparison) -> Report {
        self.comparison = Some(comparison);
        self
    }

    /// The comparison table, when one was added.
    pub fn comparison(&self) -> Option<&Comparison> {
        self.comparison.as_ref()
    }

    /// The page title.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// Every chart that fits the runs, in page order.
    pub fn charts(&self) -> Vec<Chart> {
        charts::all(self)
    }

    /// What the charts leave out for lack of stored data (an imported fio
    /// run has no per-interval samples), one sentence each, for the page.
    pub fn chart_notes(&self) -> Vec<String> {
        charts::notes(self)
    }

    /// The HTML page, one self-contained file.
    pub fn html(&self) -> Vec<u8> {
        html::render(self).into_bytes()
    }

    /// The page's content without its `<html>` shell and style sheet
    /// (title, contents, tables, charts), for a page of another's making
    /// that links [`CSS`] instead of inlining it.
    pub fn html_article(&self) -> String {
        html::article(self)
    }

    /// Each chart as a PNG file: `(file name, bytes)`, at `scale` times the
    /// SVG size (`svg::WIDTH` wide, `svg::HEIGHT` high or more with the
    /// legend under the plot).
    pub fn pngs(&self, scale: u32) -> Result<Vec<(String, Vec<u8>)>, ReportError> {
        let fonts = png::Fonts::load()?;
        self.charts()
            .iter()
            .map(|c| Ok((format!("{}.png", c.id), fonts.render(c, scale)?)))
            .collect()
    }
}
