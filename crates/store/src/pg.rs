//! The shared store: the same tables in PostgreSQL, for a team or a fleet.

use std::str::FromStr;
use std::sync::mpsc;
use std::time::Duration;

use iomark_model::{RunDocument, RunStatus};
use postgres::{Client, NoTls};

use crate::row::RunRow;
use crate::sqlite::{figure_from_parts, like_pattern, now_ms, warning_from_parts, RawSummary};
use crate::{RunId, RunQuery, RunSummary, Store, StoreError, StoredRun};

/// The numbered migrations, in order; the same numbers as SQLite's.
const MIGRATIONS: &[(i64, &str, &str)] = &[(
    1,
    "runs",
    include_str!("../migrations/postgres/0001_runs.sql"),
)];

/// How long to wait for a server when the URL does not say
/// (`?connect_timeout=N`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An arbitrary constant naming iomark's migration lock, so two processes
/// migrating one fresh database take turns.
const MIGRATION_LOCK: i64 = 0x696f_6d61_726b;

/// Results in a PostgreSQL database.
pub struct PgStore {
    client: Client,
    url: String,
}

impl PgStore {
    /// Connect to `url` (`postgres://user:password@host:port/dbname`) and
    /// migrate the schema. Gives up after the URL's `connect_timeout` (10 s
    /// by default) however the server fails to answer.
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        let shown = redact(url);
        let mut config = postgres::Config::from_str(url).map_err(|e| StoreError::BadUrl {
            url: shown.clone(),
            reason: e.to_string(),
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
            let _ = tx.send(config.connect(NoTls));
        });
        let client = match rx.recv_timeout(timeout + Duration::from_millis(500)) {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                return Err(StoreError::Postgres {
                    url: shown,
                    reason: pg_reason(&e),
                })
            }
            Err(_) => {
                return Err(StoreError::Unreachable {
                    url: shown,
                    secs: timeout.as_secs().max(1),
                })
            }
        };
        let mut store = PgStore { client, url: shown };
        store.migrate()?;
        Ok(store)
    }

    fn err(&self) -> impl Fn(postgres::Error) -> StoreError {
        pg_err(&self.url)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let url = self.url.clone();
        let err = pg_err(&url);
        let mut tx = self.client.transaction().map_err(&err)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .map_err(&err)?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                 version BIGINT PRIMARY KEY,
                 name TEXT NOT NULL,
                 applied_at_ms BIGINT NOT NULL)",
        )
        .map_err(&err)?;
        let current: i64 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
                &[],
            )
            .map_err(&err)?
            .get(0);
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        if current > known {
            return Err(StoreError::NewerSchema {
                location: url,
                found: current,
                known,
            });
        }
        for (version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
            tx.batch_execute(sql).map_err(&err)?;
            tx.execute(
                "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES ($1, $2, $3)",
                &[version, name, &now_ms()],
            )
            .map_err(&err)?;
        }
        tx.commit().map_err(&err)
    }

    fn write(&mut self, id: Option<RunId>, row: &RunRow) -> Result<RunId, StoreError> {
        let url = self.url.clone();
        let err = pg_err(&url);
        let mut tx = self.client.transaction().map_err(&err)?;
        let warning_count = row.warnings.len() as i64;
        let id = match id {
            Some(id) => {
                let n = tx
                    .execute(
                        "UPDATE runs SET kind=$2, tool=$3, tool_version=$4, command_line=$5,
                         started_at_ms=$6, finished_at_ms=$7, status=$8, labels=$9, note=$10,
                         target=$11, device=$12, warning_count=$13, schema_version=$14
                         WHERE id=$1",
                        &[
                            &id.0,
                            &row.kind,
                            &row.tool,
                            &row.tool_version,
                            &row.command_line,
                            &row.started_at_ms,
                            &row.finished_at_ms,
                            &row.status,
                            &row.labels_json,
                            &row.note,
                            &row.target,
                            &row.device,
                            &warning_count,
                            &row.schema_version,
                        ],
                    )
                    .map_err(&err)?;
                if n == 0 {
                    return Err(StoreError::NotFound { id, location: url });
                }
                for table in ["run_documents", "run_labels", "figures", "warnings"] {
                    tx.execute(&format!("DELETE FROM {table} WHERE run_id = $1"), &[&id.0])
                        .map_err(&err)?;
                }
                id
            }
            None => RunId(
                tx.query_one(
                    "INSERT INTO runs (kind, tool, tool_version, command_line, started_at_ms,
                     finished_at_ms, status, labels, note, target, device, warning_count,
                     schema_version)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
                     RETURNING id",
                    &[
                        &row.kind,
                        &row.tool,
                        &row.tool_version,
                        &row.command_line,
                        &row.started_at_ms,
                        &row.finished_at_ms,
                        &row.status,
                        &row.labels_json,
                        &row.note,
                        &row.target,
                        &row.device,
                        &warning_count,
                        &row.schema_version,
                    ],
                )
                .map_err(&err)?
                .get(0),
            ),
        };
        tx.execute(
            "INSERT INTO run_documents (run_id, document) VALUES ($1, $2)",
            &[&id.0, &row.document],
        )
        .map_err(&err)?;
        let st = tx
            .prepare("INSERT INTO run_labels (run_id, label) VALUES ($1, $2)")
            .map_err(&err)?;
        for l in &row.labels {
            tx.execute(&st, &[&id.0, l]).map_err(&err)?;
        }
        let st = tx
            .prepare(
                "INSERT INTO figures (run_id, ord, test, metric, unit, value, spread_lo, spread_hi)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .map_err(&err)?;
        for (i, f) in row.figures.iter().enumerate() {
            tx.execute(
                &st,
                &[
                    &id.0,
                    &(i as i64),
                    &f.test,
                    &f.metric,
                    &f.unit.as_str(),
                    &f.value,
                    &f.spread.map(|s| s.0),
                    &f.spread.map(|s| s.1),
                ],
            )
            .map_err(&err)?;
        }
        let st = tx
            .prepare(
                "INSERT INTO warnings (run_id, ord, scope, kind, message) VALUES ($1, $2, $3, $4, $5)",
            )
            .map_err(&err)?;
        for (i, (scope, kind, msg)) in row.warnings.iter().enumerate() {
            tx.execute(&st, &[&id.0, &(i as i64), scope, kind, msg])
                .map_err(&err)?;
        }
        tx.commit().map_err(&err)?;
        Ok(id)
    }
}

fn pg_err(url: &str) -> impl Fn(postgres::Error) -> StoreError {
    let url = url.to_string();
    move |e| StoreError::Postgres {
        url: url.clone(),
        reason: pg_reason(&e),
    }
}

/// The server's own message when there is one, else the driver's.
fn pg_reason(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(cause) = src {
                s += &format!(": {cause}");
                src = cause.source();
            }
            s
        }
    }
}

/// `url` with any password replaced by `***`, for messages.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some(p) => p,
        None => return url.to_string(),
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

fn summary(row: &postgres::Row) -> RawSummary {
    RawSummary {
        id: row.get(0),
        kind: row.get(1),
        tool: row.get(2),
        tool_version: row.get(3),
        command_line: row.get(4),
        started_at_ms: row.get(5),
        finished_at_ms: row.get(6),
        status: row.get(7),
        labels: row.get(8),
        note: row.get(9),
        target: row.get(10),
        device: row.get(11),
        warning_count: row.get(12),
    }
}

const SUMMARY_COLUMNS: &str = "id, kind, tool, tool_version, command_line, started_at_ms,
    finished_at_ms, status, labels, note, target, device, warning_count";

impl Store for PgStore {
    fn location(&self) -> String {
        self.url.clone()
    }

    fn begin_run(&mut self, doc: &RunDocument) -> Result<RunId, StoreError> {
        let row = RunRow::new(doc, RunStatus::Interrupted)?;
        self.write(None, &row)
    }

    fn update_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError> {
        let row = RunRow::new(doc, RunStatus::Interrupted)?;
        self.write(Some(id), &row).map(drop)
    }

    fn finish_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError> {
        let row = RunRow::new(doc, doc.status)?;
        self.write(Some(id), &row).map(drop)
    }

    fn insert_complete(&mut self, doc: &RunDocument) -> Result<RunId, StoreError> {
        let row = RunRow::new(doc, doc.status)?;
        self.write(None, &row)
    }

    fn list(&mut self, q: &RunQuery) -> Result<Vec<RunSummary>, StoreError> {
        let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE TRUE");
        let mut args: Vec<Box<dyn postgres::types::ToSql + Sync>> = Vec::new();
        for l in &q.labels {
            args.push(Box::new(l.clone()));
            sql += &format!(
                " AND id IN (SELECT run_id FROM run_labels WHERE label = ${})",
                args.len()
            );
        }
        if let Some(d) = &q.device {
            args.push(Box::new(like_pattern(d)));
            let n = args.len();
            sql += &format!(" AND (device ILIKE ${n} OR target ILIKE ${n})");
        }
        if let Some(s) = q.since_ms {
            args.push(Box::new(i64::try_from(s).unwrap_or(i64::MAX)));
            sql += &format!(" AND started_at_ms >= ${}", args.len());
        }
        sql += " ORDER BY id DESC";
        if let Some(n) = q.limit {
            sql += &format!(" LIMIT {n}");
        }
        let url = self.url.clone();
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
            args.iter().map(|a| a.as_ref()).collect();
        let rows = self.client.query(&sql, &refs).map_err(pg_err(&url))?;
        let mut out = rows
            .iter()
            .map(|r| summary(r).check(&url))
            .collect::<Result<Vec<_>, _>>()?;
        out.reverse();
        Ok(out)
    }

    fn load(&mut self, id: RunId) -> Result<StoredRun, StoreError> {
        let url = self.url.clone();
        let err = pg_err(&url);
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(&err)?;
        let row = tx
            .query_opt(
                &format!(
                    "SELECT {SUMMARY_COLUMNS}, document FROM runs
                     JOIN run_documents ON run_documents.run_id = runs.id WHERE id = $1"
                ),
                &[&id.0],
            )
            .map_err(&err)?;
        let Some(row) = row else {
            return Err(StoreError::NotFound { id, location: url });
        };
        let summary = summary(&row).check(&url)?;
        let document_json: String = row.get(13);
        let figures = tx
            .query(
                "SELECT test, metric, unit, value, spread_lo, spread_hi FROM figures
                 WHERE run_id = $1 ORDER BY ord",
                &[&id.0],
            )
            .map_err(&err)?
            .iter()
            .map(|r| {
                figure_from_parts(
                    &url,
                    r.get(0),
                    r.get(1),
                    r.get(2),
                    r.get(3),
                    r.get(4),
                    r.get(5),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let warnings = tx
            .query(
                "SELECT scope, kind, message FROM warnings WHERE run_id = $1 ORDER BY ord",
                &[&id.0],
            )
            .map_err(&err)?
            .iter()
            .map(|r| warning_from_parts(r.get(0), r.get::<_, &str>(1), r.get(2)))
            .collect();
        tx.commit().map_err(&err)?;
        Ok(StoredRun {
            summary,
            figures,
            warnings,
            document_json,
        })
    }

    fn delete(&mut self, id: RunId) -> Result<(), StoreError> {
        let n = self
            .client
            .execute("DELETE FROM runs WHERE id = $1", &[&id.0])
            .map_err(self.err())?;
        if n == 0 {
            return Err(StoreError::NotFound {
                id,
                location: self.url.clone(),
            });
        }
        Ok(())
    }

    fn schema_version(&mut self) -> Result<i64, StoreError> {
        let row = self
            .client
            .query_one(
                "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
                &[],
            )
            .map_err(self.err())?;
        Ok(row.get(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact("postgres://me:secret@db:5432/iomark"),
            "postgres://me:***@db:5432/iomark"
        );
        assert_eq!(redact("postgres://me@db/iomark"), "postgres://me@db/iomark");
        assert_eq!(redact("postgres://db/iomark"), "postgres://db/iomark");
    }
}
