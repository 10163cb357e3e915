//! Charts of runs without a profile: custom runs, job files and imported
//! fio runs. Per-job bars, the per-interval time series of each run, the
//! latency percentile curves and each job's latency histogram.
//!
//! A run that lacks what a chart needs (fio's JSON has no per-interval
//! samples; its plain JSON has no histogram bins) gets a note saying so
//! rather than an empty chart.

use iomark_model::disk::{DirectionResult, DiskJobResult, DiskRun, IntervalSample, LatencySummary};

use super::{disk, of_run, push_bars, push_lines, union, Chart, MB};
use crate::svg::{
    log_buckets, Bar, BarChart, BarSeries, Histogram, HistogramSeries, LineChart, LineSeries,
    Scale, TickFormat,
};
use crate::{Report, ReportRun};

/// Jobs of one run in the per-job bar charts; a 20,000-job fio file would
/// give bars too thin to see.
const BAR_JOBS: usize = 24;
/// Jobs of one run drawn as lines in its time series.
const TIME_JOBS: usize = 8;
/// Lines in the percentile chart: each run's first, then more of each
/// run's in turn up to this many (or one per run, with more runs).
const CURVES: usize = 12;
/// Histograms per run.
const HISTOGRAMS: usize = 4;
/// Histogram buckets per power of ten: 1, 1.6, 2.5, 4, 6.3.
const PER_DECADE: u32 = 5;

/// Runs this module draws: disk runs with jobs and no profile result.
fn job_runs(report: &Report) -> Vec<(&ReportRun, &DiskRun)> {
    report
        .runs()
        .iter()
        .filter_map(|r| {
            let d = disk(r)?;
            (d.profile_result.is_none() && !d.jobs.is_empty()).then_some((r, d))
        })
        .collect()
}

/// Each job's name, numbered where a run repeats one (fio's `numjobs`
/// without `group_reporting` lists every clone under the same name).
fn job_labels(d: &DiskRun) -> Vec<String> {
    d.jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let name = &j.spec.name;
            if d.jobs.iter().filter(|o| &o.spec.name == name).count() > 1 {
                format!("{name} ({})", i + 1)
            } else {
                name.clone()
            }
        })
        .collect()
}

/// The job's directions that ran, with their names.
fn directions(j: &DiskJobResult) -> impl Iterator<Item = (&'static str, &DirectionResult)> {
    [("read", &j.read), ("write", &j.write)]
        .into_iter()
        .filter_map(|(n, d)| d.as_ref().filter(|d| d.ios > 0).map(|d| (n, d)))
}

/// Every chart of the runs without a profile, in page order.
pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    let runs = job_runs(report);
    if runs.is_empty() {
        return;
    }
    job_bars(&runs, out);
    overlaid_or_each(&runs, out, time_series);
    percentiles(&runs, out);
    overlaid_or_each(&runs, out, histograms);
}

/// The runs' charts of one kind, `draw`n once for all of them: several
/// runs with the colours to tell them apart share each chart, on one
/// axis, as a comparison wants them. One run, or more than the colours,
/// get their own, each folded under its run.
fn overlaid_or_each(
    runs: &[(&ReportRun, &DiskRun)],
    out: &mut Vec<Chart>,
    draw: fn(&[(&ReportRun, &DiskRun)], &mut Vec<Chart>),
) {
    if runs.len() > 1 && runs.len() <= crate::svg::COLOURS {
        draw(runs, out);
        return;
    }
    for run in runs {
        let from = out.len();
        draw(std::slice::from_ref(run), out);
        of_run(out, from, run.0);
    }
}

/// What the charts of these runs leave out, and why, one sentence each.
pub(super) fn notes(report: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    for (r, d) in job_runs(report) {
        let n = d.jobs.len();
        if n > BAR_JOBS {
            notes.push(format!(
                "{}: the per-job bars show the first {BAR_JOBS} of {n} jobs (every figure is in the table)",
                r.name
            ));
        }
        if d.jobs.iter().all(|j| j.samples.is_empty()) {
            let why = if d.profile == "fio" {
                " (fio's JSON has none)"
            } else {
                ""
            };
            notes.push(format!(
                "{}: no per-interval samples stored{why}, so no time series",
                r.name
            ));
        } else if n > TIME_JOBS {
            notes.push(format!(
                "{}: the time series show the first {TIME_JOBS} of {n} jobs",
                r.name
            ));
        }
        let lat = |f: fn(&LatencySummary) -> bool| {
            d.jobs
                .iter()
                .any(|j| directions(j).any(|(_, dr)| f(&dr.clat)))
        };
        if !lat(|l| !l.percentiles.is_empty()) {
            notes.push(format!(
                "{}: no latency percentiles stored, so no percentile curve",
                r.name
            ));
        }
        if !lat(|l| !l.bins.is_empty()) {
            let why = if d.profile == "fio" {
                " (fio prints them only with --output-format=json+)"
            } else {
                ""
            };
            notes.push(format!(
                "{}: no latency histogram bins stored{why}, so no histogram",
                r.name
            ));
        }
    }
    notes
}

/// Bandwidth and IOPS per job and direction, one bar per run.
fn job_bars(runs: &[(&ReportRun, &DiskRun)], out: &mut Vec<Chart>) {
    // Per run: (category, direction result) for its first jobs.
    let per_run: Vec<Vec<(String, &DirectionResult)>> = runs
        .iter()
        .map(|(_, d)| {
            let labels = job_labels(d);
            d.jobs
                .iter()
                .zip(labels)
                .take(BAR_JOBS)
                .flat_map(|(j, l)| {
                    directions(j)
                        .map(move |(dir, dr)| (format!("{l} {dir}"), dr))
                        .collect::<Vec<_>>()
                })
                .collect()
        })
        .collect();
    let cats = union(per_run.iter().flatten().map(|(c, _)| c.clone()));
    let series = |value: &dyn Fn(&DirectionResult) -> Bar| -> Vec<BarSeries> {
        runs.iter()
            .zip(&per_run)
            .map(|((r, _), dirs)| BarSeries {
                name: r.name.clone(),
                colour: r.colour,
                bars: cats
                    .iter()
                    .map(|c| dirs.iter().find(|(k, _)| k == c).map(|(_, d)| value(d)))
                    .collect(),
            })
            .collect()
    };
    push_bars(
        out,
        BarChart {
            id: "jobs-bw".into(),
            title: "Bandwidth per job".into(),
            y_label: MB.into(),
            categories: cats.clone(),
            series: series(&|d| Bar::new(d.bw.mb_per_sec(), d.bw.0)),
            reference: None,
        },
    );
    push_bars(
        out,
        BarChart {
            id: "jobs-iops".into(),
            title: "IOPS per job".into(),
            y_label: "IOPS (I/Os per second)".into(),
            categories: cats.clone(),
            series: series(&|d| Bar::as_stored(d.iops.0)),
            reference: None,
        },
    );
}

/// Latency in µs, or in ms when the largest value reaches 10 ms: the
/// divisor from ns and the axis title.
fn latency_unit(max_ns: f64) -> (f64, &'static str) {
    if max_ns >= 1e7 {
        (1e6, "ms")
    } else {
        (1e3, "µs")
    }
}

/// Bandwidth, IOPS and mean latency per interval: one line per job of a
/// run; of several runs, every run's jobs on one chart, each run in its
/// colour (its first job solid, the others dashed).
fn time_series(runs: &[(&ReportRun, &DiskRun)], out: &mut Vec<Chart>) {
    let several = runs.len() > 1;
    // Per line: its name, samples, colour and whether it is dashed.
    type Line<'a> = (String, &'a [IntervalSample], usize, bool);
    let mut lines: Vec<Line<'_>> = Vec::new();
    for (r, d) in runs {
        let labels = job_labels(d);
        let mut first = true;
        for (k, (j, l)) in d.jobs.iter().zip(&labels).enumerate().take(TIME_JOBS) {
            if j.samples.is_empty() {
                continue;
            }
            if several {
                lines.push((format!("{}: {l}", r.name), &j.samples, r.colour, !first));
            } else {
                lines.push((l.clone(), &j.samples, k, false));
            }
            first = false;
        }
    }
    if lines.is_empty() {
        return;
    }
    let end = |s: &IntervalSample| (s.start.get() + s.length.get()) as f64 / 1e9;
    // A sample's point on a chart: x, y, and the stored value.
    type Point = Option<(f64, f64, f64)>;
    let series = |point: &dyn Fn(&IntervalSample) -> Point| {
        lines
            .iter()
            .map(|(name, samples, colour, dashed)| LineSeries {
                name: name.clone(),
                points: samples.iter().filter_map(point).collect(),
                dashed: *dashed,
                scatter: false,
                colour: *colour,
            })
            .collect()
    };
    let (id_of, title_of) = match runs {
        [(r, _)] => (format!("-{}", r.id), format!("{}: ", r.name)),
        _ => (String::new(), String::new()),
    };
    let chart = |id: &str, what: &str, y_label: &str, series: Vec<LineSeries>| LineChart {
        id: format!("{id}{id_of}"),
        title: if title_of.is_empty() {
            capitalised(&format!("{what} per interval"))
        } else {
            format!("{title_of}{what} per interval")
        },
        x_label: "time (s, interval end)".into(),
        y_label: y_label.into(),
        x_scale: Scale::Linear,
        x_tick: TickFormat::Number,
        series,
    };
    let bw = series(&|s| Some((end(s), s.bw().mb_per_sec(), s.bw().0)));
    push_lines(out, chart("time-bw", "bandwidth", MB, bw));
    let iops = series(&|s| Some((end(s), s.iops().0, s.iops().0)));
    push_lines(
        out,
        chart("time-iops", "IOPS", "IOPS (I/Os per second)", iops),
    );
    // An interval without a completed I/O has no latency to show.
    let with_ios = |s: &IntervalSample| s.read_ios + s.write_ios > 0;
    let max_ns = lines
        .iter()
        .flat_map(|(_, samples, _, _)| samples.iter().filter(|s| with_ios(s)))
        .map(|s| s.mean_lat_ns)
        .fold(0.0, f64::max);
    let (div, unit) = latency_unit(max_ns);
    let lat = series(&|s| with_ios(s).then(|| (end(s), s.mean_lat_ns / div, s.mean_lat_ns)));
    push_lines(
        out,
        chart(
            "time-lat",
            "mean completion latency",
            &format!("mean latency ({unit})"),
            lat,
        ),
    );
}

/// `what` with its first letter in capitals, to open a title.
fn capitalised(what: &str) -> String {
    let mut c = what.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A curve's run colour, and whether it is dashed (not the run's first).
type RunStyle = (usize, bool);

/// Completion latency against percentile, one line per job and direction
/// of every run, overlaid.
fn percentiles(runs: &[(&ReportRun, &DiskRun)], out: &mut Vec<Chart>) {
    let several = runs.len() > 1;
    // Several runs: each run's curves in its colour, the first solid.
    type Curve<'a> = (String, &'a LatencySummary, Option<RunStyle>);
    let mut of_runs: Vec<Vec<Curve<'_>>> = Vec::new();
    for (r, d) in runs {
        let mut of_run = Vec::new();
        for (j, l) in d.jobs.iter().zip(job_labels(d)) {
            for (dir, dr) in directions(j) {
                if dr.clat.percentiles.is_empty() {
                    continue;
                }
                let name = if several {
                    format!("{}: {l} {dir}", r.name)
                } else {
                    format!("{l} {dir}")
                };
                let style = several.then_some((r.colour, !of_run.is_empty()));
                of_run.push((name, &dr.clat, style));
            }
        }
        of_runs.push(of_run);
    }
    // A run's first curve always, so no run of many is left out.
    let all: usize = of_runs.iter().map(Vec::len).sum();
    // Every run's first curve, then every run's second, ...: the first
    // `cap` of that order, drawn run by run.
    let mut picks: Vec<(usize, usize)> = of_runs
        .iter()
        .enumerate()
        .flat_map(|(run, c)| (0..c.len()).map(move |k| (k, run)))
        .collect();
    picks.sort_unstable();
    picks.truncate(CURVES.max(of_runs.len()));
    let curves: Vec<Curve<'_>> = of_runs
        .into_iter()
        .enumerate()
        .flat_map(|(run, c)| {
            let n = picks.iter().filter(|&&(_, r)| r == run).count();
            c.into_iter().take(n)
        })
        .collect();
    let title = if curves.len() < all {
        format!(
            "Completion latency by percentile ({} of {all} curves: each run's first, then \
             the others in turn)",
            curves.len()
        )
    } else {
        "Completion latency by percentile".to_string()
    };
    let max_ns = curves
        .iter()
        .flat_map(|(_, c, _)| c.percentiles.iter().map(|p| p.ns as f64))
        .fold(0.0, f64::max);
    let (div, unit) = latency_unit(max_ns);
    let series = curves
        .iter()
        .enumerate()
        .map(|(k, (name, c, style))| LineSeries {
            name: name.clone(),
            points: c
                .percentiles
                .iter()
                .filter(|p| p.percent > 0.0 && p.percent < 100.0)
                .map(|p| (p.percent, p.ns as f64 / div, p.ns as f64))
                .collect(),
            dashed: style.is_some_and(|(_, later)| later),
            scatter: false,
            colour: style.map_or(k, |(colour, _)| colour),
        })
        .collect();
    push_lines(
        out,
        LineChart {
            id: "latency-percentiles".into(),
            title,
            x_label: "percentile (each nine gets the same width)".into(),
            y_label: format!("completion latency ({unit})"),
            x_scale: Scale::Nines,
            x_tick: TickFormat::Percentile,
            series,
        },
    );
}

/// Each job's latency histogram, read and write overlaid; of several
/// runs, each run's job of that place overlaid on one axis.
fn histograms(runs: &[(&ReportRun, &DiskRun)], out: &mut Vec<Chart>) {
    let several = runs.len() > 1;
    let jobs = runs.iter().map(|(_, d)| d.jobs.len()).max().unwrap_or(0);
    let mut drawn = 0;
    for k in 0..jobs {
        if drawn == HISTOGRAMS {
            break;
        }
        let mut series: Vec<HistogramSeries> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for (r, d) in runs {
            let Some(j) = d.jobs.get(k) else { continue };
            let before = series.len();
            for (dir, dr) in directions(j).filter(|(_, dr)| !dr.clat.bins.is_empty()) {
                series.push(HistogramSeries {
                    name: if several {
                        format!("{}: {dir}", r.name)
                    } else {
                        dir.to_string()
                    },
                    colour: series.len(),
                    buckets: log_buckets(&dr.clat.bins, PER_DECADE),
                });
            }
            let label = &job_labels(d)[k];
            if series.len() > before && !names.contains(label) {
                names.push(label.clone());
            }
        }
        if series.is_empty() {
            continue;
        }
        drawn += 1;
        let (id, title) = match runs {
            [(r, _)] => (
                format!("latency-hist-{}-{}", r.id, k + 1),
                format!(
                    "{}: {}, completion latency histogram",
                    r.name,
                    names.join("; ")
                ),
            ),
            _ => (
                format!("latency-hist-{}", k + 1),
                format!("{}: completion latency histogram", names.join("; ")),
            ),
        };
        let h = Histogram {
            id,
            title,
            x_label: "completion latency (log scale)".into(),
            series,
        };
        out.push(Chart {
            id: h.id.clone(),
            title: h.title.clone(),
            svg: h.render(),
            run: None,
        });
    }
}
