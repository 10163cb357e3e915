//! `/api/…`: the JSON documents of `results list --json`, `results show
//! --json` and `results compare --json` ([`crate::pages::compare::api`]),
//! made by the same functions (`iomark_text::json`), written the same way.

use iomark_store::{RunId, RunQuery, Store};

use crate::http::{Request, Response, JSON};
use crate::query::{self, FILTERS};
use crate::Failure;

/// A document as the command line prints it: pretty, with a newline.
pub fn json(doc: &impl serde::Serialize) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    iomark_text::json::write(&mut out, doc).map_err(|e| Failure::Internal(e.to_string()))?;
    Ok(out)
}

/// `/api/runs`: `results list --json` with the list's filters, `limit`
/// (the newest N) and `offset` (after skipping the newest N).
pub fn runs(req: &Request, store: &mut dyn Store) -> Result<Response, Failure> {
    let mut allowed = FILTERS.to_vec();
    allowed.extend(["limit", "offset"]);
    query::only(req, &allowed)?;
    let q = RunQuery {
        limit: query::number(req, "limit", 1, query::MAX_NUMBER)?,
        offset: query::number(req, "offset", 0, query::MAX_NUMBER)?.unwrap_or(0),
        ..query::filters(req)?
    };
    let runs = store.list(&q)?;
    Ok(Response::new(
        200,
        JSON,
        json(&iomark_text::json::run_list(&runs))?,
    ))
}

/// `/api/runs/{id}`: `results show --json`.
pub fn run(id: RunId, req: &Request, store: &mut dyn Store) -> Result<Response, Failure> {
    query::only(req, &[])?;
    let run = store.load(id)?;
    Ok(Response::new(
        200,
        JSON,
        json(&iomark_text::json::run_detail(&run))?,
    ))
}
