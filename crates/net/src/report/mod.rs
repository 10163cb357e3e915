//! What a finished test measured, from this host's side, with the peer's
//! results merged in: the one type the client and server fill while a test
//! runs, and the figures every rendering derives from it.
//!
//! The figures are as measured (bytes, seconds, counts), plus the peer's
//! results message as iperf3 sends it after EXCHANGE_RESULTS; no rendering
//! lives here. Each format has its own file:
//!
//! - [`text`]: iperf3's human-readable output;
//! - [`json`]: iperf3's `-J` document;
//! - [`model`]: iomark's result model, for the store.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use iomark_model::net::{CpuUtilization, NetDirection};

use crate::proto::{Params, Protocol, Results};
use crate::stream::{Snapshot, Stream, StreamInfo};
use crate::sys::TcpInfo;
pub use units::RateFormat;

mod json;
mod latency;
pub use latency::RttProbe;
mod model;
mod text;
mod units;
mod verbose;

pub(crate) use text::IntervalLines;

#[cfg(test)]
mod snapshot_tests;

/// Which end of the test this host was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The side that connected.
    Client,
    /// The side that listened.
    Server,
}

/// One stream's share of one interval.
#[derive(Debug, Clone)]
pub(crate) struct IntervalStream {
    pub index: usize,
    pub delta: Snapshot,
    pub tcp: Option<TcpInfo>,
}

/// One interval, every stream.
#[derive(Debug, Clone)]
pub(crate) struct IntervalRecord {
    pub start: f64,
    pub end: f64,
    pub omitted: bool,
    pub streams: Vec<IntervalStream>,
    /// This process's CPU over the interval, percent of one core.
    pub cpu: f64,
}

/// One stream's totals as this host measured them.
#[derive(Debug, Clone, Default)]
pub(crate) struct StreamTotals {
    pub bytes: u64,
    pub seconds: f64,
    pub retransmits: Option<u64>,
    pub packets: u64,
    pub lost: i64,
    pub out_of_order: u64,
    pub jitter: f64,
    pub omitted_packets: u64,
    pub omitted_lost: i64,
    pub max_cwnd: u64,
    pub max_snd_wnd: u64,
    pub reorder: u64,
    pub min_rtt: Option<u64>,
    pub max_rtt: Option<u64>,
    pub mean_rtt: Option<u64>,
    /// The smoothed RTT at each interval, microseconds.
    pub rtts: Vec<u64>,
}

/// A finished test, from this host's side, with the peer's results merged.
#[derive(Debug, Clone)]
pub struct TestReport {
    /// Which end this host was, and of which connection.
    pub peering: Peering,
    /// The test's parameters (`-w` as asked is `params.window`).
    pub params: Params,
    /// When the test started.
    pub started: SystemTime,
    /// When it finished.
    pub finished: SystemTime,
    /// Actual `SO_SNDBUF` of the first data stream.
    pub sndbuf_actual: u64,
    /// Actual `SO_RCVBUF` of the first data stream.
    pub rcvbuf_actual: u64,
    /// Congestion control of the data streams.
    pub congestion: Option<String>,
    /// Every stream.
    pub streams: Vec<StreamInfo>,
    pub(crate) intervals: Vec<IntervalRecord>,
    pub(crate) totals: Vec<StreamTotals>,
    /// This host's CPU use.
    pub cpu_local: CpuUtilization,
    /// The whole machine's CPU on this host.
    pub host_cpu_local: Option<iomark_model::cpu::HostCpu>,
    /// How long a CPU quota throttled this host's cgroup, when it did.
    pub throttle_local: Option<iomark_model::cpu::CpuThrottle>,
    /// Why this host could not check a CPU quota, when it could not.
    pub quota_unchecked_local: Option<String>,
    /// The peer's results message.
    pub remote: Option<Results>,
    /// The interval length, 0 when disabled.
    pub interval_secs: f64,
    /// Stopped by Ctrl-C: the figures are this host's only, up to then.
    pub interrupted: bool,
    /// The rate column's unit in the text output (`-f`).
    pub rate_format: RateFormat,
    /// Handshake times to the server's port before and during the load.
    pub rtt_probe: RttProbe,
}

/// Who a report is from and with, as the control connection has it.
#[derive(Debug, Clone)]
pub struct Peering {
    /// Client or server.
    pub role: Role,
    /// The test's cookie text.
    pub cookie: String,
    /// The peer as named (client: the host given; server: the peer address).
    pub peer_host: String,
    /// The peer's port.
    pub peer_port: u16,
    /// Local end of the control connection.
    pub control_local: SocketAddr,
    /// The control connection's MSS.
    pub tcp_mss: Option<u32>,
}

/// One side (sender or receiver) of one stream's totals.
#[derive(Debug, Clone, Default)]
struct Side {
    bytes: u64,
    seconds: f64,
    retransmits: Option<u64>,
    packets: Option<u64>,
}

impl TestReport {
    /// The report of a test whose streams are open and about to run, from
    /// `started` on, with intervals of `interval`: the socket buffers and
    /// congestion control of the first stream, every stream as seen from
    /// this side, no figures yet.
    pub(crate) fn opening(
        peering: Peering,
        params: Params,
        streams: &[Stream],
        started: SystemTime,
        interval: Option<Duration>,
    ) -> TestReport {
        let (sndbuf_actual, rcvbuf_actual) = streams.first().map_or((0, 0), |s| s.buffers());
        // What this host sends goes up from a client, down from a server.
        let sending_is = match peering.role {
            Role::Client => NetDirection::Upload,
            Role::Server => NetDirection::Download,
        };
        TestReport {
            peering,
            started,
            finished: started,
            sndbuf_actual,
            rcvbuf_actual,
            congestion: streams.first().and_then(|s| s.congestion()),
            streams: streams.iter().map(|s| s.info(sending_is)).collect(),
            intervals: Vec::new(),
            totals: Vec::new(),
            cpu_local: Default::default(),
            host_cpu_local: None,
            throttle_local: None,
            quota_unchecked_local: None,
            remote: None,
            interval_secs: interval.map_or(0.0, |i| i.as_secs_f64()),
            interrupted: false,
            rate_format: RateFormat::default(),
            rtt_probe: RttProbe::default(),
            params,
        }
    }

    /// Take in what the test measured once it ended: the intervals (taken
    /// from the session's list), each stream's totals, this host's CPU from its own results message
    /// `mine`, the peer's results message when it came; the test finishes
    /// now.
    pub(crate) fn close(
        &mut self,
        intervals: &mut Vec<IntervalRecord>,
        totals: Vec<StreamTotals>,
        mine: &Results,
        remote: Option<Results>,
    ) {
        self.intervals = std::mem::take(intervals);
        self.totals = totals;
        self.cpu_local = mine.cpu();
        self.host_cpu_local = mine.iomark_host_cpu;
        self.throttle_local = mine.iomark_cpu_throttle.clone();
        self.quota_unchecked_local = mine.iomark_cpu_quota_unchecked.clone();
        self.remote = remote;
        self.finished = SystemTime::now();
    }

    fn udp(&self) -> bool {
        self.params.protocol == Protocol::Udp
    }

    fn bidir(&self) -> bool {
        self.params.bidirectional
    }

    /// The sender and receiver views of stream `i`, local and remote merged
    /// (all zero in a report just opened, which has no totals yet: the
    /// document a live run is begun with).
    fn sides(&self, i: usize) -> (Side, Side) {
        let s = &self.streams[i];
        let none = StreamTotals::default();
        let t = self.totals.get(i).unwrap_or(&none);
        let r = self.remote.as_ref().and_then(|r| r.stream(s.id as i64));
        let local = Side {
            bytes: t.bytes,
            seconds: t.seconds,
            retransmits: t.retransmits,
            packets: Some(t.packets),
        };
        let remote = Side {
            bytes: r.map_or(0, |r| r.bytes),
            seconds: r
                .and_then(|r| r.end_time.map(|e| e - r.start_time.unwrap_or(0.0)))
                .unwrap_or(t.seconds),
            retransmits: r.and_then(|r| u64::try_from(r.retransmits).ok()),
            packets: r.and_then(|r| u64::try_from(r.packets).ok()),
        };
        if s.sending {
            (local, remote)
        } else {
            (remote, local)
        }
    }

    /// UDP receiver figures of stream `i`: jitter (s), lost, out of order.
    fn udp_receiver(&self, i: usize) -> (f64, i64, u64) {
        let s = &self.streams[i];
        if !s.sending {
            let none = StreamTotals::default();
            let t = self.totals.get(i).unwrap_or(&none);
            return (t.jitter, t.lost, t.out_of_order);
        }
        self.remote
            .as_ref()
            .and_then(|r| r.stream(s.id as i64))
            .map_or((0.0, 0, 0), |r| (r.jitter, r.errors, 0))
    }

    /// The stream indices of one direction.
    fn of(&self, d: NetDirection) -> Vec<usize> {
        (0..self.streams.len())
            .filter(|&i| self.streams[i].direction == d)
            .collect()
    }

    /// Directions present, the one iperf3 calls plain `sum` first.
    fn directions(&self) -> Vec<NetDirection> {
        let mut ds = Vec::new();
        for d in [NetDirection::Upload, NetDirection::Download] {
            if !self.of(d).is_empty() {
                ds.push(d);
            }
        }
        ds
    }
}

/// Bits per second; 0 over an empty span (as iperf3 prints it), never
/// infinity or NaN.
fn rate(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

/// `lost` as a percentage of `total`; 0 when nothing was counted.
fn pct(lost: i64, total: i64) -> f64 {
    if total > 0 {
        lost as f64 * 100.0 / total as f64
    } else {
        0.0
    }
}
