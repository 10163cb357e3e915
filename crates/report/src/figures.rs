//! The page's Figures section: every stored figure of every run, in the
//! unit the run printed, with its stored value in `data-value`, each run's
//! folded under its name: the charts and the comparison are what a reader
//! reads first, and three runs of a hundred figures each were 4,000 px of
//! table (fifty runs, 67,000).

use std::fmt::Write;

use crate::svg::esc;
use crate::{Report, ReportRun};

const HEADER: &str = "<tr><th>run</th><th>test</th><th>metric</th><th>value</th><th>lowest</th><th>highest</th></tr>";

/// `<h2>Figures</h2>` and a folded table per run.
pub(crate) fn section(o: &mut String, report: &Report) {
    o.push_str("<h2>Figures</h2><div id=\"figures\">");
    for r in report.runs() {
        let _ = write!(
            o,
            "<details class=\"run-figures\" data-run=\"{}\"><summary><b>{}</b>: {} figure{}</summary><table>{HEADER}",
            esc(&r.id),
            esc(&r.name),
            r.figures.len(),
            if r.figures.len() == 1 { "" } else { "s" }
        );
        rows(o, r);
        o.push_str("</table></details>");
    }
    o.push_str("</div>");
}

/// A lone run's answer first: each test's first figure (a disk test's
/// bandwidth, a network test's goodput, a memory kernel's rate) under the
/// name the run printed, in the unit it printed, before the tables that
/// explain it. Nothing for several runs: their answer is the comparison.
pub(crate) fn headline(o: &mut String, report: &Report) {
    let [r] = report.runs() else { return };
    let own = iomark_model::figure::own_test_names(&r.doc.body);
    let mut seen: Vec<&str> = Vec::new();
    let mut rows = String::new();
    for f in &r.figures {
        if seen.contains(&f.test.as_str()) || f.metric.starts_with("cpu") {
            continue;
        }
        seen.push(&f.test);
        let name = own
            .iter()
            .find(|(test, _)| *test == f.test)
            .map_or(f.test.as_str(), |(_, own)| own.as_str());
        let _ = write!(
            rows,
            "<tr data-test=\"{}\" data-metric=\"{}\" data-value=\"{}\"><td>{}</td><td>{}</td><td class=\"num headline\">{}</td></tr>",
            esc(&f.test),
            esc(&f.metric),
            f.value,
            esc(name),
            esc(&f.metric),
            esc(&crate::printed::format(r, f, f.value))
        );
    }
    if !rows.is_empty() {
        let _ = write!(
            o,
            "<h2>Result</h2><table id=\"headline\"><tr><th>test</th><th>metric</th><th>value</th></tr>{rows}</table>"
        );
    }
}

/// A run's figure rows.
fn rows(o: &mut String, r: &ReportRun) {
    // The run's name, then what it measured through.
    let run_cell = match iomark_model::figure::device_link(&r.doc) {
        Some(d) => format!("{}<br><small>{}</small>", esc(&r.name), esc(&d)),
        None => esc(&r.name),
    };
    for f in &r.figures {
        // In the unit the run printed (a sweep's MiB/s, MacBench's KB/s).
        let shown = |v: f64| crate::printed::format(r, f, v);
        let (lo, hi) = f
            .spread
            .map(|(a, b)| (shown(a), shown(b)))
            .unwrap_or_default();
        let _ = write!(
            o,
            "<tr class=\"figure\" data-run=\"{}\" data-test=\"{}\" data-metric=\"{}\" data-value=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&r.id),
            esc(&f.test),
            esc(&f.metric),
            f.value,
            run_cell,
            esc(&f.test),
            esc(&f.metric),
            esc(&shown(f.value)),
            esc(&lo),
            esc(&hi)
        );
    }
}
