//! The PTS round-based tests' charts, as the specification draws them:
//! the tracking variable round by round for every run of a test
//! (convergence), and per run its measurement window with the average, the
//! ±10% and ±20% bands and the best-fit line. Runs of different tests
//! (IOPS, throughput, latency) track different figures: a convergence
//! chart each.

use iomark_model::profile::ProfileResult;
use iomark_model::pts::{mix_label, PtsResult, PtsRoundStatus, PtsTest, PtsWindowFigures};

use super::{of_run, push_lines, slug, with_profile, Chart};
use crate::svg::{LineChart, LineSeries, Scale, TickFormat};
use crate::{Report, ReportRun};

fn line(name: String, points: Vec<(f64, f64)>, dashed: bool, colour: usize) -> LineSeries {
    LineSeries {
        name,
        points: points.into_iter().map(|(x, y)| (x, y, y)).collect(),
        dashed,
        scatter: false,
        colour,
    }
}

/// A window's lines, in the tracking variable's shown unit: its
/// average, the ±10% and ±20% bands and the best-fit line, each across its
/// rounds.
fn window_lines(w: &PtsWindowFigures) -> [LineSeries; 6] {
    let (a, b) = (f64::from(w.first_round), f64::from(w.last_round));
    let fit = |x: f64| w.intercept + w.slope * (x - a);
    [
        band(w, 1.0, "average", 1),
        band(w, 1.1, "+10%", 2),
        band(w, 0.9, "-10%", 2),
        band(w, 1.2, "+20%", 3),
        band(w, 0.8, "-20%", 3),
        line("best fit".into(), vec![(a, fit(a)), (b, fit(b))], true, 4),
    ]
}

/// The window's rounds at `level` times the average, as a dashed line.
fn band(w: &PtsWindowFigures, level: f64, name: &str, colour: usize) -> LineSeries {
    let y = w.average * level;
    let (a, b) = (f64::from(w.first_round), f64::from(w.last_round));
    line(name.into(), vec![(a, y), (b, y)], true, colour)
}

pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    let all: Vec<(usize, &ReportRun, &PtsResult)> = with_profile(report, |p| match p {
        ProfileResult::Pts(r) => Some(r),
        _ => None,
    });
    for test in [PtsTest::Iops, PtsTest::Throughput, PtsTest::Latency] {
        let runs: Vec<&(usize, &ReportRun, &PtsResult)> =
            all.iter().filter(|(_, _, p)| p.test == test).collect();
        if !runs.is_empty() {
            draw_test(test, &runs, out);
        }
    }
    for (_, r, p) in &all {
        if p.test == PtsTest::Iops {
            iops_by_block_size(r, p, out);
        }
    }
}

/// The IOPS test's table as the specification's 2D plot: IOPS over the
/// block size, a line per read/write mix (the window's averages).
fn iops_by_block_size(r: &ReportRun, p: &PtsResult, out: &mut Vec<Chart>) {
    let series = p
        .mixes
        .iter()
        .enumerate()
        .map(|(k, &mix)| {
            let points = p
                .table
                .iter()
                .filter(|c| c.read_pct == mix)
                .map(|c| (c.bs.get() as f64, c.iops))
                .collect();
            line(mix_label(mix), points, false, k)
        })
        .collect();
    let from = out.len();
    push_lines(
        out,
        LineChart {
            id: format!("pts-iops-table-{}", slug(&r.name)),
            title: format!("{}: PTS IOPS by block size, a line per R/W mix", r.name),
            x_label: "block size".into(),
            y_label: "IOPS".into(),
            x_scale: Scale::Log2,
            x_tick: TickFormat::Bytes,
            series,
        },
    );
    of_run(out, from, r);
}

fn draw_test(test: PtsTest, runs: &[&(usize, &ReportRun, &PtsResult)], out: &mut Vec<Chart>) {
    let label = runs[0].2.tracking_label();
    let series = runs
        .iter()
        .map(|(_, r, p)| {
            let points = p
                .rounds
                .iter()
                .map(|x| (f64::from(x.round), test.shown(x.tracking)))
                .collect();
            line(r.name.clone(), points, false, r.colour)
        })
        .collect();
    // The IOPS test's ids as they were before the other tests came.
    let id = match test {
        PtsTest::Iops => String::new(),
        t => format!("-{}", t.short().to_lowercase()),
    };
    push_lines(
        out,
        LineChart {
            id: format!("pts{id}-convergence"),
            title: format!(
                "PTS {}: steady-state convergence (tracking variable per round)",
                test.short()
            ),
            x_label: "round".into(),
            y_label: label.clone(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series,
        },
    );
    for (_, r, p) in runs {
        let Some(w) = p.window else { continue };
        let w = PtsWindowFigures {
            average: test.shown(w.average),
            slope: test.shown(w.slope),
            intercept: test.shown(w.intercept),
            ..w
        };
        let from = out.len();
        let rounds = &p.rounds[(w.first_round - 1) as usize..w.last_round as usize];
        let verdict = if w.steady { "steady" } else { "not steady" };
        push_lines(
            out,
            LineChart {
                id: format!("pts{id}-window-{}", slug(&r.name)),
                title: format!(
                    "{}: PTS {} window, rounds {}-{} ({verdict})",
                    r.name,
                    test.short(),
                    w.first_round,
                    w.last_round
                ),
                x_label: "round".into(),
                y_label: label.clone(),
                x_scale: Scale::Linear,
                x_tick: TickFormat::Number,
                series: std::iter::once(line(
                    "tracking".into(),
                    rounds
                        .iter()
                        .map(|x| (f64::from(x.round), test.shown(x.tracking)))
                        .collect(),
                    false,
                    r.colour,
                ))
                .chain(window_lines(&w))
                .collect(),
            },
        );
        of_run(out, from, r);
    }
}

/// One test's convergence as it goes (`iomark serve`'s live page), from
/// its rounds so far: the tracking variable per round, and the window that
/// ends at the last round with its average, ±10% and ±20% bands and
/// best-fit line, as a finished run's window chart draws it. None before
/// the first round.
pub(crate) fn rounds_so_far(rounds: &[PtsRoundStatus]) -> Option<LineChart> {
    let last = rounds.last()?;
    let test = last.test;
    let tracking: Vec<(f64, f64)> = rounds
        .iter()
        .filter(|r| r.test == test)
        .map(|r| (f64::from(r.round), test.shown(r.tracking)))
        .collect();
    let label = format!(
        "{} {} {}",
        last.bs.short_label(),
        mix_label(last.read_pct),
        test.unit()
    );
    let mut series = vec![line(label.clone(), tracking, false, 0)];
    let verdict = match &last.window {
        Some(w) => {
            let w = PtsWindowFigures {
                average: test.shown(w.average),
                slope: test.shown(w.slope),
                intercept: test.shown(w.intercept),
                ..*w
            };
            series.extend(window_lines(&w));
            let steady = if w.steady { "steady" } else { "not steady yet" };
            format!("rounds {}-{}: {steady}", w.first_round, w.last_round)
        }
        None => format!("steady state is judged over {} rounds", last.window_rounds),
    };
    Some(LineChart {
        id: "live-convergence".into(),
        title: format!(
            "PTS {}: round {} of at most {} ({verdict})",
            test.short(),
            last.round,
            last.max_rounds
        ),
        x_label: "round".into(),
        y_label: label,
        x_scale: Scale::Linear,
        x_tick: TickFormat::Number,
        series,
    })
}
