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
//! two decades, and the legend beside the plot.

use std::fmt::Write;

pub mod axis;
mod histogram;

pub use histogram::{log_buckets, Histogram, HistogramSeries};

use axis::{nines, nines_ticks, ValueAxis};

/// Width of every chart, in SVG user units (pixels at scale 1).
pub const WIDTH: u32 = 800;
/// Height of every chart.
pub const HEIGHT: u32 = 420;

const LEFT: f64 = 78.0;
const GAP_RIGHT: f64 = 16.0;
const TOP: f64 = 36.0;
/// Room under a plot for its tick labels and axis title.
const BOTTOM: f64 = 48.0;
/// The widest the legend beside the plot may grow; longer names are cut
/// (the whole name is the entry's tooltip).
const LEGEND_MAX: f64 = 210.0;
const LEGEND_ROW: f64 = 18.0;
/// Average advance of a 12 px DejaVu Sans character, for sizing text.
const CHAR_W: f64 = 7.0;

/// Run colours: Okabe and Ito's palette, distinguishable with colour-blindness.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

/// The colour of series `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escape text for XML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // XML 1.0 has no way to carry most control characters, and a raw
            // ESC would reach a terminal (`--html -`): show them as text.
            c if c.is_control() && c != '\n' && c != '\t' => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
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

/// A name cut to `chars` characters, with an ellipsis when cut.
fn cut(name: &str, chars: usize) -> String {
    if name.chars().count() <= chars {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(chars.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// The legend's width beside the plot: enough for the longest name, within
/// [`LEGEND_MAX`]; none for a chart without series.
fn legend_width(entries: &[LegendEntry]) -> f64 {
    entries
        .iter()
        .map(|(n, _, _)| 34.0 + CHAR_W * n.chars().count() as f64)
        .fold(0.0, f64::max)
        .min(LEGEND_MAX)
}

pub(crate) struct Canvas {
    out: String,
    right: f64,
    bottom: f64,
}

impl Canvas {
    /// A chart with the legend beside the plot (its width comes off the
    /// plot) and `bottom` units under the plot for the x axis.
    pub(crate) fn new(
        id: &str,
        title: &str,
        kind: &str,
        legend: &[LegendEntry],
        bottom: f64,
    ) -> Canvas {
        let mut out = String::new();
        let _ = write!(
            out,
            r##"<svg xmlns="http://www.w3.org/2000/svg" id="{}" data-chart="{kind}" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="12"><rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/><text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"##,
            esc(id),
            WIDTH / 2,
            esc(title)
        );
        let lw = legend_width(legend);
        let mut c = Canvas {
            out,
            right: GAP_RIGHT + if lw > 0.0 { lw + 8.0 } else { 0.0 },
            bottom,
        };
        c.legend(legend, lw);
        c
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

    /// The legend, one entry per row beside the plot from its top edge; a
    /// name too long for the column is cut and whole in its tooltip.
    fn legend(&mut self, entries: &[LegendEntry], width: f64) {
        let x = WIDTH as f64 - GAP_RIGHT - width;
        let chars = ((width - 34.0) / CHAR_W).round().max(4.0) as usize;
        let rows = ((self.plot_h() - 4.0) / LEGEND_ROW).floor().max(1.0) as usize;
        for (i, (name, c, dashed)) in entries.iter().enumerate() {
            let y = TOP + 12.0 + LEGEND_ROW * i as f64;
            if i + 1 == rows && entries.len() > rows {
                let _ = write!(
                    self.out,
                    r#"<text class="legend-more" x="{x:.1}" y="{y:.1}">… {} more</text>"#,
                    entries.len() - i
                );
                break;
            }
            let dash = if *dashed {
                r#" stroke-dasharray="5 3""#
            } else {
                ""
            };
            let _ = write!(
                self.out,
                r##"<g class="legend"><title>{}</title><line x1="{x:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{}" stroke-width="4"{dash}/><text x="{:.1}" y="{y:.1}">{}</text></g>"##,
                esc(name),
                x + 22.0,
                y - 4.0,
                y - 4.0,
                colour(*c),
                x + 28.0,
                esc(&cut(name, chars))
            );
        }
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

impl BarChart {
    /// The SVG text.
    pub fn render(&self) -> String {
        let legend: Vec<_> = self
            .series
            .iter()
            .map(|s| (s.name.clone(), s.colour, false))
            .collect();
        // Room under the plot for the category labels, turned when long.
        let plot_w_guess = WIDTH as f64 - LEFT - GAP_RIGHT - legend_width(&legend) - 8.0;
        let group_w = plot_w_guess / self.categories.len().max(1) as f64;
        let longest = self
            .categories
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0) as f64;
        let turned = CHAR_W * longest > group_w * 0.95;
        let bottom = if turned {
            (24.0 + longest * CHAR_W * 0.5).clamp(BOTTOM, 150.0)
        } else {
            BOTTOM
        };
        let mut c = Canvas::new(&self.id, &self.title, "bars", &legend, bottom);
        let values = || {
            self.series
                .iter()
                .flat_map(|s| s.bars.iter().flatten())
                .flat_map(|b| {
                    let (lo, hi) = b.spread.unwrap_or((b.value, b.value));
                    [b.value, lo, hi]
                })
                .chain(self.reference)
        };
        let max = values().fold(0.0, f64::max);
        let min = values().fold(f64::INFINITY, f64::min);
        let axis = ValueAxis::fit(min, max);
        c.y_axis(&axis, &self.y_label);
        let ph = c.plot_h();
        let base = c.base();
        let n_cat = self.categories.len().max(1) as f64;
        let group_w = c.plot_w() / n_cat;
        let n_ser = self.series.len().max(1) as f64;
        let bar_w = (group_w * 0.8 / n_ser).min(60.0);
        let label_size = if bar_w < 22.0 { 8 } else { 10 };
        let y = |v: f64| base - axis.frac(v) * ph;
        for (ci, cat) in self.categories.iter().enumerate() {
            let gx = LEFT + group_w * ci as f64;
            let start = gx + (group_w - bar_w * n_ser) / 2.0;
            for (si, s) in self.series.iter().enumerate() {
                let Some(Some(b)) = s.bars.get(ci) else {
                    continue;
                };
                let bx = start + bar_w * si as f64;
                let by = y(b.value.max(axis.floor()));
                let mut tip = fmt_num(b.value);
                if let Some((lo, hi)) = b.spread {
                    let _ = write!(tip, " (passes {} to {})", fmt_num(lo), fmt_num(hi));
                }
                let _ = write!(
                    c.out,
                    r#"<rect class="bar" x="{bx:.1}" y="{by:.1}" width="{:.1}" height="{:.1}" fill="{}" data-series="{}" data-category="{}" data-value="{}">{}</rect>"#,
                    bar_w - 2.0,
                    (base - by).max(0.0),
                    colour(s.colour),
                    esc(&s.name),
                    esc(cat),
                    b.stored,
                    tooltip(&format!("{}, {cat}", s.name), &self.y_label, &tip)
                );
                if let Some((lo, hi)) = b.spread {
                    let mx = bx + (bar_w - 2.0) / 2.0;
                    let _ = write!(
                        c.out,
                        r##"<path class="spread" d="M{mx:.1} {:.1}V{:.1}M{:.1} {:.1}h6M{:.1} {:.1}h6" stroke="#222" fill="none"/>"##,
                        y(lo),
                        y(hi),
                        mx - 3.0,
                        y(lo),
                        mx - 3.0,
                        y(hi)
                    );
                }
                let lx = bx + (bar_w - 2.0) / 2.0;
                let ly = y(b.spread.map_or(b.value, |s| s.1.max(b.value))) - 3.0;
                let _ = write!(
                    c.out,
                    r#"<text class="value" x="{lx:.1}" y="{ly:.1}" text-anchor="middle" font-size="{label_size}">{}</text>"#,
                    fmt_num(b.value)
                );
            }
            let tx = gx + group_w / 2.0;
            let ty = base + 16.0;
            // Labels wider than their group turn so neighbours do not overlap.
            if turned {
                let _ = write!(
                    c.out,
                    r#"<text x="{tx:.1}" y="{ty:.1}" text-anchor="end" font-size="11" transform="rotate(-30 {tx:.1} {ty:.1})">{}</text>"#,
                    esc(cat)
                );
            } else {
                let _ = write!(
                    c.out,
                    r#"<text x="{tx:.1}" y="{ty:.1}" text-anchor="middle">{}</text>"#,
                    esc(cat)
                );
            }
        }
        if let Some(r) = self.reference {
            let ry = y(r);
            let _ = write!(
                c.out,
                r##"<line x1="{LEFT}" x2="{:.1}" y1="{ry:.1}" y2="{ry:.1}" stroke="#b00" stroke-dasharray="4 3"/>"##,
                LEFT + c.plot_w()
            );
        }
        c.x_axis_line();
        c.finish()
    }
}

impl LineChart {
    /// The SVG text.
    pub fn render(&self) -> String {
        let kind = if self.series.iter().all(|s| s.scatter) {
            "scatter"
        } else {
            "lines"
        };
        let legend: Vec<_> = self
            .series
            .iter()
            .map(|s| (s.name.clone(), s.colour, s.dashed))
            .collect();
        let mut c = Canvas::new(&self.id, &self.title, kind, &legend, BOTTOM);
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let fx = |v: f64| match self.x_scale {
            Scale::Linear => v,
            Scale::Log2 => v.max(f64::MIN_POSITIVE).log2(),
            Scale::Log10 => v.max(f64::MIN_POSITIVE).log10(),
            Scale::Nines => nines(v),
        };
        let (mut x0, mut x1) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(fx(p.0)), b.max(fx(p.0)))
        });
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        let x_ticks: Vec<f64> = match self.x_scale {
            Scale::Linear => {
                let t = axis::nice_ticks(x0.min(0.0), x1, 8);
                x0 = t[0];
                x1 = *t.last().unwrap_or(&x1);
                t
            }
            Scale::Log2 => {
                let mut t: Vec<f64> = pts().map(|p| p.0).collect();
                t.sort_by(f64::total_cmp);
                t.dedup();
                t
            }
            Scale::Log10 => {
                let a = ValueAxis::log(10f64.powf(x0), 10f64.powf(x1));
                x0 = a.floor().log10();
                x1 = *a.ticks.last().unwrap_or(&10.0);
                x1 = x1.log10();
                a.ticks
            }
            Scale::Nines => {
                let max_p = pts().map(|p| p.0).fold(0.0, f64::max);
                let t = nines_ticks(max_p);
                x0 = 0.0;
                x1 = x1.max(nines(*t.last().unwrap_or(&99.0)));
                t
            }
        };
        if x1 <= x0 {
            x1 = x0 + 1.0;
            if self.x_scale == Scale::Log2 {
                x0 -= 0.5;
                x1 -= 0.5;
            }
        }
        let ymax = pts().map(|p| p.1).fold(0.0, f64::max);
        let ymin = pts().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let axis = ValueAxis::fit(ymin, ymax);
        let (pw, ph, base) = (c.plot_w(), c.plot_h(), c.base());
        let pad = if self.x_scale == Scale::Log2 {
            20.0
        } else {
            0.0
        };
        let px = |v: f64| LEFT + pad + (fx(v) - x0) / (x1 - x0) * (pw - 2.0 * pad);
        let py = |v: f64| base - axis.frac(v) * ph;
        c.y_axis(&axis, &self.y_label);
        for &t in &x_ticks {
            let x = px(t);
            let _ = write!(
                c.out,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{base:.1}" stroke="#f0f0f0"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                base + 16.0,
                esc(&self.x_tick.format(t))
            );
        }
        c.x_title(&self.x_label);
        for s in &self.series {
            let col = colour(s.colour);
            let _ = write!(
                c.out,
                r#"<g class="series" data-series="{}">"#,
                esc(&s.name)
            );
            if !s.scatter && s.points.len() > 1 {
                let d: Vec<String> = s
                    .points
                    .iter()
                    .map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1)))
                    .collect();
                let dash = if s.dashed {
                    r#" stroke-dasharray="6 4""#
                } else {
                    ""
                };
                let _ = write!(
                    c.out,
                    r#"<polyline points="{}" fill="none" stroke="{col}" stroke-width="2"{dash}/>"#,
                    d.join(" ")
                );
            }
            let r = if s.scatter || s.points.len() <= 40 {
                3.0
            } else {
                1.5
            };
            for p in &s.points {
                let what = format!("{}\n{}: {}", s.name, self.x_label, self.x_tick.format(p.0));
                let _ = write!(
                    c.out,
                    r#"<circle class="point" cx="{:.1}" cy="{:.1}" r="{r}" fill="{col}" data-x="{}" data-value="{}">{}</circle>"#,
                    px(p.0),
                    py(p.1),
                    p.0,
                    p.2,
                    tooltip(&what, &self.y_label, &fmt_num(p.1))
                );
            }
            c.out.push_str("</g>");
        }
        c.x_axis_line();
        c.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(esc("a\u{1b}]0;x\u{7}<b>"), "a\\x1b]0;x\\x07&lt;b&gt;");
        assert_eq!(esc("\u{9b}2J"), "\\x9b2J");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc(r#"a<b & "c""#), "a&lt;b &amp; &quot;c&quot;");
    }

    fn bars(values: &[f64]) -> BarChart {
        BarChart {
            id: "t".into(),
            title: "t".into(),
            y_label: "MB/s".into(),
            categories: (0..values.len()).map(|i| format!("c{i}")).collect(),
            series: vec![BarSeries {
                name: "a run with a very long name that does not fit beside the plot".into(),
                colour: 0,
                bars: values.iter().map(|&v| Some(Bar::new(v, v))).collect(),
            }],
            reference: None,
        }
    }

    #[test]
    fn bars_spanning_three_decades_get_a_log_axis_with_si_ticks() {
        let svg = bars(&[40.0, 7000.0]).render();
        assert!(svg.contains("MB/s, log scale"), "{svg}");
        assert!(svg.contains(">10k</text>"), "{svg}");
        let linear = bars(&[400.0, 7000.0]).render();
        assert!(!linear.contains("log scale"));
        assert!(linear.contains(">8000</text>"), "{linear}");
    }

    #[test]
    fn bars_carry_tooltips_and_the_legend_sits_beside_the_plot() {
        let svg = bars(&[1234.6]).render();
        assert!(
            svg.contains("<title>a run with a very long name that does not fit beside the plot, c0\nMB/s: 1235</title>"),
            "{svg}"
        );
        // The legend starts level with the plot's top, right of it, and the
        // long name is cut there (whole in the entry's tooltip).
        let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
        assert!(
            legend.contains(&format!("y=\"{:.1}\"", TOP + 12.0)),
            "{legend}"
        );
        assert!(legend.contains('…'));
        let x: f64 = legend
            .split("x1=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(x > 560.0, "legend at x {x}");
    }
}
