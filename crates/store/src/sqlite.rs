//! The embedded store: one SQLite file, in WAL mode so readers never block
//! the writer and two iomark processes can write at once.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iomark_model::figure::Figure;
use iomark_model::{RunDocument, RunStatus, Warning};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use crate::row::RunRow;
use crate::{
    status_from_str, unit_from_str, warning_kind_from_str, RunId, RunQuery, RunSummary, Store,
    StoreError, StoredRun, StoredWarning,
};

/// The numbered migrations, in order. Never edit one that has shipped; add
/// the next number.
const MIGRATIONS: &[(i64, &str, &str)] = &[(
    1,
    "runs",
    include_str!("../migrations/sqlite/0001_runs.sql"),
)];

/// How long a writer waits for another process's transaction to end.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Results in a SQLite file.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Open (creating it and its directory if needed) and migrate the
    /// database at `path`.
    pub fn open(path: PathBuf) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|cause| StoreError::CreateDir {
                path: dir.display().to_string(),
                cause,
            })?;
        }
        let err = sqlite_err(&path);
        let conn = Connection::open(&path).map_err(&err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(&err)?;
        // WAL: a crash or kill -9 leaves the last committed transaction
        // intact; NORMAL sync is durable against process death (not power
        // loss), which is the failure a benchmark run meets.
        // Switching a fresh file to WAL takes an exclusive lock and does not
        // wait in SQLite's busy handler, so processes opening a new
        // database together retry here.
        retry_busy(|| conn.pragma_update(None, "journal_mode", "WAL")).map_err(&err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(&err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(&err)?;
        let mut store = SqliteStore { conn, path };
        retry_busy_store(|| store.migrate())?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError {
        sqlite_err(&self.path)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let err = sqlite_err(&path);
        // IMMEDIATE: a second process opening a fresh database waits here
        // instead of applying the same migration twice.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&err)?;
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                 version INTEGER PRIMARY KEY,
                 name TEXT NOT NULL,
                 applied_at_ms INTEGER NOT NULL)",
        )
        .map_err(&err)?;
        let current: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(&err)?;
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        if current > known {
            return Err(StoreError::NewerSchema {
                location: path.display().to_string(),
                found: current,
                known,
            });
        }
        for (version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
            tx.execute_batch(sql).map_err(&err)?;
            tx.execute(
                "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?1, ?2, ?3)",
                params![version, name, now_ms()],
            )
            .map_err(&err)?;
        }
        tx.commit().map_err(&err)
    }

    fn write(&mut self, id: Option<RunId>, row: &RunRow) -> Result<RunId, StoreError> {
        let path = self.path.clone();
        let err = sqlite_err(&path);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&err)?;
        let id = match id {
            Some(id) => {
                let n = tx
                    .execute(
                        "UPDATE runs SET kind=?2, tool=?3, tool_version=?4, command_line=?5,
                         started_at_ms=?6, finished_at_ms=?7, status=?8, labels=?9, note=?10,
                         target=?11, device=?12, warning_count=?13, schema_version=?14
                         WHERE id=?1",
                        params![
                            id.0,
                            row.kind,
                            row.tool,
                            row.tool_version,
                            row.command_line,
                            row.started_at_ms,
                            row.finished_at_ms,
                            row.status,
                            row.labels_json,
                            row.note,
                            row.target,
                            row.device,
                            row.warnings.len() as i64,
                            row.schema_version,
                        ],
                    )
                    .map_err(&err)?;
                if n == 0 {
                    return Err(StoreError::NotFound {
                        id,
                        location: path.display().to_string(),
                    });
                }
                for table in ["run_documents", "run_labels", "figures", "warnings"] {
                    tx.execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), [id.0])
                        .map_err(&err)?;
                }
                id
            }
            None => {
                tx.execute(
                    "INSERT INTO runs (kind, tool, tool_version, command_line, started_at_ms,
                     finished_at_ms, status, labels, note, target, device, warning_count,
                     schema_version)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                    params![
                        row.kind,
                        row.tool,
                        row.tool_version,
                        row.command_line,
                        row.started_at_ms,
                        row.finished_at_ms,
                        row.status,
                        row.labels_json,
                        row.note,
                        row.target,
                        row.device,
                        row.warnings.len() as i64,
                        row.schema_version,
                    ],
                )
                .map_err(&err)?;
                RunId(tx.last_insert_rowid())
            }
        };
        tx.execute(
            "INSERT INTO run_documents (run_id, document) VALUES (?1, ?2)",
            params![id.0, row.document],
        )
        .map_err(&err)?;
        {
            let mut st = tx
                .prepare_cached("INSERT INTO run_labels (run_id, label) VALUES (?1, ?2)")
                .map_err(&err)?;
            for l in &row.labels {
                st.execute(params![id.0, l]).map_err(&err)?;
            }
            let mut st = tx
                .prepare_cached(
                    "INSERT INTO figures (run_id, ord, test, metric, unit, value, spread_lo, spread_hi)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(&err)?;
            for (i, f) in row.figures.iter().enumerate() {
                st.execute(params![
                    id.0,
                    i as i64,
                    f.test,
                    f.metric,
                    f.unit.as_str(),
                    f.value,
                    f.spread.map(|s| s.0),
                    f.spread.map(|s| s.1)
                ])
                .map_err(&err)?;
            }
            let mut st = tx
                .prepare_cached(
                    "INSERT INTO warnings (run_id, ord, scope, kind, message) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(&err)?;
            for (i, (scope, kind, msg)) in row.warnings.iter().enumerate() {
                st.execute(params![id.0, i as i64, scope, kind, msg])
                    .map_err(&err)?;
            }
        }
        tx.commit().map_err(&err)?;
        Ok(id)
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Run `f` again while another connection holds the lock it needs, for up
/// to [`BUSY_TIMEOUT`].
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = std::time::Instant::now();
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// [`retry_busy`] for an operation that already wrapped its error.
fn retry_busy_store<T>(mut f: impl FnMut() -> Result<T, StoreError>) -> Result<T, StoreError> {
    let start = std::time::Instant::now();
    loop {
        match f() {
            Err(StoreError::Sqlite { cause, .. })
                if is_busy(&cause) && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

fn sqlite_err(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError {
    let path = path.display().to_string();
    move |cause| StoreError::Sqlite {
        path: path.clone(),
        cause,
    }
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

const SUMMARY_COLUMNS: &str = "id, kind, tool, tool_version, command_line, started_at_ms,
    finished_at_ms, status, labels, note, target, device, warning_count";

fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawSummary> {
    Ok(RawSummary {
        id: r.get(0)?,
        kind: r.get(1)?,
        tool: r.get(2)?,
        tool_version: r.get(3)?,
        command_line: r.get(4)?,
        started_at_ms: r.get(5)?,
        finished_at_ms: r.get(6)?,
        status: r.get(7)?,
        labels: r.get(8)?,
        note: r.get(9)?,
        target: r.get(10)?,
        device: r.get(11)?,
        warning_count: r.get(12)?,
    })
}

/// A summary row as the database returns it, before checking.
pub(crate) struct RawSummary {
    pub id: i64,
    pub kind: String,
    pub tool: String,
    pub tool_version: String,
    pub command_line: String,
    pub started_at_ms: i64,
    pub finished_at_ms: i64,
    pub status: String,
    pub labels: String,
    pub note: Option<String>,
    pub target: Option<String>,
    pub device: Option<String>,
    pub warning_count: i64,
}

impl RawSummary {
    pub fn check(self, location: &str) -> Result<RunSummary, StoreError> {
        let corrupt = |reason: String| StoreError::Corrupt {
            location: location.to_string(),
            reason,
        };
        let status = status_from_str(&self.status)
            .ok_or_else(|| corrupt(format!("run {} has status '{}'", self.id, self.status)))?;
        Ok(RunSummary {
            id: RunId(self.id),
            kind: self.kind,
            tool: self.tool,
            tool_version: self.tool_version,
            command_line: serde_json::from_str(&self.command_line).unwrap_or_default(),
            started_at_ms: self.started_at_ms.max(0) as u64,
            finished_at_ms: self.finished_at_ms.max(0) as u64,
            status,
            labels: serde_json::from_str(&self.labels).unwrap_or_default(),
            note: self.note,
            target: self.target,
            device: self.device,
            warning_count: self.warning_count.clamp(0, i64::from(u32::MAX)) as u32,
        })
    }
}

/// A figure row before checking its unit.
pub(crate) fn figure_from_parts(
    location: &str,
    test: String,
    metric: String,
    unit: String,
    value: f64,
    lo: Option<f64>,
    hi: Option<f64>,
) -> Result<Figure, StoreError> {
    let unit = unit_from_str(&unit).ok_or_else(|| StoreError::Corrupt {
        location: location.to_string(),
        reason: format!("unknown figure unit '{unit}'"),
    })?;
    Ok(Figure {
        test,
        metric,
        unit,
        value,
        spread: lo.zip(hi),
    })
}

pub(crate) fn warning_from_parts(scope: String, kind: &str, message: String) -> StoredWarning {
    StoredWarning {
        scope,
        warning: Warning::new(warning_kind_from_str(kind), message),
    }
}

/// A `LIKE` pattern matching `text` anywhere, with its wildcards escaped.
pub(crate) fn like_pattern(text: &str) -> String {
    let mut p = String::from("%");
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

impl Store for SqliteStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn begin_run(&mut self, doc: &RunDocument) -> Result<RunId, StoreError> {
        let row = RunRow::new(doc, RunStatus::Interrupted)?;
        retry_busy_store(|| self.write(None, &row))
    }

    fn update_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError> {
        let row = RunRow::new(doc, RunStatus::Interrupted)?;
        retry_busy_store(|| self.write(Some(id), &row)).map(drop)
    }

    fn finish_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError> {
        let row = RunRow::new(doc, doc.status)?;
        retry_busy_store(|| self.write(Some(id), &row)).map(drop)
    }

    fn insert_complete(&mut self, doc: &RunDocument) -> Result<RunId, StoreError> {
        let row = RunRow::new(doc, doc.status)?;
        retry_busy_store(|| self.write(None, &row))
    }

    fn list(&mut self, q: &RunQuery) -> Result<Vec<RunSummary>, StoreError> {
        let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE 1=1");
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        for l in &q.labels {
            args.push(l.clone().into());
            sql += &format!(
                " AND id IN (SELECT run_id FROM run_labels WHERE label = ?{})",
                args.len()
            );
        }
        if let Some(d) = &q.device {
            args.push(like_pattern(d).into());
            let n = args.len();
            sql += &format!(" AND (device LIKE ?{n} ESCAPE '\\' OR target LIKE ?{n} ESCAPE '\\')");
        }
        if let Some(s) = q.since_ms {
            args.push(i64::try_from(s).unwrap_or(i64::MAX).into());
            sql += &format!(" AND started_at_ms >= ?{}", args.len());
        }
        sql += " ORDER BY id DESC";
        if let Some(n) = q.limit {
            sql += &format!(" LIMIT {n}");
        }
        let location = self.location();
        let err = self.err();
        let mut st = self.conn.prepare(&sql).map_err(&err)?;
        let raw = st
            .query_map(rusqlite::params_from_iter(args), summary_from_row)
            .map_err(&err)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&err)?;
        let mut out = raw
            .into_iter()
            .map(|r| r.check(&location))
            .collect::<Result<Vec<_>, _>>()?;
        out.reverse();
        Ok(out)
    }

    fn load(&mut self, id: RunId) -> Result<StoredRun, StoreError> {
        let location = self.location();
        let err = self.err();
        // One read transaction, so a concurrent update is seen whole or not at all.
        let tx = self.conn.unchecked_transaction().map_err(&err)?;
        let found = tx
            .query_row(
                &format!(
                    "SELECT {SUMMARY_COLUMNS}, document FROM runs
                     JOIN run_documents ON run_documents.run_id = runs.id WHERE id = ?1"
                ),
                [id.0],
                |r| Ok((summary_from_row(r)?, r.get::<_, String>(13)?)),
            )
            .optional()
            .map_err(&err)?;
        let Some((raw, document_json)) = found else {
            return Err(StoreError::NotFound { id, location });
        };
        let summary = raw.check(&location)?;
        let (rows, warnings) = {
            let mut st = tx
                .prepare_cached(
                    "SELECT test, metric, unit, value, spread_lo, spread_hi FROM figures
                 WHERE run_id = ?1 ORDER BY ord",
                )
                .map_err(&err)?;
            let rows = st
                .query_map([id.0], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, f64>(3)?,
                        r.get::<_, Option<f64>>(4)?,
                        r.get::<_, Option<f64>>(5)?,
                    ))
                })
                .map_err(&err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(&err)?;
            let mut st = tx
                .prepare_cached(
                    "SELECT scope, kind, message FROM warnings WHERE run_id = ?1 ORDER BY ord",
                )
                .map_err(&err)?;
            let warnings = st
                .query_map([id.0], |r| {
                    Ok(warning_from_parts(
                        r.get(0)?,
                        &r.get::<_, String>(1)?,
                        r.get(2)?,
                    ))
                })
                .map_err(&err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(&err)?;
            (rows, warnings)
        };
        tx.commit().map_err(&err)?;
        let figures = rows
            .into_iter()
            .map(|(t, m, u, v, lo, hi)| figure_from_parts(&location, t, m, u, v, lo, hi))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(StoredRun {
            summary,
            figures,
            warnings,
            document_json,
        })
    }

    fn delete(&mut self, id: RunId) -> Result<(), StoreError> {
        let location = self.location();
        let n = self
            .conn
            .execute("DELETE FROM runs WHERE id = ?1", [id.0])
            .map_err(self.err())?;
        if n == 0 {
            return Err(StoreError::NotFound { id, location });
        }
        Ok(())
    }

    fn schema_version(&mut self) -> Result<i64, StoreError> {
        self.conn
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(self.err())
    }
}
