//! The live run's record through the disk run's sink (the store's
//! `LiveRun`): begun, checkpointed, finished or dropped; and the flags'
//! checks.

use super::*;
use clap::Parser;
use iomark_model::{RunDocument, RunStatus, MAX_LABEL_BYTES, MAX_NOTE_BYTES};
use iomark_pipeline::RunSink;
use iomark_store::RunId;

#[derive(Debug, Parser)]
struct T {
    #[command(flatten)]
    store: StoreArgs,
}

fn args(db: &std::path::Path) -> StoreArgs {
    StoreArgs {
        db: Some(db.to_str().unwrap().to_string()),
        no_store: false,
        labels: vec!["usb3".into()],
        note: Some("front port".into()),
    }
}

fn doc() -> RunDocument {
    let text = r#"{"schema_version":1,"tool":"iomark","tool_version":"0.1.0",
        "command_line":["iomark","disk"],"started_at_ms":1,"finished_at_ms":2,
        "status":"complete","body":{"kind":"disk","profile":"custom",
        "target":{"given":"/tmp","path":"/tmp/x","kind":"test_file","size":0,
        "logical_block_size":512},"jobs":[]}}"#;
    serde_json::from_str(text).unwrap()
}

fn status_of(db: &std::path::Path, id: RunId) -> RunStatus {
    let mut store = iomark_store::open(Some(db.to_str().unwrap())).unwrap();
    store.load(id).unwrap().summary.status
}

#[test]
fn a_recorded_run_reads_running_until_finished() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut d = doc();
    let args = args(&db);
    let mut sink = args.sink();
    sink.begin(&mut d);
    assert_eq!(d.labels, ["usb3"]);
    assert_eq!(d.note.as_deref(), Some("front port"));
    let id = sink.run_id().expect("stored");
    assert!(sink.checkpoint_due(), "the first checkpoint is due at once");
    sink.checkpoint(&d);
    // Stored as interrupted, read back as running while its sink is held.
    assert_eq!(status_of(&db, id), RunStatus::Running);
    d.status = RunStatus::Complete;
    assert_eq!(sink.finish(&mut d), Some(id));
    assert_eq!(status_of(&db, id), RunStatus::Complete);
}

#[test]
fn a_recorder_dropped_without_finish_marks_the_run_failed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut d = doc();
    let args = args(&db);
    let mut sink = args.sink();
    sink.begin(&mut d);
    let id = sink.run_id().unwrap();
    drop(sink);
    assert_eq!(status_of(&db, id), RunStatus::Failed);
}

#[test]
fn labels_and_notes_over_their_limit_are_refused_naming_it() {
    let at_limit = "l".repeat(MAX_LABEL_BYTES);
    assert_eq!(parse_label(&at_limit).unwrap(), at_limit);
    let over = StoreArgs {
        no_store: true,
        labels: vec!["usb3".into(), format!("{at_limit}x")],
        ..StoreArgs::default()
    };
    let err = over.check().unwrap_err().to_string();
    assert_eq!(
        err,
        "--label is 1025 bytes long; a label may be at most 1 KiB (1024 bytes): shorten it"
    );
    let long_note = StoreArgs {
        no_store: true,
        note: Some("n".repeat(MAX_NOTE_BYTES + 1)),
        ..StoreArgs::default()
    };
    let err = long_note.check().unwrap_err().to_string();
    assert!(
        err.starts_with("--note is 1025 bytes long; a note may be at most 1 KiB (1024 bytes)"),
        "{err}"
    );
    // A label over the limit is left to check(), whatever else is wrong
    // with it, so clap never quotes it.
    assert!(parse_label(&format!("{at_limit},x")).is_ok());
    let fits = StoreArgs {
        no_store: true,
        labels: vec![at_limit],
        note: Some("n".repeat(MAX_NOTE_BYTES)),
        ..StoreArgs::default()
    };
    fits.check().unwrap();
}

#[test]
fn store_failures_and_no_store_never_stop_the_run() {
    let mut d = doc();
    let bad = StoreArgs {
        db: Some("/proc/no/such/dir/r.db".into()),
        ..StoreArgs::default()
    };
    let mut sink = bad.sink();
    sink.begin(&mut d);
    assert_eq!(sink.run_id(), None);
    assert!(!sink.checkpoint_due());
    sink.checkpoint(&d);
    assert_eq!(sink.finish(&mut d), None);
    let off = StoreArgs {
        no_store: true,
        labels: vec!["x".into()],
        ..StoreArgs::default()
    };
    let mut sink = off.sink();
    sink.begin(&mut d);
    assert_eq!(sink.run_id(), None);
    assert_eq!(d.labels, ["x"], "labels still reach the printed document");
}

#[test]
fn flags_parse_and_labels_are_checked() {
    let t = T::try_parse_from(["t", "--label", "usb3", "--label", "uasp", "--note", "hi"]).unwrap();
    assert_eq!(t.store.labels, ["usb3", "uasp"]);
    assert_eq!(t.store.note.as_deref(), Some("hi"));
    assert!(T::try_parse_from(["t", "--label", ""]).is_err());
    assert!(T::try_parse_from(["t", "--label", "a,b"]).is_err());
    assert!(T::try_parse_from(["t", "--no-store", "--db", "x.db"]).is_err());
}
