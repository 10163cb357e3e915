//! Faults across processes: kill -9 in the middle of a run, and two
//! processes writing one SQLite database at once.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use iomark_model::RunStatus;
use iomark_store::{RunQuery, SqliteStore, Store};

use crate::common;

use common::KillOnDrop;

const FIXTURE: &str = env!("CARGO_BIN_EXE_iomark-store-fixture");

#[test]
fn kill_9_mid_run_keeps_finished_jobs_and_marks_the_run_interrupted() {
    let (_dir, db) = common::scratch_db("results.db");
    let mut child = KillOnDrop(
        Command::new(FIXTURE)
            .args(["hold", db.to_str().unwrap(), "3"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Wait until the third job is committed, then kill without warning.
    let out = child.0.stdout.take().unwrap();
    let mut lines = BufReader::new(out).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line == "stored job 3" {
            break;
        }
    }
    assert_eq!(
        seen.last().map(String::as_str),
        Some("stored job 3"),
        "{seen:?}"
    );
    // SIGKILL: nothing in the child gets to clean up.
    child.0.kill().unwrap();
    let status = child.0.wait().unwrap();
    assert!(!status.success());

    let mut store = SqliteStore::open(db.clone()).unwrap();
    let runs = store.list(&RunQuery::default()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Interrupted);
    let run = store.load(runs[0].id).unwrap();
    let doc = run.document().unwrap();
    match &doc.body {
        iomark_model::RunBody::Disk(d) => assert_eq!(d.jobs.len(), 3),
        other => panic!("not a disk run: {other:?}"),
    }
    assert_eq!(
        run.figures.len(),
        21,
        "seven figures per finished job: four of I/O, three of CPU"
    );
    assert_eq!(common::pragma(&db, "integrity_check"), "ok");
}

#[test]
fn processes_writing_one_database_at_once_all_succeed() {
    let (_dir, db) = common::scratch_db("results.db");
    // All start on a file that does not exist yet, so they also race to
    // create it, switch it to WAL and migrate it.
    let spawn = |first: u32| {
        Command::new(FIXTURE)
            .args(["fill", db.to_str().unwrap(), "75", &first.to_string()])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children: Vec<_> = (0..4).map(|i| spawn(i * 1000)).collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a writer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut store = SqliteStore::open(db).unwrap();
    let runs = store.list(&RunQuery::default()).unwrap();
    assert_eq!(runs.len(), 300);
    assert!(runs.iter().all(|r| r.status == RunStatus::Complete));
}
