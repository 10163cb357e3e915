//! A client or server from what the user gave, with iperf3's defaults and
//! limits checked in one place, so the command line only parses.
//!
//! The messages name iperf3's flags (`-P`, `-t`, `-l`, ...): they are the
//! vocabulary of the test, whatever front end fills it in.

use std::net::IpAddr;
use std::time::Duration;

use iomark_model::units::Bytes;

use crate::local::{Family, LocalEnd};

mod client;
mod server;
mod tos;
pub mod unsupported;
use crate::proto::{params, Params, Protocol};
use crate::{ClientConfig, NetError};
pub use client::ClientSettings;
pub use server::ServerSettings;
use tos::{parse_dscp, parse_tos};

fn invalid<T>(msg: String) -> Result<T, NetError> {
    Err(NetError::Invalid(msg))
}

impl ClientConfig {
    /// `-V`: the client's settings, printed before it connects.
    pub fn settings_line(&self) -> String {
        format!(
            "iomark {} client: {}:{}, {}, {} s, {} stream(s){}{}, interval {}",
            env!("CARGO_PKG_VERSION"),
            self.host,
            self.port,
            match self.params.protocol {
                Protocol::Tcp => "TCP",
                Protocol::Udp => "UDP",
            },
            self.params.time,
            self.params.parallel,
            if self.params.reverse { ", reverse" } else { "" },
            if self.params.bidirectional {
                ", both ways"
            } else {
                ""
            },
            self.interval
                .map_or("off".to_string(), |i| format!("{:?}", i)),
        )
    }
}

/// `-i`: `None` for 0, else 0.1 to 60 seconds.
fn interval(secs: f64) -> Result<Option<Duration>, NetError> {
    if secs == 0.0 {
        return Ok(None);
    }
    if !(0.1..=60.0).contains(&secs) {
        return invalid(format!(
            "-i {secs} is out of range: give 0 (no interval reports) or 0.1 to 60 seconds"
        ));
    }
    Ok(Some(Duration::from_secs_f64(secs)))
}

impl ClientSettings {
    /// Where the client's output goes and how each line starts.
    pub fn output(&self) -> crate::output::OutputSettings {
        crate::output::OutputSettings {
            logfile: self.logfile.clone(),
            timestamps: self.timestamps.clone(),
            title: self.title.clone(),
            forceflush: self.forceflush,
            json_stream: self.json_stream,
        }
    }

    /// Check the settings against iperf3's limits and make the client's
    /// configuration.
    pub fn build(&self) -> Result<ClientConfig, NetError> {
        if let Some(f) = &self.file {
            return invalid(format!(
                "-F {}: iomark does not move files in a network test: iperf3's -F reads or writes the file \
                 during the test, so its figure is the slower of disk and link. Measure the link with -n {} \
                 (the file's size) and the disk with `iomark disk`",
                f.display(),
                std::fs::metadata(f).map_or("SIZE".to_string(), |m| m.len().to_string())
            ));
        }
        let protocol = if self.udp {
            Protocol::Udp
        } else {
            Protocol::Tcp
        };
        if !(1..=params::MAX_PARALLEL).contains(&self.parallel) {
            return invalid(format!(
                "-P {} is out of range: give 1 to 128 streams",
                self.parallel
            ));
        }
        let (num, blockcount) = (
            self.bytes.map_or(0, Bytes::get),
            self.blockcount.map_or(0, Bytes::get),
        );
        if [
            self.time.is_some(),
            self.bytes.is_some(),
            self.blockcount.is_some(),
        ]
        .iter()
        .filter(|&&b| b)
        .count()
            > 1
        {
            return invalid("-t, -n and -k each end the test: give only one of them".to_string());
        }
        if self.bytes.is_some() && num == 0 || self.blockcount.is_some() && blockcount == 0 {
            return invalid("-n and -k take at least 1 (bytes or blocks to send)".to_string());
        }
        let time = match self.time {
            Some(t) if t == 0 || t as u64 > params::MAX_TIME => {
                return invalid(format!("-t {t} is out of range: give 1 to 86400 seconds"))
            }
            Some(t) => t,
            // iperf3 sends a time of 0 with -n/-k: no time limit.
            None if num > 0 || blockcount > 0 => 0,
            None => 10,
        };
        let local = self.local_end()?;
        let tos = self.tos()?;
        let affinity = self.affinity()?;
        if let Some(mss) = self.mss.filter(|m| !(1..=9216).contains(m)) {
            return invalid(format!(
                "-M {mss} is out of range: give 1 to 9216 bytes (iperf3's limit)"
            ));
        }
        if let Some(cc) = self
            .congestion
            .as_deref()
            .filter(|c| !crate::proto::untrusted::is_congestion_name(c))
        {
            return invalid(format!(
                "-C {cc}: a congestion control is named by 1 to 16 letters, digits, '_' or '-', e.g. cubic or bbr"
            ));
        }
        let auth = self.credentials()?;
        if self.json && self.json_stream {
            return invalid("-J and --json-stream are two JSON layouts: give one".to_string());
        }
        if self.zerocopy && protocol == Protocol::Udp {
            return invalid(
                "-Z sends TCP with sendfile; UDP has no zerocopy path: leave out -Z or -u"
                    .to_string(),
            );
        }
        if self.omit as u64 > params::MAX_OMIT {
            return invalid(format!(
                "-O {} is out of range: give 0 to 600 seconds",
                self.omit
            ));
        }
        let udp_len = *params::UDP_LEN_RANGE.start() as u64..=*params::UDP_LEN_RANGE.end() as u64;
        let len = match (self.length.map(Bytes::get), protocol) {
            // 0 is iperf3's default for the protocol, see ClientConfig::params.
            (None, _) => 0,
            (Some(l), Protocol::Tcp) if !(1..=params::MAX_TCP_LEN as u64).contains(&l) => {
                return invalid(format!("-l {l} is out of range: TCP takes 1 byte to 1M"))
            }
            (Some(l), Protocol::Udp) if !udp_len.contains(&l) => {
                return invalid(format!(
                    "-l {l} is out of range: UDP datagrams take 16 to 65507 bytes"
                ))
            }
            (Some(l), _) => l as u32,
        };
        let window = match self.window {
            None => None,
            Some(w) if w.get() > params::MAX_WINDOW => {
                return invalid(format!("-w {w} is too large: give at most 512M"))
            }
            Some(w) => Some(w.get() as u32),
        };
        let bandwidth = self.bitrate.unwrap_or(match protocol {
            Protocol::Tcp => 0,
            Protocol::Udp => params::DEFAULT_UDP_RATE,
        });
        Ok(ClientConfig {
            port: self.port,
            params: Params {
                protocol,
                omit: self.omit,
                time,
                num,
                blockcount,
                mss: self.mss,
                tos,
                fqrate: self.fq_rate,
                zerocopy: self.zerocopy,
                server_affinity: affinity.1,
                congestion: self.congestion.clone(),
                title: self.title.clone(),
                get_server_output: self.get_server_output,
                parallel: self.parallel,
                reverse: self.reverse,
                bidirectional: self.bidir,
                window,
                len,
                bandwidth,
                nodelay: self.no_delay,
                ..Params::default()
            },
            interval: interval(self.interval_secs)?,
            text: !self.json && !self.json_stream,
            json_stream: self.json_stream,
            auth,
            verbose: self.verbose,
            local,
            affinity: affinity.0,
            rate_format: self.format.unwrap_or_default(),
            rtt_probe: !self.no_rtt_probe,
            connect_timeout: self
                .connect_timeout_ms
                .map_or(Duration::from_secs(10), Duration::from_millis),
            ..ClientConfig::new(self.host.clone())
        })
    }

    /// `--username`, `--rsa-public-key-path` and the password.
    fn credentials(&self) -> Result<Option<crate::auth::Credentials>, NetError> {
        let (user, path) = match (&self.username, &self.rsa_public_key_path) {
            (None, None) => return Ok(None),
            (Some(u), Some(p)) => (u, p),
            _ => {
                return invalid(
                    "--username and --rsa-public-key-path go together: give both (and the password in IPERF3_PASSWORD)"
                        .to_string(),
                )
            }
        };
        let Some(password) = self.password.clone() else {
            return invalid(format!(
                "--username {user}: set the password in IPERF3_PASSWORD (iomark does not prompt for it)"
            ));
        };
        let pem = std::fs::read_to_string(path).map_err(|e| {
            NetError::Invalid(format!(
                "--rsa-public-key-path {}: cannot read it: {e}",
                path.display()
            ))
        })?;
        crate::auth::Credentials::new(user.clone(), password, &pem, self.use_pkcs1_padding)
            .map(Some)
            .map_err(|e| {
                NetError::Invalid(format!("--rsa-public-key-path {}: {e}", path.display()))
            })
    }

    /// `-4`, `-6`, `-B` and `--cport`.
    fn local_end(&self) -> Result<LocalEnd, NetError> {
        let family = match (self.ipv4, self.ipv6) {
            (true, true) => return invalid("-4 and -6 exclude each other: give one".to_string()),
            (true, false) => Family::V4,
            (false, true) => Family::V6,
            (false, false) => Family::Any,
        };
        let (bind, device) = match self.bind.as_deref() {
            None => (None, None),
            Some(b) => {
                let (addr, dev) = match b.split_once('%') {
                    Some((a, d)) => (a, Some(d)),
                    None => (b, None),
                };
                if dev.is_some_and(str::is_empty) {
                    return invalid(format!("-B {b}: name a device after %, e.g. -B %eth0"));
                }
                let ip = match addr {
                    "" => None,
                    a => Some(a.parse::<IpAddr>().map_err(|e| {
                        NetError::Invalid(format!(
                            "-B {b}: {a} is not an IP address: give a local address such as 127.0.0.1, optionally with %DEVICE: {e}"
                        ))
                    })?),
                };
                (ip, dev.map(str::to_string))
            }
        };
        if let Some(ip) = bind {
            if family == Family::V4 && ip.is_ipv6() || family == Family::V6 && ip.is_ipv4() {
                return invalid(format!("-B {ip} is not of the family -4/-6 asks for"));
            }
        }
        if self.cport == Some(0) {
            return invalid("--cport 0: give a port from 1 to 65535".to_string());
        }
        Ok(LocalEnd {
            family,
            bind,
            device,
            cport: self.cport,
        })
    }

    /// `-S` or `--dscp` as the TOS byte.
    fn tos(&self) -> Result<Option<u32>, NetError> {
        match (&self.tos, &self.dscp) {
            (Some(_), Some(_)) => {
                invalid("-S and --dscp both set the TOS byte: give one".to_string())
            }
            (Some(t), None) => parse_tos(t).map(Some),
            (None, Some(d)) => parse_dscp(d).map(|d| Some(d << 2)),
            (None, None) => Ok(None),
        }
    }

    /// `-A n[,m]`: the client's CPU and the server's.
    fn affinity(&self) -> Result<(Option<u32>, Option<u32>), NetError> {
        let Some(a) = &self.affinity else {
            return Ok((None, None));
        };
        let cpu = |s: &str| {
            s.trim().parse::<u32>().map_err(|_| {
                NetError::Invalid(format!(
                    "-A {a}: give a CPU number, or two as n,m (the client's and the server's)"
                ))
            })
        };
        match a.split_once(',') {
            Some((c, s)) => Ok((Some(cpu(c)?), Some(cpu(s)?))),
            None => Ok((Some(cpu(a)?), None)),
        }
    }
}

/// Read a bit rate as iperf3 does: 1000-based `k`, `m`, `g`, `t` suffixes.
pub fn parse_bitrate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.contains('/') {
        return Err(format!(
            "-b {s}: bursts (RATE/N) are not supported; give a plain rate such as 100M"
        ));
    }
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_lowercase() {
                'k' => 1e3,
                'm' => 1e6,
                'g' => 1e9,
                't' => 1e12,
                _ => {
                    return Err(format!(
                        "-b {s}: unknown unit '{c}'; use k, M, G or T (bits per second)"
                    ))
                }
            };
            (&t[..i], m)
        }
        _ => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("-b {s} is not a rate: write it like 100M or 1G"))?;
    Ok((v * mult).round() as u64)
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
