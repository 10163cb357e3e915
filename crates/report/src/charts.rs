//! Which charts fit which runs, and their series taken from the stored
//! results.

use iomark_model::disk::{DiskRun, EngineKind, RwMode};
use iomark_model::mem::{
    KernelResult, MemOutcome, MemRun, MemSweep, StreamOp, SweepAxis, SweepCell,
};
use iomark_model::net::{NetDirection, NetInterval, NetRun};
use iomark_model::profile::{
    CdmResult, GnomeResult, IometerResult, MacbenchResult, ProfileResult, SweepResult, TestDir,
};
use iomark_model::{Bytes, BytesPerSec, Nanos, RunBody};
use iomark_stats::compare::ratio;

mod artefacts;
mod cdm_units;
mod jobs;
mod ranks;
mod sustained;
mod verify;

use crate::svg::{Bar, BarChart, BarSeries, LineChart, LineSeries, Scale, TickFormat};
use crate::{Report, ReportRun};

/// One chart of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// A stable id (`cdm-read`, `sweep-randread`): the SVG's `id` and the
    /// PNG's file name.
    pub id: String,
    /// What it shows.
    pub title: String,
    /// The SVG text.
    pub svg: String,
}

const MB: &str = "MB/s (10⁶ B/s)";

fn mb(b: BytesPerSec) -> f64 {
    b.mb_per_sec()
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn disk(run: &ReportRun) -> Option<&DiskRun> {
    match &run.doc.body {
        RunBody::Disk(d) => Some(d),
        _ => None,
    }
}

/// Runs with a profile result of one family, with their index in the report.
fn with_profile<'a, T>(
    report: &'a Report,
    pick: impl Fn(&'a ProfileResult) -> Option<&'a T>,
) -> Vec<(usize, &'a ReportRun, &'a T)> {
    report
        .runs()
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let p = disk(r)?.profile_result.as_ref()?;
            pick(p).map(|t| (i, r, t))
        })
        .collect()
}

/// Every chart for the report, in page order.
pub fn all(report: &Report) -> Vec<Chart> {
    let mut kinds: Vec<ProfileCharts> = report
        .runs
        .iter()
        .filter_map(|r| disk(r)?.profile_result.as_ref())
        .map(ProfileCharts::of)
        .collect();
    kinds.sort();
    kinds.dedup();
    let mut out = Vec::new();
    for kind in kinds {
        kind.draw(report, &mut out);
    }
    jobs::draw(report, &mut out);
    ranks::draw(report, &mut out);
    net(report, &mut out);
    mem(report, &mut out);
    out
}

/// What the charts leave out for lack of stored data, one sentence each.
pub fn notes(report: &Report) -> Vec<String> {
    jobs::notes(report)
}

/// The charts of each profile, in page order. [`ProfileCharts::of`]
/// matches every profile result, so the compiler points here when a
/// profile is added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum ProfileCharts {
    Cdm,
    Iometer,
    Gnome,
    Macbench,
    Sweep,
    Artefacts,
    Sustained,
    Verify,
}

impl ProfileCharts {
    fn of(result: &ProfileResult) -> ProfileCharts {
        match result {
            ProfileResult::Cdm(_) => ProfileCharts::Cdm,
            ProfileResult::Iometer(_) => ProfileCharts::Iometer,
            ProfileResult::Gnome(_) => ProfileCharts::Gnome,
            ProfileResult::Macbench(_) => ProfileCharts::Macbench,
            ProfileResult::Sweep(_) => ProfileCharts::Sweep,
            ProfileResult::Artefacts(_) => ProfileCharts::Artefacts,
            ProfileResult::Sustained(_) => ProfileCharts::Sustained,
            ProfileResult::Verify(_) => ProfileCharts::Verify,
        }
    }

    fn draw(self, report: &Report, out: &mut Vec<Chart>) {
        match self {
            ProfileCharts::Cdm => cdm(report, out),
            ProfileCharts::Iometer => iometer(report, out),
            ProfileCharts::Gnome => gnome(report, out),
            ProfileCharts::Macbench => macbench(report, out),
            ProfileCharts::Sweep => sweep(report, out),
            ProfileCharts::Artefacts => artefacts::draw(report, out),
            ProfileCharts::Sustained => sustained::draw(report, out),
            ProfileCharts::Verify => verify::draw(report, out),
        }
    }
}

fn push_bars(out: &mut Vec<Chart>, chart: BarChart) {
    if chart.series.is_empty() || chart.categories.is_empty() {
        return;
    }
    out.push(Chart {
        id: chart.id.clone(),
        title: chart.title.clone(),
        svg: chart.render(),
    });
}

fn push_lines(out: &mut Vec<Chart>, chart: LineChart) {
    if chart.series.iter().all(|s| s.points.is_empty()) {
        return;
    }
    out.push(Chart {
        id: chart.id.clone(),
        title: chart.title.clone(),
        svg: chart.render(),
    });
}

/// Categories in order of first appearance.
fn union<I: IntoIterator<Item = String>>(items: I) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in items {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

fn cdm(report: &Report, out: &mut Vec<Chart>) {
    let runs = with_profile(report, |p| match p {
        ProfileResult::Cdm(c) => Some(c),
        _ => None,
    });
    if runs.is_empty() {
        return;
    }
    for dir in [TestDir::Read, TestDir::Write, TestDir::Mix] {
        let rows = union(runs.iter().flat_map(|(_, _, c)| {
            c.tests
                .iter()
                .filter(|t| t.dir == dir)
                .map(|t| t.row.clone())
        }));
        let series = runs
            .iter()
            .map(|(_, r, c)| BarSeries {
                name: r.name.clone(),
                colour: r.colour,
                bars: rows
                    .iter()
                    .map(|row| {
                        let t = c.tests.iter().find(|t| t.dir == dir && &t.row == row)?;
                        Some(Bar {
                            value: mb(t.bw),
                            stored: t.bw.0,
                            spread: t.bw_spread().map(|(lo, hi)| (mb(lo), mb(hi))),
                        })
                    })
                    .collect(),
            })
            .collect();
        push_bars(
            out,
            BarChart {
                id: format!("cdm-{}", dir.as_str()),
                title: format!(
                    "CrystalDiskMark {} (best pass; whiskers: lowest to highest pass)",
                    dir.as_str()
                ),
                y_label: MB.into(),
                categories: rows,
                series,
                reference: None,
            },
        );
    }
    cdm_units::draw(&runs, out);
    cdm_relative(report, &runs, out);
}

/// Each run's CDM figures over the baseline's, test by test.
fn cdm_relative(report: &Report, runs: &[(usize, &ReportRun, &CdmResult)], out: &mut Vec<Chart>) {
    let Some(base) = report.baseline else {
        return;
    };
    let Some((_, base_run, base_cdm)) = runs.iter().find(|(i, _, _)| *i == base) else {
        return;
    };
    let cats: Vec<(String, TestDir)> = base_cdm
        .tests
        .iter()
        .map(|t| (t.row.clone(), t.dir))
        .collect();
    let series = runs
        .iter()
        .filter(|(i, _, _)| *i != base)
        .map(|(_, r, c)| BarSeries {
            name: r.name.clone(),
            colour: r.colour,
            bars: cats
                .iter()
                .map(|(row, dir)| {
                    let find = |c: &CdmResult| {
                        c.tests
                            .iter()
                            .find(|t| &t.row == row && t.dir == *dir)
                            .map(|t| t.bw.0)
                    };
                    let v = ratio(find(base_cdm)?, find(c)?)?;
                    Some(Bar::as_stored(v))
                })
                .collect(),
        })
        .collect();
    push_bars(
        out,
        BarChart {
            id: "cdm-relative".into(),
            title: format!("CrystalDiskMark relative to {}", base_run.name),
            y_label: "x baseline (bandwidth ratio)".into(),
            categories: cats
                .iter()
                .map(|(row, dir)| format!("{row} {}", dir.as_str()))
                .collect(),
            series,
            reference: Some(1.0),
        },
    );
}

fn iometer(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(usize, &ReportRun, &IometerResult)> = with_profile(report, |p| match p {
        ProfileResult::Iometer(c) => Some(c),
        _ => None,
    });
    let patterns = union(
        runs.iter()
            .flat_map(|(_, _, r)| r.points.iter().map(|p| p.pattern.clone())),
    );
    for pattern in patterns {
        let series = runs
            .iter()
            .map(|(_, r, res)| LineSeries {
                name: r.name.clone(),
                points: res
                    .points
                    .iter()
                    .filter(|p| p.pattern == pattern)
                    .map(|p| (p.depth as f64, mb(p.bw), p.bw.0))
                    .collect(),
                dashed: false,
                scatter: false,
                colour: r.colour,
            })
            .collect();
        push_lines(
            out,
            LineChart {
                id: format!("iometer-{}", slug(&pattern)),
                title: format!("IOmeter queue-depth sweep: {pattern}"),
                x_label: "outstanding I/Os (queue depth)".into(),
                y_label: MB.into(),
                x_scale: Scale::Log2,
                x_tick: TickFormat::Number,
                series,
            },
        );
    }
}

fn gnome(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(usize, &ReportRun, &GnomeResult)> = with_profile(report, |p| match p {
        ProfileResult::Gnome(c) => Some(c),
        _ => None,
    });
    if runs.is_empty() {
        return;
    }
    let mut rate = Vec::new();
    for (_, r, g) in &runs {
        rate.push(LineSeries {
            name: format!("{} read", r.name),
            points: g
                .transfer
                .iter()
                .map(|s| (s.position_pct, mb(s.read), s.read.0))
                .collect(),
            dashed: false,
            scatter: false,
            colour: r.colour,
        });
        let writes: Vec<_> = g
            .transfer
            .iter()
            .filter_map(|s| s.write.map(|w| (s.position_pct, mb(w), w.0)))
            .collect();
        if !writes.is_empty() {
            rate.push(LineSeries {
                name: format!("{} write", r.name),
                points: writes,
                dashed: true,
                scatter: false,
                colour: r.colour,
            });
        }
    }
    push_lines(
        out,
        LineChart {
            id: "gnome-rate".into(),
            title: "GNOME Disks: transfer rate by position".into(),
            x_label: "position (% of the target)".into(),
            y_label: MB.into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: rate,
        },
    );
    let access = runs
        .iter()
        .map(|(_, r, g)| LineSeries {
            name: r.name.clone(),
            points: g
                .access
                .iter()
                .filter_map(|a| {
                    let d = a.distance_pct?;
                    Some((d, a.time.get() as f64 / 1e6, a.time.get() as f64))
                })
                .collect(),
            dashed: false,
            scatter: true,
            colour: r.colour,
        })
        .collect();
    push_lines(
        out,
        LineChart {
            id: "gnome-access".into(),
            title: "GNOME Disks: access time by seek distance".into(),
            x_label: "seek distance (% of the target)".into(),
            y_label: "access time (ms)".into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: access,
        },
    );
}

fn macbench(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(usize, &ReportRun, &MacbenchResult)> = with_profile(report, |p| match p {
        ProfileResult::Macbench(c) => Some(c),
        _ => None,
    });
    let cats = union(
        runs.iter()
            .flat_map(|(_, _, m)| m.tests.iter().map(|t| t.name.clone())),
    );
    let series = runs
        .iter()
        .map(|(_, r, m)| BarSeries {
            name: r.name.clone(),
            colour: r.colour,
            bars: cats
                .iter()
                .map(|c| {
                    let t = m.tests.iter().find(|t| &t.name == c)?;
                    Some(Bar::new(t.bw.kb_per_sec(), t.bw.0))
                })
                .collect(),
        })
        .collect();
    push_bars(
        out,
        BarChart {
            id: "macbench".into(),
            title: "MacBench 5.0 disk tests".into(),
            y_label: "KB/s (10³ B/s)".into(),
            categories: cats,
            series,
            reference: None,
        },
    );
}

fn sweep(report: &Report, out: &mut Vec<Chart>) {
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
        // A point's baseline is the baseline's point of the same size and
        // mode, on the same engine when the baseline ran it.
        let base_bw = |bs: u64, e: EngineKind| {
            let same = |p: &&iomark_model::profile::SweepPoint| p.rw == rw && p.bs.get() == bs;
            base_sweep
                .points
                .iter()
                .filter(same)
                .find(|p| p.engine == e)
                .or_else(|| base_sweep.points.iter().find(same))
                .map(|p| p.bw.0)
        };
        let series = lines
            .iter()
            .filter(|(i, _, _, _)| *i != base)
            .map(|(_, r, s, e)| BarSeries {
                name: line_name(r, *e),
                colour: r.colour,
                bars: sizes
                    .iter()
                    .map(|&bs| {
                        let p = s
                            .points
                            .iter()
                            .find(|p| p.rw == rw && p.engine == *e && p.bs.get() == bs)?;
                        let v = ratio(base_bw(bs, *e)?, p.bw.0)?;
                        Some(Bar::as_stored(v))
                    })
                    .collect(),
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

fn net(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(&ReportRun, &NetRun)> = report
        .runs()
        .iter()
        .filter_map(|r| match &r.doc.body {
            RunBody::Net(n) => Some((r, n)),
            _ => None,
        })
        .collect();
    push_lines(
        out,
        LineChart {
            id: "net-bitrate".into(),
            title: "Network bitrate per interval".into(),
            x_label: "time (s, interval end)".into(),
            y_label: "Mbit/s (10⁶ bit/s)".into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: net_series(&runs, |i| {
                (i.end > i.start).then(|| {
                    let bits =
                        BytesPerSec::over(i.bytes, Nanos(i.end.get() - i.start.get())).0 * 8.0;
                    (bits / 1e6, bits)
                })
            }),
        },
    );
    // The sending streams' smoothed RTT: latency under load.
    push_lines(
        out,
        LineChart {
            id: "net-rtt".into(),
            title: "Round-trip time under load per interval (TCP_INFO of the sending streams)"
                .into(),
            x_label: "time (s, interval end)".into(),
            y_label: "RTT (ms)".into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: net_series(&runs, |i| {
                let ms = i.rtt?.get() as f64 / 1e6;
                Some((ms, ms))
            }),
        },
    );
    push_lines(
        out,
        LineChart {
            id: "net-cpu".into(),
            title: "CPU per interval, each end's iomark process".into(),
            x_label: "time (s, interval end)".into(),
            y_label: "% of one core".into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: net_cpu_series(&runs),
        },
    );
}

/// Which end's CPU an interval holds.
type CpuOf = fn(&NetInterval) -> Option<f64>;

/// Each run's process CPU per interval: this host's solid, the peer's
/// (an iomark peer's) dashed. A `--bidir` run's intervals come in pairs,
/// one per direction, with the same CPU: the first direction's are drawn.
fn net_cpu_series(runs: &[(&ReportRun, &NetRun)]) -> Vec<LineSeries> {
    let mut series = Vec::new();
    for (r, n) in runs {
        let first = n.intervals.first().map(|i| i.direction);
        let ends: [(&str, CpuOf, bool); 2] = [
            ("this host", |i| i.cpu, false),
            ("peer", |i| i.peer_cpu, true),
        ];
        for (who, cpu, dashed) in ends {
            let points: Vec<_> = n
                .intervals
                .iter()
                .filter(|i| Some(i.direction) == first && !i.omitted)
                .filter_map(|i| cpu(i).map(|c| (i.end.as_secs_f64(), c, c)))
                .collect();
            if !points.is_empty() {
                series.push(LineSeries {
                    name: format!("{} {who}", r.name),
                    points,
                    dashed,
                    scatter: false,
                    colour: r.colour,
                });
            }
        }
    }
    series
}

/// One line per run and direction of `value` (drawn, labelled) at each
/// interval's end, omitted intervals left out; a run's download dashed
/// when it has both directions.
fn net_series(
    runs: &[(&ReportRun, &NetRun)],
    value: impl Fn(&NetInterval) -> Option<(f64, f64)>,
) -> Vec<LineSeries> {
    let mut series = Vec::new();
    for (r, n) in runs {
        let has = |d| n.intervals.iter().any(|i| i.direction == d);
        let both = has(NetDirection::Upload) && has(NetDirection::Download);
        for (dir, d) in [
            (NetDirection::Upload, "upload"),
            (NetDirection::Download, "download"),
        ] {
            let points: Vec<_> = n
                .intervals
                .iter()
                .filter(|i| i.direction == dir && !i.omitted)
                .filter_map(|i| value(i).map(|(y, label)| (i.end.as_secs_f64(), y, label)))
                .collect();
            if points.is_empty() {
                continue;
            }
            series.push(LineSeries {
                name: format!("{} {d}", r.name),
                points,
                dashed: both && dir == NetDirection::Download,
                scatter: false,
                colour: r.colour,
            });
        }
    }
    series
}

fn mem(report: &Report, out: &mut Vec<Chart>) {
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
            mem_sweep(r, m, sweep, out);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_ids() {
        assert_eq!(slug("4 KiB random read"), "4-kib-random-read");
    }
}
