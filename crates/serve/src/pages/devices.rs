//! `/devices`: every device runs measured and every device remembered
//! (rated speed, the artefacts probe's and the verify profile's last
//! verdicts); `/devices/history?name=…`: one device's runs over time, a
//! table and a chart of their throughput.

use std::collections::HashMap;
use std::fmt::Write;

use iomark_model::figure::{Figure, FigureUnit};
use iomark_report::svg::{LineChart, LineSeries, Scale, TickFormat};
use iomark_store::{DeviceMemory, RunId, RunQuery, SeenDevice, Store, StoredRun};

use super::layout::{date, esc, page, query_string};
use crate::http::Request;
use crate::query::{self, BadRequest};
use crate::Failure;

/// Runs a device's history shows at most: the newest.
const HISTORY_RUNS: usize = 200;
/// Lines on a history chart at most: the tests most runs have.
const MAX_SERIES: usize = 8;

/// The devices page.
pub(crate) fn list(req: &Request, store: &mut dyn Store) -> Result<String, Failure> {
    query::only(req, &[])?;
    let seen = store.seen_devices()?;
    let remembered = store.devices()?;
    let mut o = String::from("<h1>Devices</h1><h2 id=\"seen\">Measured</h2>");
    if seen.is_empty() {
        o.push_str("<p class=\"note\">No runs are stored yet.</p>");
    } else {
        seen_table(&mut o, &seen);
    }
    o.push_str("<h2 id=\"remembered\">Remembered</h2>");
    if remembered.is_empty() {
        o.push_str(
            "<p class=\"note\">Nothing is remembered yet: a rated speed (--rated), an artefacts \
             probe or the verify profile stores what it found about a device.</p>",
        );
    } else {
        remembered_table(&mut o, &remembered);
    }
    Ok(page("Devices", &o))
}

fn history_link(name: &str) -> String {
    format!("/devices/history?{}", query_string([("name", name)]))
}

fn seen_table(o: &mut String, seen: &[SeenDevice]) {
    o.push_str(
        "<table id=\"seen-devices\"><tr><th>device or target</th><th>kind</th><th>runs</th>\
         <th>first run</th><th>last run</th><th>newest</th></tr>",
    );
    for d in seen {
        let shown = if d.name.is_empty() {
            "(not known)"
        } else {
            &d.name
        };
        let _ = write!(
            o,
            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td>\
             <td><a href=\"/runs/{id}\">run {id}</a></td></tr>",
            esc(&history_link(&d.name)),
            esc(shown),
            esc(&d.kind),
            d.runs,
            date(d.first_ms),
            date(d.last_ms),
            id = d.newest
        );
    }
    o.push_str("</table>");
}

fn run_link(run: Option<RunId>) -> String {
    run.map_or(String::new(), |r| {
        format!(" (<a href=\"/runs/{r}\">run {r}</a>)")
    })
}

fn remembered_table(o: &mut String, devices: &[DeviceMemory]) {
    o.push_str(
        "<table id=\"remembered-devices\"><tr><th>device</th><th>key</th><th>rated</th>\
         <th>artefacts probe</th><th>verify</th></tr>",
    );
    for d in devices {
        let rated = d
            .rated
            .as_ref()
            .map_or(String::new(), |r| esc(&r.to_string()));
        let probe = d.probe.as_ref().map_or(String::new(), |p| {
            format!(
                "{}, {}{}",
                esc(&p.verdict.summary()),
                date(p.at_ms),
                run_link(p.run)
            )
        });
        let verify = d.verify.as_ref().map_or(String::new(), |v| {
            format!(
                "{}, {}{}",
                esc(&v.verdict.summary()),
                date(v.at_ms),
                run_link(v.run)
            )
        });
        let _ = write!(
            o,
            "<tr><td>{}</td><td><code>{}</code></td><td>{rated}</td><td>{probe}</td><td>{verify}</td></tr>",
            esc(&d.description),
            esc(&d.key)
        );
    }
    o.push_str("</table>");
}

/// A figure a history draws: a rate in bytes or bits per second.
fn headline(f: &Figure) -> Option<(f64, &'static str)> {
    match f.unit {
        FigureUnit::BytesPerSec => Some((f.value / 1e6, "MB/s (10⁶ B/s)")),
        FigureUnit::BitsPerSec => Some((f.value / 1e6, "Mbit/s")),
        _ => None,
    }
}

/// One device's history page.
pub(crate) fn history(req: &Request, store: &mut dyn Store) -> Result<String, Failure> {
    query::only(req, &["name"])?;
    let name = match req.all("name").as_slice() {
        [n] => n.to_string(),
        _ => {
            return Err(BadRequest(
                "name one device: /devices/history?name=DEVICE (from /devices)".into(),
            )
            .into())
        }
    };
    let summaries = store.list(&RunQuery {
        device_is: Some(name.clone()),
        limit: Some(HISTORY_RUNS),
        ..RunQuery::default()
    })?;
    if summaries.is_empty() {
        return Err(Failure::NotFound(format!(
            "no stored run measured '{name}': pick a device from /devices"
        )));
    }
    let runs = summaries
        .iter()
        .map(|s| store.load(s.id))
        .collect::<Result<Vec<StoredRun>, _>>()?;
    let keys = drawn_keys(&runs);

    let mut o = format!("<h1>History of {}</h1>", esc(&name));
    if summaries.len() == HISTORY_RUNS {
        let _ = write!(o, "<p class=\"note\">The newest {HISTORY_RUNS} runs.</p>");
    }
    if let Some(chart) = chart(&name, &runs, &keys) {
        let _ = write!(o, "<figure class=\"history\">{}</figure>", chart.render());
    }
    o.push_str("<table id=\"history\"><tr><th>run</th><th>started</th><th>kind</th><th>status</th><th>labels</th>");
    for (test, metric) in &keys {
        let _ = write!(o, "<th>{} {}</th>", esc(test), esc(metric));
    }
    o.push_str("</tr>");
    for r in runs.iter().rev() {
        let s = &r.summary;
        let _ = write!(
            o,
            "<tr data-run=\"{id}\"><td><a href=\"/runs/{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            date(s.started_at_ms),
            esc(&s.kind),
            s.status.as_str(),
            esc(&s.labels.join(", ")),
            id = s.id
        );
        for key in &keys {
            let cell = figure(r, key).map_or(String::new(), |f| esc(&f.display_value()));
            let _ = write!(o, "<td class=\"num\">{cell}</td>");
        }
        o.push_str("</tr>");
    }
    o.push_str("</table>");
    Ok(page(&format!("History of {name}"), &o))
}

fn figure<'a>(r: &'a StoredRun, (test, metric): &(String, String)) -> Option<&'a Figure> {
    r.figures
        .iter()
        .find(|f| &f.test == test && &f.metric == metric)
}

/// The rates most runs have, of the unit most of them have, in the
/// order first seen: the lines of the chart and the columns of the table.
fn drawn_keys(runs: &[StoredRun]) -> Vec<(String, String)> {
    let mut count: HashMap<(String, String), usize> = HashMap::new();
    let mut order = Vec::new();
    let mut units: HashMap<&str, usize> = HashMap::new();
    for f in runs.iter().flat_map(|r| &r.figures) {
        let Some((_, unit)) = headline(f) else {
            continue;
        };
        *units.entry(unit).or_default() += 1;
        let key = (f.test.clone(), f.metric.clone());
        let n = count.entry(key.clone()).or_default();
        if *n == 0 {
            order.push(key);
        }
        *n += 1;
    }
    let Some(unit) = units
        .into_iter()
        .max_by_key(|(u, n)| (*n, *u))
        .map(|(u, _)| u)
    else {
        return Vec::new();
    };
    let of_unit = |k: &(String, String)| {
        runs.iter()
            .find_map(|r| figure(r, k))
            .and_then(headline)
            .is_some_and(|(_, u)| u == unit)
    };
    let mut keys: Vec<(String, String)> = order.into_iter().filter(of_unit).collect();
    // The most common first for the cut, then back in first-seen order.
    let mut by_count = keys.clone();
    by_count.sort_by_key(|k| std::cmp::Reverse(count[k]));
    by_count.truncate(MAX_SERIES);
    keys.retain(|k| by_count.contains(k));
    keys
}

/// A line per drawn figure: its value run after run (by id, in time).
fn chart(name: &str, runs: &[StoredRun], keys: &[(String, String)]) -> Option<LineChart> {
    let y_label = keys
        .first()
        .and_then(|k| runs.iter().find_map(|r| figure(r, k)))
        .and_then(headline)?
        .1;
    let series = keys
        .iter()
        .enumerate()
        .map(|(i, k)| LineSeries {
            name: format!("{} {}", k.0, k.1),
            points: runs
                .iter()
                .filter_map(|r| {
                    let f = figure(r, k)?;
                    Some((r.summary.id.0 as f64, headline(f)?.0, f.value))
                })
                .collect(),
            dashed: false,
            scatter: false,
            colour: i,
        })
        .collect();
    Some(LineChart {
        id: "device-history".into(),
        title: format!("{name}: run after run"),
        x_label: "run (id, oldest left)".into(),
        y_label: y_label.into(),
        x_scale: Scale::Linear,
        x_tick: TickFormat::Number,
        series,
    })
}
