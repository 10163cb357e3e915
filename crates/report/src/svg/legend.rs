//! The legend: beside the plot when every name fits a narrow column and
//! every entry a row of the plot's height; else under the plot across the
//! chart's whole width, in as many rows as it takes, the chart growing to
//! hold them. A name is never cut: one wider than the chart wraps onto
//! lines of its own.

use std::fmt::Write;

use super::{colour, esc, LegendEntry, HEIGHT, TOP, WIDTH};

/// The widest the legend beside the plot may grow; a longer name sends
/// the legend under the plot, where it has the chart's width.
pub(super) const BESIDE_MAX: f64 = 210.0;
/// One line of the legend.
pub(super) const ROW: f64 = 18.0;
/// The colour swatch and the gap after it, before the name.
const SWATCH: f64 = 28.0;
/// Between two entries side by side under the plot.
const GAP: f64 = 18.0;
/// Left and right margins of the legend under the plot.
const MARGIN: f64 = 16.0;
/// Between the chart's x axis (its first [`HEIGHT`] units) and the legend.
const ABOVE: f64 = 6.0;

/// Advance widths of DejaVu Sans (the charts' first font), in 1/2048 em,
/// for the printable ASCII characters from the space on.
const ADVANCE: [u16; 95] = [
    651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690, 1303,
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087, 2048,
    1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612, 1235,
    1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799, 690, 799, 1716, 1024, 1024,
    1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995, 1298, 1253, 1300,
    1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690, 1303, 1716,
];

/// The width of `text` at 12 px, a little over DejaVu Sans' own (5%, for
/// a fallback font such as Verdana); any other character counts as an em.
pub(crate) fn text_width(text: &str) -> f64 {
    let units: f64 = text
        .chars()
        .map(|c| {
            let i = (c as usize).wrapping_sub(32);
            ADVANCE.get(i).map_or(2048.0, |&a| f64::from(a))
        })
        .sum();
    units / 2048.0 * 12.0 * 1.05
}

/// One entry placed: the top-left of its box, the name's lines, and its
/// box's width and height.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    pub(crate) x: f64,
    pub(crate) top: f64,
    pub(crate) width: f64,
    pub(crate) height: f64,
    pub(crate) lines: Vec<String>,
    name: String,
    colour: usize,
    dashed: bool,
}

/// Where the legend goes and what room it takes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Legend {
    /// The entries, placed.
    pub(crate) entries: Vec<Placed>,
    /// Room taken right of the plot (0 when under it).
    pub(crate) beside: f64,
    /// Height added under the chart (0 when beside the plot).
    pub(crate) below: f64,
}

/// `name` in lines no wider than `width`: broken at spaces, and inside a
/// word only where the word alone is wider.
pub(crate) fn wrap(name: &str, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in name.split(' ') {
        let joined = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if text_width(&joined) <= width {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for c in word.chars() {
            if !line.is_empty() && text_width(&format!("{line}{c}")) > width {
                lines.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    lines.push(line);
    lines
}

/// The legend of a chart with `bottom` units under its plot.
pub(crate) fn layout(entries: &[LegendEntry], bottom: f64) -> Legend {
    if entries.is_empty() {
        return Legend {
            entries: Vec::new(),
            beside: 0.0,
            below: 0.0,
        };
    }
    let widest = entries
        .iter()
        .map(|(n, _, _)| SWATCH + text_width(n))
        .fold(0.0, f64::max);
    let plot_h = f64::from(HEIGHT) - TOP - bottom;
    if widest <= BESIDE_MAX && entries.len() as f64 * ROW <= plot_h - 4.0 {
        let x = f64::from(WIDTH) - super::GAP_RIGHT - widest;
        let placed = entries
            .iter()
            .enumerate()
            .map(|(i, (name, c, dashed))| Placed {
                x,
                top: TOP + ROW * i as f64,
                width: SWATCH + text_width(name),
                height: ROW,
                lines: vec![name.clone()],
                name: name.clone(),
                colour: *c,
                dashed: *dashed,
            })
            .collect();
        return Legend {
            entries: placed,
            beside: widest + 8.0,
            below: 0.0,
        };
    }
    // Under the plot: columns as wide as the widest entry, as many as fit.
    let room = f64::from(WIDTH) - 2.0 * MARGIN;
    let column = widest.min(room);
    let columns = (((room + GAP) / (column + GAP)).floor() as usize).max(1);
    let mut placed = Vec::with_capacity(entries.len());
    let mut top = f64::from(HEIGHT) + ABOVE;
    for row in entries.chunks(columns) {
        let mut tallest: f64 = ROW;
        for (i, (name, c, dashed)) in row.iter().enumerate() {
            let lines = wrap(name, column - SWATCH);
            let width = SWATCH + lines.iter().map(|l| text_width(l)).fold(0.0, f64::max);
            let height = ROW * lines.len() as f64;
            tallest = tallest.max(height);
            placed.push(Placed {
                x: MARGIN + (column + GAP) * i as f64,
                top,
                width,
                height,
                lines,
                name: name.clone(),
                colour: *c,
                dashed: *dashed,
            });
        }
        top += tallest;
    }
    Legend {
        entries: placed,
        beside: 0.0,
        below: top - f64::from(HEIGHT) + ABOVE,
    }
}

impl Legend {
    /// The entries as SVG: a swatch and the name's lines, the whole name
    /// also the entry's tooltip.
    pub(crate) fn draw(&self, out: &mut String) {
        for e in &self.entries {
            let dash = if e.dashed {
                r#" stroke-dasharray="5 3""#
            } else {
                ""
            };
            let y = e.top + 12.0;
            let _ = write!(
                out,
                r##"<g class="legend"><title>{}</title><line x1="{:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{}" stroke-width="4"{dash}/>"##,
                esc(&e.name),
                e.x,
                e.x + 22.0,
                y - 4.0,
                y - 4.0,
                colour(e.colour),
            );
            for (i, line) in e.lines.iter().enumerate() {
                let _ = write!(
                    out,
                    r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                    e.x + SWATCH,
                    y + ROW * i as f64,
                    esc(line)
                );
            }
            out.push_str("</g>");
        }
    }
}
