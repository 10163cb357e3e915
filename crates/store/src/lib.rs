//! The iomark results store: every run kept with what it ran on, and read
//! back fast enough to list and compare thousands of them.
//!
//! [`Store`] is synchronous. [`SqliteStore`] is the embedded default
//! (`$XDG_DATA_HOME/iomark/results.db`); [`PgStore`] keeps the same data in
//! PostgreSQL for a team or a fleet. [`open`] picks one from `--db`.
//!
//! Each run is stored twice over: the full [`RunDocument`] as JSON, so
//! nothing is ever lost, and normalised rows (labels, figures, warnings) so
//! that listing and comparing never parse documents. The schema is built by
//! numbered migrations compiled into the binary; see
//! `migrations/sqlite/0001_runs.sql`.
//!
//! A live run is written as it goes, so a killed process keeps what it
//! measured:
//!
//! ```no_run
//! # fn demo(doc: &mut iomark_model::RunDocument) -> Result<(), iomark_store::StoreError> {
//! let mut store = iomark_store::open(None)?;
//! let id = store.begin_run(doc)?; // stored as interrupted until finished
//! // ... after each finished job:
//! store.update_run(id, doc)?;
//! store.finish_run(id, doc)?; // stores doc.status
//! # Ok(()) }
//! ```
//!
//! [`import`] turns fio and iperf3 JSON output into run documents.
#![deny(missing_docs)]

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use iomark_model::figure::{Figure, FigureUnit};
use iomark_model::{RunDocument, RunStatus, Warning, WarningKind};

pub mod import;
mod pg;
mod row;
mod sqlite;

pub use pg::PgStore;
pub use sqlite::SqliteStore;

/// The identifier of a stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for RunId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim_start_matches('#')
            .parse::<i64>()
            .ok()
            .filter(|n| *n > 0)
            .map(RunId)
            .ok_or_else(|| {
                format!("'{s}' is not a run id: use a number from `iomark results list`")
            })
    }
}

/// Which runs [`Store::list`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunQuery {
    /// Runs carrying every one of these labels.
    pub labels: Vec<String>,
    /// Runs whose device or target mentions this text (case-insensitive).
    pub device: Option<String>,
    /// Runs started at or after this time, ms since the Unix epoch.
    pub since_ms: Option<u64>,
    /// Only the newest this many runs.
    pub limit: Option<usize>,
}

/// What [`Store::list`] shows of a run: everything but its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The run's id.
    pub id: RunId,
    /// The body's kind: `disk`, `mem`, `net`.
    pub kind: String,
    /// The tool that measured: `iomark`, or `fio` / `iperf3` for imports.
    pub tool: String,
    /// Its version.
    pub tool_version: String,
    /// The full command line.
    pub command_line: Vec<String>,
    /// Start, ms since the Unix epoch.
    pub started_at_ms: u64,
    /// End, ms since the Unix epoch (the last update for an unfinished run).
    pub finished_at_ms: u64,
    /// How it ended; `Interrupted` until [`Store::finish_run`].
    pub status: RunStatus,
    /// User labels.
    pub labels: Vec<String>,
    /// The free note.
    pub note: Option<String>,
    /// What the run targeted: a path, a host.
    pub target: Option<String>,
    /// The device behind the target, when known.
    pub device: Option<String>,
    /// Number of warnings stored with the run.
    pub warning_count: u32,
}

/// A warning stored with a run, with where in the run it was raised.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredWarning {
    /// The job or test it is about; empty for the whole run.
    pub scope: String,
    /// The warning.
    pub warning: Warning,
}

/// Everything stored about one run.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// The summary row.
    pub summary: RunSummary,
    /// Its figures, in order.
    pub figures: Vec<Figure>,
    /// Its warnings (the run's and each job's).
    pub warnings: Vec<StoredWarning>,
    /// The document as stored, JSON.
    pub document_json: String,
}

impl StoredRun {
    /// The stored document, with the stored status (an unfinished run's
    /// document still says what its writer last set).
    pub fn document(&self) -> Result<RunDocument, StoreError> {
        let mut doc: RunDocument =
            serde_json::from_str(&self.document_json).map_err(|e| StoreError::Document {
                id: self.summary.id,
                reason: e.to_string(),
            })?;
        doc.status = self.summary.status;
        Ok(doc)
    }
}

/// Errors of the store. Each message names what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite failed.
    #[error("results database {path}: {cause}")]
    Sqlite {
        /// The database file.
        path: String,
        /// What SQLite said (kept in the message, not as a source, so
        /// `{:#}` does not print it twice).
        cause: rusqlite::Error,
    },
    /// The database directory could not be created.
    #[error("cannot create {path} for the results database: {cause}; pass --db PATH to use another place")]
    CreateDir {
        /// The directory.
        path: String,
        /// Why.
        cause: std::io::Error,
    },
    /// No data directory is known.
    #[error(
        "no place for the results database: neither XDG_DATA_HOME nor HOME is set; pass --db PATH"
    )]
    NoDataDir,
    /// PostgreSQL failed.
    #[error("PostgreSQL {url}: {reason}")]
    Postgres {
        /// The URL, password removed.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The PostgreSQL server did not answer in time.
    #[error("PostgreSQL {url} did not answer within {secs} s: check that the server runs and the host and port are right (add ?connect_timeout=N to wait longer)")]
    Unreachable {
        /// The URL, password removed.
        url: String,
        /// The time waited.
        secs: u64,
    },
    /// A database URL that cannot be used.
    #[error(
        "bad database URL '{url}': {reason}; use a file path or postgres://user@host:port/dbname"
    )]
    BadUrl {
        /// The URL, password removed.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The database was written by a newer iomark.
    #[error("the results database {location} has schema version {found}, newer than this iomark knows ({known}): upgrade iomark or pass --db to use another database")]
    NewerSchema {
        /// Where the database is.
        location: String,
        /// Its version.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
    /// There is no run with that id.
    #[error("no run {id} in {location}: see `iomark results list`")]
    NotFound {
        /// The id asked for.
        id: RunId,
        /// Where the database is.
        location: String,
    },
    /// A stored document could not be read back.
    #[error("run {id}'s stored document cannot be read ({reason}): it was probably written by another iomark version")]
    Document {
        /// The run.
        id: RunId,
        /// Why.
        reason: String,
    },
    /// The database can only be read: this user may not write the file or
    /// its directory, or it is on a read-only mount.
    #[error("results database {location} is read-only ({why}): nothing was stored; pass --db PATH to a writable place, or --no-store")]
    ReadOnly {
        /// Where the database is.
        location: String,
        /// Why it was opened read-only.
        why: String,
    },
    /// A command that only reads was pointed at a file that does not exist.
    #[error("no results database at {path}: nothing has been stored there yet; check --db (reading never creates one)")]
    NoDatabase {
        /// The file looked for.
        path: String,
    },
    /// The database has no iomark schema and is opened read-only, so
    /// none can be created.
    #[error("{location} holds no iomark results (no schema_migrations table) and is opened read-only, so none is created: check --db, or store a run there from a user that may write it")]
    NoSchema {
        /// Where the database is.
        location: String,
    },
    /// The database's schema is older than this iomark's and it is opened
    /// read-only, so it cannot be migrated.
    #[error("the results database {location} has schema version {found}, older than this iomark's ({known}), and is opened read-only: open it once with a user that may write it to migrate it")]
    OlderSchema {
        /// Where the database is.
        location: String,
        /// Its version.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
    /// Something stored is not what this version expects.
    #[error("results database {location} holds an unexpected value: {reason}")]
    Corrupt {
        /// Where the database is.
        location: String,
        /// What.
        reason: String,
    },
}

/// Somewhere runs are kept.
///
/// A live run: [`begin_run`](Store::begin_run), then
/// [`update_run`](Store::update_run) after each finished job (one
/// transaction each), then [`finish_run`](Store::finish_run). Until it is
/// finished a run reads back as interrupted, which is what it is if the
/// process dies.
pub trait Store {
    /// Where the data is, for messages: a path or a URL without password.
    fn location(&self) -> String;

    /// Store a run that has just started; it reads back as interrupted
    /// until [`finish_run`](Store::finish_run).
    fn begin_run(&mut self, doc: &RunDocument) -> Result<RunId, StoreError>;

    /// Replace a live run's document and figures, in one transaction.
    fn update_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError>;

    /// Store the final document and its status.
    fn finish_run(&mut self, id: RunId, doc: &RunDocument) -> Result<(), StoreError>;

    /// Store a finished run in one go (imports); its status is the document's.
    fn insert_complete(&mut self, doc: &RunDocument) -> Result<RunId, StoreError>;

    /// Runs matching `query`, oldest first.
    fn list(&mut self, query: &RunQuery) -> Result<Vec<RunSummary>, StoreError>;

    /// One run with its figures, warnings and document.
    fn load(&mut self, id: RunId) -> Result<StoredRun, StoreError>;

    /// Remove a run and everything stored with it.
    fn delete(&mut self, id: RunId) -> Result<(), StoreError>;

    /// The schema version the database is at.
    fn schema_version(&mut self) -> Result<i64, StoreError>;
}

/// Where `--db` points, checked before anything is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Sqlite(PathBuf),
    Postgres(String),
}

/// What `--db` names; refuses names that would not store anywhere real or
/// would store somewhere the user did not mean.
fn target(db: Option<&str>) -> Result<Target, StoreError> {
    let Some(db) = db else {
        return Ok(Target::Sqlite(default_sqlite_path()?));
    };
    let bad = |reason: &str| StoreError::BadUrl {
        url: redact(db),
        reason: reason.to_string(),
    };
    if is_postgres_url(db) {
        return Ok(Target::Postgres(db.to_string()));
    }
    if looks_like_conninfo(db) {
        return Err(bad("it is a libpq key=value connection string: use a postgres:// URL instead, e.g. postgres://user@host:port/dbname?sslmode=verify-full&sslrootcert=FILE (for a file of that name write ./NAME)"));
    }
    let path = match db.strip_prefix("sqlite://") {
        Some(p) => p,
        None if db.starts_with("sqlite:") => {
            return Err(bad("SQLite takes sqlite://PATH or a plain PATH"));
        }
        // A mistyped PostgreSQL URL would otherwise create directories
        // named after the host.
        None if db.starts_with("postgres:") || db.starts_with("postgresql:") => {
            return Err(bad(
                "a PostgreSQL URL starts with postgres:// (two slashes)",
            ));
        }
        None if db.starts_with("file:") => {
            return Err(bad(
                "SQLite URI file names are not taken: give the file's path",
            ));
        }
        None if has_scheme(db) => {
            return Err(bad(
                "only postgres://, postgresql:// and sqlite:// URLs are known",
            ));
        }
        None => db,
    };
    if path.trim().is_empty() {
        return Err(bad(if db.is_empty() {
            "it is empty"
        } else {
            "it names no file: write sqlite:///abs/path.db or sqlite://relative.db"
        }));
    }
    // SQLite keeps these in memory and drops them on exit: a run "stored"
    // there would be gone before anyone could read it.
    if path == ":memory:" {
        return Err(bad(
            "an in-memory database keeps nothing after iomark exits (--no-store stores nothing on purpose)",
        ));
    }
    Ok(Target::Sqlite(PathBuf::from(path)))
}

/// `scheme://...`: a URL of some kind, not a file name.
fn has_scheme(db: &str) -> bool {
    db.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// libpq's keywords, to tell `host=db dbname=x` from a file name with an
/// `=` in it.
const CONNINFO_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "connect_timeout",
    "options",
    "application_name",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslpassword",
    "service",
    "target_session_attrs",
    "keepalives",
    "channel_binding",
];

/// Whether `db` reads as a libpq `key=value ...` connection string.
fn looks_like_conninfo(db: &str) -> bool {
    let t = db.trim_start();
    let key_len = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    let (key, rest) = t.split_at(key_len);
    CONNINFO_KEYWORDS.contains(&key.to_ascii_lowercase().as_str())
        && rest.trim_start().starts_with('=')
}

/// Check `--db` without opening anything, so a command can refuse a name
/// that would store nowhere real before it measures anything.
pub fn check_db(db: Option<&str>) -> Result<(), StoreError> {
    target(db).map(drop)
}

/// Open the store `db` names, for reading and writing: `postgres://` or
/// `postgresql://` URLs go to PostgreSQL, a path or `sqlite://PATH` to a
/// SQLite file (created with its directory); `None` is the default SQLite
/// file ([`default_sqlite_path`]). Names that would not keep anything
/// (`:memory:`, an empty `sqlite://`) and libpq `key=value` strings are
/// refused.
///
/// A SQLite file this user cannot write (mode 0444, a read-only mount, a
/// directory not writable) is opened read-only instead, so reading works;
/// writes then fail with [`StoreError::ReadOnly`].
pub fn open(db: Option<&str>) -> Result<Box<dyn Store>, StoreError> {
    match target(db)? {
        Target::Postgres(url) => Ok(Box::new(PgStore::connect(&url)?)),
        Target::Sqlite(path) => Ok(Box::new(SqliteStore::open(path)?)),
    }
}

/// Open the store `db` names (as [`open`]) for reading only: nothing is
/// created or migrated, and a database that does not exist is
/// [`StoreError::NoDatabase`] (SQLite) or [`StoreError::NoSchema`].
pub fn open_read_only(db: Option<&str>) -> Result<Box<dyn Store>, StoreError> {
    match target(db)? {
        Target::Postgres(url) => Ok(Box::new(PgStore::connect_read_only(&url)?)),
        Target::Sqlite(path) => Ok(Box::new(SqliteStore::open_read_only(path)?)),
    }
}

/// Whether `db` names a PostgreSQL database.
pub fn is_postgres_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// The password marker messages show instead of a password.
const HIDDEN: &str = "***";

/// `db` fit for a message: the password of a URL's user info, of a
/// `password=` (or `sslpassword=`) query parameter and of a libpq
/// `key=value` string replaced by `***`.
pub fn redact(db: &str) -> String {
    if looks_like_conninfo(db) {
        return redact_conninfo(db);
    }
    let Some((scheme, rest)) = db.split_once("://") else {
        if db.starts_with("postgres:") || db.starts_with("postgresql:") {
            return "postgres:(not shown)".into();
        }
        return db.to_string();
    };
    // The user info ends at the last `@` before the query; a password with
    // an unescaped `?` has its `@` after it, and then the last `@` of all
    // is taken: hiding too much beats showing a password.
    let query_at = rest.find('?').unwrap_or(rest.len());
    let at = rest[..query_at].rfind('@').or_else(|| rest.rfind('@'));
    let (auth, after) = match at {
        Some(i) => {
            let (user, hidden) = match rest[..i].split_once(':') {
                Some((user, _)) => (user, true),
                None => (&rest[..i], false),
            };
            let auth = if hidden {
                format!("{user}:{HIDDEN}@")
            } else {
                format!("{user}@")
            };
            (auth, &rest[i + 1..])
        }
        None => (String::new(), rest),
    };
    let after = match after.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if is_password_key(&percent_decode(k)) => {
                        format!("{k}={HIDDEN}")
                    }
                    _ => p.to_string(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => after.to_string(),
    };
    format!("{scheme}://{auth}{after}")
}

fn is_password_key(key: &str) -> bool {
    key.to_ascii_lowercase().contains("password")
}

/// A libpq `key=value ...` string with its password values hidden; one it
/// cannot follow is not shown at all.
fn redact_conninfo(s: &str) -> String {
    let unreadable = || "(a key=value connection string, not shown)".to_string();
    let mut out = String::new();
    let mut it = s.char_indices().peekable();
    loop {
        while let Some((_, c)) = it.peek().copied().filter(|(_, c)| c.is_whitespace()) {
            out.push(c);
            it.next();
        }
        let Some(&(start, _)) = it.peek() else {
            return out;
        };
        let mut key_end = s.len();
        while let Some(&(i, c)) = it.peek() {
            if c == '=' || c.is_whitespace() {
                key_end = i;
                break;
            }
            it.next();
        }
        let key = &s[start..key_end];
        out.push_str(key);
        while let Some((_, c)) = it.peek().copied().filter(|(_, c)| c.is_whitespace()) {
            out.push(c);
            it.next();
        }
        if it.next().map(|(_, c)| c) != Some('=') {
            return unreadable();
        }
        out.push('=');
        while let Some((_, c)) = it.peek().copied().filter(|(_, c)| c.is_whitespace()) {
            out.push(c);
            it.next();
        }
        let mut value = String::new();
        if it.peek().map(|(_, c)| *c) == Some('\'') {
            it.next();
            loop {
                match it.next() {
                    Some((_, '\\')) => match it.next() {
                        Some((_, c)) => {
                            value.push('\\');
                            value.push(c);
                        }
                        None => return unreadable(),
                    },
                    Some((_, '\'')) => break,
                    Some((_, c)) => value.push(c),
                    None => return unreadable(),
                }
            }
            value = format!("'{value}'");
        } else {
            while let Some((_, c)) = it.peek().copied().filter(|(_, c)| !c.is_whitespace()) {
                value.push(c);
                it.next();
            }
        }
        if is_password_key(key) {
            out.push_str(HIDDEN);
        } else {
            out.push_str(&value);
        }
    }
}

/// `%XX` escapes decoded (invalid ones kept as they are).
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|c| hex(*c)),
            b.get(i + 2).and_then(|c| hex(*c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `$XDG_DATA_HOME/iomark/results.db`, else `~/.local/share/iomark/results.db`.
pub fn default_sqlite_path() -> Result<PathBuf, StoreError> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = nonempty("XDG_DATA_HOME") {
        return Ok(PathBuf::from(d).join("iomark").join("results.db"));
    }
    let home = nonempty("HOME").ok_or(StoreError::NoDataDir)?;
    Ok(PathBuf::from(home)
        .join(".local/share/iomark")
        .join("results.db"))
}

pub(crate) fn status_from_str(s: &str) -> Option<RunStatus> {
    [
        RunStatus::Complete,
        RunStatus::Interrupted,
        RunStatus::Failed,
    ]
    .into_iter()
    .find(|st| st.as_str() == s)
}

pub(crate) fn unit_from_str(s: &str) -> Option<FigureUnit> {
    FigureUnit::from_name(s)
}

pub(crate) fn warning_kind_from_str(s: &str) -> WarningKind {
    serde_json::from_value(serde_json::Value::String(s.to_string())).unwrap_or(WarningKind::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_parse_and_reject_nonsense() {
        assert_eq!("42".parse::<RunId>().unwrap(), RunId(42));
        assert_eq!("#7".parse::<RunId>().unwrap(), RunId(7));
        assert!("0".parse::<RunId>().is_err());
        assert!("abc".parse::<RunId>().unwrap_err().contains("results list"));
    }

    #[test]
    fn urls_pick_the_backend() {
        assert!(is_postgres_url("postgres://u@h/db"));
        assert!(is_postgres_url("postgresql://h/db"));
        assert!(!is_postgres_url("/tmp/x.db"));
    }

    const SECRET: &str = "s3cr3t-pw";

    /// The forms a password can take in `--db`.
    fn secret_dbs() -> Vec<String> {
        vec![
            format!("postgres://me:{SECRET}@db:5432/iomark"),
            format!("postgresql://me:{SECRET}@db/iomark?sslmode=require"),
            format!("postgres://me@db/iomark?password={SECRET}"),
            format!("postgres://me@db/iomark?sslmode=require&password={SECRET}&connect_timeout=3"),
            format!("postgres://me@db/iomark?pass%77ord={SECRET}"),
            format!("postgres://me:{SECRET}@db/iomark?sslpassword={SECRET}"),
            format!("postgres://me:a?b{SECRET}@db/iomark"),
            format!("host=db dbname=iomark password={SECRET}"),
            format!("host=db password = '{SECRET} x\\'y' user=me"),
            format!("host=db password='{SECRET}"),
            format!("postgres:/me:{SECRET}@db/iomark"),
        ]
    }

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact("postgres://me:secret@db:5432/iomark"),
            "postgres://me:***@db:5432/iomark"
        );
        assert_eq!(redact("postgres://me@db/iomark"), "postgres://me@db/iomark");
        assert_eq!(redact("postgres://db/iomark"), "postgres://db/iomark");
        assert_eq!(
            redact("postgres://me@db/x?sslmode=require&password=pw&connect_timeout=3"),
            "postgres://me@db/x?sslmode=require&password=***&connect_timeout=3"
        );
        assert_eq!(
            redact("host=db  password='a b' user=me"),
            "host=db  password=*** user=me"
        );
        assert_eq!(redact("/var/lib/results.db"), "/var/lib/results.db");
        for db in secret_dbs() {
            let shown = redact(&db);
            assert!(!shown.contains(SECRET), "{db} shown as {shown}");
            assert!(
                shown.contains("***") || shown.contains("not shown"),
                "{shown}"
            );
        }
    }

    #[test]
    fn no_store_error_shows_a_password() {
        for db in secret_dbs() {
            let url = redact(&db);
            let errors = [
                target(Some(&db)).err(),
                Some(StoreError::Postgres {
                    url: url.clone(),
                    reason: "x".into(),
                }),
                Some(StoreError::Unreachable {
                    url: url.clone(),
                    secs: 1,
                }),
                Some(StoreError::BadUrl {
                    url: url.clone(),
                    reason: "x".into(),
                }),
                Some(StoreError::NotFound {
                    id: RunId(1),
                    location: url.clone(),
                }),
                Some(StoreError::ReadOnly {
                    location: url.clone(),
                    why: "x".into(),
                }),
                Some(StoreError::NoSchema {
                    location: url.clone(),
                }),
                Some(StoreError::NewerSchema {
                    location: url.clone(),
                    found: 2,
                    known: 1,
                }),
                Some(StoreError::Corrupt {
                    location: url.clone(),
                    reason: "x".into(),
                }),
            ];
            for e in errors.into_iter().flatten() {
                let msg = e.to_string();
                assert!(!msg.contains(SECRET), "{db}: {msg}");
                assert!(!format!("{e:?}").contains(SECRET), "{db}: {e:?}");
            }
        }
        // What the real openers say, without any server to answer.
        for db in secret_dbs() {
            let db = db.replace("@db", "@127.0.0.1:1");
            if let Err(e) = open(Some(&format!("{db}&connect_timeout=1"))) {
                assert!(!e.to_string().contains(SECRET), "{db}: {e}");
            }
            if let Err(e) = open_read_only(Some(&db)) {
                assert!(!e.to_string().contains(SECRET), "{db}: {e}");
            }
        }
    }

    #[test]
    fn names_that_keep_nothing_are_refused_with_the_fix() {
        for (db, says) in [
            ("", "it is empty"),
            ("sqlite://", "names no file"),
            (":memory:", "--no-store"),
            ("sqlite://:memory:", "in-memory"),
            ("file::memory:", "give the file's path"),
            ("sqlite::memory:", "sqlite://PATH"),
            ("mysql://db/x", "only postgres://"),
            ("postgres:/me:s3cr3t-pw@db/x", "two slashes"),
            (
                "host=db dbname=iomark",
                "postgres://user@host:port/dbname?sslmode",
            ),
            ("dbname = iomark", "key=value"),
        ] {
            let e = open(Some(db))
                .err()
                .unwrap_or_else(|| panic!("{db} accepted"));
            let msg = e.to_string();
            assert!(matches!(e, StoreError::BadUrl { .. }), "{db}: {msg}");
            assert!(msg.contains(says), "{db}: {msg}");
            assert!(!msg.contains('\n'), "{db}: {msg}");
            assert!(open_read_only(Some(db)).is_err(), "{db}");
        }
        assert_eq!(
            target(Some("sqlite:///tmp/r.db")).unwrap(),
            Target::Sqlite("/tmp/r.db".into())
        );
        assert_eq!(
            target(Some("./host=x.db")).unwrap(),
            Target::Sqlite("./host=x.db".into())
        );
        assert_eq!(
            target(Some("results=old.db")).unwrap(),
            Target::Sqlite("results=old.db".into())
        );
    }

    #[test]
    fn warning_kinds_read_back_by_name() {
        assert_eq!(
            warning_kind_from_str("buffered_io"),
            WarningKind::BufferedIo
        );
        assert_eq!(warning_kind_from_str("from_the_future"), WarningKind::Other);
    }
}
