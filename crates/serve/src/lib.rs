//! `iomark serve`: a read-only web view of the results store. The stored
//! runs newest first with filters and pages, one run as `results show`
//! tells it with the report's charts, runs compared as `results compare`
//! compares them with their charts overlaid, the devices measured and
//! remembered with each one's history, and a JSON API with the documents
//! of `results list/show/compare --json`.
//!
//! Pages are drawn on the server from the store alone: no script but the
//! live page's own, no inline style, nothing from outside the binary,
//! under a strict Content-Security-Policy. The store is opened read-only.
//!
//! What the crate offers, all the command line needs:
//!
//! * [`Listening`] starts a server from a [`Config`] (the store, the
//!   address, [`Access`], the [`WORKERS`] drawing pages and the
//!   connections' [`Limits`], whose cap is [`default_max_connections`]
//!   unless given) and runs it until a stop flag is raised;
//! * [`Access`] is who may read: anyone on a loopback address, else only
//!   requests carrying the token (`--token`; [`GENERATE`] makes one);
//! * [`ServeError`] is why the server cannot start or stopped;
//! * [`documents`] is what `iomark results list`, `compare` and `export`
//!   share with the server's pages, so that they cannot drift.
//!
//! Everything else is the server's own, `pub(crate)` at most.

#![deny(missing_docs)]

// How the code is laid out: `route` answers an `http::Request` with an
// `http::Response` (no socket: the routes are tested directly); `server`
// runs it on hyper, each request drawn on a blocking thread over a store
// connection; `connections` bounds each connection in time and their
// number; `access` decides who may read; `query` reads query strings;
// `pages` and `api` make the answers.
mod access;
mod api;
mod connections;
pub mod documents;
mod http;
mod pages;
mod query;
mod route;
mod server;

use std::net::SocketAddr;

use iomark_store::StoreError;

pub use access::{Access, GENERATE};
pub use connections::{default_max_connections, Limits};
pub use server::{Config, Listening, WORKERS};

/// Why the server cannot start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A non-loopback address without a token.
    #[error(
        "--bind {bind} is not a loopback address, so anyone who reaches it could read the store: \
         add --token TOKEN (16 characters or more) or --token generate"
    )]
    NeedsToken {
        /// The address asked for.
        bind: SocketAddr,
    },
    /// A token too short to keep anyone out (empty, blank, under 16
    /// characters), or with a character a header or cookie cannot carry.
    #[error(
        "--token needs 16 characters or more, each a visible ASCII character other than \
         \" , ; \\ (no spaces): use --token generate for a random one"
    )]
    WeakToken,
    /// The address cannot be listened on.
    #[error("cannot listen on {bind}: {reason}")]
    Bind {
        /// The address asked for.
        bind: SocketAddr,
        /// What went wrong, with the fix.
        reason: String,
    },
    /// A connection limit that would let nothing through
    /// (`--header-timeout`, `--idle-timeout`, `--max-connections`).
    #[error("{0}")]
    Limit(String),
    /// The store cannot be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a request gets no page of its own: each becomes a readable page
/// (or, under `/api/`, a JSON document) with its status.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    /// A query value that cannot be used (400).
    #[error(transparent)]
    Bad(#[from] query::BadRequest),
    /// Nothing is there (404).
    #[error("{0}")]
    NotFound(String),
    /// The store failed, or has no such run (404).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The runs cannot be compared as asked (400), or the store failed.
    #[error(transparent)]
    Compare(#[from] documents::CompareError),
    /// The runs cannot be drawn.
    #[error(transparent)]
    Report(#[from] iomark_report::ReportError),
    /// Something that should not fail did (500).
    #[error("{0}")]
    Internal(String),
}

impl Failure {
    /// The HTTP status.
    pub(crate) fn status(&self) -> u16 {
        use documents::CompareError;
        let store = |e: &StoreError| match e {
            StoreError::NotFound { .. } | StoreError::NoRunWithLabel { .. } => 404,
            _ => 500,
        };
        match self {
            Failure::Bad(_) => 400,
            Failure::NotFound(_) => 404,
            Failure::Store(e) | Failure::Compare(CompareError::Store(e)) => store(e),
            Failure::Compare(_) => 400,
            Failure::Report(iomark_report::ReportError::Lineup(_)) => 400,
            Failure::Report(_) | Failure::Internal(_) => 500,
        }
    }

    /// As a page.
    pub(crate) fn page(&self) -> http::Response {
        let title = match self.status() {
            400 => "Bad request",
            404 => "Not found",
            _ => "Server error",
        };
        pages::layout::html(
            self.status(),
            pages::layout::message_page(title, &self.to_string()),
        )
    }

    /// As a JSON document: `{"error": "..."}`.
    pub(crate) fn json(&self) -> http::Response {
        let body = serde_json::json!({ "error": self.to_string() }).to_string() + "\n";
        let body = iomark_model::escape::json_escaped(body);
        http::Response::new(self.status(), http::JSON, body)
    }
}
