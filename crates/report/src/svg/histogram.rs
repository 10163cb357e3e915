//! Latency histograms: counts in buckets on a log time axis, one
//! translucent set of bars per series so read and write overlap visibly.

use std::fmt::Write;

use super::axis::{self, ValueAxis};
use super::{colour, esc, tooltip, Canvas, BOTTOM, LEFT, TOP};

/// One set of bars: `(low, high, count)` per bucket, bounds in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSeries {
    /// The legend entry.
    pub name: String,
    /// Colour index.
    pub colour: usize,
    /// Buckets in order, bounds in ns; the count is the stored one (or the
    /// sum of the stored bins inside the bucket).
    pub buckets: Vec<(f64, f64, u64)>,
}

/// A histogram over a log time axis; bar heights are each series' share of
/// its I/Os, so series of different sizes compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// `id` of the `<svg>`.
    pub id: String,
    /// Heading inside the chart.
    pub title: String,
    /// X axis title.
    pub x_label: String,
    /// The bar sets.
    pub series: Vec<HistogramSeries>,
}

/// fio-style bins (`[ns, count]`, fine and in order) gathered into
/// `per_decade` buckets per power of ten, each `(low, high, count)` with
/// bounds in ns; empty buckets are left out. Every count lands in exactly
/// one bucket, so the counts still add up to the I/Os measured.
pub fn log_buckets(bins: &[[u64; 2]], per_decade: u32) -> Vec<(f64, f64, u64)> {
    let per = f64::from(per_decade.max(1));
    let mut out: Vec<(f64, f64, u64)> = Vec::new();
    for &[ns, n] in bins {
        if n == 0 {
            continue;
        }
        let k = (ns.max(1) as f64).log10().mul_add(per, 1e-9).floor();
        let (lo, hi) = (10f64.powf(k / per), 10f64.powf((k + 1.0) / per));
        match out.last_mut() {
            Some(last) if last.0 == lo => last.2 += n,
            _ => out.push((lo, hi, n)),
        }
    }
    out
}

impl Histogram {
    /// The SVG text.
    pub fn render(&self) -> String {
        let legend: Vec<_> = self
            .series
            .iter()
            .map(|s| (s.name.clone(), s.colour, false))
            .collect();
        let mut c = Canvas::new(&self.id, &self.title, "histogram", &legend, BOTTOM);
        let all = || self.series.iter().flat_map(|s| s.buckets.iter());
        let lo = all().map(|b| b.0).fold(f64::INFINITY, f64::min);
        let hi = all().map(|b| b.1).fold(0.0, f64::max);
        let (lo, hi) = if lo.is_finite() && hi > lo {
            (lo, hi)
        } else {
            (1.0, 10.0)
        };
        let x_axis = ValueAxis::log(lo, hi);
        let share = |s: &HistogramSeries, n: u64| {
            let total: u64 = s.buckets.iter().map(|b| b.2).sum();
            100.0 * n as f64 / total.max(1) as f64
        };
        let top = self
            .series
            .iter()
            .flat_map(|s| s.buckets.iter().map(move |b| share(s, b.2)))
            .fold(0.0, f64::max);
        // Shares are compared by eye, so the axis stays linear from zero.
        let y_axis = ValueAxis::fit(0.0, top.max(1.0));
        let (pw, base) = (c.plot_w(), c.base());
        let px = |v: f64| LEFT + x_axis.frac(v) * pw;
        let label = "% of the I/Os";
        c.y_axis(&y_axis, label);
        for &t in &x_axis.ticks {
            let x = px(t);
            let mut s = String::new();
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{base:.1}" stroke="#f0f0f0"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                base + 16.0,
                axis::duration(t)
            );
            c.push(&s);
        }
        c.x_title(&self.x_label);
        for s in &self.series {
            let mut g = format!(
                r#"<g class="series" data-series="{}" opacity="0.6">"#,
                esc(&s.name)
            );
            for &(lo, hi, n) in &s.buckets {
                let pct = share(s, n);
                let y = c.y_of(&y_axis, pct);
                let _ = write!(
                    g,
                    r#"<rect class="bin" x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}" data-low="{lo}" data-high="{hi}" data-value="{n}">{}</rect>"#,
                    px(lo),
                    (px(hi) - px(lo) - 0.5).max(0.5),
                    (base - y).max(0.0),
                    colour(s.colour),
                    tooltip(
                        &format!(
                            "{}\n{} to {}",
                            s.name,
                            axis::duration(lo),
                            axis::duration(hi)
                        ),
                        "I/Os",
                        &format!("{} ({}%)", axis::plain(n as f64), axis::plain(pct))
                    )
                );
            }
            g.push_str("</g>");
            c.push(&g);
        }
        c.x_axis_line();
        c.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_keep_every_count_once() {
        let bins = [
            [1_000, 5],
            [1_100, 5],
            [9_000, 1],
            [12_000, 4],
            [2_000_000, 2],
        ];
        let b = log_buckets(&bins, 5);
        assert_eq!(b.iter().map(|x| x.2).sum::<u64>(), 17);
        assert_eq!(b[0].2, 10, "1.0 and 1.1 µs share the bucket from 1 µs");
        assert!((b[0].0 - 1000.0).abs() < 1e-6);
        assert!(b.windows(2).all(|w| w[0].1 <= w[1].0 + 1e-6));
    }
}
