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
//! A command stores its run through a [`StoreSink`], the pipeline's run
//! sink, on a thread of its own ([`live::LiveRun`]): a store error there is
//! a notice and the run goes on.
//!
//! [`import`] turns fio and iperf3 JSON output into run documents.
#![deny(missing_docs)]

use iomark_model::live::LiveSample;
use iomark_model::RunDocument;

// How the code is laid out: `ops` is the store's work (migrate, write,
// list, load, delete), written once against the `backend::Db` interface
// that `sqlite` and `pg` implement; `decode` reads rows back into the stored
// records (`iomark_model::stored`) and the types below, and `row` flattens a document into the values written; `db_arg` is
// what `--db` names; `error` is `StoreError`; `import` reads other tools'
// output.
mod backend;
mod db_arg;
mod decode;
mod error;
mod forward;
pub mod import;
mod listing;
mod ops;
mod pg;
pub mod presence;
mod row;
mod run_sink;
mod samples;
mod select;
pub mod since;
mod sqlite;

pub mod live;

pub use db_arg::{check_db, default_sqlite_path, is_postgres_url, redact, DB_ENV};
pub use error::StoreError;
pub use pg::PgStore;
pub use run_sink::{StoreSink, Storing};
pub use select::RunSelection;
pub use since::{since_ms, SinceError};
pub use sqlite::SqliteStore;
// The stored records are plain data in the model, so that rendering and
// the regression gate read them without the store.
pub use iomark_model::stored::{
    DeviceMemory, RememberedProbe, RememberedVerify, RunId, RunSummary, SeenDevice, StoredRun,
    StoredWarning, UnreadableDocument,
};

use db_arg::Target;

/// Which runs [`Store::list`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunQuery {
    /// Runs carrying every one of these labels.
    pub labels: Vec<String>,
    /// Runs whose device or target mentions this text (case-insensitive).
    pub device: Option<String>,
    /// Runs whose device is exactly this, as [`Store::seen_devices`] names
    /// it (the device, else the target).
    pub device_is: Option<String>,
    /// Runs of this kind: `disk`, `mem`, `net`.
    pub kind: Option<String>,
    /// Runs on a host whose name mentions this text (case-insensitive).
    pub host: Option<String>,
    /// Disk runs of this profile (`cdm`, `custom`, ...).
    pub profile: Option<String>,
    /// Runs started at or after this time, ms since the Unix epoch.
    pub since_ms: Option<u64>,
    /// Runs started before this time, ms since the Unix epoch.
    pub until_ms: Option<u64>,
    /// Only the newest this many runs (after [`offset`](Self::offset)).
    pub limit: Option<usize>,
    /// Skip the newest this many runs first: a page further back.
    pub offset: usize,
}

/// Somewhere runs are kept.
///
/// A live run: [`begin_run`](Store::begin_run), then
/// [`update_run`](Store::update_run) after each finished job (one
/// transaction each), then [`finish_run`](Store::finish_run). Until it is
/// finished a run reads back as interrupted, which is what it is if the
/// process dies.
pub trait Store: Send {
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

    /// What is remembered under `key` ([`DeviceReport::disk_key`],
    /// [`DeviceReport::probe_key`]), if anything.
    ///
    /// [`DeviceReport::disk_key`]: iomark_model::device::DeviceReport::disk_key
    /// [`DeviceReport::probe_key`]: iomark_model::device::DeviceReport::probe_key
    fn device(&mut self, key: &str) -> Result<Option<DeviceMemory>, StoreError>;

    /// Every device remembered (by [`remember_device`](Store::remember_device)),
    /// by key.
    fn devices(&mut self) -> Result<Vec<DeviceMemory>, StoreError>;

    /// Every device runs were measured on (the device behind the target,
    /// else the target), the most recently used first.
    fn seen_devices(&mut self) -> Result<Vec<SeenDevice>, StoreError>;

    /// Remember `device` under its key, replacing what was there.
    fn remember_device(&mut self, device: &DeviceMemory) -> Result<(), StoreError>;

    /// Store seconds of live run `id` as they are measured, numbered from
    /// `first_seq` (one transaction per call is not needed: a sample lost
    /// with a killed process is one second of a chart).
    fn add_samples(
        &mut self,
        id: RunId,
        first_seq: u64,
        samples: &[LiveSample],
    ) -> Result<(), StoreError>;

    /// Run `id`'s samples numbered after `after` (all with `None`), in
    /// order, with their numbers: a viewer asks for what came since it last
    /// looked.
    fn samples(
        &mut self,
        id: RunId,
        after: Option<u64>,
    ) -> Result<Vec<(u64, LiveSample)>, StoreError>;

    /// The runs in progress, newest first: not finished, and begun or
    /// sampled at or after `since_ms` (ms since the Unix epoch). A run
    /// whose process was killed stops being one when its samples age.
    fn in_progress(&mut self, since_ms: u64) -> Result<Vec<RunId>, StoreError>;

    /// Whether the connection is gone for good (a PostgreSQL server
    /// restarted, a session cut), so that only a new one can answer; asked
    /// after a failure. A SQLite file has no connection to lose: its
    /// failures are the file's, and opening it again mends nothing.
    fn connection_lost(&mut self) -> bool {
        false
    }
}

/// Open the store `db` names, for reading and writing: `postgres://` or
/// `postgresql://` URLs go to PostgreSQL, a path or `sqlite://PATH` to a
/// SQLite file (created with its directory); `None` is what `$IOMARK_DB`
/// names ([`DB_ENV`]; empty is refused), else the default SQLite file
/// ([`default_sqlite_path`]). Names that would not keep anything
/// (`:memory:`, an empty `sqlite://`) and libpq `key=value` strings are
/// refused.
///
/// A SQLite file this user cannot write (mode 0444, a read-only mount, a
/// directory not writable) is opened read-only instead, so reading works;
/// writes then fail with [`StoreError::ReadOnly`].
pub fn open(db: Option<&str>) -> Result<Box<dyn Store>, StoreError> {
    match db_arg::target(db)? {
        Target::Postgres(url) => Ok(Box::new(PgStore::connect(&url)?)),
        Target::Sqlite(path) => Ok(Box::new(SqliteStore::open(path)?)),
    }
}

/// Open the store `db` names (as [`open`]) for reading only: nothing is
/// created or migrated, and a database that does not exist is
/// [`StoreError::NoDatabase`] (SQLite) or [`StoreError::NoSchema`].
pub fn open_read_only(db: Option<&str>) -> Result<Box<dyn Store>, StoreError> {
    match db_arg::target(db)? {
        Target::Postgres(url) => Ok(Box::new(PgStore::connect_read_only(&url)?)),
        Target::Sqlite(path) => Ok(Box::new(SqliteStore::open_read_only(path)?)),
    }
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
}
