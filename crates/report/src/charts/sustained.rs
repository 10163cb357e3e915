//! The sustained-write chart: the write rate over the bytes written, with
//! the cliff (where the write cache ran out) marked.

use iomark_model::profile::ProfileResult;
use iomark_model::sustained::{SustainedPass, SustainedResult, WrittenAt};

use super::{push_lines, with_profile, Chart, MB};
use crate::svg::{LineChart, LineSeries, Scale, TickFormat};
use crate::{Report, ReportRun};

/// The rate at each point is taken over at least this many seconds, so
/// the line shows the drive, not the scatter of single reports.
const SMOOTH_SECS: f64 = 1.0;

/// `(bytes at the middle, MB/s)` over windows of at least
/// [`SMOOTH_SECS`], one per stored point.
fn rate_points(series: &[WrittenAt], unit: f64) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    let mut from = 0;
    for (to, p) in series.iter().enumerate() {
        let secs = |w: &WrittenAt| w.time.as_secs_f64();
        while from < to && secs(p) - secs(&series[from + 1]) >= SMOOTH_SECS {
            from += 1;
        }
        let q = &series[from];
        let dt = secs(p) - secs(q);
        if dt < SMOOTH_SECS {
            continue;
        }
        let bytes = (p.bytes.get() - q.bytes.get()) as f64;
        let rate = bytes / dt;
        let mid = (p.bytes.get() + q.bytes.get()) as f64 / 2.0;
        out.push((mid / unit, rate / 1e6, rate));
    }
    out
}

/// A vertical line at the cliff, from 0 to the rate before it, whose
/// legend entry says where it is.
fn cliff_marker(run: &str, pass: &SustainedPass, unit: f64, colour: usize) -> Option<LineSeries> {
    let c = pass.cliff.as_ref()?;
    let x = c.at.get() as f64 / unit;
    let top = c.rate_before.mb_per_sec();
    Some(LineSeries {
        name: format!(
            "{run}: cliff at {} ({:.0} to {:.0} MB/s)",
            c.at,
            top,
            c.rate_after.mb_per_sec()
        ),
        points: vec![(x, 0.0, 0.0), (x, top, c.rate_before.0)],
        dashed: true,
        scatter: false,
        colour,
    })
}

/// Rate over bytes written for every sustained run: the first pass solid,
/// the pass after `--recover`'s idle time dashed, each cliff a dashed
/// vertical line labelled with its position.
pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(usize, &ReportRun, &SustainedResult)> = with_profile(report, |p| match p {
        ProfileResult::Sustained(s) => Some(s),
        _ => None,
    });
    let most = runs
        .iter()
        .flat_map(|(_, _, s)| [Some(&s.pass), s.recover_pass.as_ref()])
        .flatten()
        .map(|p| p.written.get())
        .max()
        .unwrap_or(0);
    let (unit, unit_name) = if most >= 4 << 30 {
        ((1u64 << 30) as f64, "GiB")
    } else {
        ((1u64 << 20) as f64, "MiB")
    };
    let mut series = Vec::new();
    for (_, r, s) in &runs {
        series.push(LineSeries {
            name: r.name.clone(),
            points: rate_points(&s.pass.series, unit),
            dashed: false,
            scatter: false,
            colour: r.colour,
        });
        series.extend(cliff_marker(&r.name, &s.pass, unit, r.colour));
        if let Some(again) = &s.recover_pass {
            series.push(LineSeries {
                name: format!("{}: after idle", r.name),
                points: rate_points(&again.series, unit),
                dashed: true,
                scatter: false,
                colour: r.colour,
            });
        }
    }
    push_lines(
        out,
        LineChart {
            id: "sustained".into(),
            title: "Sustained write: rate over bytes written (dashed vertical: the cliff)".into(),
            x_label: format!("written ({unit_name})"),
            y_label: MB.into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::units::{Bytes, Nanos};

    #[test]
    fn rates_are_smoothed_over_a_second_and_placed_at_their_middle() {
        // 10 MiB every 0.25 s: 40 MiB/s.
        let series: Vec<WrittenAt> = (0..=20u64)
            .map(|i| WrittenAt {
                time: Nanos(i * 250_000_000),
                bytes: Bytes((i * 10) << 20),
            })
            .collect();
        let pts = rate_points(&series, (1u64 << 20) as f64);
        assert_eq!(pts.len(), 17);
        assert!((pts[0].0 - 20.0).abs() < 1e-9, "{:?}", pts[0]);
        for p in &pts {
            assert!((p.2 - 40.0 * (1u64 << 20) as f64).abs() < 1.0, "{p:?}");
        }
    }
}
