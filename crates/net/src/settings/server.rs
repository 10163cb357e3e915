//! The server's settings: what the user said about a server, checked
//! against iperf3's limits and made into a [`ServerConfig`].

use std::net::IpAddr;
use std::time::Duration;

use iomark_model::units::Nanos;

use super::{interval, invalid};
use crate::{NetError, ServerConfig};

/// What the user said about a server: iperf3's server flags, with the
/// `clap` feature their definitions (the doc comments are their help).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ServerSettings {
    /// Port for control and data connections.
    #[cfg_attr(feature = "clap", arg(short = 'p', long, default_value_t = 5201))]
    pub port: u16,

    /// Listen only on this local address (default: every address, IPv4 and IPv6).
    #[cfg_attr(feature = "clap", arg(short = 'B', long = "bind", value_name = "ADDR"))]
    pub bind: Option<String>,

    /// Serve one test, then exit.
    #[cfg_attr(feature = "clap", arg(short = '1', long = "one-off"))]
    pub one_off: bool,

    /// Seconds between interval reports; 0 turns them off.
    #[cfg_attr(
        feature = "clap",
        arg(
            short = 'i',
            long = "interval",
            default_value = "1",
            value_name = "SECS"
        )
    )]
    pub interval_secs: f64,

    /// Print each test's report as iperf3-layout JSON.
    #[cfg_attr(feature = "clap", arg(short = 'J', long = "json"))]
    pub json: bool,

    /// Print each test as it runs, one JSON object per line (iperf3
    /// 3.17+'s --json-stream): its start, each interval, its end.
    #[cfg_attr(feature = "clap", arg(long = "json-stream"))]
    pub json_stream: bool,

    /// Verbose, as iperf3's -V: the settings, each test's cookie and
    /// parameters, per-stream TCP figures.
    #[cfg_attr(feature = "clap", arg(short = 'V', long))]
    pub verbose: bool,

    /// Longest wait for the first byte of a set-up message (iperf3: 10s).
    #[cfg_attr(feature = "clap", arg(long, hide = true, default_value = "10s"))]
    pub first_byte_timeout: Nanos,

    /// Longest wait for a test's whole set-up (iperf3: 30s).
    #[cfg_attr(feature = "clap", arg(long, hide = true, default_value = "30s"))]
    pub setup_timeout: Nanos,

    /// Slack after duration + omit before a running test is dropped (iperf3: 40s).
    #[cfg_attr(feature = "clap", arg(long, hide = true, default_value = "40s"))]
    pub grace: Nanos,

    /// End a test whose data streams move nothing for this long, e.g. 30s (iperf3's --rcv-timeout).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = "120s", value_name = "DURATION")
    )]
    pub rcv_timeout: Nanos,

    /// Longest test: a longer -t is refused, and a -t 0 (or -n/-k) test is ended here.
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = "24h", value_name = "DURATION")
    )]
    pub max_duration: Nanos,

    /// Serve up to N tests at once, each reported on its own (iperf3: 1; others are told "busy").
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1, value_name = "N"))]
    pub max_clients: u32,

    /// Ask each client for credentials: the RSA private key (PEM, no passphrase) they are encrypted for.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "FILE", requires = "authorized_users_path")
    )]
    pub rsa_private_key_path: Option<std::path::PathBuf>,

    /// Who may run tests: lines of NAME,SHA256 where SHA256 is the hex sha256 of {NAME}PASSWORD (iperf3's file).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "FILE", requires = "rsa_private_key_path")
    )]
    pub authorized_users_path: Option<std::path::PathBuf>,

    /// Refuse credentials whose time is further than this from the server's clock (iperf3: 10).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 10, value_name = "SECS"))]
    pub time_skew_threshold: u32,

    /// Credentials padded with PKCS#1 v1.5, as clients before iperf3 3.17 pad them (default: OAEP).
    #[cfg_attr(feature = "clap", arg(long))]
    pub use_pkcs1_padding: bool,
}

impl ServerSettings {
    /// Check the settings and make the server's configuration.
    pub fn build(&self) -> Result<ServerConfig, NetError> {
        let bind = match &self.bind {
            Some(b) => match b.parse::<IpAddr>() {
                Ok(ip) => Some(ip),
                Err(e) => return invalid(format!(
                    "-B {b} is not an IP address: give a local address such as 127.0.0.1 or ::1: {e}"
                )),
            },
            None => None,
        };
        let rcv_timeout = self.rcv_timeout.as_duration();
        if rcv_timeout < Duration::from_millis(100) {
            return invalid(format!(
                "--rcv-timeout {} is too short: give at least 100ms (default 120s)",
                self.rcv_timeout
            ));
        }
        let max_duration = self.max_duration.as_duration();
        if max_duration < Duration::from_secs(1) {
            return invalid(format!(
                "--max-duration {} is too short: give at least 1s (default 24h)",
                self.max_duration
            ));
        }
        if !(1..=128).contains(&self.max_clients) {
            return invalid(format!(
                "--max-clients {} is out of range: give 1 (one test at a time, as iperf3) to 128",
                self.max_clients
            ));
        }
        if self.json && self.json_stream {
            return invalid("-J and --json-stream are two JSON layouts: give one".to_string());
        }
        if self.one_off && self.max_clients > 1 {
            return invalid(
                "-1 serves one test and exits: leave out -1 or --max-clients".to_string(),
            );
        }
        Ok(ServerConfig {
            auth: self.authorizer()?.map(std::sync::Arc::new),
            interrupt: None,
            max_clients: self.max_clients as usize,
            port: self.port,
            bind,
            one_off: self.one_off,
            first_byte_timeout: self.first_byte_timeout.as_duration(),
            setup_timeout: self.setup_timeout.as_duration(),
            grace: self.grace.as_duration(),
            rcv_timeout,
            max_duration,
            interval: interval(self.interval_secs)?,
            text: !self.json && !self.json_stream,
            verbose: self.verbose,
            json: self.json,
            json_stream: self.json_stream,
        })
    }

    /// `--rsa-private-key-path` with `--authorized-users-path`.
    fn authorizer(&self) -> Result<Option<crate::auth::Authorizer>, NetError> {
        let (key, users) = match (&self.rsa_private_key_path, &self.authorized_users_path) {
            (None, None) => {
                if self.use_pkcs1_padding {
                    return invalid("--use-pkcs1-padding is for the credentials: give it with --rsa-private-key-path and --authorized-users-path".to_string());
                }
                return Ok(None);
            }
            (Some(k), Some(u)) => (k, u),
            _ => {
                return invalid(
                    "--rsa-private-key-path and --authorized-users-path go together: give both"
                        .to_string(),
                )
            }
        };
        let pem = std::fs::read_to_string(key).map_err(|e| {
            NetError::Invalid(format!(
                "--rsa-private-key-path {}: cannot read it: {e}",
                key.display()
            ))
        })?;
        crate::auth::Authorizer::new(
            &pem,
            users.clone(),
            self.use_pkcs1_padding,
            self.time_skew_threshold,
        )
        .map(Some)
        .map_err(|e| {
            NetError::Invalid(format!(
                "--rsa-private-key-path {} / --authorized-users-path {}: {e}",
                key.display(),
                users.display()
            ))
        })
    }
}

impl ServerConfig {
    /// `-V`: the server's settings, printed before it listens.
    pub fn settings_line(&self) -> String {
        format!(
            "iomark {} server: port {}, bind {}, {}, interval {}, receive timeout {:?}, longest test {:?}",
            env!("CARGO_PKG_VERSION"),
            self.port,
            self.bind.map_or("any address".to_string(), |b| b.to_string()),
            if self.one_off { "one test" } else { "every test" },
            self.interval
                .map_or("off".to_string(), |i| format!("{:?}", i)),
            self.rcv_timeout,
            self.max_duration,
        )
    }
}
