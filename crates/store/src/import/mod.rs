//! Other tools' JSON output as iomark run documents, so a fio or iperf3
//! run stored yesterday compares with iomark's own today.
//!
//! The format is recognised from the content, not the file name. Anything
//! that is not a complete fio or iperf3 JSON document is refused with a
//! reason, before anything is stored.

use std::path::Path;

use iomark_model::RunDocument;
use serde_json::Value;

mod fio;
mod iperf3;

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
}

/// Read `path` and convert it: one run, or several when the file is an
/// array of iomark documents (`iomark results export --format json`).
pub fn import_file(path: &Path) -> Result<Vec<RunDocument>, ImportError> {
    let bytes = std::fs::read(path).map_err(|cause| ImportError::Read {
        path: path.display().to_string(),
        cause,
    })?;
    import_many(&String::from_utf8_lossy(&bytes))
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
        .map(|v| {
            if is_iomark(&v) {
                iomark_document(v)
            } else {
                Err(ImportError::UnknownFormat)
            }
        })
        .collect()
}

/// Convert fio JSON (`json` or `json+`), iperf3 `-J` output, or one of
/// iomark's own documents (`--json`). A converted document's
/// `command_line` is left empty for the caller to fill.
pub fn import_str(text: &str) -> Result<RunDocument, ImportError> {
    let value = parse_json(text)?;
    if value.get("fio version").is_some() {
        fio::convert(&value)
    } else if is_iomark(&value) {
        iomark_document(value)
    } else if value.get("start").is_some() && value.get("end").is_some() {
        iperf3::convert(&value)
    } else {
        Err(ImportError::UnknownFormat)
    }
}

fn is_iomark(v: &Value) -> bool {
    v.get("schema_version").is_some() && v.get("body").is_some()
}

fn iomark_document(v: Value) -> Result<RunDocument, ImportError> {
    serde_json::from_value(v).map_err(|e| {
        ImportError::Unsupported(format!(
            "an iomark document this version cannot read ({e}): import it with the iomark that wrote it, or a newer one"
        ))
    })
}

/// The one JSON object in `text`, skipping the lines some tools print
/// before it (fio's `note: ...` and engine messages).
fn parse_json(text: &str) -> Result<Value, ImportError> {
    let start = text
        .match_indices('{')
        .map(|(i, _)| i)
        .find(|&i| i == 0 || text[..i].ends_with('\n') || text[..i].trim().is_empty())
        .ok_or(ImportError::NoJson)?;
    let value: Value =
        serde_json::from_str(text[start..].trim_end()).map_err(|e| ImportError::BadJson {
            reason: e.to_string(),
        })?;
    if !value.is_object() {
        return Err(ImportError::NoJson);
    }
    Ok(value)
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

/// A number that must be there.
fn need_f64(v: &Value, tool: &'static str, path: &[&str]) -> Result<f64, ImportError> {
    need(v, tool, path)?
        .as_f64()
        .ok_or_else(|| ImportError::Missing {
            tool,
            field: format!("{} (a number)", path.join(".")),
        })
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
