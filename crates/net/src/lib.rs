//! iomark's network tester: an iperf3-compatible client and server.
//!
//! This crate owns the iperf3 wire protocol ([`proto`], pure and fuzzed),
//! the TCP and UDP data streams (one thread per stream), the client and
//! server state machines, CPU accounting, and iperf3-style text and `-J`
//! output. It knows nothing about the results store or the CLI: the client
//! returns a [`TestReport`] that the CLI turns into an
//! [`iomark_model::net::NetRun`].
//!
//! ```no_run
//! use iomark_net::{client, ClientConfig};
//! let cfg = ClientConfig::new("127.0.0.1");
//! let report = client::run(&cfg, &mut iomark_pipeline::NoDisplay).unwrap();
//! println!("{}", report.to_iperf3_json());
//! ```
#![deny(missing_docs)]

pub mod auth;
pub mod client;
mod control;
mod cpu;
mod document;
pub mod iface;
pub mod live;
mod local;
pub mod output;
mod probe;
pub mod proto;
pub mod recording;
mod report;
pub mod server;
mod server_gate;
mod server_many;
mod server_output;
mod server_periods;
mod session;
pub mod settings;
mod sockopt;
mod stream;
mod sys;

pub use client::ClientConfig;
pub use document::{run_document, served_document};
pub use report::{Peering, RateFormat, Role, RttProbe, TestReport};
pub use server::ServerConfig;

/// Why a network test could not run or finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// The host name did not resolve.
    #[error("cannot resolve host '{host}': {source}; check the name or give an IP address")]
    Resolve {
        /// The name given.
        host: String,
        /// The resolver's error.
        source: std::io::Error,
    },
    /// Nothing listens at the address.
    #[error("connection to {addr} refused: is a server running there (`iomark net server` or `iperf3 -s`)?")]
    Refused {
        /// The address tried.
        addr: String,
    },
    /// The server runs another test.
    #[error("the server is busy running a test; try again later")]
    Busy,
    /// The server answered with SERVER_ERROR.
    #[error("the server refused the test: {message} (iperf3 error {code})")]
    ServerError {
        /// iperf3 error code.
        code: i32,
        /// Its meaning.
        message: &'static str,
    },
    /// The peer broke the protocol.
    #[error("protocol error: {0}")]
    Proto(#[from] proto::ProtoError),
    /// The peer sent a state byte that does not fit the current step.
    #[error("unexpected state {got:?} from the peer while waiting for {expected}")]
    Unexpected {
        /// What came.
        got: proto::State,
        /// What the step needed.
        expected: &'static str,
    },
    /// The control connection closed early.
    #[error("the control connection closed unexpectedly ({during})")]
    Closed {
        /// What was going on.
        during: &'static str,
    },
    /// The peer sent nothing in time.
    #[error("timed out waiting for {what}")]
    Timeout {
        /// What was awaited.
        what: &'static str,
    },
    /// Nothing moved on the data streams for the server's `--rcv-timeout`.
    #[error("nothing came from the client for {limit:?} (--rcv-timeout): no data moved on the data streams, and, for UDP the server sends, no answer on the control connection either; the client stalled or vanished; raise --rcv-timeout if the link really pauses that long")]
    Idle {
        /// The limit that ran out.
        limit: std::time::Duration,
    },
    /// No UDP hello came from the control connection's address, and hellos
    /// from other addresses were ignored.
    #[error("no UDP hello came from {control}, the control connection's address, in time; {ignored} hello(s) from elsewhere were ignored (the first from {first}): the server sends UDP data only to the address of the control connection, so a hello from another address cannot turn it on a third party")]
    UdpHelloElsewhere {
        /// The control connection's peer address.
        control: std::net::IpAddr,
        /// The first hello from another address.
        first: std::net::SocketAddr,
        /// How many hellos from other addresses came.
        ignored: u64,
    },
    /// The client asked for a test longer than the server allows.
    #[error("the client asked for a {asked} s test, longer than the server's --max-duration of {max:?}: ask for less with -t, or raise --max-duration")]
    DurationRefused {
        /// The requested `time`, in seconds.
        asked: u32,
        /// The server's limit.
        max: std::time::Duration,
    },
    /// A test with no time limit (`-t 0`, or `-n`/`-k`) ran into the cap.
    #[error("the test reached the server's --max-duration of {max:?} without the client ending it: raise --max-duration for longer unbounded (-t 0, -n, -k) tests")]
    DurationCapped {
        /// The server's limit.
        max: std::time::Duration,
    },
    /// The peer was interrupted and ended the test (CLIENT_TERMINATE or
    /// SERVER_TERMINATE).
    #[error("the {who} was interrupted and ended the test")]
    Terminated {
        /// `client` or `server`.
        who: &'static str,
    },
    /// The client's credentials were refused (`--authorized-users-path`).
    #[error("refused the client's credentials: {0}")]
    AuthRefused(#[from] auth::AuthRefusal),
    /// A setting is out of range or malformed; the message names the fix.
    #[error("{0}")]
    Invalid(String),
    /// Ctrl-C (or SIGTERM) arrived before the test ran.
    #[error("interrupted")]
    Interrupted,
    /// A socket operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl NetError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> NetError {
        let what = what.into();
        move |source| NetError::Io { what, source }
    }
}
