//! The exports and the import line.

use super::compare::tests::macbench as run;
use super::*;

/// A pipe whose reader has gone.
struct Closed;

impl std::io::Write for Closed {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn exported(runs: &[StoredRun], format: ExportFormat) -> String {
    let mut out = Vec::new();
    export(runs, format, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn each_format_exports_every_run_and_a_closed_pipe_stays_an_io_error() {
    let runs = [run(1, "a", 5243.0), run(2, "b", 10486.0)];
    let json: serde_json::Value =
        serde_json::from_str(&exported(&runs, ExportFormat::Json)).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 2);
    let csv = exported(&runs, ExportFormat::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("run_id,started_at_ms,"), "{csv}");
    assert_eq!(
        lines.len(),
        1 + runs.iter().map(|r| r.figures.len()).sum::<usize>()
    );
    let md = exported(&runs, ExportFormat::Markdown);
    assert!(md.contains("10486 KB/s 2.00x better (+5243 KB/s)"), "{md}");
    for name in ExportFormat::NAMES {
        let format: ExportFormat = name.parse().unwrap();
        let err = export(&runs, format, &mut Closed).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{format:?}");
    }
}

#[test]
fn a_json_document_ends_its_line_and_a_closed_pipe_stays_an_io_error() {
    let mut out = Vec::new();
    crate::json::write(&mut out, &serde_json::json!({"a": 1})).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "{\n  \"a\": 1\n}\n");
    let err = crate::json::write(&mut Closed, &serde_json::json!({"a": 1})).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
}

#[test]
fn the_import_line_names_the_file_run_and_tool_with_controls_shown() {
    let r = run(7, "a", 1.0);
    let mut doc = r.document().unwrap();
    doc.tool = "macbench\x1b]0;".into();
    assert_eq!(
        imported("in\x1b.json", RunId(7), &doc),
        format!(
            "imported in\\x1b.json as run 7 (macbench\\x1b]0; {}, {} figures)\n",
            doc.tool_version,
            r.figures.len()
        )
    );
}

#[test]
fn an_unknown_export_format_is_refused_with_the_names() {
    let err = "xml".parse::<ExportFormat>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "'xml' is not an export format: use json, csv or markdown"
    );
}
