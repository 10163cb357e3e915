//! The PostgreSQL store, against the server in IOMARK_TEST_PG_URL
//! (`scripts/test` starts one), and against servers that are not there.

use crate::common;

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::synthetic;
use iomark_model::RunStatus;
use iomark_store::{PgStore, RunQuery, Store, StoreError};
use iomark_testrig::require;

/// A database of its own for one test, dropped afterwards.
struct TestDb {
    admin_url: String,
    name: String,
    url: String,
}

impl TestDb {
    /// The database, or why there is none (for `require!`).
    fn new() -> Result<TestDb, &'static str> {
        let Ok(admin_url) = std::env::var("IOMARK_TEST_PG_URL") else {
            return Err("IOMARK_TEST_PG_URL is not set (scripts/test starts a PostgreSQL server and sets it)");
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
        Ok(TestDb {
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
    let db = require!(TestDb::new());
    let mut store = PgStore::connect(&db.url).unwrap();
    assert_eq!(store.schema_version().unwrap(), 9);
    assert!(store.list(&RunQuery::default()).unwrap().is_empty());
    drop(store);
    // Reopening applies nothing twice.
    let mut store = iomark_store::open(Some(&db.url)).unwrap();
    assert_eq!(store.schema_version().unwrap(), 9);

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
    let db = require!(TestDb::new());
    let mut store = PgStore::connect(&db.url).unwrap();
    let mut doc = synthetic::run(1, 0);
    let id = store.begin_run(&doc).unwrap();
    if let iomark_model::RunBody::Disk(d) = &mut doc.body {
        d.jobs.push(synthetic::job(0, 420e6, 1));
    }
    store.update_run(id, &doc).unwrap();
    let s = store.load(id).unwrap();
    assert_eq!(s.summary.status, RunStatus::Interrupted);
    assert_eq!(s.figures.len(), 7);
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
fn a_live_runs_samples_round_trip_as_on_sqlite() {
    let db = require!(TestDb::new());
    let mut store = PgStore::connect(&db.url).unwrap();
    common::live_samples_round_trip(&mut store);
}

#[test]
fn concurrent_writers_on_a_fresh_database_all_succeed() {
    let db = require!(TestDb::new());
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
    iomark_testrig::assert_within(
        "refused connection reported",
        start.elapsed(),
        Duration::from_secs(5),
    );
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
    iomark_testrig::assert_within("a silent server timed out", waited, Duration::from_secs(4));
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

/// What `scripts/lib/postgres.sh` exports about the test server's TLS.
struct TlsEnv {
    ca: String,
    other_ca: String,
    host: String,
}

impl TlsEnv {
    /// The set-up, or why there is none (for `require!`).
    fn get() -> Result<TlsEnv, &'static str> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        match (
            var("IOMARK_TEST_PG_SSL_CA"),
            var("IOMARK_TEST_PG_SSL_OTHER_CA"),
            var("IOMARK_TEST_PG_SSL_HOST"),
        ) {
            (Some(ca), Some(other_ca), Some(host)) => Ok(TlsEnv { ca, other_ca, host }),
            _ => Err("IOMARK_TEST_PG_SSL_CA/_OTHER_CA/_HOST are not set (scripts/lib/postgres.sh sets them when it starts a server with ssl=on)"),
        }
    }
}

/// `db`'s URL with a password in its user info, host `host` and `params`.
/// The test server trusts every local connection, so the password is only
/// there to be kept out of messages.
fn url_with(db: &TestDb, host: &str, params: &str) -> String {
    let rest = db.url.strip_prefix("postgres://iomark@127.0.0.1").unwrap();
    format!("postgres://iomark:{SECRET}@{host}{rest}?{params}")
}

const SECRET: &str = "s3cret-Pw";

/// Whether every connection to `db` right now is encrypted, and how many.
fn encrypted_connections(db: &TestDb) -> (bool, i64) {
    let mut c = postgres::Client::connect(&db.admin_url, postgres::NoTls).unwrap();
    let row = c
        .query_one(
            "SELECT COALESCE(bool_and(s.ssl), false), COUNT(*) FROM pg_stat_ssl s
             JOIN pg_stat_activity a USING (pid) WHERE a.datname = $1",
            &[&db.name],
        )
        .unwrap();
    (row.get(0), row.get(1))
}

#[test]
fn sslmode_require_encrypts_and_stores() {
    let _tls = require!(TlsEnv::get());
    let db = require!(TestDb::new());
    // require checks no certificate, so the IP address (not in the
    // certificate) is fine.
    let mut store = PgStore::connect(&url_with(&db, "127.0.0.1", "sslmode=require")).unwrap();
    let doc = synthetic::full_run(5);
    let id = store.insert_complete(&doc).unwrap();
    common::assert_same_document(&store.load(id).unwrap(), &doc);
    assert_eq!(encrypted_connections(&db), (true, 1));
    assert!(!store.location().contains(SECRET), "{}", store.location());
}

#[test]
fn sslmode_verify_full_with_the_right_ca_and_host_connects() {
    let tls = require!(TlsEnv::get());
    let db = require!(TestDb::new());
    let url = url_with(
        &db,
        &tls.host,
        &format!(
            "sslmode=verify-full&sslrootcert={}&connect_timeout=20",
            tls.ca
        ),
    );
    let mut store = iomark_store::open(Some(&url)).unwrap();
    store.insert_complete(&synthetic::full_run(6)).unwrap();
    assert_eq!(store.list(&RunQuery::default()).unwrap().len(), 1);
    assert_eq!(encrypted_connections(&db), (true, 1));
    // verify-ca checks the CA only: the IP address is not in the
    // certificate and still connects.
    let url = url_with(
        &db,
        "127.0.0.1",
        &format!("sslmode=verify-ca&sslrootcert={}", tls.ca),
    );
    let mut ca_only = iomark_store::open_read_only(Some(&url)).unwrap();
    assert_eq!(ca_only.list(&RunQuery::default()).unwrap().len(), 1);
}

#[test]
fn sslmode_verify_full_refuses_a_wrong_ca_or_host_without_showing_the_password() {
    let tls = require!(TlsEnv::get());
    let db = require!(TestDb::new());
    let refused = |url: String| {
        let err = PgStore::connect(&url).err().expect("must be refused");
        let msg = err.to_string();
        assert!(!msg.contains(SECRET), "password leaked: {msg}");
        assert!(msg.contains(":***@"), "{msg}");
        msg
    };
    let msg = refused(url_with(
        &db,
        &tls.host,
        &format!("sslmode=verify-full&sslrootcert={}", tls.other_ca),
    ));
    assert!(msg.contains("not signed by the CA in"), "{msg}");
    assert!(msg.contains(&tls.other_ca), "{msg}");
    let msg = refused(url_with(
        &db,
        "127.0.0.1",
        &format!("sslmode=verify-full&sslrootcert={}", tls.ca),
    ));
    assert!(msg.contains("does not name the host"), "{msg}");
    assert!(msg.contains("sslmode=verify-ca"), "{msg}");
    // A password in the query is hidden as well.
    let msg = refused(format!(
        "{}&password={SECRET}x",
        url_with(
            &db,
            &tls.host,
            &format!("sslmode=verify-full&sslrootcert={}", tls.other_ca)
        )
    ));
    assert!(msg.contains("password=***"), "{msg}");
    // A CA file that is not there.
    let msg = refused(url_with(
        &db,
        &tls.host,
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    ));
    assert!(
        msg.contains("cannot read sslrootcert /nonexistent/ca.pem"),
        "{msg}"
    );
    // Nothing was stored through any of them.
    assert_eq!(encrypted_connections(&db).1, 0);
}

#[test]
fn an_unknown_sslmode_is_refused_before_connecting() {
    let err = PgStore::connect(&format!(
        "postgres://me:{SECRET}@127.0.0.1:1/db?sslmode=sometimes"
    ))
    .err()
    .unwrap();
    let msg = err.to_string();
    assert!(matches!(err, StoreError::BadUrl { .. }), "{msg}");
    assert!(msg.contains("verify-full"), "{msg}");
    assert!(!msg.contains(SECRET), "{msg}");
}

#[test]
fn a_read_only_open_never_migrates_and_refuses_writes() {
    let db = require!(TestDb::new());
    let err = iomark_store::open_read_only(Some(&db.url))
        .err()
        .expect("an empty database has no schema");
    assert!(matches!(err, StoreError::NoSchema { .. }), "{err}");
    let mut c = postgres::Client::connect(
        &db.admin_url.replace("/postgres", &format!("/{}", db.name)),
        postgres::NoTls,
    )
    .unwrap();
    let tables: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(tables, 0, "a read-only open created tables");
    drop(c);
    let id = PgStore::connect(&db.url)
        .unwrap()
        .insert_complete(&synthetic::full_run(1))
        .unwrap();
    let mut ro = iomark_store::open_read_only(Some(&db.url)).unwrap();
    assert_eq!(ro.load(id).unwrap().summary.id, id);
    let err = ro.insert_complete(&synthetic::full_run(2)).unwrap_err();
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(ro.list(&RunQuery::default()).unwrap().len(), 1);
}

#[test]
fn devices_are_remembered_by_key_as_on_sqlite() {
    use iomark_store::DeviceMemory;
    let db = require!(TestDb::new());
    let mut store = PgStore::connect(&db.url).unwrap();
    assert_eq!(store.device("serial:X:1").unwrap(), None);
    let mut d = DeviceMemory::new("serial:X:1", "ACME X (sdb)");
    d.rated = Some("read=550MB/s,write=520MB/s".parse().unwrap());
    store.remember_device(&d).unwrap();
    d.description = "ACME X (sdc)".into();
    store.remember_device(&d).unwrap();
    assert_eq!(store.device("serial:X:1").unwrap().as_ref(), Some(&d));
    d.verify = Some(iomark_store::RememberedVerify {
        verdict: iomark_model::verify::VerifyVerdict {
            claimed: iomark_model::Bytes(256 << 20),
            usable: iomark_model::Bytes(256 << 20),
            bad: iomark_model::verify::BadCounts {
                corrupted: 3,
                lost: 0,
                wrapped: 0,
            },
            ranges: 2,
            quick: false,
        },
        run: None,
        at_ms: 1_795_000_000_000,
    });
    store.remember_device(&d).unwrap();
    assert_eq!(store.device("serial:X:1").unwrap().as_ref(), Some(&d));
}

#[test]
fn lists_pages_filters_and_devices_as_on_sqlite() {
    let db = require!(TestDb::new());
    let mut store = PgStore::connect(&db.url).unwrap();
    common::lists_pages_filters_and_devices(&mut store);
}

#[test]
fn version_6_seconds_read_without_flops_as_on_sqlite() {
    let db = require!(TestDb::new());
    let mut store = PgStore::connect(&db.url).unwrap();
    let id = store.begin_run(&synthetic::run(1, 0)).unwrap();
    let written = [common::sample(1, 1000)];
    store.add_samples(id, 0, &written).unwrap();
    drop(store);
    // Back to version 6, as the iomark before flops left it.
    let mut c = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    c.batch_execute(
        "ALTER TABLE run_samples DROP COLUMN flops; \
         ALTER TABLE run_samples DROP COLUMN left_at_most; \
         DELETE FROM schema_migrations WHERE version >= 7",
    )
    .unwrap();
    drop(c);
    let mut ro = iomark_store::open_read_only(Some(&db.url)).unwrap();
    assert_eq!(ro.schema_version().unwrap(), 6);
    let read = ro.samples(id, None).unwrap();
    let want = iomark_model::live::LiveSample {
        flops: None,
        left_at_most: false,
        ..written[0].clone()
    };
    assert_eq!(read, [(0, want)]);
}

#[test]
fn version_7_runs_filter_by_host_and_profile_as_on_sqlite() {
    let db = require!(TestDb::new());
    let mut store = PgStore::connect(&db.url).unwrap();
    common::three_runs_on_two_hosts(&mut store);
    drop(store);
    // Back to version 7, as the iomark before the columns left it.
    let mut c = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    c.batch_execute(&format!(
        "{} ALTER TABLE run_samples DROP COLUMN left_at_most; \
         DELETE FROM schema_migrations WHERE version >= 8",
        common::UNDO_HOST_PROFILE
    ))
    .unwrap();
    drop(c);
    let mut ro = iomark_store::open_read_only(Some(&db.url)).unwrap();
    assert_eq!(ro.schema_version().unwrap(), 7);
    common::filter_the_three_runs(ro.as_mut());
    drop(ro);
    // The migration fills the columns from the documents stored before.
    let mut rw = PgStore::connect(&db.url).unwrap();
    assert_eq!(rw.schema_version().unwrap(), 9);
    common::filter_the_three_runs(&mut rw);
}
