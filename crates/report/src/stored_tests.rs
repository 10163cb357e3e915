//! Reports built from stored runs.

use iomark_model::stored::RunSummary;
use iomark_stats::lineup::LineupError;

use super::*;

#[path = "../tests/fixtures/mod.rs"]
mod fixtures;

fn stored(id: i64, label: &str, mb: f64) -> StoredRun {
    let doc = fixtures::cdm(&[label], mb);
    StoredRun {
        summary: RunSummary::example(id, label, "sda"),
        figures: doc.body.figures(),
        warnings: vec![],
        document_json: serde_json::to_string(&doc).unwrap(),
    }
}

fn ids(report: &Report) -> Vec<&str> {
    report.runs().iter().map(|r| r.id.as_str()).collect()
}

#[test]
fn runs_alone_have_no_comparison_table() {
    let report = Report::of_stored(vec![stored(1, "a", 100.0)], None, None).unwrap();
    assert_eq!(ids(&report), ["1"]);
    assert!(report.comparison().is_none());
    assert!(report.baseline().is_none());
}

#[test]
fn a_baseline_run_comes_first_and_the_table_divides_by_it() {
    let runs = vec![stored(1, "a", 100.0), stored(2, "b", 200.0)];
    let report = Report::of_stored(runs, Some(RunId(2)), None).unwrap();
    assert_eq!(ids(&report), ["2", "1"]);
    assert_eq!(report.baseline().unwrap().id, "2");
    let table = report.comparison().unwrap();
    assert_eq!(table.columns[0], (vec![2], true));
    assert_eq!(table.columns[1], (vec![1], false));
}

#[test]
fn a_baseline_label_groups_the_runs_or_is_refused() {
    let runs = vec![stored(1, "usb3", 200.0), stored(2, "usb2", 100.0)];
    let report = Report::of_stored(runs.clone(), None, Some("usb2")).unwrap();
    assert_eq!(ids(&report), ["2", "1"]);
    assert!(report.comparison().is_some());
    let err = Report::of_stored(runs, None, Some("usb1")).unwrap_err();
    assert!(
        matches!(err, ReportError::Lineup(LineupError::NoRunLabelled { .. })),
        "{err}"
    );
    let mut bad = stored(3, "a", 1.0);
    bad.document_json = "{".into();
    let err = Report::of_stored(vec![bad], None, None).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("run 3's stored document cannot be read"),
        "{err}"
    );
}
