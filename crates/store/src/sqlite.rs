//! The embedded store: one SQLite file, in WAL mode so readers never block
//! the writer and two iomark processes can write at once. Opening (and
//! falling back to reading only) is here; the work done in the database is
//! [`crate::ops`], through this file's [`Db`] implementation.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

mod failure;
use failure::{
    explain, is_not_writable, not_writable, retry_busy, retry_busy_store, sqlite_err, system_errno,
};

use crate::backend::{Column, Db, DriverRow, Migration, Param, Row};
use crate::decode::Decode;
use crate::row::RunRow;
use crate::{forward, ops, samples};
use crate::{DeviceMemory, RunId, Store, StoreError, StoredRun};
use iomark_model::live::LiveSample;

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
        let exists = is_database_file(&path)?;
        match Self::open_read_write(&path) {
            Ok(store) => Ok(store),
            Err(e) if exists && not_writable(&e) => {
                let why = match &e {
                    StoreError::Sqlite { cause, .. } => cause.to_string(),
                    StoreError::ReadOnly { why, .. } => why.clone(),
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
        let conn =
            Connection::open_with_flags(&path, plain_flags() | OpenFlags::SQLITE_OPEN_CREATE)
                .map_err(|cause| explain(&path, cause, None))?;
        Self::set_up(&conn, &path)?;
        let mut store = SqliteStore {
            conn,
            path,
            read_only: None,
        };
        retry_busy_store(|| store.migrate())?;
        Ok(store)
    }

    /// Make a read-write connection ready: refused when SQLite opened it
    /// read-only, in WAL mode, with the busy timeout and foreign keys.
    fn set_up(conn: &Connection, path: &Path) -> Result<(), StoreError> {
        let err = sqlite_err(conn, path);
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
        Ok(())
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
        if !is_database_file(&path)? {
            return Err(StoreError::NoDatabase {
                path: path.display().to_string(),
            });
        }
        let no_wal = !wal_file(&path).exists();
        let writable = may_write(&path);
        let shared = if no_wal && !writable {
            Err(Failure {
                cause: rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
                    None,
                ),
                errno: None,
            })
        } else {
            open_shared(&path)
        };
        let conn = match shared {
            Ok(conn) => conn,
            // Nothing uncommitted to miss: read the file as it is. (A full
            // file system is not a reason: the failed open may have left
            // an empty -wal behind, and the next read would then fail
            // where this one worked.)
            Err(f) if no_wal && is_not_writable(&f.cause) => {
                let conn = Connection::open_with_flags(
                    immutable_uri(&path),
                    OpenFlags::SQLITE_OPEN_READ_ONLY
                        | OpenFlags::SQLITE_OPEN_URI
                        | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
                .map_err(|cause| explain(&path, cause, None))?;
                conn.pragma_update(None, "query_only", "ON")
                    .map_err(sqlite_err(&conn, &path))?;
                conn
            }
            Err(f) => return Err(explain(&path, f.cause, f.errno)),
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
        ops::check_schema(&mut self.db())
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

    /// The connection, as the shared store code uses it.
    fn db(&self) -> Sqlite<'_> {
        Sqlite {
            conn: &self.conn,
            path: &self.path,
        }
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        // IMMEDIATE: a second process opening a fresh database waits here
        // instead of applying the same migration twice.
        self.in_transaction(TransactionBehavior::Immediate, |db| ops::migrate(db))
    }

    /// `f` in one transaction of the kind `behavior` says, committed when
    /// it succeeds.
    fn in_transaction<T>(
        &mut self,
        behavior: TransactionBehavior,
        f: impl FnOnce(&mut Sqlite<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let err = sqlite_err(&self.conn, &self.path);
        // Unchecked only in that the borrow checker does not stop a nested
        // transaction (SQLite refuses one): `&mut self` already does, and
        // `err` needs the connection too, to read why a commit failed.
        let tx = Transaction::new_unchecked(&self.conn, behavior).map_err(&err)?;
        let out = f(&mut Sqlite {
            conn: &tx,
            path: &self.path,
        })?;
        tx.commit().map_err(&err)?;
        Ok(out)
    }

    /// Store `row` as a new run, or in place of run `id`.
    fn write(&mut self, id: Option<RunId>, row: &RunRow) -> Result<RunId, StoreError> {
        self.writable()?;
        retry_busy_store(|| {
            self.in_transaction(TransactionBehavior::Immediate, |db| ops::write(db, id, row))
        })
    }
}

/// Whether this process may write `path`, asked of the kernel by name
/// (`faccessat(2)` with the effective user, as an open would be judged).
///
/// Never by opening the file: this process may already have it open
/// through SQLite (`iomark serve` opens a connection per worker, and again
/// after a failure), and on Linux closing *any* descriptor of a file drops
/// every POSIX lock the process holds on it. Opening the file for writing
/// to ask, and closing it, dropped the other connections' shared lock on
/// the database; the next reader (`sqlite3 c.db`) to close then found
/// itself the last user, checkpointed and deleted `-wal` and `-shm` under
/// the server, which went on reading the unlinked files: stale lists, "no
/// run 20", "database disk image is malformed" (docs/store.md, "Readers
/// beside iomark").
fn may_write(path: &Path) -> bool {
    use rustix::fs::{accessat, Access, AtFlags, CWD};
    accessat(CWD, path, Access::WRITE_OK, AtFlags::EACCESS).is_ok()
}

/// Whether `path` is a file that may hold a database (`false`: nothing is
/// there yet). A directory, a FIFO, a device (`/dev/null`, which SQLite
/// reads as an empty database) or a socket is refused: nothing can be
/// stored there, and a reading command would otherwise call it "no
/// results database yet". Asked by name, never by opening it (see
/// [`may_write`]).
fn is_database_file(path: &Path) -> Result<bool, StoreError> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        // Not there (or not reachable): what that means is the caller's
        // to say (created when writing, "no database yet" when reading).
        Err(_) => return Ok(false),
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(true);
    }
    use std::os::unix::fs::FileTypeExt;
    let what = if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(StoreError::NotAFile {
        path: path.display().to_string(),
        what,
    })
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

/// A SQLite failure that could not be helped by opening the database.
struct Failure {
    cause: rusqlite::Error,
    /// What the system said, read before the connection was closed.
    errno: Option<i32>,
}

/// The database at `path` opened for reading next to its writers (WAL
/// with its `-shm` file), writes refused, and read once.
fn open_shared(path: &Path) -> Result<Connection, Failure> {
    let conn = Connection::open_with_flags(path, plain_flags())
        .map_err(|cause| Failure { cause, errno: None })?;
    let ready = conn
        .busy_timeout(BUSY_TIMEOUT)
        .and_then(|()| conn.pragma_update(None, "query_only", "ON"))
        .and_then(|()| {
            // The first read is what needs the -shm file.
            retry_busy(|| {
                conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
                    r.get::<_, i64>(0)
                })
            })
        });
    match ready {
        Ok(_) => Ok(conn),
        Err(cause) => Err(Failure {
            errno: system_errno(&conn),
            cause,
        }),
    }
}

/// A SQLite connection (or a transaction on it, which derefs to one) as
/// the shared store code uses it.
struct Sqlite<'a> {
    conn: &'a Connection,
    path: &'a Path,
}

impl Db for Sqlite<'_> {
    const MIGRATIONS: &'static [Migration] = &[
        (
            1,
            "runs",
            include_str!("../migrations/sqlite/0001_runs.sql"),
        ),
        (
            2,
            "devices",
            include_str!("../migrations/sqlite/0002_devices.sql"),
        ),
        (
            3,
            "device_verify",
            include_str!("../migrations/sqlite/0003_device_verify.sql"),
        ),
        (
            4,
            "run_ranks",
            include_str!("../migrations/sqlite/0004_run_ranks.sql"),
        ),
        (
            5,
            "figure_noise",
            include_str!("../migrations/sqlite/0005_figure_noise.sql"),
        ),
        (
            6,
            "run_samples",
            include_str!("../migrations/sqlite/0006_run_samples.sql"),
        ),
        (
            7,
            "sample_flops",
            include_str!("../migrations/sqlite/0007_sample_flops.sql"),
        ),
        (
            8,
            "run_host_profile",
            include_str!("../migrations/sqlite/0008_run_host_profile.sql"),
        ),
        (
            9,
            "sample_left_at_most",
            include_str!("../migrations/sqlite/0009_sample_left_at_most.sql"),
        ),
    ];
    const LIKE: &'static str = "LIKE";
    const BIGINT: &'static str = "INTEGER";
    const HAS_MIGRATIONS_TABLE: &'static str = "SELECT EXISTS (SELECT 1 FROM sqlite_master
         WHERE type = 'table' AND name = 'schema_migrations')";

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn json_text(column: &str, path: &[&str]) -> String {
        // Keys are the code's own words, never user text.
        format!("json_extract({column}, '$.{}')", path.join("."))
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.conn
            .execute_batch(sql)
            .map_err(sqlite_err(self.conn, self.path))
    }

    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> Result<u64, StoreError> {
        let err = sqlite_err(self.conn, self.path);
        let mut st = self.conn.prepare_cached(sql).map_err(&err)?;
        st.execute(rusqlite::params_from_iter(
            params.iter().map(|p| p.sqlite()),
        ))
        .map(|n| n as u64)
        .map_err(&err)
    }

    fn query<D: Decode>(&mut self, sql: &str, params: &[&dyn Param]) -> Result<Vec<D>, StoreError> {
        let err = sqlite_err(self.conn, self.path);
        let location = self.location();
        let mut st = self.conn.prepare_cached(sql).map_err(&err)?;
        let mut rows = st
            .query(rusqlite::params_from_iter(
                params.iter().map(|p| p.sqlite()),
            ))
            .map_err(&err)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(&err)? {
            out.push(D::decode(&DriverRow { row, err: &err }, &location)?);
        }
        Ok(out)
    }
}

impl Row for DriverRow<'_, rusqlite::Row<'_>, rusqlite::Error> {
    fn get<T: Column>(&self, i: usize) -> Result<T, StoreError> {
        self.row.get(i).map_err(self.err)
    }
}

impl Store for SqliteStore {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    ops::store_writes!();
    forward::store_reads!();

    fn load(&mut self, id: RunId) -> Result<StoredRun, StoreError> {
        // One read transaction, so a concurrent update is seen whole or not at all.
        self.in_transaction(TransactionBehavior::Deferred, |db| ops::load(db, id))
    }

    fn delete(&mut self, id: RunId) -> Result<(), StoreError> {
        self.writable()?;
        ops::delete(&mut self.db(), id)
    }

    fn remember_device(&mut self, device: &DeviceMemory) -> Result<(), StoreError> {
        self.writable()?;
        ops::remember_device(&mut self.db(), device)
    }

    fn add_samples(
        &mut self,
        id: RunId,
        first_seq: u64,
        samples: &[LiveSample],
    ) -> Result<(), StoreError> {
        self.writable()?;
        samples::add(&mut self.db(), id, first_seq, samples)
    }
}
