//! `/runs/{id}`: one run, as `iomark results show` tells it (device and
//! link chain, command, CPU, memory limit, figures, warnings) and as the
//! report draws it.

use std::fmt::Write;

use iomark_report::live::LiveFigure;
use iomark_report::Report;
use iomark_store::{RunId, Store};

use super::layout::{esc, page};
use crate::Failure;

/// The page of run `id`: the report of it (its tables and charts, with
/// their contents), then all that `results show` prints.
pub(crate) fn show(id: RunId, store: &mut dyn Store) -> Result<String, Failure> {
    let run = store.load(id)?;
    let told = iomark_text::results::run_detail(&run, true, None);
    let samples: Vec<_> = store
        .samples(id, None)?
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    let seconds = samples.len();
    let mut o = format!(
        "<p class=\"note\">Run {id} · <a href=\"#show\">as iomark results show tells it</a> · \
         <a href=\"/api/runs/{id}\">as JSON</a>"
    );
    if seconds > 0 {
        let _ = write!(
            o,
            " · <a href=\"#seconds\">each second</a> (<a href=\"/live/{id}\">live view</a>)"
        );
    }
    o.push_str("</p>");
    // A document this version cannot read is still told below.
    match Report::of_stored(vec![run], None, None) {
        Ok(report) => o.push_str(&report.html_article()),
        Err(e) => {
            let _ = write!(
                o,
                "<h1>Run {id}</h1><p class=\"error\">No charts: {}</p>",
                esc(&e.to_string())
            );
        }
    }
    // The seconds stored as it went: all a killed run has beyond its
    // finished tests.
    if seconds > 0 {
        let _ = write!(
            o,
            "<h2 id=\"seconds\">Each second, as it was measured ({seconds})</h2><div class=\"charts\">"
        );
        for figure in LiveFigure::of(&samples) {
            let name = figure.name();
            let _ = write!(
                o,
                "<img class=\"live\" id=\"chart-{name}\" alt=\"{name}, each second\" \
                 src=\"/live/{id}/{name}.svg\">"
            );
        }
        o.push_str("</div>");
    }
    let _ = write!(
        o,
        "<h2 id=\"show\">As iomark results show {id} tells it</h2><pre class=\"detail\">{}</pre>",
        esc(&told)
    );
    Ok(page(&format!("Run {id}"), &o))
}
