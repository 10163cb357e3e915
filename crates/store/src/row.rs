//! A run document flattened into the values both backends write.

use iomark_model::cluster::RankResult;
use iomark_model::figure::Figure;
use iomark_model::{RunBody, RunDocument, RunStatus};
use serde_json::Value;

use crate::StoreError;

/// Everything stored for one run, computed once from its document.
pub(crate) struct RunRow {
    pub kind: String,
    pub tool: String,
    pub tool_version: String,
    pub command_line: String,
    pub started_at_ms: i64,
    pub finished_at_ms: i64,
    pub status: &'static str,
    pub labels: Vec<String>,
    pub labels_json: String,
    pub note: Option<String>,
    pub target: Option<String>,
    pub device: Option<String>,
    /// The host it measured on and its profile, for the filters.
    pub host: Option<String>,
    pub profile: Option<String>,
    pub warning_count: i64,
    pub schema_version: i64,
    pub document: String,
    pub figures: Vec<Figure>,
    pub warnings: Vec<(String, String, String)>,
    /// The per-rank table of a run across MPI ranks (empty otherwise).
    pub ranks: Vec<RankResult>,
}

impl RunRow {
    pub fn new(doc: &RunDocument, status: RunStatus) -> Result<RunRow, StoreError> {
        // One serialisation: the text is written from the same `Value` the
        // warnings, target and device are read from.
        let value = serde_json::to_value(doc).map_err(|e| StoreError::Corrupt {
            location: "(document)".into(),
            reason: e.to_string(),
        })?;
        let document = value.to_string();
        let body = &value["body"];
        let kind = body["kind"].as_str().unwrap_or("unknown").to_string();
        let mut warnings = Vec::new();
        collect_warnings(&value, "", &mut warnings);
        let mut labels = doc.labels.clone();
        labels.sort();
        labels.dedup();
        Ok(RunRow {
            kind,
            tool: doc.tool.clone(),
            tool_version: doc.tool_version.clone(),
            command_line: serde_json::to_string(&doc.command_line).unwrap_or_default(),
            started_at_ms: ms(doc.started_at_ms),
            finished_at_ms: ms(doc.finished_at_ms),
            // How a going run reads back, never what is stored: a document
            // exported while its run went says running, and a run not
            // finished is stored as interrupted.
            status: match status {
                RunStatus::Running => RunStatus::Interrupted.as_str(),
                other => other.as_str(),
            },
            labels_json: serde_json::to_string(&labels).unwrap_or_default(),
            labels,
            note: doc.note.clone(),
            target: target_text(body),
            device: device_text(&value),
            host: value["host"]["hostname"].as_str().map(str::to_string),
            profile: body["profile"].as_str().map(str::to_string),
            warning_count: warnings.len() as i64,
            schema_version: i64::from(doc.schema_version),
            document,
            figures: doc.body.figures(),
            warnings,
            ranks: match &doc.body {
                RunBody::Disk(d) => d
                    .cluster
                    .as_ref()
                    .map(|c| c.per_rank.clone())
                    .unwrap_or_default(),
                _ => Vec::new(),
            },
        })
    }
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// What the run targeted, whatever its kind: a disk run's path as given, a
/// network run's peer.
fn target_text(body: &Value) -> Option<String> {
    let candidates = [
        // disk
        &body["target"]["given"],
        &body["target"]["path"],
        // net: the server
        &body["spec"]["host"],
        // mem: the mapped file, else the heap
        &body["spec"]["backing"]["path"],
        &body["spec"]["backing"]["kind"],
    ];
    candidates
        .into_iter()
        .find_map(|v| v.as_str().map(str::to_string))
}

/// A one-line description of the device behind the run, from the
/// document's device report: block device, model, transport, USB driver
/// and the slowest link (`sda Samsung T7 usb uas USB 3.0`).
fn device_text(doc: &Value) -> Option<String> {
    let report = &doc["device"];
    let mut parts: Vec<String> = Vec::new();
    let mut push = |v: &Value| {
        if let Some(s) = v.as_str().map(str::trim).filter(|s| !s.is_empty()) {
            if !parts.iter().any(|p| p == s) {
                parts.push(s.to_string());
            }
        }
    };
    let mut layer = &report["device"];
    // Down the stack (a loop device's backing disk), a few layers at most.
    for _ in 0..4 {
        if layer.is_null() {
            break;
        }
        push(&layer["name"]);
        push(&layer["identity"]["vendor"]);
        push(&layer["identity"]["model"]);
        push(&layer["transport"]);
        push(&layer["usb"]["driver"]);
        layer = &layer["lower"][0];
    }
    push(&report["slowest"]["name"]);
    // A network run: the local interface it went through.
    let iface = &doc["body"]["interface"];
    push(&iface["name"]);
    push(&iface["driver"]);
    if let Some(mbit) = iface["speed_mbit"].as_u64() {
        parts.push(format!("{mbit} Mb/s"));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// Every `warnings: [{kind, message}]` array in the document, with the name
/// of the nearest enclosing object that has one (a job's spec name).
fn collect_warnings(v: &Value, scope: &str, out: &mut Vec<(String, String, String)>) {
    match v {
        Value::Object(map) => {
            let own = map
                .get("name")
                .and_then(Value::as_str)
                .or_else(|| map.get("spec").and_then(|s| s["name"].as_str()));
            let scope = own.unwrap_or(scope);
            // The object's own warnings first: serde_json sorts keys, and a
            // run's own warnings read better before its jobs'.
            if let Some(arr) = map.get("warnings").and_then(Value::as_array) {
                for w in arr {
                    if let (Some(kind), Some(msg)) = (w["kind"].as_str(), w["message"].as_str()) {
                        out.push((scope.to_string(), kind.to_string(), msg.to_string()));
                    }
                }
            }
            for (k, child) in map {
                if k != "warnings" || !child.is_array() {
                    collect_warnings(child, scope, out);
                }
            }
        }
        Value::Array(arr) => {
            for child in arr {
                collect_warnings(child, scope, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_document_that_says_running_is_stored_as_interrupted() {
        let mut doc = iomark_stats::example::mixed_randrw_run();
        doc.status = RunStatus::Running;
        assert_eq!(RunRow::new(&doc, doc.status).unwrap().status, "interrupted");
    }

    #[test]
    fn the_count_stored_is_the_count_a_report_shows() {
        // `results list` and the run list show the stored count; the report
        // and the run page count `scoped_warnings`. The two walks must
        // find the same warnings.
        let mut doc = iomark_stats::example::mixed_randrw_run();
        doc.warnings.push(iomark_model::Warning::new(
            iomark_model::WarningKind::Other,
            "run-wide",
        ));
        if let iomark_model::RunBody::Disk(d) = &mut doc.body {
            for j in &mut d.jobs {
                j.warnings.push(iomark_model::Warning::new(
                    iomark_model::WarningKind::Other,
                    "the same in every job",
                ));
            }
        }
        let row = RunRow::new(&doc, RunStatus::Complete).unwrap();
        assert!(row.warning_count >= 2);
        assert_eq!(row.warning_count as usize, doc.scoped_warnings().len());
    }

    #[test]
    fn warnings_are_found_at_any_depth_with_their_job() {
        let doc = json!({
            "warnings": [{"kind": "other", "message": "run-wide"}],
            "body": {"jobs": [
                {"spec": {"name": "SEQ1M Q8T1"}, "warnings": [{"kind": "buffered_io", "message": "cache"}]}
            ]}
        });
        let mut out = Vec::new();
        collect_warnings(&doc, "", &mut out);
        assert_eq!(
            out,
            vec![
                ("".into(), "other".into(), "run-wide".into()),
                ("SEQ1M Q8T1".into(), "buffered_io".into(), "cache".into())
            ]
        );
    }

    #[test]
    fn device_text_names_what_is_known() {
        let doc = json!({"device": {
            "device": {"name": "sda", "identity": {"model": "Samsung T7"}, "transport": "usb",
                       "usb": {"driver": "uas"}},
            "slowest": {"name": "USB 3.0"}
        }});
        assert_eq!(device_text(&doc).unwrap(), "sda Samsung T7 usb uas USB 3.0");
        assert_eq!(device_text(&json!({})), None);
        let net =
            json!({"body": {"interface": {"name": "eth0", "driver": "r8152", "speed_mbit": 2500}}});
        assert_eq!(device_text(&net).unwrap(), "eth0 r8152 2500 Mb/s");
    }

    #[test]
    fn target_text_finds_each_kind_of_target() {
        assert_eq!(
            target_text(&json!({"target": {"given": "/mnt/x", "path": "/mnt/x/f"}})).unwrap(),
            "/mnt/x"
        );
        assert_eq!(
            target_text(&json!({"spec": {"host": "10.0.0.2"}})).unwrap(),
            "10.0.0.2"
        );
        assert_eq!(
            target_text(&json!({"spec": {"backing": {"kind": "mmap", "path": "/ssd/f"}}})).unwrap(),
            "/ssd/f"
        );
        assert_eq!(
            target_text(&json!({"spec": {"backing": {"kind": "heap"}}})).unwrap(),
            "heap"
        );
    }
}
