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

/// Open the store `db` names: `postgres://` or `postgresql://` URLs go to
/// PostgreSQL, anything else is a SQLite file path; `None` is the default
/// SQLite file ([`default_sqlite_path`]).
pub fn open(db: Option<&str>) -> Result<Box<dyn Store>, StoreError> {
    match db {
        Some(url) if is_postgres_url(url) => Ok(Box::new(PgStore::connect(url)?)),
        Some(path) => {
            if path.is_empty() {
                return Err(StoreError::BadUrl {
                    url: String::new(),
                    reason: "it is empty".into(),
                });
            }
            let path = path.strip_prefix("sqlite://").unwrap_or(path);
            Ok(Box::new(SqliteStore::open(PathBuf::from(path))?))
        }
        None => Ok(Box::new(SqliteStore::open(default_sqlite_path()?)?)),
    }
}

/// Whether `db` names a PostgreSQL database.
pub fn is_postgres_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
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

    #[test]
    fn warning_kinds_read_back_by_name() {
        assert_eq!(
            warning_kind_from_str("buffered_io"),
            WarningKind::BufferedIo
        );
        assert_eq!(warning_kind_from_str("from_the_future"), WarningKind::Other);
    }
}
