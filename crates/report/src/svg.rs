//! Small hand-written SVG charts: grouped bars, lines and histograms on
//! linear, base-2, base-10 and "nines" axes.
//!
//! Written by hand rather than with a plotting crate so the output needs no
//! fonts at render time (text stays text for the browser), is byte-stable
//! for snapshot tests, and carries each bar's and point's stored value in a
//! `data-value` attribute for checks. Every bar and point also carries a
//! `<title>` (the browser's tooltip) with its value and unit, so the page
//! needs no script to show exact numbers.
//!
//! Axis rules (see [`axis`]): SI tick labels (`2500`, `100k`, `0.2`), units
//! as text with superscripts, a log value axis when the data span more than
//! two decades, and the legend beside the plot, or under it across the
//! chart's width when the names are long or many: a name is
//! never cut.

use std::fmt::Write;

pub mod axis;
mod bar;
mod histogram;
mod legend;
mod line;
mod ranked;

pub use histogram::{log_buckets, Histogram, HistogramSeries};
pub use ranked::{RankedBars, RankedRow};

use axis::{nines, nines_ticks, ValueAxis};

/// Width of every chart, in SVG user units (pixels at scale 1).
pub const WIDTH: u32 = 800;
/// Height of a chart with its legend beside the plot; one whose legend
/// goes under the plot is taller by the legend's rows.
pub const HEIGHT: u32 = 420;

const LEFT: f64 = 78.0;
const GAP_RIGHT: f64 = 16.0;
const TOP: f64 = 36.0;
/// Room under a plot for its tick labels and axis title.
const BOTTOM: f64 = 48.0;
/// Average advance of a 12 px DejaVu Sans character, for sizing text.
const CHAR_W: f64 = 7.0;

/// Run colours: Okabe and Ito's palette, distinguishable with colour-blindness.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

/// How many series a chart can tell apart by colour: a bar chart with
/// more is drawn ranked, a run per row ([`RankedBars`]); a line chart
/// with more picks three out and draws the rest grey.
pub const COLOURS: usize = PALETTE.len();

/// The colour index of a line drawn in the background: one of more
/// lines than colours that the chart does not pick out.
pub const GREY: usize = usize::MAX;

/// The colour of series `i` ([`GREY`]'s a light grey).
pub fn colour(i: usize) -> &'static str {
    if i == GREY {
        return "#b8b8b8";
    }
    PALETTE[i % PALETTE.len()]
}

/// Escape text for XML content and attribute values. Every character of a
/// [`iomark_model::escape::SpoofClass`] but newline and tab is shown as
/// text (`\x1b`, `\u{2028}`, `\u{202e}`), as the terminal shows it: XML
/// 1.0 has no way to carry most control characters, a raw ESC would reach
/// a terminal (`--html -`), and a raw U+202E would show a path reversed.
pub fn esc(s: &str) -> String {
    let shown = iomark_model::escape::escape_controls_keep_lines(s);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A number for a label: three significant digits, thousands grouped, no
/// exponent and no trailing zeros ([`axis::plain`]).
pub fn fmt_num(v: f64) -> String {
    axis::plain(v)
}

/// One bar: the plotted value (in the axis unit), the stored value it comes
/// from (base units, for `data-value`) and an optional whisker.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Height in the axis unit.
    pub value: f64,
    /// The stored figure, in its base unit.
    pub stored: f64,
    /// Lowest and highest pass, in the axis unit.
    pub spread: Option<(f64, f64)>,
}

impl Bar {
    /// A bar without a whisker: `value` in the axis unit, from `stored` in
    /// its base unit.
    pub fn new(value: f64, stored: f64) -> Bar {
        Bar {
            value,
            stored,
            spread: None,
        }
    }

    /// A bar without a whisker whose figure is plotted as stored (a ratio,
    /// MFLOPS).
    pub fn as_stored(value: f64) -> Bar {
        Bar::new(value, value)
    }
}

/// One run's bars, one per category (`None` where the run lacks it).
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    /// The legend entry.
    pub name: String,
    /// Colour index: the run's, so a run keeps its colour on the page.
    pub colour: usize,
    /// One entry per category.
    pub bars: Vec<Option<Bar>>,
}

/// A grouped bar chart. The value axis turns logarithmic by itself when
/// the bars span more than two decades ([`axis::wants_log`]).
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// `id` of the `<svg>`.
    pub id: String,
    /// Heading inside the chart.
    pub title: String,
    /// Y axis title with its unit.
    pub y_label: String,
    /// Groups along the x axis.
    pub categories: Vec<String>,
    /// One series per run.
    pub series: Vec<BarSeries>,
    /// A horizontal reference line (1.0 for relative charts).
    pub reference: Option<f64>,
}

/// How an x axis maps values. (Value axes choose linear or log themselves.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced.
    Linear,
    /// Base 2 (queue depths, block sizes): ticks at the data's powers of two.
    Log2,
    /// Base 10 (latencies): ticks at whole decades.
    Log10,
    /// Percentiles by their nines: 90, 99, 99.9 and 99.99 evenly spaced,
    /// so a latency tail gets as much room as the body.
    Nines,
}

/// How tick values print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickFormat {
    /// A number with SI grouping or prefix: `32`, `2.5`, `100k`.
    Number,
    /// A byte count as CrystalDiskMark writes block sizes: `4K`, `1M`.
    Bytes,
    /// A duration given in nanoseconds: `800 ns`, `12 µs`, `1.5 ms`.
    Duration,
    /// A percentile exactly as written: `50`, `99.99`.
    Percentile,
}

impl TickFormat {
    fn format(self, v: f64) -> String {
        match self {
            TickFormat::Number => axis::si(v),
            TickFormat::Bytes => iomark_model::Bytes(v as u64).short_label(),
            TickFormat::Duration => axis::duration(v),
            TickFormat::Percentile => format!("{v}"),
        }
    }
}

/// One line (or set of markers).
#[derive(Debug, Clone, PartialEq)]
pub struct LineSeries {
    /// The legend entry.
    pub name: String,
    /// `(x, y, stored)` in axis units, plus the stored y value.
    pub points: Vec<(f64, f64, f64)>,
    /// Draw dashed (a second direction of the same run).
    pub dashed: bool,
    /// Markers only, no line (a scatter).
    pub scatter: bool,
    /// Colour index: the run's on a chart of several runs (a run keeps
    /// one colour across charts and directions), else the part's.
    pub colour: usize,
}

/// A line chart or scatter. The y axis turns logarithmic by itself when
/// the points span more than two decades ([`axis::wants_log`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// `id` of the `<svg>`.
    pub id: String,
    /// Heading inside the chart.
    pub title: String,
    /// X axis title with its unit.
    pub x_label: String,
    /// Y axis title with its unit.
    pub y_label: String,
    /// X scale.
    pub x_scale: Scale,
    /// How x tick labels read.
    pub x_tick: TickFormat,
    /// The lines.
    pub series: Vec<LineSeries>,
}

/// One legend entry: name, colour index, dashed.
type LegendEntry = (String, usize, bool);

pub(crate) struct Canvas {
    out: String,
    right: f64,
    bottom: f64,
}

impl Canvas {
    /// A chart with `bottom` units under the plot for the x axis, and the
    /// legend beside the plot (its width comes off the plot) or under the
    /// x axis (the chart grows by its height).
    pub(crate) fn new(
        id: &str,
        title: &str,
        kind: &str,
        legend: &[LegendEntry],
        bottom: f64,
    ) -> Canvas {
        let placed = legend::layout(legend, bottom);
        let height = f64::from(HEIGHT) + placed.below;
        let mut out = String::new();
        let _ = write!(
            out,
            r##"<svg xmlns="http://www.w3.org/2000/svg" id="{}" data-chart="{kind}" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="12"><rect width="{WIDTH}" height="{height}" fill="#ffffff"/><text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"##,
            esc(id),
            WIDTH / 2,
            esc(title)
        );
        placed.draw(&mut out);
        Canvas {
            out,
            right: GAP_RIGHT + placed.beside,
            bottom,
        }
    }

    pub(crate) fn plot_w(&self) -> f64 {
        WIDTH as f64 - LEFT - self.right
    }

    pub(crate) fn plot_h(&self) -> f64 {
        HEIGHT as f64 - TOP - self.bottom
    }

    /// The y of the plot's bottom edge.
    pub(crate) fn base(&self) -> f64 {
        TOP + self.plot_h()
    }

    /// The y of value `v` on `axis`.
    pub(crate) fn y_of(&self, axis: &ValueAxis, v: f64) -> f64 {
        self.base() - axis.frac(v) * self.plot_h()
    }

    /// Grid lines, tick labels and title of the value axis.
    pub(crate) fn y_axis(&mut self, axis: &ValueAxis, label: &str) {
        let x2 = LEFT + self.plot_w();
        for &t in &axis.minor {
            let py = self.y_of(axis, t);
            let _ = write!(
                self.out,
                r##"<line x1="{LEFT}" x2="{x2:.1}" y1="{py:.1}" y2="{py:.1}" stroke="#f2f2f2"/>"##
            );
        }
        for &t in &axis.ticks {
            let py = self.y_of(axis, t);
            let _ = write!(
                self.out,
                r##"<line x1="{LEFT}" x2="{x2:.1}" y1="{py:.1}" y2="{py:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT - 6.0,
                py + 4.0,
                axis::si(t)
            );
        }
        let cy = TOP + self.plot_h() / 2.0;
        let log = if axis.is_log() { ", log scale" } else { "" };
        let _ = write!(
            self.out,
            r##"<text x="16" y="{cy:.1}" text-anchor="middle" transform="rotate(-90 16 {cy:.1})">{}{log}</text><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{:.1}" stroke="#333"/>"##,
            esc(label),
            self.base()
        );
    }

    pub(crate) fn x_axis_line(&mut self) {
        let y = self.base();
        let _ = write!(
            self.out,
            r##"<line x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#333"/>"##,
            LEFT + self.plot_w()
        );
    }

    /// The x axis title, under the tick labels.
    pub(crate) fn x_title(&mut self, label: &str) {
        let _ = write!(
            self.out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + self.plot_w() / 2.0,
            self.base() + 34.0,
            esc(label)
        );
    }

    pub(crate) fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// One element per line, so snapshot diffs point at the changed bar.
    pub(crate) fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out.replace("><", ">\n<")
    }
}

/// The tooltip of a bar or point: what it is, then the axis and the value.
fn tooltip(what: &str, label: &str, value: &str) -> String {
    format!(
        "<title>{}\n{}: {}</title>",
        esc(what),
        esc(label),
        esc(value)
    )
}

#[cfg(test)]
mod tests;
