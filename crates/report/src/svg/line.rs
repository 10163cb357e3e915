//! A line chart: series over a linear or log x axis, drawn on a [`Canvas`].

use super::*;

/// What each line of a chart is drawn as: its colour index and, with
/// more lines than colours, what the legend calls it.
struct Look {
    colour: usize,
    picked: Option<&'static str>,
}

impl LineChart {
    /// Whether the lines have more colours than the palette (a run's
    /// lines share its colour, so it is the runs, or the parts, counted).
    fn too_many(&self) -> bool {
        let mut colours: Vec<usize> = self.series.iter().map(|s| s.colour).collect();
        colours.sort_unstable();
        colours.dedup();
        colours.len() > COLOURS
    }

    /// How each series is drawn. Up to [`COLOURS`] colours: each in its
    /// own. More: the one with the highest mean value, the lowest
    /// and the first (a report's first run) in the palette's first three
    /// colours, named in the legend as such, and every other line grey
    /// under them, named in its tooltip: fifty lines in eight repeating
    /// colours could not be told apart, a spread of grey and three named
    /// lines can.
    fn looks(&self) -> Vec<Look> {
        if !self.too_many() {
            return self
                .series
                .iter()
                .map(|s| Look {
                    colour: s.colour,
                    picked: None,
                })
                .collect();
        }
        let mean = |s: &LineSeries| {
            s.points.iter().map(|p| p.1).sum::<f64>() / s.points.len().max(1) as f64
        };
        let by_mean = |pick: fn(f64, f64) -> bool| {
            (0..self.series.len()).reduce(|a, b| {
                if pick(mean(&self.series[b]), mean(&self.series[a])) {
                    b
                } else {
                    a
                }
            })
        };
        let highest = by_mean(|b, a| b > a);
        let lowest = by_mean(|b, a| b < a);
        (0..self.series.len())
            .map(|i| {
                let picked = if Some(i) == highest {
                    Some("highest")
                } else if Some(i) == lowest {
                    Some("lowest")
                } else if i == 0 {
                    Some("first")
                } else {
                    None
                };
                Look {
                    colour: match picked {
                        Some("highest") => 0,
                        Some("lowest") => 1,
                        Some(_) => 2,
                        None => GREY,
                    },
                    picked,
                }
            })
            .collect()
    }

    /// The SVG text.
    pub fn render(&self) -> String {
        self.draw(false)
    }

    /// The SVG text, on a log value axis whatever the values span (the
    /// live latency chart: its tests' medians and 99th percentiles are
    /// decades apart, and a linear axis flattens the fast ones to zero).
    pub fn render_log_y(&self) -> String {
        self.draw(true)
    }

    fn draw(&self, log_y: bool) -> String {
        let kind = if self.series.iter().all(|s| s.scatter) {
            "scatter"
        } else {
            "lines"
        };
        let looks = self.looks();
        let mut legend: Vec<_> = self
            .series
            .iter()
            .zip(&looks)
            .filter(|(_, l)| l.picked.is_some() || !self.too_many())
            .map(|(s, l)| {
                let name = match l.picked {
                    Some(p) => format!("{p}: {}", s.name),
                    None => s.name.clone(),
                };
                (name, l.colour, s.dashed)
            })
            .collect();
        // Lines of one name share their legend entry (a test's passes, its
        // 99th percentile beside its median): the first one's.
        let mut named: Vec<String> = Vec::new();
        legend.retain(|(name, _, _)| {
            let first = !named.contains(name);
            if first {
                named.push(name.clone());
            }
            first
        });
        let others = looks.iter().filter(|l| l.colour == GREY).count();
        if others > 0 {
            legend.push((
                format!("{others} other lines, each named in its tooltip"),
                GREY,
                false,
            ));
        }
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
        let axis = if log_y && ymin > 0.0 && ymin.is_finite() {
            ValueAxis::log(ymin, ymax)
        } else {
            ValueAxis::fit(ymin, ymax)
        };
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
        // Grey lines first, under the coloured ones.
        let mut order: Vec<usize> = (0..self.series.len()).collect();
        order.sort_by_key(|&i| looks[i].colour != GREY);
        for i in order {
            let s = &self.series[i];
            let col = colour(looks[i].colour);
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
