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

/// Listing on either backend: filters by kind, host and profile, pages
/// newest first with an offset, and the devices seen and remembered.
pub fn lists_pages_filters_and_devices(store: &mut dyn iomark_store::Store) {
    use iomark_model::device::HostInfo;
    use iomark_model::{Bytes, RunBody};
    use iomark_store::{DeviceMemory, RunId, RunQuery};

    for seed in 0..9 {
        let mut doc = synthetic::full_run(seed);
        doc.host = Some(HostInfo {
            hostname: if seed < 3 { "alpha" } else { "beta-2" }.into(),
            kernel_release: "6.1.0".into(),
            os: None,
            arch: "x86_64".into(),
            cpu_model: "test cpu".into(),
            cpu_count: 2,
            memory_total: Bytes(1 << 30),
            swap_total: Bytes(0),
        });
        if let (8, RunBody::Disk(d)) = (seed, &mut doc.body) {
            d.profile = "custom".into();
        }
        store.insert_complete(&doc).unwrap();
    }
    fn ids(store: &mut dyn iomark_store::Store, q: RunQuery) -> Vec<i64> {
        store.list(&q).unwrap().iter().map(|r| r.id.0).collect()
    }
    // The second page of three, newest first: runs 4 to 6, oldest first.
    let page = ids(
        store,
        RunQuery {
            limit: Some(3),
            offset: 3,
            ..RunQuery::default()
        },
    );
    assert_eq!(page, [4, 5, 6]);
    let rest = ids(
        store,
        RunQuery {
            offset: 7,
            ..RunQuery::default()
        },
    );
    assert_eq!(rest, [1, 2]);
    let host = ids(
        store,
        RunQuery {
            host: Some("ALPHA".into()),
            ..RunQuery::default()
        },
    );
    assert_eq!(host, [1, 2, 3], "host names match case-insensitively");
    let custom = ids(
        store,
        RunQuery {
            profile: Some("custom".into()),
            ..RunQuery::default()
        },
    );
    assert_eq!(custom, [9]);
    assert_eq!(
        ids(
            store,
            RunQuery {
                kind: Some("disk".into()),
                profile: Some("cdm".into()),
                host: Some("beta".into()),
                ..RunQuery::default()
            }
        ),
        [4, 5, 6, 7, 8]
    );
    assert!(ids(
        store,
        RunQuery {
            kind: Some("net".into()),
            ..RunQuery::default()
        }
    )
    .is_empty());
    // Runs a minute apart: [start of run 3, start of run 5).
    assert_eq!(
        ids(
            store,
            RunQuery {
                since_ms: Some(1_790_000_000_000 + 2 * 60_000),
                until_ms: Some(1_790_000_000_000 + 4 * 60_000),
                ..RunQuery::default()
            }
        ),
        [3, 4]
    );

    // Synthetic runs name no device: the target stands in, three of them.
    let seen = store.seen_devices().unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0].name, "/mnt/nvme");
    assert_eq!(seen[0].newest, RunId(9));
    assert_eq!((seen[0].runs, seen[0].kind.as_str()), (3, "disk"));
    assert_eq!(seen.iter().map(|s| s.runs).sum::<u64>(), 9);
    let t7 = ids(
        store,
        RunQuery {
            device_is: Some("/media/t7".into()),
            ..RunQuery::default()
        },
    );
    assert_eq!(t7, [2, 5, 8]);

    assert!(store.devices().unwrap().is_empty());
    let mut b = DeviceMemory::new("serial:B:2", "B (sdc)");
    b.rated = Some("read=100MB/s".parse().unwrap());
    store.remember_device(&b).unwrap();
    let a = DeviceMemory::new("serial:A:1", "A (sdb)");
    store.remember_device(&a).unwrap();
    assert_eq!(store.devices().unwrap(), [a, b], "by key");
}
