//! Small hand-written SVG charts: grouped bars and lines on linear or
//! base-2 axes.
//!
//! Written by hand rather than with a plotting crate so the output needs no
//! fonts at render time (text stays text for the browser), is byte-stable
//! for snapshot tests, and carries each bar's and point's stored value in a
//! `data-value` attribute for checks.

use std::fmt::Write;

/// Width of every chart, in SVG user units (pixels at scale 1).
pub const WIDTH: u32 = 800;
/// Height of every chart.
pub const HEIGHT: u32 = 420;

const LEFT: f64 = 78.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 110.0;

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

/// A number for a label: three significant digits, no exponent.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
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
    /// One entry per category.
    pub bars: Vec<Option<Bar>>,
}

/// A grouped bar chart.
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

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced.
    Linear,
    /// Base 2 (queue depths, block sizes): ticks at the data's powers of two.
    Log2,
}

/// How tick values print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickFormat {
    /// A plain number: `32`, `2.5`.
    Number,
    /// A byte count as CrystalDiskMark writes block sizes: `4K`, `1M`.
    Bytes,
}

impl TickFormat {
    fn format(self, v: f64) -> String {
        match self {
            TickFormat::Number => fmt_num(v),
            TickFormat::Bytes => iomark_model::Bytes(v as u64).short_label(),
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
    /// Colour index (runs keep one colour across directions).
    pub colour: usize,
}

/// A line chart or scatter.
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

/// Ticks from 0 (or below) to at least `max`: 1, 2 or 5 times a power of ten.
fn nice_ticks(min: f64, max: f64, want: usize) -> Vec<f64> {
    let span = (max - min).max(f64::MIN_POSITIVE);
    let raw = span / want as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| span / s <= want as f64)
        .unwrap_or(10.0 * mag);
    let first = (min / step).floor() * step;
    let mut t = Vec::new();
    let mut v = first;
    while v < max + step * 0.999 {
        t.push(v);
        v += step;
        if t.len() > 50 {
            break;
        }
    }
    t
}

struct Canvas {
    out: String,
}

impl Canvas {
    fn new(id: &str, title: &str, kind: &str) -> Canvas {
        let mut out = String::new();
        let _ = write!(
            out,
            r##"<svg xmlns="http://www.w3.org/2000/svg" id="{}" data-chart="{kind}" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="12"><rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/><text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"##,
            esc(id),
            WIDTH / 2,
            esc(title)
        );
        Canvas { out }
    }

    fn plot_w() -> f64 {
        WIDTH as f64 - LEFT - RIGHT
    }

    fn plot_h() -> f64 {
        HEIGHT as f64 - TOP - BOTTOM
    }

    fn y_axis(&mut self, ticks: &[f64], y: impl Fn(f64) -> f64, label: &str) {
        for &t in ticks {
            let py = y(t);
            let _ = write!(
                self.out,
                r##"<line x1="{LEFT}" x2="{:.1}" y1="{py:.1}" y2="{py:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + Self::plot_w(),
                LEFT - 6.0,
                py + 4.0,
                fmt_num(t)
            );
        }
        let cy = TOP + Self::plot_h() / 2.0;
        let _ = write!(
            self.out,
            r##"<text x="16" y="{cy:.1}" text-anchor="middle" transform="rotate(-90 16 {cy:.1})">{}</text><line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{:.1}" stroke="#333"/>"##,
            esc(label),
            TOP + Self::plot_h()
        );
    }

    fn x_axis_line(&mut self) {
        let y = TOP + Self::plot_h();
        let _ = write!(
            self.out,
            r##"<line x1="{LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#333"/>"##,
            LEFT + Self::plot_w()
        );
    }

    /// The legend, in rows under the x axis title.
    fn legend(&mut self, entries: &[(String, usize, bool)]) {
        let mut x = LEFT;
        let mut y = HEIGHT as f64 - 30.0;
        for (name, c, dashed) in entries {
            let w = 30.0 + 7.0 * name.chars().count() as f64;
            if x + w > WIDTH as f64 - RIGHT && x > LEFT {
                x = LEFT;
                y += 16.0;
            }
            let dash = if *dashed {
                r#" stroke-dasharray="5 3""#
            } else {
                ""
            };
            let _ = write!(
                self.out,
                r##"<g class="legend"><line x1="{x:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{}" stroke-width="4"{dash}/><text x="{:.1}" y="{y:.1}">{}</text></g>"##,
                x + 18.0,
                y - 4.0,
                y - 4.0,
                colour(*c),
                x + 22.0,
                esc(name)
            );
            x += w;
        }
    }

    /// One element per line, so snapshot diffs point at the changed bar.
    fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out.replace("><", ">\n<")
    }
}

impl BarChart {
    /// The SVG text.
    pub fn render(&self) -> String {
        let mut c = Canvas::new(&self.id, &self.title, "bars");
        let max = self
            .series
            .iter()
            .flat_map(|s| s.bars.iter().flatten())
            .map(|b| b.spread.map_or(b.value, |s| s.1.max(b.value)))
            .chain(self.reference)
            .fold(0.0, f64::max);
        let ticks = nice_ticks(0.0, if max > 0.0 { max * 1.08 } else { 1.0 }, 6);
        let top = *ticks.last().unwrap_or(&1.0);
        let ph = Canvas::plot_h();
        let y = |v: f64| TOP + ph - v / top * ph;
        c.y_axis(&ticks, y, &self.y_label);
        let n_cat = self.categories.len().max(1) as f64;
        let group_w = Canvas::plot_w() / n_cat;
        let n_ser = self.series.len().max(1) as f64;
        let bar_w = (group_w * 0.8 / n_ser).min(60.0);
        let label_size = if bar_w < 22.0 { 8 } else { 10 };
        for (ci, cat) in self.categories.iter().enumerate() {
            let gx = LEFT + group_w * ci as f64;
            let start = gx + (group_w - bar_w * n_ser) / 2.0;
            for (si, s) in self.series.iter().enumerate() {
                let Some(Some(b)) = s.bars.get(ci) else {
                    continue;
                };
                let bx = start + bar_w * si as f64;
                let by = y(b.value.max(0.0));
                let _ = write!(
                    c.out,
                    r#"<rect class="bar" x="{bx:.1}" y="{by:.1}" width="{:.1}" height="{:.1}" fill="{}" data-series="{}" data-category="{}" data-value="{}"/>"#,
                    bar_w - 2.0,
                    (TOP + ph - by).max(0.0),
                    colour(si),
                    esc(&s.name),
                    esc(cat),
                    b.stored
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
            let ty = TOP + ph + 16.0;
            // Labels wider than their group turn so neighbours do not overlap.
            if 6.8 * cat.chars().count() as f64 > group_w * 0.95 {
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
                LEFT + Canvas::plot_w()
            );
        }
        c.x_axis_line();
        let legend: Vec<_> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i, false))
            .collect();
        c.legend(&legend);
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
        let mut c = Canvas::new(&self.id, &self.title, kind);
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let fx = |v: f64| match self.x_scale {
            Scale::Linear => v,
            Scale::Log2 => v.max(f64::MIN_POSITIVE).log2(),
        };
        let (mut x0, mut x1) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(fx(p.0)), b.max(fx(p.0)))
        });
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        let x_ticks: Vec<f64> = match self.x_scale {
            Scale::Linear => {
                let t = nice_ticks(x0.min(0.0), x1, 8);
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
        };
        if x1 <= x0 {
            x1 = x0 + 1.0;
            if self.x_scale == Scale::Log2 {
                x0 -= 0.5;
                x1 -= 0.5;
            }
        }
        let ymax = pts().map(|p| p.1).fold(0.0, f64::max);
        let y_ticks = nice_ticks(0.0, if ymax > 0.0 { ymax * 1.05 } else { 1.0 }, 6);
        let ytop = *y_ticks.last().unwrap_or(&1.0);
        let (pw, ph) = (Canvas::plot_w(), Canvas::plot_h());
        let pad = if self.x_scale == Scale::Log2 {
            20.0
        } else {
            0.0
        };
        let px = |v: f64| LEFT + pad + (fx(v) - x0) / (x1 - x0) * (pw - 2.0 * pad);
        let py = |v: f64| TOP + ph - v / ytop * ph;
        c.y_axis(&y_ticks, py, &self.y_label);
        for &t in &x_ticks {
            let x = px(t);
            let _ = write!(
                c.out,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}" stroke="#f0f0f0"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + ph,
                TOP + ph + 16.0,
                esc(&self.x_tick.format(t))
            );
        }
        let _ = write!(
            c.out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            TOP + ph + 34.0,
            esc(&self.x_label)
        );
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
                let _ = write!(
                    c.out,
                    r#"<circle class="point" cx="{:.1}" cy="{:.1}" r="{r}" fill="{col}" data-x="{}" data-value="{}"/>"#,
                    px(p.0),
                    py(p.1),
                    p.0,
                    p.2
                );
            }
            c.out.push_str("</g>");
        }
        c.x_axis_line();
        let legend: Vec<_> = self
            .series
            .iter()
            .map(|s| (s.name.clone(), s.colour, s.dashed))
            .collect();
        c.legend(&legend);
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
    fn ticks_cover_the_range_in_round_steps() {
        let t = nice_ticks(0.0, 473.0, 6);
        assert_eq!(t.first(), Some(&0.0));
        assert!(*t.last().unwrap() >= 473.0);
        assert_eq!(t[1] - t[0], 100.0);
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc(r#"a<b & "c""#), "a&lt;b &amp; &quot;c&quot;");
    }
}
