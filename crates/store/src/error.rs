//! [`StoreError`]: everything the store can fail at, each message naming
//! what to do about it.

use crate::{RunId, UnreadableDocument};

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
        "no place for the results database: neither XDG_DATA_HOME (an absolute path) nor HOME is set; pass --db PATH"
    )]
    NoDataDir,
    /// `HOME` is a relative path, so the default database would land
    /// under whatever directory iomark was started from.
    #[error("HOME is '{home}', a relative path: the results database would be made under the current directory; set HOME (or XDG_DATA_HOME) to an absolute path, or pass --db PATH")]
    RelativeHome {
        /// The value of `HOME`.
        home: String,
    },
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
    #[error(transparent)]
    Document(#[from] UnreadableDocument),
    /// The database can only be read: this user may not write the file or
    /// its directory, or it is on a read-only mount.
    #[error("results database {location} is read-only ({why}): nothing was stored; pass --db PATH to a writable place, or --no-store")]
    ReadOnly {
        /// Where the database is.
        location: String,
        /// Why it was opened read-only.
        why: String,
    },
    /// The file system the database is on is full, or the user's quota on
    /// it is used up.
    #[error("results database {location}: the file system it is on is full ({cause}), and SQLite needs room there even to read it; free some space there, or pass --db PATH to a database on another file system")]
    Full {
        /// Where the database is.
        location: String,
        /// What SQLite said.
        cause: String,
    },
    /// A command that only reads was pointed at a file that does not exist.
    #[error("no results database at {path}: nothing has been stored there yet; check --db (reading never creates one)")]
    NoDatabase {
        /// The file looked for.
        path: String,
    },
    /// `--db` names something that is not a file: a directory, a FIFO, a
    /// device.
    #[error("{path} is {what}, not a results database file: give --db the path of a database file (a new one is made when a run is first stored there)")]
    NotAFile {
        /// What `--db` named.
        path: String,
        /// What it is instead.
        what: &'static str,
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
    /// `$IOMARK_DB` (used when `--db` is not given) names no database.
    #[error("the environment variable IOMARK_DB {reason}")]
    DbEnv {
        /// What is wrong with it, and the fix.
        reason: String,
    },
    /// A label named to select runs is on none.
    #[error("no stored run has the label '{label}': see `iomark results list`")]
    NoRunWithLabel {
        /// The label.
        label: String,
    },
}
