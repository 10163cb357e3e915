//! iomark's own documents (`--json`, `results export --format json`).
//!
//! The JSON is walked before it is read as a [`RunDocument`]: serde takes
//! a rate of -1, a block size of 0 or a percentile of 150 without a word,
//! and a run stored with them draws nonsense in every later report. What
//! no run can have is refused with the field named as a JSON path
//! (`body.jobs[0].read.iops is negative (-1)`), and so is a document of a
//! layout this iomark does not know, before any of it is read.

use iomark_model::{RunDocument, MAX_LABEL_BYTES, MAX_NOTE_BYTES, SCHEMA_VERSION};
use serde_json::{Number, Value};

use super::{short, ImportError, MAX_FIGURE};

const TOOL: &str = "iomark";

/// Fields whose value may be negative: every other number of a document is
/// a size, a count, a rate, a time or a share, none of which can be.
const SIGNED: &[&str] = &[
    // A knee's rate at the deepest point over that at the knee, minus one:
    // a rate that fell is a negative gain.
    "rate_gain",
    // The stencil's sum of its final values, whose signs are the field's.
    "checksum",
];

/// Fields no run has a zero of: the bytes of each I/O, the I/Os in flight
/// per thread, the threads of a job.
const POSITIVE: &[&str] = &["bs", "iodepth", "numjobs"];

/// Read `v`, an iomark document, at `at` in the file (`[2]` in an exported
/// array, else empty), refusing what no run can have.
pub(super) fn convert(v: Value, at: &str) -> Result<RunDocument, ImportError> {
    // First: a document of another layout would be judged by this one's
    // rules and refused for the wrong reason.
    check_version(&v, at)?;
    check_user_text(&v, at)?;
    check_numbers(&v, at, None, false)?;
    serde_json::from_value(v).map_err(|e| {
        ImportError::Unsupported(format!(
            "an iomark document this version cannot read ({e}): import it with the iomark that wrote it, or a newer one"
        ))
    })
}

/// `key` of the object at `path` as a JSON path: `body.jobs`, or
/// `iodepth_level[">=64"]` for a key that is not a plain name.
fn join(path: &str, key: &str) -> String {
    let plain = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (plain, path.is_empty()) {
        (true, true) => key.to_string(),
        (true, false) => format!("{path}.{key}"),
        (false, _) => format!("{path}[{}]", Value::String(short(key))),
    }
}

fn check_version(v: &Value, at: &str) -> Result<(), ImportError> {
    let field = join(at, "schema_version");
    let found = &v["schema_version"];
    match found.as_u64() {
        Some(n) if n == u64::from(SCHEMA_VERSION) => Ok(()),
        Some(n) if n > u64::from(SCHEMA_VERSION) => Err(ImportError::SchemaVersion {
            field,
            found: n.to_string(),
            supported: SCHEMA_VERSION,
            why: "newer than this iomark reads: import the file with the iomark that wrote it, or upgrade",
        }),
        _ => Err(ImportError::SchemaVersion {
            field,
            found: short(&found.to_string()),
            supported: SCHEMA_VERSION,
            why: "not a version of iomark's result document: the file looks corrupted or edited",
        }),
    }
}

/// Labels and the note within their limits ([`MAX_LABEL_BYTES`],
/// [`MAX_NOTE_BYTES`]): they are drawn in every chart of a report.
fn check_user_text(v: &Value, at: &str) -> Result<(), ImportError> {
    let too_long = |field: String, len: usize, what: &'static str, limit: usize| {
        Err(ImportError::TooLong {
            field,
            len,
            what,
            limit,
        })
    };
    if let Some(labels) = v["labels"].as_array() {
        for (i, l) in labels.iter().enumerate() {
            let len = l.as_str().map_or(0, str::len);
            if len > MAX_LABEL_BYTES {
                let field = format!("{}[{i}]", join(at, "labels"));
                return too_long(field, len, "label", MAX_LABEL_BYTES);
            }
        }
    }
    let len = v["note"].as_str().map_or(0, str::len);
    if len > MAX_NOTE_BYTES {
        return too_long(join(at, "note"), len, "note", MAX_NOTE_BYTES);
    }
    Ok(())
}

/// Every number under `v` (at `path`, under object key `key`; an array's
/// elements are under their array's key) a figure a run can have.
/// `in_percentiles`: `v` is an element of a `percentiles` list.
fn check_numbers(
    v: &Value,
    path: &str,
    key: Option<&str>,
    in_percentiles: bool,
) -> Result<(), ImportError> {
    match v {
        Value::Number(n) => check_number(n, path, key.unwrap_or(""), in_percentiles),
        Value::Object(m) => m.iter().try_for_each(|(k, child)| {
            check_numbers(child, &join(path, k), Some(k), in_percentiles)
        }),
        Value::Array(a) => a.iter().enumerate().try_for_each(|(i, child)| {
            check_numbers(
                child,
                &format!("{path}[{i}]"),
                key,
                key == Some("percentiles"),
            )
        }),
        _ => Ok(()),
    }
}

fn check_number(
    n: &Number,
    path: &str,
    key: &str,
    in_percentiles: bool,
) -> Result<(), ImportError> {
    let invalid = |problem: String| {
        Err(ImportError::Invalid {
            tool: TOOL,
            field: path.to_string(),
            problem,
        })
    };
    let f = n.as_f64().unwrap_or(f64::NAN);
    if !f.is_finite() {
        return invalid(format!("is not a finite number ({n})"));
    }
    if in_percentiles && key == "percent" && !(0.0..=100.0).contains(&f) {
        return invalid(format!("is not a percentile from 0 to 100 ({n})"));
    }
    if f < 0.0 && !SIGNED.contains(&key) {
        return invalid(format!("is negative ({n})"));
    }
    if f.abs() > MAX_FIGURE {
        return invalid(format!("is out of range ({n} > {MAX_FIGURE:e})"));
    }
    if f == 0.0 && POSITIVE.contains(&key) {
        return invalid(format!("is 0: no run has a {key} of 0"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_json_paths() {
        assert_eq!(join("", "body"), "body");
        assert_eq!(join("body.jobs[0]", "read"), "body.jobs[0].read");
        assert_eq!(join("x", ">=64"), "x[\">=64\"]");
        assert_eq!(join("x", "1"), "x[\"1\"]");
        assert_eq!(join("[2]", "labels"), "[2].labels");
    }

    #[test]
    fn numbers_are_judged_by_their_field() {
        let check = |json: &str| {
            let v: Value = serde_json::from_str(json).unwrap();
            check_numbers(&v, "", None, false).map_err(|e| e.to_string())
        };
        assert!(check(r#"{"rate_gain": -0.5, "checksum": -3, "seed": 0}"#).is_ok());
        assert!(
            check(r#"{"percentiles": [{"percent": 0, "ns": 0}, {"percent": 100, "ns": 9}]}"#)
                .is_ok()
        );
        let err = check(r#"{"a": {"iops": -1}}"#).unwrap_err();
        assert!(err.starts_with("a.iops is negative (-1)"), "{err}");
        let err = check(r#"{"spec": {"bs": 0}}"#).unwrap_err();
        assert!(err.starts_with("spec.bs is 0"), "{err}");
        let err =
            check(r#"{"p": {"percentiles": [{"percent": 50}, {"percent": 150}]}}"#).unwrap_err();
        assert!(
            err.starts_with("p.percentiles[1].percent is not a percentile from 0 to 100 (150"),
            "{err}"
        );
        let err = check(r#"{"percentiles": [{"percent": -5}]}"#).unwrap_err();
        assert!(
            err.starts_with("percentiles[0].percent is not a percentile from 0 to 100 (-5)"),
            "{err}"
        );
        let err = check(r#"{"bins": [[10, 1], [20, -2]]}"#).unwrap_err();
        assert!(err.starts_with("bins[1][1] is negative (-2)"), "{err}");
        let err = check(r#"{"lvl": {">=64": -1}}"#).unwrap_err();
        assert!(err.starts_with("lvl[\">=64\"] is negative"), "{err}");
        // A `percent` outside a percentile list is a share, not a percentile.
        assert!(check(r#"{"cpu": {"percent": 350}}"#).is_ok());
    }
}
