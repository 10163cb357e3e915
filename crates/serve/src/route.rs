//! Every path the server answers, in one place: a request in, a response
//! out, over a store connection; no socket, so it is tested directly.

use iomark_store::{RunId, Store};

use crate::access::{Access, Admission};
use crate::http::{Request, Response, CSS, HTML, JS, SECURITY_HEADERS};
use crate::pages::{compare, devices, layout, live, run, runs};
use crate::{api, query, Failure};

/// The server's own style sheet, compiled in.
const SERVE_CSS: &str = include_str!("../static/serve.css");

/// Answer `req`, if `access` admits it, with the security headers on
/// every response.
pub(crate) fn handle(req: &Request, access: &Access, store: &mut dyn Store) -> Response {
    let mut response = match access.check(req) {
        Admission::Admitted => route(req, store),
        Admission::Answer(r) => r,
    };
    response
        .headers
        .extend(SECURITY_HEADERS.iter().map(|(k, v)| (*k, v.to_string())));
    response
}

/// The response to `req`, by its path.
fn route(req: &Request, store: &mut dyn Store) -> Response {
    if req.method != "GET" && req.method != "HEAD" {
        return Response::new(
            405,
            HTML,
            layout::message_page("Method not allowed", "this server only reads: use GET"),
        )
        .with_header("Allow", "GET, HEAD".into());
    }
    let path = req.path.as_str();
    let api = path.starts_with("/api/");
    let answer = match path {
        "/" => runs::list(req, store).map(page),
        "/compare" => compare::show(req, store).map(page),
        "/devices" => devices::list(req, store).map(page),
        "/devices/history" => devices::history(req, store).map(page),
        "/static/report.css" => Ok(Response::new(200, CSS, iomark_report::CSS)),
        "/static/serve.css" => Ok(Response::new(200, CSS, SERVE_CSS)),
        "/live" => query::only(req, &[])
            .map_err(Failure::from)
            .and_then(|()| live::list(store).map(page)),
        "/metrics" => query::only(req, &[])
            .map_err(Failure::from)
            .and_then(|()| live::metrics(store)),
        "/static/live.js" => Ok(Response::new(200, JS, live::LIVE_JS)),
        "/api/runs" => api::runs(req, store),
        "/api/compare" => compare::api(req, store),
        _ => by_run(path, req, store),
    };
    answer.unwrap_or_else(|f| {
        let mut res = if api { f.json() } else { f.page() };
        if res.status >= 500 {
            res.cause = Some(f.to_string());
        }
        res
    })
}

/// The paths under a run: `/runs/{id}`, `/api/runs/{id}`,
/// `/api/runs/{id}/samples`, `/live/{id}`, `/live/{id}/{figure}.svg` and
/// `/api/live/{id}`.
fn by_run(path: &str, req: &Request, store: &mut dyn Store) -> Result<Response, Failure> {
    let split = |rest: &str| -> (String, Option<String>) {
        match rest.split_once('/') {
            Some((id, more)) => (id.to_string(), Some(more.to_string())),
            None => (rest.to_string(), None),
        }
    };
    let prefixes = ["/runs/", "/api/runs/", "/live/", "/api/live/"];
    let Some((prefix, rest)) = prefixes
        .iter()
        .find_map(|p| path.strip_prefix(p).map(|rest| (*p, rest)))
    else {
        return Err(Failure::NotFound(format!(
            "nothing is at {path}: the runs are at /, the devices at /devices, runs in progress at /live"
        )));
    };
    let (id, more) = split(rest);
    let id = run_id(&id)?;
    match (prefix, more.as_deref()) {
        ("/runs/", None) => {
            query::only(req, &[])?;
            run::show(id, store).map(page)
        }
        ("/api/runs/", None) => api::run(id, req, store),
        ("/api/runs/", Some("samples")) => {
            query::only(req, &["after"])?;
            let after = query::number(req, "after", 0, query::MAX_NUMBER)?.map(|n| n as u64);
            live::samples(id, after, store)
        }
        ("/live/", None) => {
            query::only(req, &[])?;
            live::show(id, store).map(page)
        }
        // `seq` only makes each second's chart a new address.
        ("/live/", Some(figure)) => {
            query::only(req, &["seq"])?;
            live::chart(id, figure, store)
        }
        ("/api/live/", None) => {
            query::only(req, &[])?;
            live::state(id, store)
        }
        _ => Err(Failure::NotFound(format!("nothing is at {path}"))),
    }
}

fn page(html: String) -> Response {
    Response::new(200, HTML, html)
}

/// A run id in a path; anything else is no page.
fn run_id(s: &str) -> Result<RunId, Failure> {
    s.parse().map_err(|_| {
        Failure::NotFound(format!(
            "there is no run '{s}': run ids are numbers, listed at /"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store with nothing in it, for routes that fail before reading.
    fn empty() -> (tempfile::TempDir, Box<dyn Store>) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        drop(iomark_store::open(Some(db.to_str().unwrap())).unwrap());
        let store = iomark_store::open_read_only(Some(db.to_str().unwrap())).unwrap();
        (dir, store)
    }

    fn get(store: &mut dyn Store, url: &str) -> Response {
        handle(&Request::get(url), &Access::open(), store)
    }

    #[test]
    fn every_response_carries_the_security_headers() {
        let (_dir, mut store) = empty();
        for url in ["/", "/nope", "/static/serve.css", "/api/runs", "/runs/x"] {
            let r = get(store.as_mut(), url);
            for (k, v) in SECURITY_HEADERS {
                assert!(r.headers.iter().any(|h| h.0 == k && h.1 == v), "{url}: {k}");
            }
        }
    }

    #[test]
    fn paths_go_to_their_pages_and_unknown_ones_are_404() {
        let (_dir, mut store) = empty();
        let s = store.as_mut();
        assert_eq!(get(s, "/").status, 200);
        assert!(get(s, "/").text().contains("No runs are stored yet."));
        assert_eq!(get(s, "/devices").status, 200);
        assert_eq!(get(s, "/static/report.css").content_type, CSS);
        assert_eq!(get(s, "/static/report.css").text(), iomark_report::CSS);
        let missing = get(s, "/runs/7");
        assert_eq!(missing.status, 404);
        assert!(missing.text().contains("7"), "{}", missing.text());
        assert_eq!(get(s, "/runs/seven").status, 404);
        assert_eq!(get(s, "/etc/passwd").status, 404);
        let api = get(s, "/api/runs/7");
        assert_eq!((api.status, api.content_type), (404, crate::http::JSON));
        let doc: serde_json::Value = serde_json::from_slice(&api.body).unwrap();
        assert!(doc["error"].as_str().unwrap().contains('7'));
        let list: serde_json::Value = serde_json::from_slice(&get(s, "/api/runs").body).unwrap();
        assert_eq!(list["runs"], serde_json::json!([]));
    }

    #[test]
    fn bad_queries_are_400_naming_the_fix() {
        let (_dir, mut store) = empty();
        let s = store.as_mut();
        let r = get(s, "/?kind=tape");
        assert_eq!(r.status, 400);
        assert!(r.text().contains("use disk, mem, net"), "{}", r.text());
        assert_eq!(get(s, "/compare?id=1").status, 400);
        assert_eq!(get(s, "/api/runs?limit=x").status, 400);
        assert_eq!(get(s, "/devices/history").status, 400);
        assert_eq!(get(s, "/devices/history?name=sdz").status, 404);
    }

    #[test]
    fn the_live_paths_answer_from_the_store_alone() {
        let (_dir, mut store) = empty();
        let s = store.as_mut();
        let live = get(s, "/live");
        assert_eq!(live.status, 200);
        assert!(
            live.text().contains("No run is in progress"),
            "{}",
            live.text()
        );
        let metrics = get(s, "/metrics");
        assert_eq!(metrics.content_type, iomark_text::openmetrics::CONTENT_TYPE);
        assert!(metrics.text().ends_with("# EOF\n"));
        let js = get(s, "/static/live.js");
        assert_eq!((js.status, js.content_type), (200, JS));
        for missing in [
            "/live/7",
            "/live/7/bandwidth.svg",
            "/api/live/7",
            "/api/runs/7/samples",
        ] {
            assert_eq!(get(s, missing).status, 404, "{missing}");
        }
        assert_eq!(get(s, "/live/x").status, 404);
        assert_eq!(get(s, "/api/runs/7/samples?after=x").status, 400);
        assert_eq!(get(s, "/api/runs/7/samples?since=1").status, 400);
        assert_eq!(get(s, "/live/7?seq=1").status, 400);
        assert_eq!(get(s, "/runs/7/more").status, 404);
    }

    #[test]
    fn only_reading_methods_are_answered() {
        let (_dir, mut store) = empty();
        let req = Request {
            method: "POST".into(),
            ..Request::get("/")
        };
        assert_eq!(route(&req, store.as_mut()).status, 405);
    }
}
