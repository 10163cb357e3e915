//! `/`: the stored runs, newest first, a page at a time, filtered by a GET
//! form; each with a box to tick for the compare form.

use std::fmt::Write;

use iomark_store::{RunQuery, RunSummary, Store};

use super::layout::{date, esc, page, query_string};
use crate::http::Request;
use crate::query::{self, FILTERS, KINDS, PAGE_SIZE};
use crate::Failure;

/// The list page for `req`.
pub(crate) fn list(req: &Request, store: &mut dyn Store) -> Result<String, Failure> {
    let mut allowed = FILTERS.to_vec();
    allowed.push("page");
    query::only(req, &allowed)?;
    let filters = query::filters(req)?;
    // The last page whose offset a store can count to.
    let last = query::MAX_NUMBER / PAGE_SIZE;
    let page_no = query::number(req, "page", 1, last)?.unwrap_or(1);
    let offset = (page_no - 1) * PAGE_SIZE;
    // One more than a page: whether there is an older page.
    let mut runs = store.list(&RunQuery {
        limit: Some(PAGE_SIZE + 1),
        offset,
        ..filters.clone()
    })?;
    runs.reverse();
    let older = runs.len() > PAGE_SIZE;
    runs.truncate(PAGE_SIZE);

    let mut o = String::from("<h1>Runs</h1>");
    filter_form(&mut o, req);
    if runs.is_empty() {
        let what = if filters == RunQuery::default() && page_no == 1 {
            "No runs are stored yet."
        } else {
            "No stored runs match."
        };
        let _ = write!(o, "<p class=\"note\">{what}</p>");
    } else {
        o.push_str("<form action=\"/compare\" method=\"get\"><p><button type=\"submit\">Compare the runs ticked</button></p>");
        table(&mut o, &runs);
        o.push_str("</form>");
    }
    pager(&mut o, req, page_no, older);
    Ok(page("Runs", &o))
}

/// The filters, as a form that reloads this page with them.
fn filter_form(o: &mut String, req: &Request) {
    o.push_str("<form class=\"filters\" action=\"/\" method=\"get\">");
    let value = |name: &str| req.all(name).first().map_or(String::new(), |v| esc(v));
    for (name, hint) in [
        ("device", "sda, T7, /mnt/x"),
        ("host", "host name"),
        ("label", "label"),
        ("profile", "cdm, custom"),
        ("since", "2026-11-01, 7d"),
        ("until", "2026-12-01"),
    ] {
        let _ = write!(
            o,
            "<label>{name}<input name=\"{name}\" value=\"{}\" placeholder=\"{hint}\"></label>",
            value(name)
        );
    }
    o.push_str("<label>kind<select name=\"kind\"><option value=\"\">any</option>");
    let chosen = req.all("kind").first().copied().unwrap_or("");
    for k in KINDS {
        let sel = if k == chosen { " selected" } else { "" };
        let _ = write!(o, "<option{sel}>{k}</option>");
    }
    o.push_str(
        "</select></label><button type=\"submit\">Filter</button> <a href=\"/\">clear</a></form>",
    );
}

/// The runs' table, a tick box each: what each ran (kind, profile) and
/// its answer (the headline figure) before where and how.
/// The run list. Labels, tool and note get a column only when a run on
/// the page has one (an imported run's tool, a note), so an 800 px window
/// holds the rest without scrolling sideways.
fn table(o: &mut String, runs: &[RunSummary]) {
    let with_labels = runs.iter().any(|r| !r.labels.is_empty());
    let with_tool = runs.iter().any(|r| r.tool != "iomark");
    let with_note = runs
        .iter()
        .any(|r| r.note.as_deref().is_some_and(|n| !n.is_empty()));
    let optional = |on: bool, cell: &str| if on { cell.to_string() } else { String::new() };
    let _ = write!(
        o,
        "<table id=\"run-list\"><tr><th title=\"tick the runs to compare\">pick</th><th>id</th><th>started</th><th>kind</th>\
         <th>profile</th><th>result</th><th>status</th>{}<th>device or target</th>{}\
         <th title=\"warnings\">warn.</th>{}</tr>",
        optional(with_labels, "<th>labels</th>"),
        optional(with_tool, "<th>tool</th>"),
        optional(with_note, "<th>note</th>"),
    );
    for r in runs {
        let labels: String = r
            .labels
            .iter()
            .map(|l| format!("<code>{}</code>", esc(l)))
            .collect();
        let place = r.device.as_deref().or(r.target.as_deref()).unwrap_or("");
        let result = r.headline.as_ref().map_or(String::new(), |f| {
            format!(
                "<span title=\"{} {}\">{}</span> <small>{}</small>",
                esc(&f.test),
                esc(&f.metric),
                esc(&f.display_value()),
                esc(&f.metric)
            )
        });
        let full = date(r.started_at_ms);
        // To the minute in the list, the second and zone on hover.
        let short = full.get(..16).unwrap_or(&full);
        let _ = write!(
            o,
            "<tr data-run=\"{id}\"><td><input type=\"checkbox\" name=\"id\" value=\"{id}\" aria-label=\"compare run {id}\"></td>\
             <td><a href=\"/runs/{id}\">{id}</a></td><td class=\"when\" title=\"{full}\">{short}</td><td>{}</td><td>{}</td><td class=\"num result\">{result}</td>\
             <td>{}</td>{}<td>{}</td>{}<td class=\"num\">{}</td>{}</tr>",
            esc(&r.kind),
            esc(r.profile.as_deref().unwrap_or("")),
            r.status.as_str(),
            optional(with_labels, &format!("<td class=\"labels\">{labels}</td>")),
            esc(place),
            optional(
                with_tool,
                &format!("<td>{} {}</td>", esc(&r.tool), esc(&r.tool_version))
            ),
            r.warning_count,
            optional(
                with_note,
                &format!("<td>{}</td>", esc(r.note.as_deref().unwrap_or("")))
            ),
            id = r.id,
        );
    }
    o.push_str("</table>");
}

/// Links to the newer and the older page, keeping the filters.
fn pager(o: &mut String, req: &Request, page_no: usize, older: bool) {
    let link = |n: usize| {
        let n = n.to_string();
        let pairs = req
            .query
            .iter()
            .filter(|(k, _)| k != "page" && k != "token")
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain((n != "1").then_some(("page", n.as_str())));
        format!("/?{}", query_string(pairs))
    };
    o.push_str("<p class=\"pages\">");
    if page_no > 1 {
        let _ = write!(
            o,
            "<a rel=\"prev\" href=\"{}\">newer runs</a>",
            esc(&link(page_no - 1))
        );
    }
    let _ = write!(o, "<span>page {page_no}</span>");
    if older {
        let _ = write!(
            o,
            "<a rel=\"next\" href=\"{}\">older runs</a>",
            esc(&link(page_no + 1))
        );
    }
    o.push_str("</p>");
}

#[cfg(test)]
mod tests {
    use iomark_model::net::{NetRun, NetSpec};
    use iomark_model::{RunBody, RunDocument};

    use super::*;

    /// A store of `n` net runs, the last labelled `<b>&`, read-only.
    fn store_of(n: usize) -> (tempfile::TempDir, Box<dyn Store>) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let db = db.to_str().unwrap();
        let mut w = iomark_store::open(Some(db)).unwrap();
        for i in 0..n {
            let body = RunBody::Net(NetRun::example(NetSpec::example()));
            let mut doc = RunDocument::new("iomark", "0", vec!["iomark".into()], body);
            if i + 1 == n {
                doc.labels = vec!["<b>&".into()];
            }
            w.insert_complete(&doc).unwrap();
        }
        (dir, iomark_store::open_read_only(Some(db)).unwrap())
    }

    fn ids(page: &str) -> Vec<u32> {
        page.split("<tr data-run=\"")
            .skip(1)
            .map(|r| r[..r.find('"').unwrap()].parse().unwrap())
            .collect()
    }

    #[test]
    fn pages_hold_a_hundred_runs_newest_first_with_links_both_ways() {
        let (_dir, mut store) = store_of(PAGE_SIZE + 5);
        let first = list(&Request::get("/?kind=net"), store.as_mut()).unwrap();
        let shown = ids(&first);
        assert_eq!(shown.len(), PAGE_SIZE);
        assert_eq!((shown[0], shown[PAGE_SIZE - 1]), (105, 6));
        assert!(
            first.contains("href=\"/?kind=net&amp;page=2\""),
            "no older link"
        );
        assert!(!first.contains("rel=\"prev\""));
        let second = list(&Request::get("/?kind=net&page=2"), store.as_mut()).unwrap();
        assert_eq!(ids(&second), [5, 4, 3, 2, 1]);
        assert!(second.contains("href=\"/?kind=net\""), "no newer link");
        assert!(!second.contains("rel=\"next\""));
        let none = list(&Request::get("/?kind=disk"), store.as_mut()).unwrap();
        assert!(ids(&none).is_empty());
        assert!(none.contains("No stored runs match."));
    }

    #[test]
    fn each_run_shows_its_headline_figure_under_its_metric() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let db = db.to_str().unwrap();
        let doc = iomark_stats::example::mixed_randrw_run();
        let mut w = iomark_store::open(Some(db)).unwrap();
        w.insert_complete(&doc).unwrap();
        w.insert_complete(&doc).unwrap();
        let mut store = iomark_store::open_read_only(Some(db)).unwrap();
        let page = list(&Request::get("/"), store.as_mut()).unwrap();
        let first = doc
            .body
            .figures()
            .into_iter()
            .find(|f| !f.metric.starts_with("cpu"))
            .unwrap();
        let cell = format!(
            ">{}</span> <small>{}</small></td>",
            esc(&first.display_value()),
            esc(&first.metric)
        );
        assert_eq!(page.matches(&cell).count(), 2, "{cell} twice in {page}");
        assert!(page.contains("<th>profile</th><th>result</th>"), "{page}");
        let RunBody::Disk(d) = &doc.body else {
            unreachable!()
        };
        let profile = format!("<td>{}</td><td class=\"num result\">", esc(&d.profile));
        assert_eq!(
            page.matches(&profile).count(),
            2,
            "{profile} twice in {page}"
        );
    }

    #[test]
    fn text_from_the_store_and_the_query_is_escaped() {
        let (_dir, mut store) = store_of(1);
        let page = list(&Request::get("/?device=%22%3E%3Cb%3E"), store.as_mut()).unwrap();
        assert!(page.contains("value=\"&quot;&gt;&lt;b&gt;\""), "{page}");
        let page = list(&Request::get("/"), store.as_mut()).unwrap();
        assert!(page.contains("<code>&lt;b&gt;&amp;</code>"), "{page}");
        assert!(!page.contains("<b>"));
    }

    #[test]
    fn columns_no_run_on_the_page_fills_are_left_out() {
        let (_dir, mut store) = store_of(2);
        // One run labelled; none imported, none with a note.
        let page = list(&Request::get("/"), store.as_mut()).unwrap();
        let header = &page[page.find("<table id=\"run-list\">").unwrap()..];
        let header = &header[..header.find("</tr>").unwrap()];
        assert!(header.contains("<th>labels</th>"), "{header}");
        assert!(!header.contains("<th>tool</th>"), "{header}");
        assert!(!header.contains("<th>note</th>"), "{header}");
        // Every row has as many cells as the header.
        let cells = |row: &str| row.matches("<td").count();
        let columns = header.matches("<th").count();
        for row in page.split("<tr data-run=").skip(1) {
            assert_eq!(cells(&row[..row.find("</tr>").unwrap()]), columns, "{row}");
        }
        // The start to the minute, its second and zone on hover.
        assert!(page.contains("<td class=\"when\" title=\""), "{page}");
        assert!(page.contains(" UTC\">20"), "{page}");
    }
}
