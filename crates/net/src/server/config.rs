//! How the server listens and how patient it is: [`ServerConfig`].

use std::io::Write;
use std::net::IpAddr;
use std::time::{Duration, SystemTime};

use crate::proto::{params, Params};
use crate::NetError;

/// How the server listens and how patient it is.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Port for control and data (`-p`).
    pub port: u16,
    /// Address to bind (`-B`); `None` is dual-stack `[::]`.
    pub bind: Option<IpAddr>,
    /// Serve one test, then return (`-1`).
    pub one_off: bool,
    /// Longest wait for the first byte of a set-up message (iperf3: 10 s).
    pub first_byte_timeout: Duration,
    /// Longest wait for the whole set-up (iperf3: 30 s).
    pub setup_timeout: Duration,
    /// Slack after duration + omit before a running test is dropped (40 s).
    pub grace: Duration,
    /// A running test whose data streams move no byte for this long ends
    /// with SERVER_ERROR 144, and no message the client owes is awaited
    /// longer (iperf3's `--rcv-timeout`: 120 s).
    pub rcv_timeout: Duration,
    /// The longest test: a longer `-t` is refused with SERVER_ERROR 37, and
    /// a test without a time (`-t 0`, `-n`, `-k`) is ended here with
    /// SERVER_ERROR 160 (24 h, the longest `-t` iperf3 accepts).
    pub max_duration: Duration,
    /// Report interval; `None` disables interval reports.
    pub interval: Option<Duration>,
    /// Print the text report.
    pub text: bool,
    /// With `text`, add what iperf3's `-V` adds to each test's report.
    pub verbose: bool,
    /// Print each test's report in iperf3's `-J` layout.
    pub json: bool,
    /// Print each test as it goes, iperf3's `--json-stream` lines.
    pub json_stream: bool,
    /// Tests served at once (`--max-clients`; iperf3: 1).
    pub max_clients: usize,
    /// Who may run tests, when the server asks for credentials.
    pub auth: Option<std::sync::Arc<crate::auth::Authorizer>>,
    /// Raised to stop (Ctrl-C): running tests end with SERVER_TERMINATE
    /// and the server returns.
    pub interrupt: Option<&'static std::sync::atomic::AtomicBool>,
}

impl ServerConfig {
    /// iperf3's defaults.
    pub fn new() -> ServerConfig {
        ServerConfig {
            port: 5201,
            bind: None,
            one_off: false,
            first_byte_timeout: Duration::from_secs(10),
            setup_timeout: Duration::from_secs(30),
            grace: Duration::from_secs(40),
            rcv_timeout: Duration::from_secs(120),
            max_duration: Duration::from_secs(params::MAX_TIME),
            interval: Some(Duration::from_secs(1)),
            text: true,
            verbose: false,
            json: false,
            json_stream: false,
            max_clients: 1,
            auth: None,
            interrupt: None,
        }
    }

    /// How often the control connection is probed while the server streams UDP
    /// datagrams: four times per receive timeout, so a live client's host has
    /// answered well within it; at least a second, the kernel's unit.
    pub(super) fn keepalive_period(&self) -> Duration {
        Duration::from_secs((self.rcv_timeout / 4).as_secs().max(1))
    }

    /// The wait for a message the client owes: `limit`, or the receive
    /// timeout when that is shorter.
    pub(super) fn owed(&self, limit: Duration) -> Duration {
        limit.min(self.rcv_timeout)
    }

    /// When the server asks for credentials, check the test's; `-V` says
    /// who succeeded on `out`.
    pub(super) fn authorize(&self, p: &Params, out: &mut dyn Write) -> Result<(), NetError> {
        let Some(auth) = &self.auth else {
            return Ok(());
        };
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let user = auth.check(p.authtoken.as_deref(), now)?;
        if self.verbose && self.text {
            let _ = writeln!(out, "Authentication succeeded for user '{user}' ts {now}");
        }
        Ok(())
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig::new()
    }
}
