//! Which charts fit which runs, and their series taken from the stored
//! results.

use iomark_model::disk::{DiskRun, EngineKind, RwMode};
use iomark_model::figure::profile_test_names;
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
mod compact;
mod jobs;
mod mem;
mod net;
pub(crate) mod pts;
mod ranks;
mod sustained;
mod sweep;
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
    /// The run whose chart it is (its id), for a chart of one run (its
    /// time series, its histograms); `None` for a chart of several.
    pub run: Option<String>,
}

const MB: &str = "MB/s (10⁶ B/s)";

fn mb(b: BytesPerSec) -> f64 {
    b.mb_per_sec()
}

pub(crate) fn slug(s: &str) -> String {
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
    net::draw(report, &mut out);
    mem::draw(report, &mut out);
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
    Pts,
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
            ProfileResult::Pts(_) => ProfileCharts::Pts,
        }
    }

    fn draw(self, report: &Report, out: &mut Vec<Chart>) {
        match self {
            ProfileCharts::Cdm => cdm(report, out),
            ProfileCharts::Iometer => iometer(report, out),
            ProfileCharts::Gnome => gnome(report, out),
            ProfileCharts::Macbench => macbench(report, out),
            ProfileCharts::Sweep => sweep::draw(report, out),
            ProfileCharts::Artefacts => artefacts::draw(report, out),
            ProfileCharts::Sustained => sustained::draw(report, out),
            ProfileCharts::Verify => verify::draw(report, out),
            ProfileCharts::Pts => pts::draw(report, out),
        }
    }
}

/// A grouped bar chart, or with more runs than colours, one chart per
/// category with the runs ranked in rows ([`compact::ranked`]).
fn push_bars(out: &mut Vec<Chart>, chart: BarChart) {
    if chart.series.is_empty() || chart.categories.is_empty() {
        return;
    }
    if chart.series.len() > crate::svg::COLOURS {
        out.extend(compact::ranked(&chart).into_iter().map(|r| Chart {
            id: r.id.clone(),
            title: r.title.clone(),
            svg: r.render(),
            run: None,
        }));
        return;
    }
    out.push(Chart {
        id: chart.id.clone(),
        title: chart.title.clone(),
        svg: chart.render(),
        run: None,
    });
}

/// Mark the charts pushed since `from` as `run`'s own.
fn of_run(out: &mut [Chart], from: usize, run: &ReportRun) {
    for c in out.iter_mut().skip(from) {
        c.run = Some(run.id.clone());
    }
}

fn push_lines(out: &mut Vec<Chart>, chart: LineChart) {
    if chart.series.iter().all(|s| s.points.is_empty()) {
        return;
    }
    out.push(Chart {
        id: chart.id.clone(),
        title: chart.title.clone(),
        svg: chart.render(),
        run: None,
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

/// The test names of a run's CrystalDiskMark tests or sweep points, in
/// the result's order, as `results compare` names (and so lines up) their
/// figures.
pub(super) fn test_names(run: &ReportRun) -> Vec<String> {
    match &run.doc.body {
        RunBody::Disk(d) => profile_test_names(d),
        _ => Vec::new(),
    }
}

/// Each run's CDM figures over the baseline's, test by test: only tests
/// that line up as `results compare` lines them up (issue 48: a CDM run at
/// 1 GiB against one at 256 MiB had its SEQ1M Q8T1 charted at 0.19x while
/// compare said no test was in common). No chart when none does.
fn cdm_relative(report: &Report, runs: &[(usize, &ReportRun, &CdmResult)], out: &mut Vec<Chart>) {
    let Some(base) = report.baseline else {
        return;
    };
    let Some((_, base_run, base_cdm)) = runs.iter().find(|(i, _, _)| *i == base) else {
        return;
    };
    let base_names = test_names(base_run);
    let series: Vec<BarSeries> = runs
        .iter()
        .filter(|(i, _, _)| *i != base)
        .map(|(_, r, c)| {
            let names = test_names(r);
            BarSeries {
                name: r.name.clone(),
                colour: r.colour,
                bars: base_cdm
                    .tests
                    .iter()
                    .zip(&base_names)
                    .map(|(b, name)| {
                        let at = names.iter().position(|n| n == name)?;
                        Some(Bar::as_stored(ratio(b.bw.0, c.tests.get(at)?.bw.0)?))
                    })
                    .collect(),
            }
        })
        .filter(|s| s.bars.iter().any(Option::is_some))
        .collect();
    // No series, no chart (`push_bars`).
    push_bars(
        out,
        BarChart {
            id: "cdm-relative".into(),
            title: format!("CrystalDiskMark relative to {}", base_run.name),
            y_label: "x baseline (bandwidth ratio)".into(),
            categories: base_cdm
                .tests
                .iter()
                .map(|t| format!("{} {}", t.row, t.dir.as_str()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_ids() {
        assert_eq!(slug("4 KiB random read"), "4-kib-random-read");
    }
}
