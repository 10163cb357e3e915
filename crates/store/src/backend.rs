//! The one interface the store's work ([`crate::ops`]) is written against,
//! implemented by the SQLite and the PostgreSQL backend: a connection or
//! transaction ([`Db`]) that runs statements with parameters either driver
//! can bind ([`Param`]) and hands back rows either can read ([`Row`]).
//!
//! Statements are written once, with SQLite's numbered parameters (`?1`);
//! PostgreSQL's backend turns them into its own (`$1`).

// What a row is and what its columns can be belong to decoding; the
// backends implement them.
use crate::decode::Decode;
pub(crate) use crate::decode::{Column, Row};
use crate::StoreError;

/// A numbered migration: its version, name and SQL.
pub(crate) type Migration = (i64, &'static str, &'static str);

/// A connection or a transaction on one of the two databases, with what
/// differs between their SQL.
pub(crate) trait Db {
    /// The numbered migrations, in order. Never edit one that has shipped;
    /// add the next number.
    const MIGRATIONS: &'static [Migration];
    /// The operator matching text case-insensitively: SQLite's `LIKE` is,
    /// PostgreSQL's is not (`ILIKE` is).
    const LIKE: &'static str;
    /// The type of a 64-bit integer column.
    const BIGINT: &'static str;
    /// A query answering whether `schema_migrations` exists (one boolean).
    const HAS_MIGRATIONS_TABLE: &'static str;

    /// Where the data is, for messages: a path or a URL without password.
    fn location(&self) -> String;

    /// SQL reading the text at `path` (object keys) in the JSON text
    /// `column`; NULL where there is none.
    fn json_text(column: &str, path: &[&str]) -> String;

    /// Run SQL without parameters: one statement or several.
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;

    /// Run one statement; the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> Result<u64, StoreError>;

    /// Run a query; its rows, decoded.
    fn query<D: Decode>(&mut self, sql: &str, params: &[&dyn Param]) -> Result<Vec<D>, StoreError>;

    /// The newest migration this build knows.
    fn known_version() -> i64 {
        Self::MIGRATIONS.last().map_or(0, |m| m.0)
    }
}

/// A statement parameter that both drivers can bind.
pub(crate) trait Param: Sync {
    /// As SQLite's driver takes it.
    fn sqlite(&self) -> &dyn rusqlite::ToSql;
    /// As PostgreSQL's driver takes it.
    fn pg(&self) -> &(dyn postgres::types::ToSql + Sync);
}

impl<T: rusqlite::ToSql + postgres::types::ToSql + Sync> Param for T {
    fn sqlite(&self) -> &dyn rusqlite::ToSql {
        self
    }

    fn pg(&self) -> &(dyn postgres::types::ToSql + Sync) {
        self
    }
}

/// A driver's row, with what makes the driver's errors the store's; each
/// backend implements [`Row`] for its driver's.
pub(crate) struct DriverRow<'a, R: ?Sized, E> {
    pub row: &'a R,
    pub err: &'a dyn Fn(E) -> StoreError,
}
