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

/// The stored document must be the one written, field for field, and its
/// stored figures the document's. A figure's `sampled` statistics are not
/// stored (comparisons derive them again from the document), so they are
/// left out of the figures compared.
pub fn assert_same_document(stored: &StoredRun, doc: &RunDocument) {
    let back = stored.document().expect("stored document reads back");
    assert_eq!(&back, doc);
    let mut figures = doc.body.figures();
    for f in &mut figures {
        f.sampled = None;
    }
    assert_eq!(stored.figures, figures);
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
        // The second's time left is the most the run takes (a PTS round
        // may end it sooner).
        left_at_most: n == 1,
        // The second alone counts flops, a figure no decimal writes exactly.
        flops: (n == 1).then_some(1e10 / 3.0),
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
        "a sample without latency, time left, at most or flops reads back without them too"
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

/// Listing on either backend: filters by kind, host and profile, pages
/// newest first with an offset, and the devices seen and remembered.
pub fn lists_pages_filters_and_devices(store: &mut dyn iomark_store::Store) {
    use iomark_model::RunBody;
    use iomark_store::{DeviceMemory, RunId, RunQuery};

    for seed in 0..9 {
        let mut doc = synthetic::full_run(seed);
        doc.host = Some(on_host(if seed < 3 { "alpha" } else { "beta-2" }));
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

/// What migration 8 added, taken away again (both databases).
pub const UNDO_HOST_PROFILE: &str = "DROP INDEX runs_profile; ALTER TABLE runs DROP COLUMN host; \
     ALTER TABLE runs DROP COLUMN profile;";

/// Three CDM runs: the first on host `alpha`, the others on `beta`, the
/// last of profile `custom`.
pub fn three_runs_on_two_hosts(store: &mut dyn iomark_store::Store) {
    use iomark_model::RunBody;

    for seed in 0..3 {
        let mut doc = synthetic::full_run(seed);
        doc.host = Some(on_host(if seed == 0 { "alpha" } else { "beta" }));
        if let (2, RunBody::Disk(d)) = (seed, &mut doc.body) {
            d.profile = "custom".into();
        }
        store.insert_complete(&doc).unwrap();
    }
}

/// The runs of [`three_runs_on_two_hosts`] by host (any case, part of
/// the name) and by profile.
pub fn filter_the_three_runs(store: &mut dyn iomark_store::Store) {
    use iomark_store::RunQuery;
    let mut ids = |q: RunQuery| -> Vec<i64> {
        let runs = store.list(&q).unwrap();
        runs.iter().map(|r| r.id.0).collect()
    };
    let beta = ids(RunQuery {
        host: Some("BET".into()),
        ..RunQuery::default()
    });
    assert_eq!(beta, [2, 3]);
    let custom = ids(RunQuery {
        profile: Some("custom".into()),
        ..RunQuery::default()
    });
    assert_eq!(custom, [3]);
    // Each listed run carries its profile and its headline figure (the
    // first that is not a CPU share), whichever way the profile is read.
    let all = store.list(&RunQuery::default()).unwrap();
    let profiles: Vec<Option<&str>> = all.iter().map(|r| r.profile.as_deref()).collect();
    assert_eq!(profiles, [Some("cdm"), Some("cdm"), Some("custom")]);
    for (seed, r) in all.iter().enumerate() {
        let doc = synthetic::full_run(seed as u64);
        let first = doc
            .body
            .figures()
            .into_iter()
            .find(|f| !f.metric.starts_with("cpu"));
        let got = r.headline.as_ref().map(|f| (&f.test, &f.metric, f.value));
        let want = first.as_ref().map(|f| (&f.test, &f.metric, f.value));
        assert!(want.is_some());
        assert_eq!(got, want, "run {}", r.id.0);
    }
    // A run read whole says the same.
    let one = store.load(all[2].id).unwrap();
    assert_eq!(one.summary.profile.as_deref(), Some("custom"));
    assert_eq!(one.summary.headline, all[2].headline);
}

/// A test machine named `name`.
pub fn on_host(name: &str) -> iomark_model::device::HostInfo {
    iomark_model::device::HostInfo {
        hostname: name.into(),
        kernel_release: "6.1.0".into(),
        os: None,
        arch: "x86_64".into(),
        cpu_model: "test cpu".into(),
        cpu_count: 2,
        memory_total: iomark_model::Bytes(1 << 30),
        swap_total: iomark_model::Bytes(0),
    }
}
