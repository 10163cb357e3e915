//! Other tools' JSON output as iomark run documents, so a fio or iperf3
//! run stored yesterday compares with iomark's own today.
//!
//! The format is recognised from the content, not the file name. Anything
//! that is not a complete fio or iperf3 JSON document is refused with a
//! reason, before anything is stored; so is any number no run can have
//! (negative, not finite, too large for its field, a block size of 0, a
//! percentile outside 0 to 100), with the field named, an iomark document
//! of a schema version this iomark does not read, and a label or note over
//! its limit.
//! Every converted document, iomark's own included, is written and read
//! back as the store would before it is handed out.

use std::path::Path;

use iomark_model::net::NetDirection;
use iomark_model::{RunBody, RunDocument};
use serde_json::Value;

use crate::{RunId, RunSummary, StoredRun};

mod fio;
mod iomark;
mod iperf3;
mod iperf3_text;

/// Why a file could not be imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The file could not be read.
    #[error("cannot read {path}: {cause}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        cause: std::io::Error,
    },
    /// No JSON object in it at all.
    #[error(
        "no JSON object found: import the output of `fio --output-format=json` or `iperf3 -J`"
    )]
    NoJson,
    /// JSON that does not parse (cut short, or not JSON).
    #[error("not valid JSON ({reason}): the file looks truncated or garbled; rerun the tool with `--output-format=json` (fio) or `-J` (iperf3)")]
    BadJson {
        /// What the parser said.
        reason: String,
    },
    /// JSON, but from neither fio nor iperf3.
    #[error("JSON that is neither fio's nor iperf3's output nor an iomark document (it has no \"fio version\", no \"start\"/\"end\", no \"schema_version\"/\"body\"): import `fio --output-format=json`, `iperf3 -J` or `iomark ... --json` output")]
    UnknownFormat,
    /// A recognised format missing a field it always has.
    #[error("{tool} output is missing {field}: the file looks truncated or edited; rerun {tool} to produce it again")]
    Missing {
        /// fio or iperf3.
        tool: &'static str,
        /// The JSON path of the field.
        field: String,
    },
    /// Something this importer cannot represent.
    #[error("{0}")]
    Unsupported(String),
    /// A number no run can have: negative, not a number, not finite, or
    /// too large to store.
    #[error("{field} {problem}: the {tool} output looks corrupted or edited; rerun {tool} to produce it again")]
    Invalid {
        /// fio, iperf3 or iomark.
        tool: &'static str,
        /// The JSON path of the field.
        field: String,
        /// What is wrong with it, with the value.
        problem: String,
    },
    /// An iomark document of a layout this iomark does not read.
    #[error("{field} is {found}, {why} (this iomark reads schema version {supported})")]
    SchemaVersion {
        /// The JSON path of the field.
        field: String,
        /// The version the file says, as written.
        found: String,
        /// The one version this iomark reads.
        supported: u32,
        /// Why it is refused and what to do.
        why: &'static str,
    },
    /// A label or note longer than a run may have.
    #[error("{field} is {len} bytes long; a {what} may be at most {} KiB ({limit} bytes): shorten it in the file", limit / 1024)]
    TooLong {
        /// The JSON path of the field.
        field: String,
        /// Its length in bytes.
        len: usize,
        /// `label` or `note`.
        what: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
    /// The converted document would not read back from the store as it
    /// was written; nothing was stored.
    #[error("the {tool} run converted from this file would not read back from the results store ({reason}): nothing was stored; this is a bug in iomark's importer, please report it with the file")]
    ReadBack {
        /// The tool that wrote the file.
        tool: String,
        /// What differed.
        reason: String,
    },
}

/// Read `path` and convert it: one run, or several when the file is an
/// array of iomark documents (`iomark results export --format json`).
pub fn import_file(path: &Path) -> Result<Vec<RunDocument>, ImportError> {
    let bytes = std::fs::read(path).map_err(|cause| ImportError::Read {
        path: path.display().to_string(),
        cause,
    })?;
    // Checked whole first: much faster than the lossy conversion, which is
    // only needed for a file that is not UTF-8.
    match String::from_utf8(bytes) {
        Ok(text) => import_many(&text),
        Err(e) => import_many(&String::from_utf8_lossy(e.as_bytes())),
    }
}

/// [`import_str`], or a JSON array of iomark documents.
pub fn import_many(text: &str) -> Result<Vec<RunDocument>, ImportError> {
    if !text.trim_start().starts_with('[') {
        return import_str(text).map(|d| vec![d]);
    }
    let values: Vec<Value> =
        serde_json::from_str(text.trim_end()).map_err(|e| ImportError::BadJson {
            reason: e.to_string(),
        })?;
    if values.is_empty() {
        return Err(ImportError::NoJson);
    }
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            if is_iomark(&v) {
                iomark::convert(v, &format!("[{i}]")).and_then(read_back)
            } else {
                Err(ImportError::UnknownFormat)
            }
        })
        .collect()
}

/// Convert fio JSON (`json` or `json+`), iperf3 `-J` output or an iperf3
/// 3.x client's text output (`iperf3_text`), or one of
/// iomark's own documents (`--json`). A converted document's
/// `command_line` is left empty for the caller to fill.
pub fn import_str(text: &str) -> Result<RunDocument, ImportError> {
    if iperf3_text::looks_like(text) {
        return iperf3_text::convert(text).and_then(read_back);
    }
    let start = json_start(text)?;
    // fio's files, the ones that get large, are read in part (see
    // `fio::slim`); the input is freed before the document is checked.
    let doc = match fio::slim(text[start..].trim_end()) {
        Some(slim) => fio::convert(&slim),
        None => convert_value(parse_json(text)?),
    }?;
    read_back(doc)
}

/// Convert a whole parsed document, whichever tool wrote it.
fn convert_value(value: Value) -> Result<RunDocument, ImportError> {
    if value.get("fio version").is_some() {
        fio::convert(&value)
    } else if is_iomark(&value) {
        iomark::convert(value, "")
    } else if value.get("start").is_some() && value.get("end").is_some() {
        iperf3::convert(&value)
    } else {
        Err(ImportError::UnknownFormat)
    }
}

fn is_iomark(v: &Value) -> bool {
    v.get("schema_version").is_some() && v.get("body").is_some()
}

/// The one JSON object in `text`, skipping the lines some tools print
/// before it (fio's `note: ...` and engine messages).
fn parse_json(text: &str) -> Result<Value, ImportError> {
    let start = json_start(text)?;
    let value: Value =
        serde_json::from_str(text[start..].trim_end()).map_err(|e| ImportError::BadJson {
            reason: e.to_string(),
        })?;
    if !value.is_object() {
        return Err(ImportError::NoJson);
    }
    Ok(value)
}

/// Refuse `doc` unless it survives the trip through the store unchanged:
/// written as JSON, read back as `results show` and `report` read a stored
/// run ([`StoredRun::document`]), equal to what was converted, and with
/// every figure finite. A figure that is not (a NaN, which JSON writes as
/// `null`) stores without complaint and only fails later, when the run is
/// shown or reported.
fn read_back(doc: RunDocument) -> Result<RunDocument, ImportError> {
    let failed = |reason: String| ImportError::ReadBack {
        tool: doc.tool.clone(),
        reason,
    };
    // The store keeps times as signed 64-bit milliseconds and clamps larger
    // ones, so the summary row would disagree with the document.
    for (field, ms) in [
        ("started_at_ms", doc.started_at_ms),
        ("finished_at_ms", doc.finished_at_ms),
    ] {
        if ms > MAX_MS {
            return Err(ImportError::Invalid {
                tool: "iomark",
                field: field.into(),
                problem: format!("is too large ({ms} > {MAX_MS} ms since 1970)"),
            });
        }
    }
    // Figures sum these as u64; a sum that wraps would be a wrong figure.
    if let RunBody::Net(run) = &doc.body {
        net_sums_fit(run, "iomark", |i, name| format!("body.streams[{i}].{name}"))?;
    }
    // The store writes `to_value(doc).to_string()`; writing the document
    // straight to text gives the same JSON (keys in another order) at a
    // sixth of the cost, which matters for a 20,000-job fio file.
    let json = serde_json::to_string(&doc).map_err(|e| failed(e.to_string()))?;
    let stored = StoredRun {
        summary: RunSummary {
            id: RunId(0),
            kind: String::new(),
            tool: doc.tool.clone(),
            tool_version: doc.tool_version.clone(),
            command_line: doc.command_line.clone(),
            started_at_ms: doc.started_at_ms,
            finished_at_ms: doc.finished_at_ms,
            status: doc.status,
            labels: doc.labels.clone(),
            note: doc.note.clone(),
            target: None,
            device: None,
            warning_count: 0,
        },
        figures: doc.body.figures(),
        warnings: Vec::new(),
        document_json: json,
    };
    let back = stored.document().map_err(|e| failed(e.to_string()))?;
    if back != doc {
        return Err(failed(
            "it reads back different from what was converted".into(),
        ));
    }
    for f in &stored.figures {
        let (lo, hi) = f.spread.unwrap_or((0.0, 0.0));
        if !(f.value.is_finite() && lo.is_finite() && hi.is_finite()) {
            return Err(failed(format!(
                "figure '{} / {}' is {} (spread {:?})",
                f.test, f.metric, f.value, f.spread
            )));
        }
    }
    Ok(doc)
}

/// Check that the per-direction sums the figures take of a network run's
/// streams fit a u64. `at` names field `name` of stream `i` in the input.
fn net_sums_fit(
    run: &iomark_model::net::NetRun,
    tool: &'static str,
    at: impl Fn(usize, &str) -> String,
) -> Result<(), ImportError> {
    for dir in [NetDirection::Upload, NetDirection::Download] {
        let mut sums = [0u64; 4];
        for (i, s) in run.streams.iter().enumerate() {
            if s.direction != dir {
                continue;
            }
            let parts = [
                ("received", Some(s.received.get())),
                ("retransmits", s.retransmits),
                ("packets", s.packets),
                ("lost_packets", s.lost_packets),
            ];
            for (sum, (name, v)) in sums.iter_mut().zip(parts) {
                *sum = sum
                    .checked_add(v.unwrap_or(0))
                    .ok_or_else(|| ImportError::Invalid {
                        tool,
                        field: at(i, name),
                        problem: format!(
                            "makes the streams' total {name} larger than {} (it is {})",
                            u64::MAX,
                            v.unwrap_or(0)
                        ),
                    })?;
            }
        }
    }
    Ok(())
}

/// The latest time the store keeps: milliseconds in a signed 64-bit column.
const MAX_MS: u64 = i64::MAX as u64;

/// The largest rate, time or percentage accepted: what a u64 count holds.
/// No device comes near it, and sums and products of a few such figures
/// stay finite, so nothing derived from them in a report overflows.
const MAX_FIGURE: f64 = u64::MAX as f64;

/// 2^64 and 2^63 exactly: the first values that do not fit u64 / i64.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;
const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// Reads the numbers below one place of one tool's JSON, refusing those no
/// run can have with an error naming the field (`jobs[3].read.bw_bytes`).
#[derive(Clone, Copy)]
struct At<'a> {
    tool: &'static str,
    /// The JSON path of the object read, without a trailing dot; may be empty.
    path: &'a str,
}

impl<'a> At<'a> {
    fn new(tool: &'static str, path: &'a str) -> Self {
        At { tool, path }
    }

    fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn invalid(&self, key: &str, problem: String) -> ImportError {
        ImportError::Invalid {
            tool: self.tool,
            field: self.field(key),
            problem,
        }
    }

    fn missing(&self, key: &str, what: &str) -> ImportError {
        ImportError::Missing {
            tool: self.tool,
            field: format!("{}{what}", self.field(key)),
        }
    }

    /// `parent[key]` as a count; `None` when absent or null.
    fn u64(&self, parent: &Value, key: &str) -> Result<Option<u64>, ImportError> {
        let v = &parent[key];
        let Value::Number(n) = v else {
            return self.not_a_number(v, key).map(|()| None);
        };
        if let Some(u) = n.as_u64() {
            return Ok(Some(u));
        }
        let f = n.as_f64().unwrap_or(f64::NAN);
        if f < 0.0 {
            Err(self.invalid(key, format!("is negative ({n})")))
        } else if f.fract() != 0.0 {
            Err(self.invalid(key, format!("is not a whole number ({n})")))
        } else if f >= TWO_64 {
            Err(self.invalid(key, format!("is too large ({n} > {})", u64::MAX)))
        } else {
            // Whole, non-negative and below 2^64: exact.
            Ok(Some(f as u64))
        }
    }

    /// `parent[key]` as a count that must be there.
    fn need_u64(&self, parent: &Value, key: &str) -> Result<u64, ImportError> {
        self.u64(parent, key)?
            .ok_or_else(|| self.missing(key, " (a whole number)"))
    }

    /// `parent[key]` as a count that fits `T` (an id, a port, a depth).
    fn small<T: TryFrom<u64> + Into<u64> + Bounded>(
        &self,
        parent: &Value,
        key: &str,
    ) -> Result<Option<T>, ImportError> {
        self.u64(parent, key)?.map(|u| self.fit(key, u)).transpose()
    }

    /// `u` as a `T`, or refused as too large rather than cut down to its
    /// low bits.
    fn fit<T: TryFrom<u64> + Into<u64> + Bounded>(
        &self,
        key: &str,
        u: u64,
    ) -> Result<T, ImportError> {
        T::try_from(u)
            .map_err(|_| self.invalid(key, format!("is too large ({u} > {})", T::MAX.into())))
    }

    /// `parent[key]` as a non-negative finite figure; `None` when absent or
    /// null.
    fn f64(&self, parent: &Value, key: &str) -> Result<Option<f64>, ImportError> {
        let v = &parent[key];
        let Value::Number(n) = v else {
            return self.not_a_number(v, key).map(|()| None);
        };
        let f = n.as_f64().unwrap_or(f64::NAN);
        self.figure(key, f, &n.to_string()).map(Some)
    }

    /// `parent[key]` as a figure that must be there.
    fn need_f64(&self, parent: &Value, key: &str) -> Result<f64, ImportError> {
        self.f64(parent, key)?
            .ok_or_else(|| self.missing(key, " (a number)"))
    }

    /// `f` (written `text` in the input) if it is a figure a run can have.
    fn figure(&self, key: &str, f: f64, text: &str) -> Result<f64, ImportError> {
        if f.is_nan() || f.is_infinite() {
            Err(self.invalid(key, format!("is not a finite number ({text})")))
        } else if f < 0.0 {
            Err(self.invalid(key, format!("is negative ({text})")))
        } else if f > MAX_FIGURE {
            Err(self.invalid(key, format!("is out of range ({text} > {MAX_FIGURE:e})")))
        } else {
            Ok(f)
        }
    }

    /// Ok for absent or null; a refusal for anything else not a number,
    /// such as `"NaN"` written as a string.
    fn not_a_number(&self, v: &Value, key: &str) -> Result<(), ImportError> {
        match v {
            Value::Null => Ok(()),
            Value::String(s) if s.trim().parse::<f64>().is_ok_and(|f| !f.is_finite()) => {
                Err(self.invalid(key, format!("is not a finite number (\"{}\")", short(s))))
            }
            other => Err(self.invalid(
                key,
                format!("is not a number ({})", short(&other.to_string())),
            )),
        }
    }

    /// Seconds as whole milliseconds since 1970, as the store keeps times.
    fn ms_of_secs(&self, key: &str, secs: f64) -> Result<u64, ImportError> {
        let ms = (secs * 1e3).round();
        if ms >= TWO_63 {
            return Err(self.invalid(
                key,
                format!("is too large for a time ({secs} s > {MAX_MS} ms since 1970)"),
            ));
        }
        Ok(ms as u64)
    }

    /// A whole number of `unit`s (1000 for seconds as ms) in milliseconds,
    /// within what the store keeps.
    fn ms_of(&self, key: &str, n: u64, unit: u64) -> Result<u64, ImportError> {
        n.checked_mul(unit)
            .filter(|ms| *ms <= MAX_MS)
            .ok_or_else(|| {
                self.invalid(
                    key,
                    format!("is too large for a time ({n} x {unit} > {MAX_MS} ms)"),
                )
            })
    }

    /// Seconds as nanoseconds, the unit every stored duration is in.
    fn nanos_of_secs(&self, key: &str, secs: f64) -> Result<iomark_model::Nanos, ImportError> {
        let ns = (secs * 1e9).round();
        if ns >= TWO_64 {
            return Err(self.invalid(
                key,
                format!("is too long a time ({secs} s > {} ns)", u64::MAX),
            ));
        }
        Ok(iomark_model::Nanos(ns as u64))
    }
}

/// The unsigned types a count is narrowed to.
trait Bounded {
    const MAX: Self;
}

impl Bounded for u16 {
    const MAX: u16 = u16::MAX;
}

impl Bounded for u32 {
    const MAX: u32 = u32::MAX;
}

/// At most 40 characters of `s`, for a message that stays on one line.
fn short(s: &str) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() > 40 {
        format!("{}...", one_line.chars().take(40).collect::<String>())
    } else {
        one_line
    }
}

/// Where the JSON object starts: the first `{` at the start of a line.
fn json_start(text: &str) -> Result<usize, ImportError> {
    text.match_indices('{')
        .map(|(i, _)| i)
        .find(|&i| i == 0 || text[..i].ends_with('\n') || text[..i].trim().is_empty())
        .ok_or(ImportError::NoJson)
}

/// A field that must be there.
fn need<'a>(v: &'a Value, tool: &'static str, path: &[&str]) -> Result<&'a Value, ImportError> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k).ok_or_else(|| ImportError::Missing {
            tool,
            field: path.join("."),
        })?;
    }
    Ok(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_noise_is_skipped() {
        let v =
            parse_json("note: both iodepth >= 1 and synchronous I/O engine\n{\"a\": 1}\n").unwrap();
        assert_eq!(v["a"], 1);
    }

    #[test]
    fn arrays_hold_iomark_documents_only() {
        assert!(matches!(import_many("[]"), Err(ImportError::NoJson)));
        assert!(matches!(
            import_many("[{\"fio version\": \"x\"}]"),
            Err(ImportError::UnknownFormat)
        ));
        assert!(matches!(
            import_many("[1,"),
            Err(ImportError::BadJson { .. })
        ));
        let bad = import_many("[{\"schema_version\": 1, \"body\": {}}]").unwrap_err();
        assert!(bad.to_string().contains("cannot read"), "{bad}");
    }

    #[test]
    fn a_document_that_would_not_read_back_is_refused() {
        let text = r#"{"fio version": "fio-3.33", "timestamp": 1, "jobs": [{"jobname": "j",
            "read": {"io_bytes": 4096, "total_ios": 1, "runtime": 1, "bw_bytes": 4096000, "iops": 1000}}]}"#;
        let doc = import_str(text).unwrap();
        assert_eq!(read_back(doc.clone()).unwrap(), doc);
        for bad in [f64::NAN, f64::INFINITY] {
            let mut doc = doc.clone();
            let RunBody::Disk(run) = &mut doc.body else {
                panic!("not a disk run")
            };
            run.jobs[0].read.as_mut().unwrap().bw.0 = bad;
            let err = read_back(doc).unwrap_err();
            assert!(matches!(err, ImportError::ReadBack { .. }), "{err}");
            assert!(err.to_string().starts_with("the fio run"), "{err}");
        }
    }

    #[test]
    fn numbers_are_read_strictly() {
        let at = At::new("fio", "jobs[0]");
        let v: Value = serde_json::from_str(
            r#"{"a": 18446744073709551615, "b": -1, "c": 2.0, "d": 2.5, "e": 1e300,
                "f": "NaN", "g": null, "h": [], "i": -0.0, "j": 1.8446744073709552e19}"#,
        )
        .unwrap();
        assert_eq!(at.u64(&v, "a").unwrap(), Some(u64::MAX));
        assert_eq!(at.u64(&v, "c").unwrap(), Some(2));
        assert_eq!(at.u64(&v, "g").unwrap(), None);
        assert_eq!(at.u64(&v, "missing").unwrap(), None);
        assert_eq!(at.f64(&v, "i").unwrap(), Some(0.0));
        assert_eq!(at.f64(&v, "j").unwrap(), Some(MAX_FIGURE));
        fn problem<T: std::fmt::Debug>(r: Result<T, ImportError>) -> String {
            r.unwrap_err().to_string()
        }
        assert!(problem(at.u64(&v, "b")).starts_with("jobs[0].b is negative (-1)"));
        assert!(problem(at.u64(&v, "d")).starts_with("jobs[0].d is not a whole number"));
        assert!(problem(at.u64(&v, "e")).starts_with("jobs[0].e is too large"));
        assert!(problem(at.f64(&v, "e")).starts_with("jobs[0].e is out of range"));
        assert!(problem(at.f64(&v, "f")).starts_with("jobs[0].f is not a finite number"));
        assert!(problem(at.f64(&v, "h")).starts_with("jobs[0].h is not a number ([])"));
        assert!(problem(at.small::<u16>(&v, "a"))
            .contains("is too large (18446744073709551615 > 65535)"));
        let ms = at.ms_of("x", u64::MAX / 10, 1000).unwrap_err().to_string();
        assert!(ms.starts_with("jobs[0].x is too large for a time"), "{ms}");
        assert!(at.nanos_of_secs("x", 1e11).is_err());
        assert_eq!(at.nanos_of_secs("x", 1.5).unwrap().get(), 1_500_000_000);
    }

    #[test]
    fn garbage_truncation_and_strangers_are_refused() {
        assert!(matches!(import_str("hello"), Err(ImportError::NoJson)));
        assert!(matches!(
            import_str("{\"fio version\": \"fio-3.33\", \"jobs\": ["),
            Err(ImportError::BadJson { .. })
        ));
        assert!(matches!(
            import_str("{\"name\": \"x\"}"),
            Err(ImportError::UnknownFormat)
        ));
        assert!(matches!(import_str("[1, 2]"), Err(ImportError::NoJson)));
    }
}
