//! Shared by the store's integration tests: realistic documents
//! ([`synthetic`]), scratch databases, document checks, child processes.
#![allow(dead_code)]

#[path = "../../src/synthetic.rs"]
pub mod synthetic;

use std::path::{Path, PathBuf};
use std::process::Child;

use iomark_model::live::{IntervalLatency, LiveSample};
use iomark_model::RunDocument;
use iomark_model::RunStatus;
use iomark_store::{Store, StoredRun};

/// The stored document must be the one written, field for field.
pub fn assert_same_document(stored: &StoredRun, doc: &RunDocument) {
    let back = stored.document().expect("stored document reads back");
    assert_eq!(&back, doc);
    assert_eq!(stored.figures, doc.body.figures());
}

/// A fresh directory and the path of a database `name` in it (not created).
pub fn scratch_db(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

/// What `PRAGMA name` says of the SQLite database at `path`.
pub fn pragma(path: &Path, name: &str) -> String {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
        .unwrap()
}

/// A child process, killed if a test fails before it ends.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A second of a live run, `n` seconds in, at `at_ms`.
pub fn sample(n: u64, at_ms: u64) -> LiveSample {
    LiveSample {
        step: 1,
        steps: 2,
        label: "SEQ1M Q8T1 read".into(),
        at_ms,
        offset_ms: n * 1000,
        duration_ms: 1000,
        bytes: n * (1 << 20),
        ios: n,
        latency: (n > 0).then_some(IntervalLatency {
            mean_ns: 1000 * n,
            p50_ns: 900 * n,
            p99_ns: 5000 * n,
            max_ns: 9000 * n,
        }),
        left_ms: (n < 3).then_some(3000 - n * 1000),
    }
}

/// What either backend must do with a live run's samples: keep them in
/// order, hand back those after a number, find the run in progress by
/// them, and drop them with the run.
pub fn live_samples_round_trip(store: &mut dyn Store) {
    let doc = synthetic::run(1, 0);
    let id = store.begin_run(&doc).unwrap();
    let now = 1_800_000_000_000;
    let written: Vec<LiveSample> = (0..3).map(|n| sample(n, now + n * 1000)).collect();
    store.add_samples(id, 0, &written[..2]).unwrap();
    store.add_samples(id, 2, &written[2..]).unwrap();
    let all = store.samples(id, None).unwrap();
    assert_eq!(all.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(
        all.into_iter().map(|(_, s)| s).collect::<Vec<_>>(),
        written,
        "a sample without latency or time left reads back without them too"
    );
    let after = store.samples(id, Some(1)).unwrap();
    assert_eq!(after, [(2, written[2].clone())]);
    // A number taken twice is refused, not a second copy.
    assert!(store.add_samples(id, 2, &written[2..]).is_err());

    // In progress: sampled since the time asked, and not finished.
    let old = store.begin_run(&synthetic::run(2, 0)).unwrap();
    store.add_samples(old, 0, &[sample(1, 1000)]).unwrap();
    assert_eq!(store.in_progress(now + 2000).unwrap(), [id]);
    assert_eq!(store.in_progress(now + 3000).unwrap(), Vec::new());
    let mut done = doc.clone();
    done.status = RunStatus::Complete;
    store.finish_run(id, &done).unwrap();
    assert_eq!(store.in_progress(0).unwrap(), [old]);
    // A finished run keeps its seconds; a deleted one loses them.
    assert_eq!(store.samples(id, None).unwrap().len(), 3);
    store.delete(id).unwrap();
    assert!(store.samples(id, None).unwrap().is_empty());
}
