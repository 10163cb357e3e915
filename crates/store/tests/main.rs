//! The store's integration tests, one binary: each file below was a binary
//! of its own, and each linked the store, the PostgreSQL client and the
//! test helpers again.

mod common;
mod import;
mod iomark_fio_json;
mod postgres;
mod processes;
mod sqlite;
