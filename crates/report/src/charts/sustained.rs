//! The sustained-write chart: the write rate over the bytes written, with
//! the cliff (where the write cache ran out) marked.

use iomark_model::profile::ProfileResult;
use iomark_model::sustained::{SustainedPass, SustainedResult, WrittenAt};
use iomark_model::units::BytesPerSec;

use super::{push_lines, with_profile, Chart, MB};
use crate::svg::{LineChart, LineSeries, Scale, TickFormat};
use crate::{Report, ReportRun};

/// The rate at each point is taken over at least this many seconds, so
/// the line shows the drive, not the scatter of single reports.
const SMOOTH_SECS: f64 = 1.0;

/// The write rate over a stretch of at least [`SMOOTH_SECS`] of a pass.
struct Stretch {
    /// Its middle, in seconds from the pass's start.
    secs: f64,
    /// Its middle, in bytes written.
    bytes: f64,
    /// Bytes a second over it.
    rate: f64,
}

/// `(bytes at the middle, MB/s)` over windows of at least
/// [`SMOOTH_SECS`], one per stored point.
fn rate_points(series: &[WrittenAt], unit: f64) -> Vec<(f64, f64, f64)> {
    stretches(series)
        .into_iter()
        .map(|s| (s.bytes / unit, s.rate / 1e6, s.rate))
        .collect()
}

/// The rate over a stretch of at least [`SMOOTH_SECS`] ending at each
/// stored point.
fn stretches(series: &[WrittenAt]) -> Vec<Stretch> {
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
        out.push(Stretch {
            secs: (secs(p) + secs(q)) / 2.0,
            bytes: (p.bytes.get() + q.bytes.get()) as f64 / 2.0,
            rate: bytes / dt,
        });
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

/// SNIA PTS's two write-saturation plots for every `pts-wsat` run: IOPS
/// over time and IOPS over the capacity written (total written over the
/// region, the specification's TGBW over user capacity), each cliff a
/// dashed vertical line.
fn wsat(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(&ReportRun, &SustainedResult)> = with_profile(report, |p| match p {
        ProfileResult::Sustained(s) if s.wsat.is_some() => Some(s),
        _ => None,
    })
    .into_iter()
    .map(|(_, r, s)| (r, s))
    .collect();
    let longest = runs
        .iter()
        .filter_map(|(_, s)| s.pass.series.last())
        .map(|p| p.time.as_secs_f64())
        .fold(0.0, f64::max);
    let (per, time_name) = if longest > 600.0 {
        (60.0, "min")
    } else {
        (1.0, "s")
    };
    let mut over_time = Vec::new();
    let mut over_written = Vec::new();
    for (r, s) in &runs {
        let bs = s.bs.get().max(1) as f64;
        let region = s.region.get().max(1) as f64;
        let stretches = stretches(&s.pass.series);
        let iops = |st: &Stretch| st.rate / bs;
        let add = |to: &mut Vec<LineSeries>, x: &dyn Fn(&Stretch) -> f64, cliff_x: Option<f64>| {
            to.push(LineSeries {
                name: r.name.clone(),
                points: stretches
                    .iter()
                    .map(|st| (x(st), iops(st), iops(st)))
                    .collect(),
                dashed: false,
                scatter: false,
                colour: r.colour,
            });
            if let (Some(c), Some(x)) = (&s.pass.cliff, cliff_x) {
                let top = c.rate_before.0 / bs;
                to.push(LineSeries {
                    name: format!(
                        "{}: cliff at {} ({:.0} to {:.0} IOPS)",
                        r.name,
                        c.at,
                        top,
                        c.rate_after.0 / bs
                    ),
                    points: vec![(x, 0.0, 0.0), (x, top, top)],
                    dashed: true,
                    scatter: false,
                    colour: r.colour,
                });
            }
        };
        let cliff = s.pass.cliff.as_ref();
        add(
            &mut over_time,
            &|st| st.secs / per,
            cliff.map(|c| c.time.as_secs_f64() / per),
        );
        add(
            &mut over_written,
            &|st| st.bytes / region,
            cliff.map(|c| c.at.get() as f64 / region),
        );
    }
    push_lines(
        out,
        LineChart {
            id: "wsat-time".into(),
            title: "Write saturation: IOPS over time (dashed vertical: the cliff)".into(),
            x_label: format!("time ({time_name})"),
            y_label: "IOPS".into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: over_time,
        },
    );
    push_lines(
        out,
        LineChart {
            id: "wsat-written".into(),
            title: "Write saturation: IOPS over capacity written (dashed vertical: the cliff)"
                .into(),
            x_label: "written (times the region)".into(),
            y_label: "IOPS".into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: over_written,
        },
    );
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
    wsat(report, out);
    hir(report, out);
}

/// SNIA PTS's host idle recovery plot for every run with `--hir`: the
/// IOPS of each burst over time, a series per wait state, and the
/// saturated rate the bursts are held to, dashed.
fn hir(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<_> = with_profile(report, |p| match p {
        ProfileResult::Sustained(s) if s.hir.is_some() => Some(s),
        _ => None,
    });
    // One run: a colour per wait state, as the specification draws them;
    // several: a colour per run, the states told apart by their time.
    let alone = runs.len() == 1;
    let mut series = Vec::new();
    for (_, r, s) in runs {
        let Some(h) = &s.hir else { continue };
        let iops = |rate: f64| BytesPerSec(rate).ios_of(s.bs);
        let mut end: f64 = 0.0;
        for (k, st) in h.states.iter().enumerate() {
            let points: Vec<(f64, f64, f64)> = st
                .bursts
                .iter()
                .map(|b| {
                    let t = b.at.as_secs_f64();
                    // The line runs to the last burst's end, so its point
                    // is inside the plot.
                    end = end.max(t + h.burst.as_secs_f64());
                    (t, iops(b.rate.0), iops(b.rate.0))
                })
                .collect();
            series.push(LineSeries {
                name: format!("{}: idle {}", r.name, st.idle),
                points,
                dashed: false,
                scatter: true,
                colour: if alone { k } else { r.colour },
            });
        }
        let base = iops(h.baseline.0);
        series.push(LineSeries {
            name: format!("{}: saturated, {base:.0} IOPS", r.name),
            points: vec![(0.0, base, base), (end, base, base)],
            dashed: true,
            scatter: false,
            // Alone, the states take the first colours: the line the next.
            colour: if alone { h.states.len() } else { r.colour },
        });
    }
    push_lines(
        out,
        LineChart {
            id: "pts-hir".into(),
            title: "Host idle recovery: IOPS of each burst over time (dashed: saturated)".into(),
            x_label: "time (s)".into(),
            y_label: "IOPS".into(),
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
