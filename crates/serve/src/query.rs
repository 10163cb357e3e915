//! Query strings read into what the store is asked: filters, pages, run
//! ids. A value that cannot be used is a [`BadRequest`] naming the fix.

use iomark_store::{RunId, RunQuery};

use crate::http::Request;

/// Runs on one page of the list.
pub(crate) const PAGE_SIZE: usize = 100;

/// A request the server cannot answer as asked (400), with the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BadRequest(pub(crate) String);

/// The list's filters, as `results list` takes them and more.
pub(crate) const FILTERS: [&str; 7] = [
    "device", "host", "label", "profile", "kind", "since", "until",
];

/// The run kinds a `kind` filter takes.
pub(crate) const KINDS: [&str; 3] = ["disk", "mem", "net"];

/// The most parameters a query string may have: the list's form and a
/// compare of a whole page of ticked runs fit well within it.
const MAX_PARAMS: usize = 200;

/// The longest value a parameter may have, in bytes: a label's limit, and
/// far below what SQLite takes as a `LIKE` pattern (50,000 bytes).
const MAX_VALUE_BYTES: usize = iomark_model::MAX_LABEL_BYTES;

/// The most `label=` filters: each is a condition of the query, and
/// thousands made SQLite refuse it ("Expression tree is too large").
const MAX_LABELS: usize = 32;

/// The most runs one compare names (`id=`): a page of the list, ticked.
const MAX_COMPARED: usize = PAGE_SIZE;

/// The most `metric=` parameters of a compare.
const MAX_METRICS: usize = 16;

/// The largest number a parameter takes: the stores count in signed
/// 64-bit integers, and a larger `LIMIT` or `OFFSET` was a 500 ("datatype
/// mismatch").
pub(crate) const MAX_NUMBER: usize = i64::MAX as usize;

/// How many times parameter `name` may be given.
fn most(name: &str) -> usize {
    match name {
        "label" => MAX_LABELS,
        "id" => MAX_COMPARED,
        "metric" => MAX_METRICS,
        _ => 1,
    }
}

/// Parameters beyond `allowed` (and `token`, which [`crate::access`]
/// reads) are refused, so a misspelt filter is not silently ignored; so
/// are more parameters than [`MAX_PARAMS`], a parameter given more often
/// than it may be, a value over [`MAX_VALUE_BYTES`] and a NUL character
/// (which no stored text holds and PostgreSQL refuses in a query). Every
/// route calls this first, so nothing it reads later can reach the store
/// in a form the store fails on.
pub(crate) fn only(req: &Request, allowed: &[&str]) -> Result<(), BadRequest> {
    if req.query.len() > MAX_PARAMS {
        return Err(BadRequest(format!(
            "{} parameters is too many: give at most {MAX_PARAMS}",
            req.query.len()
        )));
    }
    if let Some((k, _)) = req
        .query
        .iter()
        .find(|(k, _)| k != "token" && !allowed.contains(&k.as_str()))
    {
        return Err(BadRequest(if allowed.is_empty() {
            format!("unknown parameter '{k}': this page takes none")
        } else {
            format!("unknown parameter '{k}': use {}", allowed.join(", "))
        }));
    }
    for name in allowed {
        let given = req.all(name).len();
        let most = most(name);
        if given > most {
            return Err(BadRequest(if most == 1 {
                format!("'{name}' is given {given} times: give it once")
            } else {
                format!("'{name}' is given {given} times: give it at most {most} times")
            }));
        }
    }
    for (k, v) in &req.query {
        if v.len() > MAX_VALUE_BYTES {
            return Err(BadRequest(format!(
                "'{k}' is {} bytes long: give at most {MAX_VALUE_BYTES}",
                v.len()
            )));
        }
        if v.contains('\0') {
            return Err(BadRequest(format!(
                "'{k}' holds a NUL character (%00), which no stored text has: remove it"
            )));
        }
    }
    Ok(())
}

/// The one value of `name`, if given and not empty; twice is refused.
fn one<'a>(req: &'a Request, name: &str) -> Result<Option<&'a str>, BadRequest> {
    match req.all(name).as_slice() {
        [] => Ok(None),
        [v] => Ok(Some(v.trim()).filter(|v| !v.is_empty())),
        many => Err(BadRequest(format!(
            "'{name}' is given {} times: give it once",
            many.len()
        ))),
    }
}

/// A whole number parameter from `min` to `max`.
pub(crate) fn number(
    req: &Request,
    name: &str,
    min: usize,
    max: usize,
) -> Result<Option<usize>, BadRequest> {
    one(req, name)?
        .map(|v| {
            v.parse::<usize>()
                .ok()
                .filter(|n| (min..=max).contains(n))
                .ok_or_else(|| {
                    BadRequest(format!(
                        "'{name}={v}' is not a whole number from {min} to {max}"
                    ))
                })
        })
        .transpose()
}

/// A date or span (`2026-11-01`, `"2026-11-01 14:00"`, `7d`) in ms.
fn when(req: &Request, name: &str) -> Result<Option<u64>, BadRequest> {
    one(req, name)?
        .map(|v| iomark_store::since_ms(v).map_err(|e| BadRequest(format!("'{name}={v}': {e}"))))
        .transpose()
}

/// The filters of the list and of `/api/runs`.
pub(crate) fn filters(req: &Request) -> Result<RunQuery, BadRequest> {
    let kind = one(req, "kind")?.map(str::to_string);
    if let Some(k) = &kind {
        if !KINDS.contains(&k.as_str()) {
            return Err(BadRequest(format!(
                "'kind={k}' is not a kind of run: use {}",
                KINDS.join(", ")
            )));
        }
    }
    let labels = req
        .all("label")
        .into_iter()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    Ok(RunQuery {
        labels,
        device: one(req, "device")?.map(str::to_string),
        host: one(req, "host")?.map(str::to_string),
        profile: one(req, "profile")?.map(str::to_string),
        kind,
        since_ms: when(req, "since")?,
        until_ms: when(req, "until")?,
        ..RunQuery::default()
    })
}

/// The runs named by `id=` (at least `min` of them), in order, each once.
pub(crate) fn ids(req: &Request, min: usize, example: &str) -> Result<Vec<RunId>, BadRequest> {
    let mut ids = Vec::new();
    for v in req.all("id") {
        let id: RunId = v
            .parse()
            .map_err(|e: String| BadRequest(format!("'id={v}': {e}")))?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.len() < min {
        return Err(BadRequest(format!(
            "name {min} runs or more with id=: {example}"
        )));
    }
    Ok(ids)
}

/// An optional run id parameter (`baseline`).
pub(crate) fn run_id(req: &Request, name: &str) -> Result<Option<RunId>, BadRequest> {
    one(req, name)?
        .map(|v| {
            v.parse()
                .map_err(|e: String| BadRequest(format!("'{name}={v}': {e}")))
        })
        .transpose()
}

/// An optional text parameter.
pub(crate) fn text<'a>(req: &'a Request, name: &str) -> Result<Option<&'a str>, BadRequest> {
    one(req, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_read_every_field() {
        let req = Request::get(
            "/?device=sda&host=box&label=a&label=b&profile=cdm&kind=disk&since=2026-11-01",
        );
        let q = filters(&req).unwrap();
        assert_eq!(q.device.as_deref(), Some("sda"));
        assert_eq!(q.host.as_deref(), Some("box"));
        assert_eq!(q.labels, ["a", "b"]);
        assert_eq!(q.profile.as_deref(), Some("cdm"));
        assert_eq!(q.kind.as_deref(), Some("disk"));
        assert_eq!(q.since_ms, Some(1_793_491_200_000));
        // An empty field of the form is no filter.
        assert_eq!(
            filters(&Request::get("/?device=&kind=")).unwrap(),
            RunQuery::default()
        );
    }

    #[test]
    fn bad_values_name_the_fix() {
        let e = filters(&Request::get("/?kind=tape")).unwrap_err();
        assert_eq!(e.0, "'kind=tape' is not a kind of run: use disk, mem, net");
        let e = filters(&Request::get("/?since=yesterday")).unwrap_err();
        assert!(e.0.starts_with("'since=yesterday': "), "{e}");
        let e = number(&Request::get("/?page=0"), "page", 1, 9).unwrap_err();
        assert_eq!(e.0, "'page=0' is not a whole number from 1 to 9");
        let e = number(&Request::get("/?page=10"), "page", 1, 9).unwrap_err();
        assert_eq!(e.0, "'page=10' is not a whole number from 1 to 9");
        let e = number(&Request::get("/?page=-1"), "page", 1, 9).unwrap_err();
        assert_eq!(e.0, "'page=-1' is not a whole number from 1 to 9");
        let e = only(&Request::get("/?devcie=sda"), &FILTERS).unwrap_err();
        assert!(
            e.0.starts_with("unknown parameter 'devcie': use device, "),
            "{e}"
        );
        assert!(only(&Request::get("/?device=sda&token=x"), &FILTERS).is_ok());
        let e = filters(&Request::get("/?kind=disk&kind=mem")).unwrap_err();
        assert_eq!(e.0, "'kind' is given 2 times: give it once");
    }

    #[test]
    fn too_many_too_long_and_nul_are_refused_by_only() {
        let labels = "label=a&".repeat(MAX_LABELS + 1);
        let e = only(&Request::get(&format!("/?{labels}")), &FILTERS).unwrap_err();
        assert_eq!(
            e.0,
            format!(
                "'label' is given {} times: give it at most {MAX_LABELS} times",
                MAX_LABELS + 1
            )
        );
        let ok = "label=a&".repeat(MAX_LABELS);
        assert!(only(&Request::get(&format!("/?{ok}")), &FILTERS).is_ok());
        let e = only(&Request::get("/?device=a&device=b"), &FILTERS).unwrap_err();
        assert_eq!(e.0, "'device' is given 2 times: give it once");
        let many = "x=1&".repeat(MAX_PARAMS + 1);
        let e = only(&Request::get(&format!("/?{many}")), &FILTERS).unwrap_err();
        assert!(e.0.ends_with(&format!("give at most {MAX_PARAMS}")), "{e}");
        let long = "d".repeat(MAX_VALUE_BYTES + 1);
        let e = only(&Request::get(&format!("/?device={long}")), &FILTERS).unwrap_err();
        assert_eq!(
            e.0,
            format!(
                "'device' is {} bytes long: give at most {MAX_VALUE_BYTES}",
                MAX_VALUE_BYTES + 1
            )
        );
        let e = only(&Request::get("/?host=a%00b"), &FILTERS).unwrap_err();
        assert!(e.0.starts_with("'host' holds a NUL character"), "{e}");
        let e = only(&Request::get("/runs/1?x=1"), &[]).unwrap_err();
        assert_eq!(e.0, "unknown parameter 'x': this page takes none");
    }

    #[test]
    fn ids_are_run_ids_each_once() {
        let req = Request::get("/compare?id=3&id=%237&id=3");
        assert_eq!(ids(&req, 2, "").unwrap(), [RunId(3), RunId(7)]);
        let e = ids(&Request::get("/compare?id=3"), 2, "/compare?id=1&id=2").unwrap_err();
        assert_eq!(e.0, "name 2 runs or more with id=: /compare?id=1&id=2");
        let e = ids(&Request::get("/compare?id=x&id=2"), 2, "").unwrap_err();
        assert!(e.0.contains("results list"), "{e}");
    }
}
