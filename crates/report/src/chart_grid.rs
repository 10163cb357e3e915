//! The page's Charts section. A report of a few runs shows every chart in
//! one grid. One of more runs than the palette has colours (where a bar
//! chart turns into ranked rows) shows the charts of several runs in the
//! grid and folds each run's own charts (its time series, histograms)
//! under its name: fifty runs' three time charts each would be 150
//! charts to scroll past before the comparison.

use std::fmt::Write;

use crate::svg::esc;
use crate::{Chart, Report};

/// Whether the report has more runs than colours: the page's compact
/// form (ranked bars, folded per-run charts and figures, the comparison
/// a table per test).
pub(crate) fn many(report: &Report) -> bool {
    report.runs().len() > crate::svg::COLOURS
}

/// The charts the contents list: all of them, or with many runs those
/// of several runs only (the folded ones are under their run's entry).
pub(crate) fn listed<'a>(report: &Report, charts: &'a [Chart]) -> Vec<&'a Chart> {
    charts
        .iter()
        .filter(|c| !many(report) || c.run.is_none())
        .collect()
}

fn figure(o: &mut String, c: &Chart) {
    let _ = write!(
        o,
        "<figure id=\"chart-{}\" data-chart-id=\"{0}\">{}<figcaption>{}</figcaption></figure>",
        esc(&c.id),
        c.svg,
        esc(&c.title)
    );
}

/// `<h2>Charts</h2>` and the charts.
pub(crate) fn section(o: &mut String, report: &Report, charts: &[Chart]) {
    o.push_str("<h2>Charts</h2><div class=\"charts\">");
    for c in listed(report, charts) {
        figure(o, c);
    }
    o.push_str("</div>");
    if !many(report) || charts.iter().all(|c| c.run.is_none()) {
        return;
    }
    o.push_str("<div id=\"run-charts\"><p>Each run's own charts, folded under its name:</p>");
    for r in report.runs() {
        let own: Vec<&Chart> = charts
            .iter()
            .filter(|c| c.run.as_ref() == Some(&r.id))
            .collect();
        if own.is_empty() {
            continue;
        }
        let _ = write!(
            o,
            "<details class=\"run-charts\" data-run=\"{}\"><summary><b>{}</b>: {} chart{}</summary><div class=\"charts\">",
            esc(&r.id),
            esc(&r.name),
            own.len(),
            if own.len() == 1 { "" } else { "s" }
        );
        for c in own {
            figure(o, c);
        }
        o.push_str("</div></details>");
    }
    o.push_str("</div>");
}
