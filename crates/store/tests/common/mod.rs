//! Shared by the store's integration tests: realistic documents
//! ([`synthetic`]), scratch databases, document checks, child processes.
#![allow(dead_code)]

#[path = "../../src/synthetic.rs"]
pub mod synthetic;

use std::path::{Path, PathBuf};
use std::process::Child;

use iomark_model::RunDocument;
use iomark_store::StoredRun;

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
