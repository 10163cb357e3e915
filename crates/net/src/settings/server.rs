//! The server's settings: what the user said about a server, checked
//! against iperf3's limits and made into a [`ServerConfig`].

use std::net::IpAddr;
use std::time::Duration;

use iomark_model::units::Nanos;

use super::{interval, invalid};
use crate::{NetError, ServerConfig};

/// What the user said about a server.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// Port for control and data connections.
    pub port: u16,
    /// Local address to listen on; `None` listens on every address.
    pub bind: Option<String>,
    /// Serve one test, then exit.
    pub one_off: bool,
    /// Seconds between interval reports; 0 turns them off.
    pub interval_secs: f64,
    /// iperf3-layout JSON instead of text.
    pub json: bool,
    /// iperf3's `-V`: more detail in the text output.
    pub verbose: bool,
    /// Longest wait for the first byte of a set-up message.
    pub first_byte_timeout: Nanos,
    /// Longest wait for a test's whole set-up.
    pub setup_timeout: Nanos,
    /// Slack after duration + omit before a running test is dropped.
    pub grace: Nanos,
    /// End a test whose data streams move nothing for this long.
    pub rcv_timeout: Nanos,
    /// Longest test.
    pub max_duration: Nanos,
    /// Tests served at once (`--max-clients`).
    pub max_clients: u32,
    /// The server's RSA private key, PEM (`--rsa-private-key-path`).
    pub rsa_private_key_path: Option<std::path::PathBuf>,
    /// Who may run tests (`--authorized-users-path`): `NAME,SHA256` lines.
    pub authorized_users_path: Option<std::path::PathBuf>,
    /// Largest difference between a client's credentials' time and this
    /// host's clock, in seconds (`--time-skew-threshold`).
    pub time_skew_threshold: u32,
    /// PKCS#1 v1.5 padding instead of OAEP (`--use-pkcs1-padding`).
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
            text: !self.json,
            verbose: self.verbose,
            json: self.json,
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
