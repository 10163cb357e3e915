//! `/runs/{id}`: one run, as `iomark results show` tells it (device and
//! link chain, command, CPU, memory limit, figures, warnings) and as the
//! report draws it.

use iomark_report::Report;
use iomark_store::{RunId, Store};

use super::layout::{esc, page};
use crate::Failure;

/// The page of run `id`.
pub fn show(id: RunId, store: &mut dyn Store) -> Result<String, Failure> {
    let run = store.load(id)?;
    let told = iomark_text::results::run_detail(&run);
    let mut o = format!(
        "<h1>Run {id}</h1><p class=\"note\"><a href=\"/api/runs/{id}\">as JSON</a></p>\
         <h2 id=\"show\">As iomark results show {id} tells it</h2><pre class=\"detail\">{}</pre>",
        esc(&told)
    );
    // A document this version cannot read is still told above.
    match Report::of_stored(vec![run], None, None) {
        Ok(report) => o.push_str(&report.html_article()),
        Err(e) => o.push_str(&format!(
            "<p class=\"error\">No charts: {}</p>",
            esc(&e.to_string())
        )),
    }
    Ok(page(&format!("Run {id}"), &o))
}
