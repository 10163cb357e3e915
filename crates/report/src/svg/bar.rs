//! A bar chart: categories of bars, one per series, drawn on a [`Canvas`].

use super::*;

impl BarChart {
    /// The SVG text.
    pub fn render(&self) -> String {
        let legend: Vec<_> = self
            .series
            .iter()
            .map(|s| (s.name.clone(), s.colour, false))
            .collect();
        // Room under the plot for the category labels, turned when long.
        let plot_w_guess = WIDTH as f64 - LEFT - GAP_RIGHT - legend::layout(&legend, BOTTOM).beside;
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
        // Each bar's box, which no value label may cover, and the labels,
        // placed once every bar is known.
        let mut taken: Vec<Area> = Vec::new();
        let mut labels: Vec<(f64, f64, String)> = Vec::new();
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
                taken.push(Area {
                    left: bx,
                    right: bx + bar_w - 2.0,
                    top: by,
                    bottom: base,
                });
                let lx = bx + (bar_w - 2.0) / 2.0;
                let ly = y(b.spread.map_or(b.value, |s| s.1.max(b.value))) - 3.0;
                labels.push((lx, ly, fmt_num(b.value)));
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
        // The highest labels first: they have the least room to move.
        labels.sort_by(|a, b| a.1.total_cmp(&b.1));
        let size = f64::from(label_size);
        for (lx, ly, text) in labels {
            let width = text.chars().count() as f64 * size * DIGIT_W + 2.0;
            if let Some(ly) = place_label(&mut taken, lx, ly, width, size, TOP) {
                let _ = write!(
                    c.out,
                    r#"<text class="value" x="{lx:.1}" y="{ly:.1}" text-anchor="middle" font-size="{label_size}">{text}</text>"#
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

/// The width of a digit in the labels' font, in ems (DejaVu Sans: 0.64).
const DIGIT_W: f64 = 0.64;

/// A box on the chart, in its units: a bar, or a value label placed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Area {
    pub(super) left: f64,
    pub(super) right: f64,
    pub(super) top: f64,
    pub(super) bottom: f64,
}

impl Area {
    fn overlaps(&self, o: &Area) -> bool {
        self.left < o.right && o.left < self.right && self.top < o.bottom && o.top < self.bottom
    }
}

/// Where a value label `width` by `height`, centred on `x`, goes: at the
/// baseline `y` when nothing `taken` is there, else lifted just above
/// what it would cover, as often as needed, so that labels of narrow bars
/// never run into each other or into a bar; `None` (left out: the value
/// stays in the bar's tooltip and `data-value`) when that would lift it
/// above `top`. A label with nothing in its way stays where it is, above
/// `top` or not (the tallest bar's, in the margin under the title). A
/// label placed is added to `taken`.
pub(super) fn place_label(
    taken: &mut Vec<Area>,
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    top: f64,
) -> Option<f64> {
    let natural = y;
    let mut y = y;
    let area = |y: f64| Area {
        left: x - width / 2.0,
        right: x + width / 2.0,
        top: y - height,
        bottom: y,
    };
    while let Some(above) = taken
        .iter()
        .filter(|t| t.overlaps(&area(y)))
        .map(|t| t.top)
        .reduce(f64::min)
    {
        y = above - 1.0;
    }
    if y < natural && y - height < top {
        return None;
    }
    taken.push(area(y));
    Some(y)
}
