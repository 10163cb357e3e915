//! The PTS IOPS test's charts, as the specification draws them: the
//! tracking variable round by round for every run (convergence), and per
//! run its measurement window with the average, the ±10% and ±20% bands
//! and the best-fit line.

use iomark_model::profile::ProfileResult;
use iomark_model::pts::{PtsIopsResult, PtsWindowFigures};

use super::{of_run, push_lines, slug, with_profile, Chart};
use crate::svg::{LineChart, LineSeries, Scale, TickFormat};
use crate::{Report, ReportRun};

const IOPS: &str = "IOPS (4 KiB, 0/100)";

fn line(name: String, points: Vec<(f64, f64)>, dashed: bool, colour: usize) -> LineSeries {
    LineSeries {
        name,
        points: points.into_iter().map(|(x, y)| (x, y, y)).collect(),
        dashed,
        scatter: false,
        colour,
    }
}

/// The window's rounds at `level` times the average, as a dashed line.
fn band(w: &PtsWindowFigures, level: f64, name: &str, colour: usize) -> LineSeries {
    let y = w.average * level;
    let (a, b) = (f64::from(w.first_round), f64::from(w.last_round));
    line(name.into(), vec![(a, y), (b, y)], true, colour)
}

pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(usize, &ReportRun, &PtsIopsResult)> = with_profile(report, |p| match p {
        ProfileResult::PtsIops(r) => Some(r),
        _ => None,
    });
    if runs.is_empty() {
        return;
    }
    let series = runs
        .iter()
        .map(|(_, r, p)| {
            let points = p
                .rounds
                .iter()
                .map(|x| (f64::from(x.round), x.tracking))
                .collect();
            line(r.name.clone(), points, false, r.colour)
        })
        .collect();
    push_lines(
        out,
        LineChart {
            id: "pts-convergence".into(),
            title: "PTS IOPS: steady-state convergence (tracking variable per round)".into(),
            x_label: "round".into(),
            y_label: IOPS.into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series,
        },
    );
    for (_, r, p) in &runs {
        let Some(w) = p.window else { continue };
        let from = out.len();
        let rounds = &p.rounds[(w.first_round - 1) as usize..w.last_round as usize];
        let (a, b) = (f64::from(w.first_round), f64::from(w.last_round));
        let fit = |x: f64| w.intercept + w.slope * (x - a);
        let verdict = if w.steady { "steady" } else { "not steady" };
        push_lines(
            out,
            LineChart {
                id: format!("pts-window-{}", slug(&r.name)),
                title: format!(
                    "{}: PTS window, rounds {}-{} ({verdict})",
                    r.name, w.first_round, w.last_round
                ),
                x_label: "round".into(),
                y_label: IOPS.into(),
                x_scale: Scale::Linear,
                x_tick: TickFormat::Number,
                series: vec![
                    line(
                        "tracking".into(),
                        rounds
                            .iter()
                            .map(|x| (f64::from(x.round), x.tracking))
                            .collect(),
                        false,
                        r.colour,
                    ),
                    band(&w, 1.0, "average", 1),
                    band(&w, 1.1, "+10%", 2),
                    band(&w, 0.9, "-10%", 2),
                    band(&w, 1.2, "+20%", 3),
                    band(&w, 0.8, "-20%", 3),
                    line("best fit".into(), vec![(a, fit(a)), (b, fit(b))], true, 4),
                ],
            },
        );
        of_run(out, from, r);
    }
}
