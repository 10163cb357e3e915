//! The embedded store: one SQLite file, in WAL mode so readers never block
//! the writer and two iomark processes can write at once.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use iomark_model::figure::Figure;
use iomark_model::{RunDocument, RunStatus, Warning};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};

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
    /// Why the database was opened read-only, when it was.
    read_only: Option<String>,
}

/// Opened without `SQLITE_OPEN_URI`, so every `--db` is a plain file name
/// (`file::memory:` would otherwise be a database that vanishes on exit).
fn plain_flags() -> OpenFlags {
    OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
}

impl SqliteStore {
    /// Open (creating it and its directory if needed) and migrate the
    /// database at `path`. A database this user cannot write is opened
    /// read-only instead (see [`SqliteStore::open_read_only`]); writing to
    /// it is then [`StoreError::ReadOnly`].
    pub fn open(path: PathBuf) -> Result<SqliteStore, StoreError> {
        let exists = path.is_file();
        match Self::open_read_write(&path) {
            Ok(store) => Ok(store),
            Err(e) if exists && not_writable(&e) => {
                let why = match &e {
                    StoreError::Sqlite { cause, .. } => cause.to_string(),
                    other => other.to_string(),
                };
                let mut store = Self::open_read_only(path)?;
                store.read_only = Some(why);
                Ok(store)
            }
            Err(e) => Err(e),
        }
    }

    fn open_read_write(path: &Path) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|cause| StoreError::CreateDir {
                path: dir.display().to_string(),
                cause,
            })?;
        }
        let path = path.to_path_buf();
        let err = sqlite_err(&path);
        let conn =
            Connection::open_with_flags(&path, plain_flags() | OpenFlags::SQLITE_OPEN_CREATE)
                .map_err(&err)?;
        // SQLite quietly opens a write-protected file read-only; saying so
        // now beats failing on the first write.
        if conn.is_readonly(rusqlite::MAIN_DB).map_err(&err)? {
            return Err(err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
                Some("the file is write-protected for this user".into()),
            )));
        }
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
        let mut store = SqliteStore {
            conn,
            path,
            read_only: None,
        };
        retry_busy_store(|| store.migrate())?;
        Ok(store)
    }

    /// Open the existing database at `path` for reading only: nothing is
    /// created or migrated, and no write can happen through it.
    ///
    /// A WAL database is opened as usual with writes refused, which shares
    /// the `-wal`/`-shm` files with live writers. When no `-wal` exists
    /// there are no uncommitted pages to miss, and a file this user may not
    /// write (or whose side files cannot be created: a read-only directory
    /// or mount) is read as immutable instead. That leaves no `-shm` owned
    /// by this user behind, which would stop the owner from writing.
    pub fn open_read_only(path: PathBuf) -> Result<SqliteStore, StoreError> {
        if !path.is_file() {
            return Err(StoreError::NoDatabase {
                path: path.display().to_string(),
            });
        }
        let err = sqlite_err(&path);
        let no_wal = !wal_file(&path).exists();
        // Opening for writing writes nothing; it only asks the kernel.
        let writable = std::fs::OpenOptions::new().write(true).open(&path).is_ok();
        let shared = if no_wal && !writable {
            Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
                None,
            ))
        } else {
            Connection::open_with_flags(&path, plain_flags())
        }
        .and_then(|conn| {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            conn.pragma_update(None, "query_only", "ON")?;
            // The first read is what needs the -shm file.
            retry_busy(|| {
                conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
                    r.get::<_, i64>(0)
                })
            })?;
            Ok(conn)
        });
        let conn = match shared {
            Ok(conn) => conn,
            Err(e) if is_not_writable(&e) && no_wal => {
                let conn = Connection::open_with_flags(
                    immutable_uri(&path),
                    OpenFlags::SQLITE_OPEN_READ_ONLY
                        | OpenFlags::SQLITE_OPEN_URI
                        | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
                .map_err(&err)?;
                conn.pragma_update(None, "query_only", "ON").map_err(&err)?;
                conn
            }
            Err(e) => return Err(err(e)),
        };
        let store = SqliteStore {
            conn,
            path,
            read_only: Some("opened for reading only".into()),
        };
        store.check_schema()?;
        Ok(store)
    }

    /// A read-only database must already have this iomark's schema.
    fn check_schema(&self) -> Result<(), StoreError> {
        let err = self.err();
        let has_table: bool = self
            .conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations')",
                [],
                |r| r.get(0),
            )
            .map_err(&err)?;
        if !has_table {
            return Err(StoreError::NoSchema {
                location: self.location(),
            });
        }
        let found: i64 = self
            .conn
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(&err)?;
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        match found.cmp(&known) {
            std::cmp::Ordering::Greater => Err(StoreError::NewerSchema {
                location: self.location(),
                found,
                known,
            }),
            std::cmp::Ordering::Less => Err(StoreError::OlderSchema {
                location: self.location(),
                found,
                known,
            }),
            std::cmp::Ordering::Equal => Ok(()),
        }
    }

    /// Whether the database was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only.is_some()
    }

    /// Refuse a write up front on a read-only database, with the reason.
    fn writable(&self) -> Result<(), StoreError> {
        match &self.read_only {
            Some(why) => Err(StoreError::ReadOnly {
                location: self.location(),
                why: why.clone(),
            }),
            None => Ok(()),
        }
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

/// SQLite's answers when this user may not write the file, its directory
/// or the mount it is on.
fn is_not_writable(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(
            rusqlite::ErrorCode::ReadOnly
                | rusqlite::ErrorCode::CannotOpen
                | rusqlite::ErrorCode::PermissionDenied
        )
    )
}

/// Whether a read-write open failed because the database cannot be
/// written here, so reading it read-only may still work.
fn not_writable(e: &StoreError) -> bool {
    match e {
        StoreError::Sqlite { cause, .. } => is_not_writable(cause),
        StoreError::CreateDir { cause, .. } => matches!(
            cause.kind(),
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        ),
        _ => false,
    }
}

/// The `-wal` file SQLite keeps next to `path`.
fn wal_file(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push("-wal");
    PathBuf::from(p)
}

/// `file:PATH?mode=ro&immutable=1`, with the characters a SQLite URI
/// gives meaning to escaped.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri + "?mode=ro&immutable=1"
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
        self.writable()?;
        let row = RunRow::new(doc, RunStatus::Interrupted)?;
        retry_busy_store(|| self.write(None, &row))
    }

    fn update_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError> {
        self.writable()?;
        let row = RunRow::new(doc, RunStatus::Interrupted)?;
        retry_busy_store(|| self.write(Some(id), &row)).map(drop)
    }

    fn finish_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError> {
        self.writable()?;
        let row = RunRow::new(doc, doc.status)?;
        retry_busy_store(|| self.write(Some(id), &row)).map(drop)
    }

    fn insert_complete(&mut self, doc: &RunDocument) -> Result<RunId, StoreError> {
        self.writable()?;
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
        self.writable()?;
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
