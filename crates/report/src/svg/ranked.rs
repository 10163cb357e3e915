//! A ranked bar chart: one horizontal bar per run, the highest first,
//! each named at its left. The compact form of a grouped bar chart with
//! more runs than the palette has colours: fifty
//! bars side by side in one group are slivers whose colours repeat, while
//! fifty rows, each named, read as a ranking.

use std::fmt::Write;

use super::axis::{self, ValueAxis};
use super::legend::{text_width, wrap};
use super::{colour, esc, fmt_num, tooltip, Bar, WIDTH};

/// The height of one line of a row's name; a bar fills most of it.
const LINE: f64 = 16.0;
/// Title and the space under it.
const TOP: f64 = 40.0;
/// Tick labels and the axis title under the rows.
const BOTTOM: f64 = 44.0;
/// The widest the names' column gets; a longer name wraps.
const NAMES_MAX: f64 = 300.0;
const MARGIN: f64 = 12.0;
/// Room right of the longest bar for its value.
const VALUE_ROOM: f64 = 64.0;

/// One row: the run's name and its bar. Every bar has the palette's
/// first colour: with more runs than colours a run's own would repeat,
/// and the name beside the bar says whose it is.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedRow {
    /// The run's name, whole (wrapped when long).
    pub name: String,
    /// The bar.
    pub bar: Bar,
}

/// Runs ranked on one category of a grouped bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedBars {
    /// `id` of the `<svg>`.
    pub id: String,
    /// Heading inside the chart.
    pub title: String,
    /// Value axis title with its unit.
    pub x_label: String,
    /// The rows, in any order: drawn highest first.
    pub rows: Vec<RankedRow>,
    /// A vertical reference line (1.0 for relative charts).
    pub reference: Option<f64>,
}

impl RankedBars {
    /// The SVG text.
    pub fn render(&self) -> String {
        let mut rows: Vec<&RankedRow> = self.rows.iter().collect();
        rows.sort_by(|a, b| b.bar.value.total_cmp(&a.bar.value));
        let names_w = rows
            .iter()
            .map(|r| text_width(&r.name))
            .fold(0.0, f64::max)
            .min(NAMES_MAX);
        let lines: Vec<Vec<String>> = rows.iter().map(|r| wrap(&r.name, names_w)).collect();
        let height =
            TOP + BOTTOM + LINE * lines.iter().map(|l| l.len()).sum::<usize>() as f64 + 4.0;
        let left = MARGIN + names_w + 8.0;
        let plot_w = f64::from(WIDTH) - left - MARGIN - VALUE_ROOM;
        let values = || {
            rows.iter()
                .flat_map(|r| {
                    let (lo, hi) = r.bar.spread.unwrap_or((r.bar.value, r.bar.value));
                    [r.bar.value, lo, hi]
                })
                .chain(self.reference)
        };
        let axis = ValueAxis::fit(
            values().fold(f64::INFINITY, f64::min),
            values().fold(0.0, f64::max),
        );
        let x = |v: f64| left + axis.frac(v.max(axis.floor())) * plot_w;
        let base = height - BOTTOM;
        let mut out = String::new();
        let _ = write!(
            out,
            r##"<svg xmlns="http://www.w3.org/2000/svg" id="{}" data-chart="ranked" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="12"><rect width="{WIDTH}" height="{height}" fill="#ffffff"/><text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"##,
            esc(&self.id),
            WIDTH / 2,
            esc(&self.title)
        );
        for &t in &axis.ticks {
            let tx = x(t);
            let _ = write!(
                out,
                r##"<line x1="{tx:.1}" x2="{tx:.1}" y1="{TOP}" y2="{base:.1}" stroke="#e0e0e0"/><text x="{tx:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                base + 16.0,
                axis::si(t)
            );
        }
        let log = if axis.is_log() { ", log scale" } else { "" };
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}{log}</text><line x1="{left:.1}" x2="{left:.1}" y1="{TOP}" y2="{base:.1}" stroke="#333"/>"##,
            left + plot_w / 2.0,
            base + 34.0,
            esc(&self.x_label)
        );
        let mut y = TOP;
        for (r, name) in rows.iter().zip(&lines) {
            let h = LINE * name.len() as f64;
            for (i, line) in name.iter().enumerate() {
                let _ = write!(
                    out,
                    r#"<text class="row-name" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                    left - 8.0,
                    y + 12.0 + LINE * i as f64,
                    esc(line)
                );
            }
            let end = x(r.bar.value);
            let mut tip = fmt_num(r.bar.value);
            if let Some((lo, hi)) = r.bar.spread {
                let _ = write!(tip, " (passes {} to {})", fmt_num(lo), fmt_num(hi));
            }
            let _ = write!(
                out,
                r#"<rect class="bar" x="{left:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" data-series="{}" data-value="{}">{}</rect>"#,
                y + 3.0,
                (end - left).max(0.0),
                LINE - 5.0,
                colour(0),
                esc(&r.name),
                r.bar.stored,
                tooltip(&r.name, &self.x_label, &tip)
            );
            if let Some((lo, hi)) = r.bar.spread {
                let my = y + 3.0 + (LINE - 5.0) / 2.0;
                let _ = write!(
                    out,
                    r##"<path class="spread" d="M{:.1} {my:.1}H{:.1}" stroke="#222" fill="none"/>"##,
                    x(lo),
                    x(hi)
                );
            }
            let label_x = x(r.bar.spread.map_or(r.bar.value, |s| s.1.max(r.bar.value))) + 4.0;
            let _ = write!(
                out,
                r#"<text class="value" x="{label_x:.1}" y="{:.1}" font-size="10">{}</text>"#,
                y + 11.0,
                fmt_num(r.bar.value)
            );
            y += h;
        }
        if let Some(r) = self.reference {
            let rx = x(r);
            let _ = write!(
                out,
                r##"<line x1="{rx:.1}" x2="{rx:.1}" y1="{TOP}" y2="{base:.1}" stroke="#b00" stroke-dasharray="4 3"/>"##
            );
        }
        out.push_str("</svg>");
        out.replace("><", ">\n<")
    }
}
