//! The shared store: the same tables in PostgreSQL, for a team or a fleet.
//! Connecting (with a time limit, and TLS as [`tls`] sets it up) is here;
//! the work done in the database is [`crate::ops`], through this file's
//! [`Db`] implementation.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::mpsc;
use std::time::Duration;

use postgres::{Client, GenericClient, Statement};

use crate::backend::{Column, Db, DriverRow, Migration, Param, Row};
use crate::decode::Decode;
use crate::row::RunRow;
use crate::{forward, ops, samples};
use crate::{redact, DeviceMemory, RunId, Store, StoreError, StoredRun};
use iomark_model::live::LiveSample;

mod errors;
mod tls;

use errors::{pg_err, scrub, secrets_of};
use tls::Tls;

/// How long to wait for a server when the URL does not say
/// (`?connect_timeout=N`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long [`Store::connection_lost`] waits for the server to answer.
const LIVENESS_TIMEOUT: Duration = Duration::from_secs(2);

/// An arbitrary constant naming iomark's migration lock, so two processes
/// migrating one fresh database take turns.
const MIGRATION_LOCK: i64 = 0x696f_6d61_726b;

/// Results in a PostgreSQL database.
pub struct PgStore {
    client: Client,
    url: String,
    /// The URL's passwords, kept out of every message.
    secrets: Vec<String>,
    /// The statements prepared so far, by their SQL as [`crate::ops`] wrote it.
    statements: HashMap<String, Statement>,
}

impl PgStore {
    /// Connect to `url` (`postgres://user:password@host:port/dbname`) and
    /// migrate the schema. Gives up after the URL's `connect_timeout` (10 s
    /// by default) however the server fails to answer. `sslmode` and
    /// `sslrootcert` in the URL work as in libpq (docs/store.md, TLS).
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        let mut store = Self::connect_only(url)?;
        store.migrate()?;
        Ok(store)
    }

    /// Connect to `url` for reading only: no migration is attempted, the
    /// session refuses writes, and a database without iomark's schema is
    /// [`StoreError::NoSchema`].
    pub fn connect_read_only(url: &str) -> Result<PgStore, StoreError> {
        let mut store = Self::connect_only(url)?;
        store
            .client
            .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            .map_err(store.err())?;
        ops::check_schema(&mut store.db())?;
        Ok(store)
    }

    fn connect_only(url: &str) -> Result<PgStore, StoreError> {
        let shown = redact(url);
        let secrets = secrets_of(url);
        let bad = |reason: String| StoreError::BadUrl {
            url: shown.clone(),
            reason: scrub(&reason, &secrets),
        };
        let (driver_url, tls) = Tls::from_url(url).map_err(bad)?;
        let mut config = postgres::Config::from_str(&driver_url).map_err(|e| bad(e.to_string()))?;
        config.ssl_mode(tls.driver_mode());
        let connector = tls.connector().map_err(|reason| StoreError::Postgres {
            url: shown.clone(),
            reason: scrub(&reason, &secrets),
        })?;
        let timeout = config
            .get_connect_timeout()
            .copied()
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT);
        config.connect_timeout(timeout);
        // The driver's timeout covers the TCP connect only; a server that
        // accepts and then says nothing would hang the handshake, so the
        // whole connect runs on a thread we stop waiting for.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(config.connect(connector));
        });
        let client = match rx.recv_timeout(timeout + Duration::from_millis(500)) {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                return Err(StoreError::Postgres {
                    url: shown,
                    reason: scrub(&tls.explain(&e), &secrets),
                })
            }
            Err(_) => {
                return Err(StoreError::Unreachable {
                    url: shown,
                    secs: timeout.as_secs().max(1),
                })
            }
        };
        Ok(PgStore {
            client,
            url: shown,
            secrets,
            statements: HashMap::new(),
        })
    }

    fn err(&self) -> impl Fn(postgres::Error) -> StoreError {
        pg_err(&self.url, &self.secrets)
    }

    /// The connection, as the shared store code uses it.
    fn db(&mut self) -> Pg<'_, Client> {
        Pg {
            client: &mut self.client,
            statements: &mut self.statements,
            url: &self.url,
            secrets: &self.secrets,
        }
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        self.in_transaction(false, |db| {
            // Two processes migrating one fresh database take turns.
            db.client
                .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .map_err(pg_err(db.url, db.secrets))?;
            ops::migrate(db)
        })
    }

    /// `f` in one transaction, committed when it succeeds; a `snapshot`
    /// one only reads, and sees the database as it was when it started.
    fn in_transaction<T>(
        &mut self,
        snapshot: bool,
        f: impl FnOnce(&mut Pg<'_, postgres::Transaction<'_>>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let err = self.err();
        let mut builder = self.client.build_transaction();
        if snapshot {
            builder = builder
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true);
        }
        let mut tx = builder.start().map_err(&err)?;
        let out = f(&mut Pg {
            client: &mut tx,
            statements: &mut self.statements,
            url: &self.url,
            secrets: &self.secrets,
        })?;
        tx.commit().map_err(&err)?;
        Ok(out)
    }

    /// Store `row` as a new run, or in place of run `id`.
    fn write(&mut self, id: Option<RunId>, row: &RunRow) -> Result<RunId, StoreError> {
        self.in_transaction(false, |db| ops::write(db, id, row))
    }
}

/// A PostgreSQL client or transaction as the shared store code uses it.
struct Pg<'a, C> {
    client: &'a mut C,
    statements: &'a mut HashMap<String, Statement>,
    url: &'a str,
    secrets: &'a [String],
}

impl<C: GenericClient> Pg<'_, C> {
    /// `sql` as [`crate::ops`] writes it (`?1`), prepared once per
    /// connection.
    fn statement(&mut self, sql: &str) -> Result<Statement, StoreError> {
        if let Some(st) = self.statements.get(sql) {
            return Ok(st.clone());
        }
        let st = self
            .client
            .prepare(&numbered(sql))
            .map_err(pg_err(self.url, self.secrets))?;
        self.statements.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

/// SQLite's numbered parameters (`?1`) as PostgreSQL writes them (`$1`).
fn numbered(sql: &str) -> String {
    sql.replace('?', "$")
}

fn pg_params<'a>(params: &[&'a dyn Param]) -> Vec<&'a (dyn postgres::types::ToSql + Sync)> {
    params.iter().map(|p| p.pg()).collect()
}

impl<C: GenericClient> Db for Pg<'_, C> {
    const MIGRATIONS: &'static [Migration] = &[
        (
            1,
            "runs",
            include_str!("../migrations/postgres/0001_runs.sql"),
        ),
        (
            2,
            "devices",
            include_str!("../migrations/postgres/0002_devices.sql"),
        ),
        (
            3,
            "device_verify",
            include_str!("../migrations/postgres/0003_device_verify.sql"),
        ),
        (
            4,
            "run_ranks",
            include_str!("../migrations/postgres/0004_run_ranks.sql"),
        ),
        (
            5,
            "figure_noise",
            include_str!("../migrations/postgres/0005_figure_noise.sql"),
        ),
        (
            6,
            "run_samples",
            include_str!("../migrations/postgres/0006_run_samples.sql"),
        ),
        (
            7,
            "sample_flops",
            include_str!("../migrations/postgres/0007_sample_flops.sql"),
        ),
        (
            8,
            "run_host_profile",
            include_str!("../migrations/postgres/0008_run_host_profile.sql"),
        ),
        (
            9,
            "sample_left_at_most",
            include_str!("../migrations/postgres/0009_sample_left_at_most.sql"),
        ),
    ];
    const LIKE: &'static str = "ILIKE";
    const BIGINT: &'static str = "BIGINT";
    const HAS_MIGRATIONS_TABLE: &'static str =
        "SELECT to_regclass('schema_migrations') IS NOT NULL";

    fn location(&self) -> String {
        self.url.to_string()
    }

    fn json_text(column: &str, path: &[&str]) -> String {
        // Keys are the code's own words, never user text.
        format!("(({column})::jsonb #>> '{{{}}}')", path.join(","))
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.client
            .batch_execute(sql)
            .map_err(pg_err(self.url, self.secrets))
    }

    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> Result<u64, StoreError> {
        let st = self.statement(sql)?;
        self.client
            .execute(&st, &pg_params(params))
            .map_err(pg_err(self.url, self.secrets))
    }

    fn query<D: Decode>(&mut self, sql: &str, params: &[&dyn Param]) -> Result<Vec<D>, StoreError> {
        let err = pg_err(self.url, self.secrets);
        let rows = self
            .client
            .query(&numbered(sql), &pg_params(params))
            .map_err(&err)?;
        rows.iter()
            .map(|row| D::decode(&DriverRow { row, err: &err }, self.url))
            .collect()
    }
}

impl Row for DriverRow<'_, postgres::Row, postgres::Error> {
    fn get<T: Column>(&self, i: usize) -> Result<T, StoreError> {
        self.row.try_get(i).map_err(self.err)
    }
}

impl Store for PgStore {
    fn location(&self) -> String {
        self.url.clone()
    }

    ops::store_writes!();
    forward::store_reads!();

    fn load(&mut self, id: RunId) -> Result<StoredRun, StoreError> {
        self.in_transaction(true, |db| ops::load(db, id))
    }

    fn delete(&mut self, id: RunId) -> Result<(), StoreError> {
        ops::delete(&mut self.db(), id)
    }

    fn remember_device(&mut self, device: &DeviceMemory) -> Result<(), StoreError> {
        ops::remember_device(&mut self.db(), device)
    }

    fn add_samples(
        &mut self,
        id: RunId,
        first_seq: u64,
        samples: &[LiveSample],
    ) -> Result<(), StoreError> {
        samples::add(&mut self.db(), id, first_seq, samples)
    }

    fn connection_lost(&mut self) -> bool {
        // A terminated session reports its error before the socket's end
        // is seen, so ask the server once rather than trust is_closed alone.
        self.client.is_closed() || self.client.is_valid(LIVENESS_TIMEOUT).is_err()
    }
}
