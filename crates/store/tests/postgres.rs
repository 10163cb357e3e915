//! The PostgreSQL store, against the server in IOMARK_TEST_PG_URL
//! (`scripts/test` starts one), and against servers that are not there.

mod common;

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::synthetic;
use iomark_model::RunStatus;
use iomark_store::{PgStore, RunQuery, Store, StoreError};

/// A database of its own for one test, dropped afterwards.
struct TestDb {
    admin_url: String,
    name: String,
    url: String,
}

impl TestDb {
    fn new() -> Option<TestDb> {
        let Ok(admin_url) = std::env::var("IOMARK_TEST_PG_URL") else {
            eprintln!("skipped: IOMARK_TEST_PG_URL is not set (scripts/test starts a PostgreSQL server and sets it)");
            return None;
        };
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "iomark_test_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        let mut c = postgres::Client::connect(&admin_url, postgres::NoTls).unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        let base = admin_url.split('?').next().unwrap();
        let (server, _db) = base.rsplit_once('/').unwrap();
        let url = format!("{server}/{name}");
        Some(TestDb {
            admin_url,
            name,
            url,
        })
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin_url, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

#[test]
fn migrations_build_an_empty_database_and_runs_round_trip() {
    let Some(db) = TestDb::new() else { return };
    let mut store = PgStore::connect(&db.url).unwrap();
    assert_eq!(store.schema_version().unwrap(), 1);
    assert!(store.list(&RunQuery::default()).unwrap().is_empty());
    drop(store);
    // Reopening applies nothing twice.
    let mut store = iomark_store::open(Some(&db.url)).unwrap();
    assert_eq!(store.schema_version().unwrap(), 1);

    let doc = synthetic::full_run(3);
    let id = store.insert_complete(&doc).unwrap();
    let stored = store.load(id).unwrap();
    common::assert_same_document(&stored, &doc);
    assert_eq!(stored.summary.labels, ["batch3", "usb2"]);
    assert_eq!(stored.warnings.len(), 1);
    assert_eq!(stored.summary.status, RunStatus::Complete);
}

#[test]
fn live_runs_queries_and_deletes_behave_as_on_sqlite() {
    let Some(db) = TestDb::new() else { return };
    let mut store = PgStore::connect(&db.url).unwrap();
    let mut doc = synthetic::run(1, 0);
    let id = store.begin_run(&doc).unwrap();
    if let iomark_model::RunBody::Disk(d) = &mut doc.body {
        d.jobs.push(synthetic::job(0, 420e6, 1));
    }
    store.update_run(id, &doc).unwrap();
    let s = store.load(id).unwrap();
    assert_eq!(s.summary.status, RunStatus::Interrupted);
    assert_eq!(s.figures.len(), 4);
    doc.status = RunStatus::Complete;
    store.finish_run(id, &doc).unwrap();
    common::assert_same_document(&store.load(id).unwrap(), &doc);

    for seed in 2..8 {
        store.insert_complete(&synthetic::full_run(seed)).unwrap();
    }
    let q = |labels: &[&str], device: Option<&str>| RunQuery {
        labels: labels.iter().map(|s| s.to_string()).collect(),
        device: device.map(str::to_string),
        ..Default::default()
    };
    assert_eq!(store.list(&q(&[], None)).unwrap().len(), 7);
    assert_eq!(store.list(&q(&["usb3"], None)).unwrap().len(), 3);
    assert_eq!(store.list(&q(&["usb3", "batch4"], None)).unwrap().len(), 1);
    assert_eq!(store.list(&q(&[], Some("NVME"))).unwrap().len(), 2);
    store.delete(id).unwrap();
    assert!(matches!(store.load(id), Err(StoreError::NotFound { .. })));
    assert_eq!(store.list(&q(&[], None)).unwrap().len(), 6);
}

#[test]
fn concurrent_writers_on_a_fresh_database_all_succeed() {
    let Some(db) = TestDb::new() else { return };
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let url = db.url.clone();
            std::thread::spawn(move || {
                // All four race to migrate the empty database.
                let mut store = PgStore::connect(&url).unwrap();
                for i in 0..10 {
                    store
                        .insert_complete(&synthetic::full_run(t * 100 + i))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a writer failed");
    }
    let mut store = PgStore::connect(&db.url).unwrap();
    assert_eq!(store.list(&RunQuery::default()).unwrap().len(), 40);
}

#[test]
fn a_refused_connection_is_a_clear_error_at_once() {
    // A port nobody listens on: bind one, then free it.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let start = Instant::now();
    let err = iomark_store::open(Some(&format!(
        "postgres://me:secret@127.0.0.1:{port}/iomark"
    )))
    .err()
    .expect("no server there");
    assert!(start.elapsed() < Duration::from_secs(5));
    let msg = err.to_string();
    assert!(
        msg.contains("PostgreSQL postgres://me:***@127.0.0.1"),
        "{msg}"
    );
    assert!(!msg.contains("secret"), "password leaked: {msg}");
    assert!(msg.to_lowercase().contains("refused"), "{msg}");
}

#[test]
fn a_server_that_never_answers_times_out_instead_of_hanging() {
    // Accepts connections (the kernel completes the handshake) but never
    // says a word: the driver's own timeout does not cover this.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let start = Instant::now();
    let err = PgStore::connect(&format!(
        "postgres://me@127.0.0.1:{port}/iomark?connect_timeout=1"
    ))
    .err()
    .expect("nothing answers");
    let waited = start.elapsed();
    assert!(waited < Duration::from_secs(4), "waited {waited:?}");
    assert!(
        matches!(err, StoreError::Unreachable { secs: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("did not answer within 1 s"));
    drop(silent);
}

#[test]
fn a_malformed_url_names_the_expected_shape() {
    let err = iomark_store::open(Some("postgres://u@h:notaport/db"))
        .err()
        .unwrap();
    assert!(matches!(err, StoreError::BadUrl { .. }), "{err}");
    assert!(err.to_string().contains("postgres://user@host:port/dbname"));
}
