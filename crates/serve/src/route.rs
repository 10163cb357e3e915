//! Every path the server answers, in one place: a request in, a response
//! out, over a store connection; no socket, so it is tested directly.

use iomark_store::{RunId, Store};

use crate::access::{Access, Admission};
use crate::http::{Request, Response, CSS, HTML, SECURITY_HEADERS};
use crate::pages::{compare, devices, layout, run, runs};
use crate::{api, Failure};

/// The server's own style sheet, compiled in.
const SERVE_CSS: &str = include_str!("../static/serve.css");

/// Answer `req`, if `access` admits it, with the security headers on
/// every response.
pub fn handle(req: &Request, access: &Access, store: &mut dyn Store) -> Response {
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
pub fn route(req: &Request, store: &mut dyn Store) -> Response {
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
        "/api/runs" => api::runs(req, store),
        "/api/compare" => compare::api(req, store),
        _ => match (path.strip_prefix("/runs/"), path.strip_prefix("/api/runs/")) {
            (Some(id), _) => run_id(id).and_then(|id| run::show(id, store).map(page)),
            (_, Some(id)) => run_id(id).and_then(|id| api::run(id, req, store)),
            _ => Err(Failure::NotFound(format!(
                "nothing is at {path}: the runs are at /, the devices at /devices"
            ))),
        },
    };
    answer.unwrap_or_else(|f| if api { f.json() } else { f.page() })
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
    fn only_reading_methods_are_answered() {
        let (_dir, mut store) = empty();
        let req = Request {
            method: "POST".into(),
            ..Request::get("/")
        };
        assert_eq!(route(&req, store.as_mut()).status, 405);
    }
}
