//! The SQLite store: round trips, migrations, queries, concurrent writers.

use crate::common;

use common::synthetic;
use iomark_model::RunStatus;
use iomark_store::{RunId, RunQuery, SqliteStore, Store, StoreError};

fn fresh() -> (tempfile::TempDir, SqliteStore) {
    let (dir, path) = common::scratch_db("sub/dir/results.db");
    (dir, SqliteStore::open(path).unwrap())
}

#[test]
fn migrations_build_an_empty_database_and_reopen_cleanly() {
    let (dir, mut store) = fresh();
    assert_eq!(store.schema_version().unwrap(), 9);
    assert!(store.list(&RunQuery::default()).unwrap().is_empty());
    drop(store);
    let path = dir.path().join("sub/dir/results.db");
    let mut again = SqliteStore::open(path.clone()).unwrap();
    assert_eq!(again.schema_version().unwrap(), 9);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM schema_migrations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 9, "a migration ran twice");
    assert_eq!(common::pragma(&path, "journal_mode"), "wal");
}

/// A database a newer iomark has migrated to schema version 99.
fn database_from_the_future() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, path) = common::scratch_db("r.db");
    drop(SqliteStore::open(path.clone()).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', 0)", [])
        .unwrap();
    (dir, path)
}

#[test]
fn a_database_from_a_newer_iomark_is_refused() {
    let (_dir, path) = database_from_the_future();
    let err = SqliteStore::open(path).err().expect("refused");
    assert!(matches!(err, StoreError::NewerSchema { found: 99, .. }));
    assert!(err.to_string().contains("upgrade iomark"));
}

#[test]
fn a_complete_run_round_trips_with_figures_and_warnings() {
    let (_dir, mut store) = fresh();
    let doc = synthetic::full_run(3);
    let id = store.insert_complete(&doc).unwrap();
    let stored = store.load(id).unwrap();
    common::assert_same_document(&stored, &doc);
    assert_eq!(stored.summary.status, RunStatus::Complete);
    assert_eq!(stored.summary.labels, ["batch3", "usb2"]);
    assert_eq!(stored.summary.target.as_deref(), Some("/media/usb2stick"));
    // Per job: four I/O figures and three of the process's CPU.
    assert_eq!(stored.figures.len(), 56);
    assert_eq!(stored.warnings.len(), 1);
    assert_eq!(stored.warnings[0].scope, "SEQ1M Q8T1 read");
    assert_eq!(stored.summary.warning_count, 1);
    // Base units: bytes per second, raw.
    let bw = &stored.figures[0];
    assert_eq!(bw.metric, "read bw");
    assert_eq!(bw.unit.as_str(), "B/s");
    assert!(bw.value > 30e6 && bw.value < 45e6, "{}", bw.value);
}

#[test]
fn a_live_run_reads_as_interrupted_until_finished() {
    let (_dir, mut store) = fresh();
    let mut doc = synthetic::run(1, 0);
    let id = store.begin_run(&doc).unwrap();
    assert_eq!(
        store.load(id).unwrap().summary.status,
        RunStatus::Interrupted
    );
    for t in 0..3 {
        if let iomark_model::RunBody::Disk(d) = &mut doc.body {
            d.jobs.push(synthetic::job(t, 420e6, 1));
        }
        store.update_run(id, &doc).unwrap();
        let s = store.load(id).unwrap();
        assert_eq!(s.summary.status, RunStatus::Interrupted);
        assert_eq!(s.figures.len(), 7 * (t + 1));
        assert_eq!(s.document().unwrap().status, RunStatus::Interrupted);
    }
    doc.status = RunStatus::Complete;
    store.finish_run(id, &doc).unwrap();
    let s = store.load(id).unwrap();
    assert_eq!(s.summary.status, RunStatus::Complete);
    common::assert_same_document(&s, &doc);
}

#[test]
fn list_filters_by_label_device_time_and_limit() {
    let (_dir, mut store) = fresh();
    for seed in 0..12 {
        store.insert_complete(&synthetic::full_run(seed)).unwrap();
    }
    let all = store.list(&RunQuery::default()).unwrap();
    assert_eq!(all.len(), 12);
    assert!(all.windows(2).all(|w| w[0].id < w[1].id), "oldest first");
    let usb3 = store
        .list(&RunQuery {
            labels: vec!["usb3".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(usb3.len(), 4);
    assert!(usb3.iter().all(|r| r.labels.contains(&"usb3".to_string())));
    let both = store
        .list(&RunQuery {
            labels: vec!["usb3".into(), "batch4".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(both.len(), 1);
    // A label given twice is required once; thousands are one condition
    // (one each made SQLite refuse the query: "Expression tree is too large").
    let twice = store
        .list(&RunQuery {
            labels: vec!["usb3".into(), "batch4".into(), "usb3".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(twice, both);
    let mut many: Vec<String> = (0..5_500).map(|i| format!("l{i}")).collect();
    many.push("usb3".into());
    let none = store
        .list(&RunQuery {
            labels: many,
            ..Default::default()
        })
        .unwrap();
    assert!(none.is_empty());
    let dev = store
        .list(&RunQuery {
            device: Some("NVME".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(dev.len(), 4, "device text matches case-insensitively");
    // Runs are a minute apart from a fixed start.
    let since = store
        .list(&RunQuery {
            since_ms: Some(1_790_000_000_000 + 10 * 60_000),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(since.len(), 2);
    let newest = store
        .list(&RunQuery {
            limit: Some(3),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        newest.iter().map(|r| r.id).collect::<Vec<_>>(),
        [RunId(10), RunId(11), RunId(12)]
    );
    // Wildcards in the filter are literal.
    let none = store
        .list(&RunQuery {
            device: Some("%".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(none.is_empty());
}

#[test]
fn delete_removes_the_run_and_its_rows() {
    let (_dir, path) = common::scratch_db("r.db");
    let mut store = SqliteStore::open(path.clone()).unwrap();
    let a = store.insert_complete(&synthetic::full_run(1)).unwrap();
    let b = store.insert_complete(&synthetic::full_run(2)).unwrap();
    store.delete(a).unwrap();
    assert!(matches!(store.load(a), Err(StoreError::NotFound { .. })));
    assert!(matches!(store.delete(a), Err(StoreError::NotFound { .. })));
    assert_eq!(store.load(b).unwrap().figures.len(), 56);
    let conn = rusqlite::Connection::open(&path).unwrap();
    for table in ["run_documents", "figures", "run_labels", "warnings"] {
        let n: i64 = conn
            .query_row(
                &format!("SELECT COUNT(*) FROM {table} WHERE run_id = ?1"),
                [a.0],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 0, "{table} rows left behind");
    }
    // Ids are never reused.
    let c = store.insert_complete(&synthetic::full_run(3)).unwrap();
    assert!(c > b);
}

#[test]
fn update_of_a_missing_run_is_an_error() {
    let (_dir, mut store) = fresh();
    let err = store
        .update_run(RunId(42), &synthetic::full_run(1))
        .unwrap_err();
    assert!(err.to_string().contains("no run 42"), "{err}");
}

#[test]
fn threads_writing_one_database_at_once_all_succeed() {
    let (_dir, path) = common::scratch_db("r.db");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                // Each opens its own connection, as separate processes do,
                // including the race to migrate a fresh file.
                let mut store = SqliteStore::open(path).unwrap();
                for i in 0..25 {
                    let mut doc = synthetic::run(t * 100 + i, 0);
                    let id = store.begin_run(&doc).unwrap();
                    if let iomark_model::RunBody::Disk(d) = &mut doc.body {
                        d.jobs.push(synthetic::job(0, 1e8, i));
                    }
                    store.update_run(id, &doc).unwrap();
                    store.finish_run(id, &doc).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a writer failed");
    }
    let mut store = SqliteStore::open(path).unwrap();
    let runs = store.list(&RunQuery::default()).unwrap();
    assert_eq!(runs.len(), 100);
    assert!(runs.iter().all(|r| r.status == RunStatus::Complete));
}

/// The database file's bytes, and whether SQLite's side files exist.
fn snapshot(path: &std::path::Path) -> (Vec<u8>, bool, bool) {
    let side = |suffix: &str| {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        std::path::PathBuf::from(p).exists()
    };
    (std::fs::read(path).unwrap(), side("-wal"), side("-shm"))
}

#[test]
fn a_read_only_open_creates_nothing_where_there_is_no_database() {
    let (dir, path) = common::scratch_db("not/there/r.db");
    let err = SqliteStore::open_read_only(path.clone())
        .err()
        .expect("nothing to read");
    assert!(matches!(err, StoreError::NoDatabase { .. }), "{err}");
    assert!(err
        .to_string()
        .contains("nothing has been stored there yet"));
    assert!(!dir.path().join("not").exists(), "a directory was created");
    let err = iomark_store::open_read_only(Some(path.to_str().unwrap()))
        .err()
        .expect("nothing to read");
    assert!(matches!(err, StoreError::NoDatabase { .. }), "{err}");
}

#[test]
fn a_read_only_open_of_a_foreign_database_says_the_schema_is_missing() {
    let (_dir, path) = common::scratch_db("other.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('hi')")
        .unwrap();
    drop(conn);
    let before = snapshot(&path);
    let err = SqliteStore::open_read_only(path.clone())
        .err()
        .expect("no iomark schema");
    assert!(matches!(err, StoreError::NoSchema { .. }), "{err}");
    assert!(
        err.to_string().contains("no schema_migrations table"),
        "{err}"
    );
    assert_eq!(snapshot(&path), before, "the file was changed");
}

#[test]
fn a_read_only_open_reads_everything_and_writes_nothing() {
    let (_dir, path) = common::scratch_db("r.db");
    let mut store = SqliteStore::open(path.clone()).unwrap();
    let doc = synthetic::full_run(4);
    let id = store.insert_complete(&doc).unwrap();
    drop(store);
    let before = snapshot(&path);
    assert!(
        !before.1 && !before.2,
        "a closed database keeps no -wal/-shm"
    );
    {
        let mut ro = SqliteStore::open_read_only(path.clone()).unwrap();
        assert!(ro.is_read_only());
        assert_eq!(ro.schema_version().unwrap(), 9);
        assert_eq!(ro.list(&RunQuery::default()).unwrap().len(), 1);
        common::assert_same_document(&ro.load(id).unwrap(), &doc);
        for err in [
            ro.insert_complete(&doc).unwrap_err(),
            ro.begin_run(&doc).unwrap_err(),
            ro.update_run(id, &doc).unwrap_err(),
            ro.finish_run(id, &doc).unwrap_err(),
            ro.delete(id).unwrap_err(),
        ] {
            assert!(matches!(err, StoreError::ReadOnly { .. }), "{err}");
            assert!(err.to_string().contains("--db PATH"), "{err}");
        }
    }
    assert_eq!(snapshot(&path), before, "reading changed the database");
}

#[test]
fn a_database_from_a_newer_iomark_is_refused_read_only_too() {
    let (_dir, path) = database_from_the_future();
    let err = SqliteStore::open_read_only(path).err().expect("refused");
    assert!(
        matches!(err, StoreError::NewerSchema { found: 99, .. }),
        "{err}"
    );
}

#[test]
fn devices_are_remembered_by_key_and_replaced_whole() {
    use iomark_model::artefact::{PatternRates, ProbeVerdict};
    use iomark_model::{Bytes, BytesPerSec};
    use iomark_store::{DeviceMemory, RememberedProbe};

    let (_dir, mut store) = fresh();
    assert_eq!(store.device("dev:zram0").unwrap(), None);
    let mut zram = DeviceMemory::new("dev:zram0", "zram0");
    zram.rated = Some("read=1GB/s".parse().unwrap());
    store.remember_device(&zram).unwrap();
    assert_eq!(store.device("dev:zram0").unwrap().as_ref(), Some(&zram));

    let rates = |zeros: f64| {
        [("random", 1.0), ("zeros", zeros)].map(|(d, x)| PatternRates {
            data: d.parse().unwrap(),
            write: BytesPerSec(100e6 * x),
            read: BytesPerSec(200e6 * x),
        })
    };
    let verdict = ProbeVerdict::judge(&rates(3.0), Bytes(64 << 20)).unwrap();
    zram.probe = Some(RememberedProbe {
        verdict,
        run: Some(RunId(7)),
        at_ms: 1_795_000_000_000,
    });
    store.remember_device(&zram).unwrap();
    assert_eq!(store.device("dev:zram0").unwrap().as_ref(), Some(&zram));
    // Another key is another device.
    assert_eq!(store.device("dev:zram1").unwrap(), None);
}

#[test]
fn a_version_1_database_is_read_as_it_is_and_migrated_by_a_writer() {
    let (_dir, path) = common::scratch_db("r.db");
    let mut store = SqliteStore::open(path.clone()).unwrap();
    let id = store.insert_complete(&synthetic::full_run(1)).unwrap();
    drop(store);
    // Back to version 1, as an earlier iomark left it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP INDEX runs_profile; ALTER TABLE runs DROP COLUMN host; \
         ALTER TABLE runs DROP COLUMN profile; \
         DROP TABLE devices; DROP TABLE run_ranks; DROP TABLE run_samples; \
         ALTER TABLE figures DROP COLUMN noise_lo; ALTER TABLE figures DROP COLUMN noise_hi; \
         DELETE FROM schema_migrations WHERE version >= 2",
    )
    .unwrap();
    drop(conn);
    let mut ro = SqliteStore::open_read_only(path.clone()).unwrap();
    assert_eq!(ro.schema_version().unwrap(), 1);
    assert_eq!(ro.load(id).unwrap().summary.id, id);
    // Before version 6 there are no samples, and runs in progress are
    // found by their start alone.
    assert!(ro.samples(id, None).unwrap().is_empty());
    assert!(ro.in_progress(0).unwrap().len() <= 1);
    drop(ro);
    let mut rw = SqliteStore::open(path).unwrap();
    assert_eq!(rw.schema_version().unwrap(), 9);
    assert_eq!(rw.device("dev:sda").unwrap(), None);
}

#[test]
fn a_verify_verdict_is_remembered_and_a_version_2_device_row_survives_the_migration() {
    use iomark_model::verify::{BadCounts, VerifyVerdict};
    use iomark_model::Bytes;
    use iomark_store::{DeviceMemory, RememberedVerify};

    let (_dir, path) = common::scratch_db("v.db");
    let mut store = SqliteStore::open(path.clone()).unwrap();
    let mut stick = DeviceMemory::new("serial:STICK:1", "ACME stick (sdb)");
    stick.rated = Some("read=100MB/s".parse().unwrap());
    store.remember_device(&stick).unwrap();
    drop(store);
    // Back to version 2, as the iomark before verify left it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP INDEX runs_profile; ALTER TABLE runs DROP COLUMN host;
         ALTER TABLE runs DROP COLUMN profile;
         ALTER TABLE devices DROP COLUMN verify; ALTER TABLE devices DROP COLUMN verify_run_id;
         ALTER TABLE devices DROP COLUMN verify_at_ms;
         DROP TABLE run_ranks; DROP TABLE run_samples; ALTER TABLE figures DROP COLUMN noise_lo;
         ALTER TABLE figures DROP COLUMN noise_hi; DELETE FROM schema_migrations WHERE version >= 3",
    )
    .unwrap();
    drop(conn);
    let mut ro = SqliteStore::open_read_only(path.clone()).unwrap();
    assert_eq!(ro.schema_version().unwrap(), 2);
    drop(ro);
    let mut rw = SqliteStore::open(path).unwrap();
    assert_eq!(rw.schema_version().unwrap(), 9);
    assert_eq!(rw.device("serial:STICK:1").unwrap().as_ref(), Some(&stick));

    stick.verify = Some(RememberedVerify {
        verdict: VerifyVerdict {
            claimed: Bytes(64 << 30),
            usable: Bytes(8 << 30),
            bad: BadCounts {
                corrupted: 0,
                lost: 0,
                wrapped: 14_680_064,
            },
            ranges: 1,
            quick: true,
        },
        run: Some(RunId(3)),
        at_ms: 1_795_000_000_000,
    });
    rw.remember_device(&stick).unwrap();
    assert_eq!(rw.device("serial:STICK:1").unwrap().as_ref(), Some(&stick));
}

#[test]
fn a_run_across_mpi_ranks_stores_its_per_rank_table_and_deletes_it_with_the_run() {
    use iomark_model::cluster::{ClusterRun, Layout, RankResult};
    use iomark_model::units::{Bytes, BytesPerSec, Nanos};
    let (dir, mut store) = fresh();
    let mut doc = synthetic::run(5, 1);
    let rank = |r: u32| RankResult {
        rank: r,
        host: format!("node{r}"),
        path: format!("/scratch/{r}/iomark.tmp"),
        offset: Bytes(0),
        start: Nanos(1000 * u64::from(r)),
        end: Nanos(2_000_000_000),
        read_bytes: Bytes(0),
        write_bytes: Bytes(1 << 30),
        read_bw: BytesPerSec(0.0),
        write_bw: BytesPerSec(5e8),
        interrupted: false,
        stonewalled: false,
        device: None,
        jobs: Vec::new(),
    };
    if let iomark_model::RunBody::Disk(d) = &mut doc.body {
        d.cluster = Some(Box::new(ClusterRun {
            ranks: 3,
            layout: Layout::FilePerRank,
            wall: Nanos(2_000_000_000),
            per_rank: (0..3).map(rank).collect(),
            stonewall: false,
        }));
    }
    let id = store.insert_complete(&doc).unwrap();
    common::assert_same_document(&store.load(id).unwrap(), &doc);
    let path = dir.path().join("sub/dir/results.db");
    let count = |path: &std::path::Path| -> (i64, String) {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.query_row(
            "SELECT COUNT(*), COALESCE(MAX(host), '') FROM run_ranks",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    assert_eq!(count(&path), (3, "node2".to_string()));
    store.delete(id).unwrap();
    assert_eq!(count(&path).0, 0);
}

#[test]
fn a_live_runs_samples_round_trip() {
    let (_dir, mut store) = fresh();
    common::live_samples_round_trip(&mut store);
}

#[test]
fn lists_pages_filters_and_devices() {
    let (_dir, mut store) = fresh();
    common::lists_pages_filters_and_devices(&mut store);
}

#[test]
fn version_6_seconds_read_without_flops_and_keep_them_through_the_migration() {
    let (_dir, path) = common::scratch_db("r.db");
    let mut store = SqliteStore::open(path.clone()).unwrap();
    let id = store.begin_run(&synthetic::run(1, 0)).unwrap();
    let written = [common::sample(1, 1000), common::sample(2, 2000)];
    store.add_samples(id, 0, &written).unwrap();
    drop(store);
    // Back to version 6, as the iomark before flops left it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP INDEX runs_profile; ALTER TABLE runs DROP COLUMN host; \
         ALTER TABLE runs DROP COLUMN profile; \
         ALTER TABLE run_samples DROP COLUMN flops; \
         ALTER TABLE run_samples DROP COLUMN left_at_most; \
         DELETE FROM schema_migrations WHERE version >= 7",
    )
    .unwrap();
    drop(conn);
    let without_flops: Vec<_> = written
        .iter()
        .map(|s| iomark_model::live::LiveSample {
            flops: None,
            left_at_most: false,
            ..s.clone()
        })
        .collect();
    let read = |store: &mut SqliteStore| -> Vec<_> {
        let all = store.samples(id, None).unwrap();
        all.into_iter().map(|(_, s)| s).collect()
    };
    let mut ro = SqliteStore::open_read_only(path.clone()).unwrap();
    assert_eq!(ro.schema_version().unwrap(), 6);
    assert_eq!(read(&mut ro), without_flops);
    drop(ro);
    let mut rw = SqliteStore::open(path).unwrap();
    assert_eq!(rw.schema_version().unwrap(), 9);
    assert_eq!(read(&mut rw), without_flops);
    rw.add_samples(id, 2, &[common::sample(1, 3000)]).unwrap();
    assert_eq!(read(&mut rw)[2].flops, Some(1e10 / 3.0));
}

#[test]
fn version_7_runs_filter_by_host_and_profile_read_only_and_after_the_migration() {
    let (_dir, path) = common::scratch_db("r.db");
    let mut store = SqliteStore::open(path.clone()).unwrap();
    common::three_runs_on_two_hosts(&mut store);
    drop(store);
    // Back to version 7, as the iomark before the columns left it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "{} ALTER TABLE run_samples DROP COLUMN left_at_most; \
         DELETE FROM schema_migrations WHERE version >= 8",
        common::UNDO_HOST_PROFILE
    ))
    .unwrap();
    drop(conn);
    let mut ro = SqliteStore::open_read_only(path.clone()).unwrap();
    assert_eq!(ro.schema_version().unwrap(), 7);
    common::filter_the_three_runs(&mut ro);
    drop(ro);
    // The migration fills the columns from the documents stored before.
    let mut rw = SqliteStore::open(path.clone()).unwrap();
    assert_eq!(rw.schema_version().unwrap(), 9);
    common::filter_the_three_runs(&mut rw);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let filled: Vec<(String, String)> = conn
        .prepare("SELECT host, profile FROM runs ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want = [("alpha", "cdm"), ("beta", "cdm"), ("beta", "custom")];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(h, p)| (h.to_string(), p.to_string()))
        .collect();
    assert_eq!(filled, want);
}

/// The POSIX locks this process holds on `path`'s file, as the kernel
/// lists them, each `(kind, start)`.
fn locks_held_on(path: &std::path::Path) -> Vec<(String, String)> {
    let file = std::fs::metadata(path).unwrap();
    let pid = std::process::id().to_string();
    iomark_testrig::kernel_locks()
        .into_iter()
        .filter(|l| !l.waiting && l.class == "POSIX" && l.pid == pid && l.is_on(&file))
        .map(|l| (l.kind, l.start))
        .collect()
}

/// Issue 45: `open_read_only` once opened the file for writing to see
/// whether it could, and closed it; on Linux that close dropped every
/// POSIX lock the process held on the file, among them the shared lock an
/// open WAL connection keeps on the database for as long as it lives. The
/// next other process to close its connection then thought itself the
/// last, and deleted `-wal` and `-shm` under the first connection.
#[test]
fn opening_the_database_again_keeps_the_locks_of_the_connections_open() {
    let (_dir, path) = common::scratch_db("r.db");
    let mut writer = SqliteStore::open(path.clone()).unwrap();
    writer.insert_complete(&synthetic::full_run(1)).unwrap();
    let mut reader = SqliteStore::open_read_only(path.clone()).unwrap();
    assert_eq!(reader.list(&RunQuery::default()).unwrap().len(), 1);
    let held = locks_held_on(&path);
    assert!(
        !held.is_empty(),
        "an open WAL connection holds a shared lock on the database"
    );
    for _ in 0..3 {
        let mut again = SqliteStore::open_read_only(path.clone()).unwrap();
        assert_eq!(again.list(&RunQuery::default()).unwrap().len(), 1);
        drop(again);
        assert_eq!(
            locks_held_on(&path),
            held,
            "opening (and closing) the database again lost the locks the open connections hold"
        );
    }
    // And a writer's open too: it asks the same question of the file.
    drop(SqliteStore::open(path.clone()).unwrap());
    assert_eq!(locks_held_on(&path), held);
    writer.insert_complete(&synthetic::full_run(2)).unwrap();
    assert_eq!(reader.list(&RunQuery::default()).unwrap().len(), 2);
}

#[test]
fn a_path_that_is_not_a_file_is_refused_for_reading_and_writing() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    for (path, what) in [
        (dir.path().to_path_buf(), "a directory"),
        (fifo, "a FIFO"),
        (std::path::PathBuf::from("/dev/null"), "a character device"),
    ] {
        for err in [
            SqliteStore::open_read_only(path.clone()).err(),
            SqliteStore::open(path.clone()).err(),
        ] {
            let err = err.expect("refused");
            assert!(matches!(err, StoreError::NotAFile { .. }), "{err}");
            let text = err.to_string();
            assert!(
                text.starts_with(&format!(
                    "{} is {what}, not a results database file: give --db",
                    path.display()
                )),
                "{text}"
            );
        }
    }
}
