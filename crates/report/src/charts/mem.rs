//! Memory runs: each kernel's rate, and a sweep's time over the data's
//! size against the limit.

use super::*;

pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(&ReportRun, &MemRun)> = report
        .runs()
        .iter()
        .filter_map(|r| match &r.doc.body {
            RunBody::Mem(m) => Some((r, m)),
            _ => None,
        })
        .collect();
    let result = |m: &MemRun| match &m.outcome {
        MemOutcome::Completed { result, .. } => Some(result.clone()),
        _ => None,
    };
    let stream: Vec<BarSeries> = runs
        .iter()
        .filter_map(|(r, m)| match result(m)? {
            KernelResult::Stream(s) => Some(BarSeries {
                name: r.name.clone(),
                colour: r.colour,
                bars: StreamOp::ALL
                    .iter()
                    .map(|op| {
                        let k = s.kernels.iter().find(|k| k.op == *op)?;
                        Some(Bar::new(mb(k.best_rate), k.best_rate.0))
                    })
                    .collect(),
            }),
            _ => None,
        })
        .collect();
    push_bars(
        out,
        BarChart {
            id: "mem-stream".into(),
            title: "STREAM best rate per kernel".into(),
            y_label: MB.into(),
            categories: StreamOp::ALL
                .iter()
                .map(|o| o.label().to_string())
                .collect(),
            series: stream,
            reference: None,
        },
    );
    let flops = |m: &MemRun| match result(m)? {
        KernelResult::Stencil(s) => Some(("stencil", s.mflops)),
        KernelResult::Himeno(h) => Some(("himeno", h.mflops)),
        KernelResult::Stream(_) => None,
    };
    let cats = union(
        runs.iter()
            .filter_map(|(_, m)| flops(m).map(|f| f.0.to_string())),
    );
    let series = runs
        .iter()
        .filter(|(_, m)| flops(m).is_some())
        .map(|(r, m)| BarSeries {
            name: r.name.clone(),
            colour: r.colour,
            bars: cats
                .iter()
                .map(|c| {
                    let (k, v) = flops(m)?;
                    (k == c).then_some(Bar::as_stored(v))
                })
                .collect(),
        })
        .collect();
    push_bars(
        out,
        BarChart {
            id: "mem-mflops".into(),
            title: "Stencil and Himeno rate".into(),
            y_label: "MFLOPS (10⁶ flop/s)".into(),
            categories: cats,
            series,
            reference: None,
        },
    );
    let relative: Vec<BarSeries> = runs
        .iter()
        .filter_map(|(r, m)| {
            let v = m.baseline.as_ref()?.relative_time?;
            Some(BarSeries {
                name: r.name.clone(),
                colour: r.colour,
                bars: vec![Some(Bar::as_stored(v))],
            })
        })
        .collect();
    push_bars(
        out,
        BarChart {
            id: "mem-relative".into(),
            title: "Relative execution time (constrained run / all in memory)".into(),
            y_label: "x in-memory time".into(),
            categories: vec!["relative execution time".into()],
            series: relative,
            reference: Some(1.0),
        },
    );
    for (r, m) in &runs {
        if let Some(sweep) = &m.sweep {
            let from = out.len();
            mem_sweep(r, m, sweep, out);
            super::of_run(out, from, r);
        }
    }
}

/// A sweep as the paper draws it: x the data size (or data/limit), log2;
/// a line per backing of its relative execution time; a point the OOM
/// killer ended is a marker of its own series above the highest curve
/// (it has no time to plot).
fn mem_sweep(r: &ReportRun, m: &MemRun, sweep: &MemSweep, out: &mut Vec<Chart>) {
    let rows = sweep.rows();
    let top = rows
        .iter()
        .flat_map(|row| &row.cells)
        .filter_map(|c| match c {
            SweepCell::Relative(t) => Some(*t),
            _ => None,
        })
        .fold(1.0f64, f64::max)
        * 1.25;
    let mut series = Vec::new();
    for (k, b) in sweep.backings.iter().enumerate() {
        let points: Vec<_> = rows
            .iter()
            .filter_map(|row| match row.cells[k] {
                SweepCell::Relative(t) => Some((row.x, t, t)),
                _ => None,
            })
            .collect();
        let killed: Vec<_> = rows
            .iter()
            .filter(|row| row.cells[k] == SweepCell::Killed)
            .map(|row| (row.x, top, f64::NAN))
            .collect();
        if !points.is_empty() {
            series.push(LineSeries {
                name: b.label(),
                points,
                dashed: false,
                scatter: false,
                colour: k,
            });
        }
        if !killed.is_empty() {
            series.push(LineSeries {
                name: format!("{} killed (OOM)", b.label()),
                points: killed,
                dashed: false,
                scatter: true,
                colour: k,
            });
        }
    }
    let (x_label, x_tick) = match sweep.axis {
        SweepAxis::Size => ("data size (bytes, log2 scale)", TickFormat::Bytes),
        SweepAxis::Ratio => ("data size / memory limit (log2 scale)", TickFormat::Number),
    };
    let limit = m
        .spec
        .mem_limit
        .map(|l| format!(", limit {l}"))
        .unwrap_or_default();
    push_lines(
        out,
        LineChart {
            id: format!("mem-sweep-{}", r.id),
            title: format!(
                "{}: {} relative execution time{limit}",
                r.name,
                m.spec.kernel.name()
            ),
            x_label: x_label.into(),
            y_label: "x all-in-memory time".into(),
            x_scale: Scale::Log2,
            x_tick,
            series,
        },
    );
}
