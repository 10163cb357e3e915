//! The block-size sweep: rate and IOPS over the block size, per engine.

use super::*;

pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(usize, &ReportRun, &SweepResult)> = with_profile(report, |p| match p {
        ProfileResult::Sweep(c) => Some(c),
        _ => None,
    });
    let modes: Vec<RwMode> = {
        let mut m: Vec<RwMode> = Vec::new();
        for (_, _, s) in &runs {
            for p in &s.points {
                if !m.contains(&p.rw) {
                    m.push(p.rw);
                }
            }
        }
        m
    };
    // One line per run and engine, in the run's colour.
    let lines: Vec<(usize, &ReportRun, &SweepResult, EngineKind)> = runs
        .iter()
        .flat_map(|&(i, r, s)| s.engines.iter().map(move |&e| (i, r, s, e)))
        .collect();
    let multi_engine = runs.iter().any(|(_, _, s)| s.engines.len() > 1);
    let line_name = |r: &ReportRun, e: EngineKind| {
        if multi_engine {
            format!("{} {}", r.name, e.as_str())
        } else {
            r.name.clone()
        }
    };
    for &rw in &modes {
        let series = lines
            .iter()
            .map(|(_, r, s, e)| LineSeries {
                name: line_name(r, *e),
                points: s
                    .points
                    .iter()
                    .filter(|p| p.rw == rw && p.engine == *e)
                    .map(|p| (p.bs.get() as f64, p.bw.mib_per_sec(), p.bw.0))
                    .collect(),
                // A run's colour for all its engines; the first solid.
                dashed: s.engines.first() != Some(e),
                scatter: false,
                colour: r.colour,
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        push_lines(
            out,
            LineChart {
                id: format!("sweep-{}", rw.as_str()),
                title: format!("Bandwidth by I/O size: {rw}"),
                x_label: "I/O size (bytes, log scale)".into(),
                y_label: "MiB/s (2²⁰ B/s)".into(),
                x_scale: Scale::Log2,
                x_tick: TickFormat::Bytes,
                series,
            },
        );
    }
    let Some(base) = report.baseline else {
        return;
    };
    let Some((_, base_run, base_sweep)) = runs.iter().find(|(i, _, _)| *i == base) else {
        return;
    };
    for &rw in &modes {
        let mut sizes: Vec<u64> = runs
            .iter()
            .flat_map(|(_, _, s)| s.points.iter().filter(|p| p.rw == rw).map(|p| p.bs.get()))
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        // A point's baseline is the baseline's point of the same test, as
        // `results compare` lines them up (issue 48): its engine, size and
        // region included, so another engine is not a baseline.
        let base_names = test_names(base_run);
        let base_bw = |name: &str| {
            let at = base_names.iter().position(|n| n == name)?;
            Some(base_sweep.points.get(at)?.bw.0)
        };
        let series = lines
            .iter()
            .filter(|(i, _, _, _)| *i != base)
            .map(|(_, r, s, e)| {
                let names = test_names(r);
                BarSeries {
                    name: line_name(r, *e),
                    colour: r.colour,
                    bars: sizes
                        .iter()
                        .map(|&bs| {
                            let at = s
                                .points
                                .iter()
                                .position(|p| p.rw == rw && p.engine == *e && p.bs.get() == bs)?;
                            let v = ratio(base_bw(names.get(at)?)?, s.points[at].bw.0)?;
                            Some(Bar::as_stored(v))
                        })
                        .collect(),
                }
            })
            .filter(|s| s.bars.iter().any(Option::is_some))
            .collect();
        push_bars(
            out,
            BarChart {
                id: format!("sweep-relative-{}", rw.as_str()),
                title: format!("{rw} relative to {}", base_run.name),
                y_label: "x baseline (bandwidth ratio)".into(),
                categories: sizes.iter().map(|&b| Bytes(b).short_label()).collect(),
                series,
                reference: Some(1.0),
            },
        );
    }
}
