//! `/live`: the runs in progress, from the seconds they store as they go
//! (`run_samples`): on this machine or on any host writing to the same
//! PostgreSQL. `/live/{id}` draws one run's seconds and follows it with
//! the one script this server has (`/static/live.js`): each second it
//! asks `/api/live/{id}` what is new, reloads the charts when something
//! is, and moves on to the run's page when the run is finished.
//! `/metrics` gives the same seconds to Prometheus.

use iomark_model::live::LiveSample;
use iomark_model::pts::PtsRoundStatus;
use iomark_model::RunBody;
use iomark_model::{now_ms, RunStatus};
use iomark_report::live::{live_chart, live_convergence, LiveFigure, RateUnit};
use iomark_store::{RunId, RunSummary, Store, StoredRun};
use iomark_text::openmetrics::{self, LiveRunMetrics};
use serde_json::json;

use super::layout::{date, esc, page};
use crate::http::{Response, JSON};
use crate::Failure;

// A run is in progress while its process says so on this machine, or it
// is unfinished and stored a second (or began) this recently; a killed
// run stops being one after it (the store's rule).
use iomark_store::presence::FRESH_MS;

/// The script of the live page.
pub(crate) const LIVE_JS: &str = include_str!("../../static/live.js");

/// SVG's type.
const SVG: &str = "image/svg+xml";

/// Where a run stands, from its summary and its seconds.
struct Standing<'a> {
    summary: &'a RunSummary,
    last: Option<&'a LiveSample>,
    points: usize,
    seq: Option<u64>,
    in_progress: bool,
}

impl<'a> Standing<'a> {
    fn of(summary: &'a RunSummary, samples: &'a [(u64, LiveSample)], now: u64) -> Self {
        let last = samples.last();
        let recent = |ms: u64| ms + FRESH_MS >= now;
        let in_progress = summary.status == RunStatus::Running
            || summary.status == RunStatus::Interrupted
                && (recent(summary.started_at_ms) || last.is_some_and(|(_, s)| recent(s.at_ms)));
        Standing {
            summary,
            last: last.map(|(_, s)| s),
            points: samples.len(),
            seq: last.map(|(n, _)| *n),
            in_progress,
        }
    }

    /// "test 3 of 8: RND4K Q32T1 read, 41 s left", or what the run is now.
    fn text(&self) -> String {
        let Some(s) = self.last else {
            return if self.in_progress {
                "started; no second measured yet".into()
            } else {
                format!("{}; no second was stored", self.summary.status.as_str())
            };
        };
        let test = if s.steps > 0 {
            format!("test {} of {}: {}", s.step, s.steps, s.label)
        } else {
            format!("test {}: {}", s.step, s.label)
        };
        let rate = rate_text(s, RateUnit::of_kind(&self.summary.kind));
        if self.in_progress {
            let at_most = if s.left_at_most { "at most " } else { "" };
            let left = s.left_ms.map_or_else(String::new, |l| {
                format!(", {at_most}{} s left", l.div_ceil(1000))
            });
            format!("{test}: {rate}{left}")
        } else if self.summary.status == RunStatus::Interrupted {
            format!(
                "interrupted: no second since {} (last: {test}, {rate})",
                date(s.at_ms)
            )
        } else {
            self.summary.status.as_str().to_string()
        }
    }
}

/// A second's figures: its rate in `unit` (MB/s, a net run's Mbit/s)
/// unless it counts flops and no bytes (Himeno), IOPS where it counts I/Os
/// (a memory kernel's seconds count none), MFLOPS where it counts flops
/// (the stencil, Himeno).
fn rate_text(s: &LiveSample, unit: RateUnit) -> String {
    let mut parts = Vec::new();
    if s.bytes > 0 || s.flops.is_none() {
        parts.push(format!(
            "{:.1} {}",
            unit.of(s.bytes_per_sec()),
            unit.symbol()
        ));
    }
    if s.ios > 0 {
        parts.push(format!("{:.0} IOPS", s.iops()));
    }
    if let Some(f) = s.flops_per_sec() {
        parts.push(format!("{:.0} MFLOPS", f / 1e6));
    }
    parts.join(", ")
}

/// The last second's figures in large type, each with its element id,
/// value and unit: MB/s, IOPS, p99 latency, MFLOPS (as [`rate_text`]
/// chooses them) and the time left. A figure at a glance across a room
/// is what a live page is for; the status line above says which test.
fn big_figures(s: &LiveSample, unit: RateUnit) -> Vec<(&'static str, String, &'static str)> {
    let mut out = Vec::new();
    if s.bytes > 0 || s.flops.is_none() {
        out.push((
            "fig-rate",
            format!("{:.1}", unit.of(s.bytes_per_sec())),
            unit.symbol(),
        ));
    }
    if s.ios > 0 {
        out.push(("fig-iops", format!("{:.0}", s.iops()), "IOPS"));
    }
    if let Some(l) = &s.latency {
        let us = l.p99_ns as f64 / 1e3;
        let (v, unit) = if us >= 10_000.0 {
            (format!("{:.1}", us / 1e3), "ms p99")
        } else {
            (format!("{us:.0}"), "µs p99")
        };
        out.push(("fig-p99", v, unit));
    }
    if let Some(f) = s.flops_per_sec() {
        out.push(("fig-flops", format!("{:.0}", f / 1e6), "MFLOPS"));
    }
    if let Some(l) = s.left_ms {
        // A PTS test may end at any steady window: the time left counts
        // every round it may skip, so it is the most left.
        let unit = if s.left_at_most {
            "s left at most"
        } else {
            "s left"
        };
        out.push(("fig-left", l.div_ceil(1000).to_string(), unit));
    }
    out
}

/// Where a PTS test's steady state stood after each round so far, as the
/// run's checkpoints stored it; none for any other run.
fn rounds_so_far(run: &StoredRun) -> Vec<PtsRoundStatus> {
    // The page asks each second: only a PTS test's document is read.
    let pts = run
        .summary
        .profile
        .as_deref()
        .is_some_and(|p| p.starts_with("pts-"));
    if !pts {
        return Vec::new();
    }
    match run.document().map(|d| d.body) {
        Ok(RunBody::Disk(d)) => d.rounds_so_far,
        _ => Vec::new(),
    }
}

/// The live charts run `id` has, in the page's order: a PTS test's
/// convergence once a round ended (what a test of hours is watched for),
/// then the figures its seconds have.
fn chart_names(seconds: &[LiveSample], rounds: &[PtsRoundStatus]) -> Vec<&'static str> {
    let convergence = (!rounds.is_empty()).then_some(CONVERGENCE);
    convergence
        .into_iter()
        .chain(LiveFigure::of(seconds).into_iter().map(LiveFigure::name))
        .collect()
}

/// The convergence chart's name in ids and URLs.
const CONVERGENCE: &str = "convergence";

/// `/live`: the runs in progress, newest first.
pub(crate) fn list(store: &mut dyn Store) -> Result<String, Failure> {
    let now = now_ms();
    let ids = store.in_progress(now.saturating_sub(FRESH_MS))?;
    let mut o = String::from("<h1>Runs in progress</h1>");
    if ids.is_empty() {
        o.push_str(
            "<p>No run is in progress. A run shows here from its start, while it \
             stores a second at least every 10 s (disk, mem and net runs do, on this \
             machine or any host writing to this store).</p>",
        );
        return Ok(page("Live", &o));
    }
    o.push_str(
        "<table class=\"runs\"><thead><tr><th>run</th><th>started</th><th>device</th>\
         <th>now</th></tr></thead><tbody>",
    );
    for id in ids {
        let run = store.load(id)?;
        let samples = store.samples(id, None)?;
        let standing = Standing::of(&run.summary, &samples, now);
        o.push_str(&format!(
            "<tr><td><a href=\"/live/{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&date(run.summary.started_at_ms)),
            esc(run.summary.device.as_deref().unwrap_or("")),
            esc(&standing.text())
        ));
    }
    o.push_str("</tbody></table>");
    Ok(page("Live", &o))
}

/// `/live/{id}`: one run's seconds, followed as they come.
pub(crate) fn show(id: RunId, store: &mut dyn Store) -> Result<String, Failure> {
    let run = store.load(id)?;
    let rounds = rounds_so_far(&run);
    let samples = store.samples(id, None)?;
    let standing = Standing::of(&run.summary, &samples, now_ms());
    let seq = standing
        .seq
        .map_or_else(|| "none".to_string(), |n| n.to_string());
    let mut o = format!(
        "<h1>Run {id}, live</h1><p class=\"note\">{} · {} · <a href=\"/runs/{id}\">the run's page</a></p>\
         <p id=\"live-status\" data-run=\"{id}\" data-seq=\"{seq}\" data-points=\"{}\" data-live=\"{}\">{}</p>",
        esc(run.summary.device.as_deref().unwrap_or("")),
        esc(&run.summary.command_line.join(" ")),
        standing.points,
        standing.in_progress,
        esc(&standing.text())
    );
    if let Some(last) = rounds.last() {
        o.push_str(&format!(
            "<p id=\"live-round\">{}</p>",
            esc(&iomark_text::round_line(last))
        ));
    }
    o.push_str("<div id=\"live-figures\">");
    if standing.in_progress {
        let rate = RateUnit::of_kind(&run.summary.kind);
        let big = standing.last.map(|s| big_figures(s, rate));
        for (fid, value, unit) in big.unwrap_or_default() {
            o.push_str(&format!(
                "<div><span class=\"value\" id=\"{fid}\">{}</span> <span class=\"unit\">{unit}</span></div>",
                esc(&value)
            ));
        }
    }
    o.push_str("</div><div class=\"charts\">");
    let seconds: Vec<LiveSample> = samples.into_iter().map(|(_, s)| s).collect();
    for name in chart_names(&seconds, &rounds) {
        o.push_str(&format!(
            "<img class=\"live\" id=\"chart-{name}\" alt=\"{name}, each second\" \
             src=\"/live/{id}/{name}.svg?seq={seq}\">"
        ));
    }
    o.push_str("</div><script src=\"/static/live.js\"></script>");
    Ok(page(&format!("Run {id}, live"), &o))
}

/// `/api/live/{id}`: where run `id` stands, for the live page's script.
pub(crate) fn state(id: RunId, store: &mut dyn Store) -> Result<Response, Failure> {
    let run = store.load(id)?;
    let rounds = rounds_so_far(&run);
    let summary = run.summary;
    let samples = store.samples(id, None)?;
    let standing = Standing::of(&summary, &samples, now_ms());
    let last = standing.last;
    let seconds: Vec<LiveSample> = samples.iter().map(|(_, s)| s.clone()).collect();
    let figures = chart_names(&seconds, &rounds);
    let doc = json!({
        "run": id.0,
        "status": summary.status.as_str(),
        "in_progress": standing.in_progress,
        "points": standing.points,
        "seq": standing.seq,
        "step": last.map(|s| s.step),
        "steps": last.map(|s| s.steps),
        "label": last.map(|s| s.label.clone()),
        "left_ms": last.and_then(|s| s.left_ms),
        "left_at_most": last.is_some_and(|s| s.left_at_most),
        "bytes_per_second": last.map(LiveSample::bytes_per_sec),
        "iops": last.map(LiveSample::iops),
        "flops_per_second": last.and_then(LiveSample::flops_per_sec),
        "figures": figures,
        "big": if standing.in_progress {
            last.map(|s| big_figures(s, RateUnit::of_kind(&summary.kind)))
                .unwrap_or_default()
        } else {
            Vec::new()
        }
        .into_iter()
        .map(|(id, value, unit)| json!({ "id": id, "value": value, "unit": unit }))
        .collect::<Vec<_>>(),
        "text": standing.text(),
        "round": rounds.last().map(iomark_text::round_line),
    });
    Ok(Response::new(
        200,
        JSON,
        iomark_model::escape::json_escaped(doc.to_string()),
    ))
}

/// `/api/runs/{id}/samples?after=N`: run `id`'s seconds after number N.
pub(crate) fn samples(
    id: RunId,
    after: Option<u64>,
    store: &mut dyn Store,
) -> Result<Response, Failure> {
    store.load(id)?;
    let samples: Vec<_> = store
        .samples(id, after)?
        .into_iter()
        .map(|(seq, s)| json!({ "seq": seq, "sample": s }))
        .collect();
    let doc = json!({ "run": id.0, "samples": samples });
    Ok(Response::new(
        200,
        JSON,
        iomark_model::escape::json_escaped(doc.to_string()),
    ))
}

/// `/live/{id}/{figure}.svg`: one of the live charts.
pub(crate) fn chart(id: RunId, figure: &str, store: &mut dyn Store) -> Result<Response, Failure> {
    if figure == format!("{CONVERGENCE}.svg") {
        let rounds = rounds_so_far(&store.load(id)?);
        return live_convergence(&rounds)
            .map(|svg| Response::new(200, SVG, svg))
            .ok_or_else(|| {
                Failure::NotFound(format!(
                    "run {id} has no PTS round yet: its convergence is drawn once a round ends"
                ))
            });
    }
    let figure = figure
        .strip_suffix(".svg")
        .and_then(LiveFigure::named)
        .ok_or_else(|| {
            Failure::NotFound(format!(
                "there is no live chart '{figure}': they are bandwidth.svg, iops.svg, latency.svg, flops.svg and a PTS test's convergence.svg"
            ))
        })?;
    let unit = RateUnit::of_kind(&store.load(id)?.summary.kind);
    let samples: Vec<LiveSample> = store
        .samples(id, None)?
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    Ok(Response::new(200, SVG, live_chart(figure, &samples, unit)))
}

/// `/metrics`: the runs in progress in the OpenMetrics text format.
pub(crate) fn metrics(store: &mut dyn Store) -> Result<Response, Failure> {
    let ids = store.in_progress(now_ms().saturating_sub(FRESH_MS))?;
    let mut runs = Vec::with_capacity(ids.len());
    for id in ids {
        let run = store.load(id)?;
        let host = run
            .document()
            .ok()
            .and_then(|d| d.host.map(|h| h.hostname))
            .unwrap_or_default();
        let device = run.summary.device.clone().unwrap_or_default();
        let samples: Vec<LiveSample> = store
            .samples(id, None)?
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        runs.push((id, host, device, samples));
    }
    let views: Vec<LiveRunMetrics<'_>> = runs
        .iter()
        .map(|(id, host, device, samples)| LiveRunMetrics {
            run: id.0,
            host,
            device,
            samples,
        })
        .collect();
    Ok(Response::new(
        200,
        openmetrics::CONTENT_TYPE,
        openmetrics::render(&views),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_left_that_counts_rounds_a_run_may_skip_is_shown_as_the_most_left() {
        let mut s = LiveSample {
            step: 3,
            steps: 1400,
            label: "round 2: 4K 0/100".into(),
            at_ms: 1,
            offset_ms: 1000,
            duration_ms: 1000,
            bytes: 4096,
            ios: 1,
            latency: None,
            left_ms: Some(4000),
            left_at_most: true,
            flops: None,
        };
        let left = |s: &LiveSample| {
            big_figures(s, RateUnit::MegabytesPerSec)
                .into_iter()
                .find(|(id, ..)| *id == "fig-left")
                .map(|(_, value, unit)| format!("{value} {unit}"))
        };
        assert_eq!(left(&s).as_deref(), Some("4 s left at most"));
        s.left_at_most = false;
        assert_eq!(left(&s).as_deref(), Some("4 s left"));
    }
}
