//! `/api/…`: the JSON documents of `results list --json`, `results show
//! --json` and `results compare --json` ([`crate::pages::compare::api`]),
//! made by the same functions (`iomark_text::json`), written the same way.

use iomark_store::{RunId, RunQuery, Store};

use crate::http::{Request, Response, JSON};
use crate::query::{self, FILTERS};
use crate::Failure;

/// A document as the command line prints it: pretty, with a newline.
pub(crate) fn json(doc: &impl serde::Serialize) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    iomark_text::json::write(&mut out, doc).map_err(|e| Failure::Internal(e.to_string()))?;
    Ok(out)
}

/// Runs in one answer of `/api/runs` when `limit` is not given: the list
/// page's size.
const RUNS_PAGE: usize = query::PAGE_SIZE;

/// The most runs one answer of `/api/runs` holds: about 400 KB of JSON,
/// drawn in milliseconds, whatever the store holds. A client that wants
/// every run follows the `Link: <...>; rel="next"` header.
const RUNS_MAX: usize = 1000;

/// `/api/runs`: `results list --json` with the list's filters, `limit`
/// (the newest N: [`RUNS_PAGE`] unless given, at most [`RUNS_MAX`]) and
/// `offset` (after skipping the newest N). The body is the command line's
/// document for that page; when older runs match, a `Link` header names
/// the next page (RFC 8288), so memory and time follow the page, never
/// the store.
pub(crate) fn runs(req: &Request, store: &mut dyn Store) -> Result<Response, Failure> {
    let mut allowed = FILTERS.to_vec();
    allowed.extend(["limit", "offset"]);
    query::only(req, &allowed)?;
    let limit = runs_limit(query::text(req, "limit")?)?;
    let offset = query::number(req, "offset", 0, query::MAX_NUMBER)?.unwrap_or(0);
    // One more than asked: whether there is a next page.
    let mut runs = store.list(&RunQuery {
        limit: Some(limit + 1),
        offset,
        ..query::filters(req)?
    })?;
    let more = runs.len() > limit;
    if more {
        // Oldest first: the one over is the oldest.
        runs.remove(0);
    }
    let res = Response::new(200, JSON, json(&iomark_text::json::run_list(&runs))?);
    Ok(if more {
        res.with_header("Link", next_link(req, limit, offset + limit))
    } else {
        res
    })
}

/// `limit` of `/api/runs`: 1 to [`RUNS_MAX`], [`RUNS_PAGE`] if not given.
fn runs_limit(given: Option<&str>) -> Result<usize, query::BadRequest> {
    let Some(v) = given else {
        return Ok(RUNS_PAGE);
    };
    v.parse::<usize>()
        .ok()
        .filter(|n| (1..=RUNS_MAX).contains(n))
        .ok_or_else(|| {
            query::BadRequest(format!(
                "'limit={v}' is out of range: use 1 to {RUNS_MAX} (default {RUNS_PAGE}); \
                 for more runs, follow the Link header's rel=\"next\" page by page"
            ))
        })
}

/// The `Link` header naming the page after this one: the same filters,
/// `limit` and the next `offset` (never the token: the header would
/// carry it into logs).
fn next_link(req: &Request, limit: usize, offset: usize) -> String {
    let (limit, offset) = (limit.to_string(), offset.to_string());
    let pairs = req
        .query
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "limit" | "offset" | "token"))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain([("limit", limit.as_str()), ("offset", offset.as_str())]);
    format!(
        "</api/runs?{}>; rel=\"next\"",
        crate::pages::layout::query_string(pairs)
    )
}

/// `/api/runs/{id}`: `results show --json`.
pub(crate) fn run(id: RunId, req: &Request, store: &mut dyn Store) -> Result<Response, Failure> {
    query::only(req, &[])?;
    let run = store.load(id)?;
    Ok(Response::new(
        200,
        JSON,
        json(&iomark_text::json::run_detail(&run))?,
    ))
}

#[cfg(test)]
mod tests {
    use iomark_model::net::{NetRun, NetSpec};
    use iomark_model::{RunBody, RunDocument};

    use super::*;

    /// A store of `n` net runs, read-only.
    fn store_of(n: u64) -> (tempfile::TempDir, Box<dyn Store>) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let db = db.to_str().unwrap();
        let mut w = iomark_store::open(Some(db)).unwrap();
        for _ in 0..n {
            let body = RunBody::Net(NetRun::example(NetSpec::example()));
            let doc = RunDocument::new("iomark", "0", vec!["iomark".into()], body);
            w.insert_complete(&doc).unwrap();
        }
        drop(w);
        (dir, iomark_store::open_read_only(Some(db)).unwrap())
    }

    fn ids(res: &Response) -> Vec<u64> {
        let doc: serde_json::Value = serde_json::from_slice(&res.body).unwrap();
        doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_u64().unwrap())
            .collect()
    }

    fn link(res: &Response) -> Option<&str> {
        res.headers
            .iter()
            .find(|(k, _)| *k == "Link")
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_client_following_next_gets_every_run_once_a_page_at_a_time() {
        let (_dir, mut store) = store_of(25);
        let mut url = "/api/runs?limit=10&kind=net&token=t".to_string();
        let mut seen = Vec::new();
        // Bounded: 25 runs at 10 a page is three pages.
        for _ in 0..4 {
            let res = runs(&Request::get(&url), store.as_mut()).unwrap();
            assert_eq!(res.status, 200);
            let page = ids(&res);
            assert!(page.len() <= 10, "{page:?}");
            seen.extend(page);
            match link(&res) {
                Some(l) => {
                    assert!(l.ends_with(">; rel=\"next\""), "{l}");
                    assert!(l.contains("kind=net") && !l.contains("token"), "{l}");
                    url = l[1..l.find('>').unwrap()].to_string();
                }
                None => break,
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, (1..=25).collect::<Vec<_>>());
    }

    #[test]
    fn without_a_limit_one_page_is_answered() {
        let (_dir, mut store) = store_of(RUNS_PAGE as u64 + 1);
        let res = runs(&Request::get("/api/runs"), store.as_mut()).unwrap();
        let page = ids(&res);
        assert_eq!(page.len(), RUNS_PAGE);
        // The newest, oldest first, as `results list --limit` prints them.
        assert_eq!(page.first(), Some(&2));
        assert_eq!(
            link(&res),
            Some("</api/runs?limit=100&offset=100>; rel=\"next\"")
        );
        let last = runs(&Request::get("/api/runs?offset=100"), store.as_mut()).unwrap();
        assert_eq!(ids(&last), [1]);
        assert_eq!(link(&last), None);
    }

    #[test]
    fn a_limit_out_of_range_is_400_naming_the_range() {
        let (_dir, mut store) = store_of(0);
        for bad in ["0", "1001", "-1", "x", "99999999999999999999999"] {
            let e = runs(
                &Request::get(&format!("/api/runs?limit={bad}")),
                store.as_mut(),
            )
            .unwrap_err();
            assert_eq!(e.status(), 400, "{bad}");
            assert!(e.to_string().contains("use 1 to 1000"), "{bad}: {e}");
        }
        assert!(runs(&Request::get("/api/runs?limit=1000"), store.as_mut()).is_ok());
    }
}
