//! `/compare?id=…` and `/api/compare?id=…`: runs side by side, lined up
//! as `iomark results compare` lines them up (the same code,
//! [`crate::documents`]), with the charts of all of them overlaid.

use std::fmt::Write;

use iomark_report::{Comparison, Report, ReportRun};
use iomark_stats::gate::WorseThreshold;
use iomark_store::{RunId, Store, StoredRun};

use super::layout::{esc, page};
use crate::documents::{compared_runs, lineup, CompareError};
use crate::http::{Request, Response, JSON};
use crate::query::{self, BadRequest};
use crate::Failure;

/// The parameters, as `results compare` takes them.
const PARAMS: [&str; 5] = [
    "id",
    "baseline",
    "baseline_label",
    "fail_if_worse",
    "metric",
];

/// What a compare request asks for.
struct Asked {
    ids: Vec<RunId>,
    baseline: Option<RunId>,
    baseline_label: Option<String>,
    threshold: Option<WorseThreshold>,
    metrics: Vec<String>,
}

fn asked(req: &Request) -> Result<Asked, BadRequest> {
    query::only(req, &PARAMS)?;
    let baseline = query::run_id(req, "baseline")?;
    let ids = query::ids(
        req,
        usize::from(baseline.is_none()) + 1,
        "tick them on the list (/), or /compare?id=1&id=2",
    )?;
    let baseline_label = query::text(req, "baseline_label")?.map(str::to_string);
    if baseline.is_some() && baseline_label.is_some() {
        return Err(BadRequest(
            "give baseline or baseline_label, not both".into(),
        ));
    }
    let threshold = query::text(req, "fail_if_worse")?
        .map(|t| {
            t.parse::<WorseThreshold>()
                .map_err(|e| BadRequest(format!("'fail_if_worse={t}': {e}")))
        })
        .transpose()?;
    Ok(Asked {
        ids,
        baseline,
        baseline_label,
        threshold,
        metrics: req.all("metric").iter().map(|m| m.to_string()).collect(),
    })
}

fn runs(req: &Request, store: &mut dyn Store) -> Result<(Asked, Vec<StoredRun>), Failure> {
    let a = asked(req)?;
    let runs = compared_runs(store, &a.ids, a.baseline)?;
    Ok((a, runs))
}

/// `/api/compare`: the document of `results compare --json`.
pub(crate) fn api(req: &Request, store: &mut dyn Store) -> Result<Response, Failure> {
    let (a, mut runs) = runs(req, store)?;
    let lineup = lineup(
        &mut runs,
        a.baseline_label.as_deref(),
        a.threshold,
        &a.metrics,
    )?;
    // A threshold with nothing to judge is refused, as the command refuses it.
    if let Some(t) = a.threshold {
        iomark_text::results::gate_report(&lineup, t).map_err(CompareError::from)?;
    }
    crate::api::json(&iomark_text::json::comparison(&lineup))
        .map(|body| Response::new(200, JSON, body))
}

/// `/compare`: the comparison table with its verdicts, what the gate
/// says when `fail_if_worse` is given, and the runs' charts overlaid.
pub(crate) fn show(req: &Request, store: &mut dyn Store) -> Result<String, Failure> {
    let (a, mut runs) = runs(req, store)?;
    let lineup = lineup(
        &mut runs,
        a.baseline_label.as_deref(),
        a.threshold,
        &a.metrics,
    )?;
    let comparison = Comparison::of(&lineup);
    let gate = match a.threshold {
        Some(t) => Some(iomark_text::results::gate_report(&lineup, t).map_err(CompareError::from)?),
        None => None,
    };
    let first = lineup.runs().first().map(|r| r.summary.id);
    drop(lineup);

    let mut o = String::new();
    let ids: Vec<String> = runs.iter().map(|r| r.summary.id.to_string()).collect();
    let api = format!(
        "/api/compare?{}",
        crate::pages::layout::query_string(
            req.query
                .iter()
                .filter(|(k, _)| k != "token")
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
    );
    let _ = write!(
        o,
        "<p class=\"note\">Runs {} · <a href=\"{}\">as JSON</a></p>",
        esc(&ids.join(", ")),
        esc(&api)
    );
    if let Some(g) = &gate {
        let _ = write!(
            o,
            "<h2 id=\"gate\">Gate</h2><p>{} worse past the threshold</p><ul>",
            g.regressed
        );
        for l in &g.lines {
            let _ = write!(o, "<li class=\"warning\">{}</li>", esc(l));
        }
        o.push_str("</ul>");
    }
    let mut report_runs = Vec::with_capacity(runs.len());
    for s in runs {
        let doc = s.document().map_err(iomark_report::ReportError::from)?;
        report_runs.push(ReportRun::new(s.summary.id, doc).with_figures(s.figures));
    }
    // Relative charts divide by the first run, as the table does; a
    // baseline label pairs figure by figure, which only the table shows.
    let baseline = match a.baseline_label {
        None => first.map(|f| f.to_string()),
        Some(_) => None,
    };
    let report = Report::new(report_runs, baseline.as_deref())?.with_comparison(comparison);
    o.push_str(&report.html_article());
    Ok(page("Compare", &o))
}
