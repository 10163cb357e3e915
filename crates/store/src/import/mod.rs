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
use bounds::{short, At, MAX_FIGURE, MAX_MS};

mod bounds;
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

/// What `iomark results import` gives every run it converts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Labels added to each run's own (each once).
    pub labels: Vec<String>,
    /// A note that replaces each run's.
    pub note: Option<String>,
    /// The command line of the import, kept by runs that carry none; an
    /// iomark document keeps the command line that measured it.
    pub command_line: Vec<String>,
}

impl ImportOptions {
    /// The options of `program results import FILE` with `labels` and
    /// `note`. The command line each of its runs keeps (where its file
    /// carries none) is the import of its own file alone, with the labels
    /// and note that shaped it, control characters shown: not the whole
    /// command, since an import of N files kept all N names in each of its
    /// N runs, so the store grew as N squared (issue 45).
    pub fn of_file(
        program: &str,
        file: &std::path::Path,
        labels: &[String],
        note: Option<&str>,
    ) -> ImportOptions {
        let shown = |s: &str| iomark_model::escape::escape_controls(s).into_owned();
        let mut line = vec![
            program.to_string(),
            "results".into(),
            "import".into(),
            shown(&file.to_string_lossy()),
        ];
        for l in labels {
            line.extend(["--label".into(), shown(l)]);
        }
        if let Some(n) = note {
            line.extend(["--note".into(), shown(n)]);
        }
        ImportOptions {
            labels: labels.to_vec(),
            note: note.map(str::to_string),
            command_line: line,
        }
    }

    /// `doc` with the labels, the note and, where it has none, the command
    /// line.
    pub fn applied(&self, mut doc: RunDocument) -> RunDocument {
        if doc.command_line.is_empty() {
            doc.command_line = self.command_line.clone();
        }
        for l in &self.labels {
            if !doc.labels.contains(l) {
                doc.labels.push(l.clone());
            }
        }
        if let Some(n) = &self.note {
            doc.note = Some(n.clone());
        }
        doc
    }
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
            profile: None,
            headline: None,
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
mod tests;
