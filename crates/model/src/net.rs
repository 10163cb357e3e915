//! Network test specs and results, with iperf3's vocabulary and meaning.
//!
//! A [`NetSpec`] is what the client asked for (iperf3's `-t`, `-P`, `-R`,
//! `--bidir`, `-u -b`); a [`NetRun`] is what both ends measured, merged from
//! the results exchange. Every figure is kept in base units: bytes,
//! nanoseconds, packet counts; bits per second are derived.

use serde::{Deserialize, Serialize};

use crate::units::{Bytes, BytesPerSec, Nanos};
use crate::warning::Warning;

/// The transport a test ran over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NetProtocol {
    /// TCP streams.
    Tcp,
    /// UDP streams, paced to a target rate.
    Udp,
}

/// Which way data flowed on a stream, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetDirection {
    /// Client to server (the default; iperf3's plain `sum_*`).
    Upload,
    /// Server to client (`-R`, or the `*_bidir_reverse` half of `--bidir`).
    Download,
}

/// What the client asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetSpec {
    /// The server as given on the command line.
    pub host: String,
    /// The server's port.
    pub port: u16,
    /// TCP or UDP.
    pub protocol: NetProtocol,
    /// Streams per direction (`-P`).
    pub parallel: u32,
    /// Measured time, omit period excluded (`-t`).
    pub duration: Nanos,
    /// Leading time left out of the totals (`-O`).
    pub omit: Nanos,
    /// Interval between per-interval samples (`-i`); zero when disabled.
    pub interval: Nanos,
    /// The server sends (`-R`).
    pub reverse: bool,
    /// Both directions at once (`--bidir`).
    pub bidirectional: bool,
    /// Bytes per write, or datagram size (`-l`).
    pub block_len: Bytes,
    /// Socket buffer size asked for (`-w`), if any.
    pub window: Option<Bytes>,
    /// Target rate per stream in bits per second (`-b`); 0 is unlimited.
    pub target_bits_per_sec: u64,
    /// `TCP_NODELAY` on the data streams (`-N`).
    pub no_delay: bool,
}

/// One stream's totals, sender and receiver side together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetStreamResult {
    /// The protocol stream id (1, 3, 4, ...).
    pub id: u32,
    /// Which way its data flowed.
    pub direction: NetDirection,
    /// Bytes the sender wrote, omit period excluded.
    pub sent: Bytes,
    /// Bytes the receiver read, omit period excluded.
    pub received: Bytes,
    /// Time the sender measured over.
    pub sender_time: Nanos,
    /// Time the receiver measured over.
    pub receiver_time: Nanos,
    /// TCP retransmits seen by the sender, when it could read them.
    pub retransmits: Option<u64>,
    /// UDP: datagrams sent.
    pub packets: Option<u64>,
    /// UDP: datagrams the receiver counted as lost.
    pub lost_packets: Option<u64>,
    /// UDP: RFC 1889 jitter at the receiver.
    pub jitter: Option<Nanos>,
}

impl NetStreamResult {
    /// Goodput: bytes received over the receiver's time.
    pub fn goodput(&self) -> BytesPerSec {
        BytesPerSec::over(self.received, self.receiver_time)
    }
}

/// One per-interval sample of one direction, all streams summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetInterval {
    /// Start, from the start of the measured period.
    pub start: Nanos,
    /// End, from the start of the measured period.
    pub end: Nanos,
    /// Which way the data flowed.
    pub direction: NetDirection,
    /// Bytes moved by this host (sent or received) in the interval.
    pub bytes: Bytes,
    /// TCP retransmits in the interval, when this host was the sender.
    pub retransmits: Option<u64>,
    /// Inside the `-O` omit period.
    pub omitted: bool,
}

/// CPU use of one end, in percent of one core over the test.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuUtilization {
    /// User plus system.
    pub total_percent: f64,
    /// User time.
    pub user_percent: f64,
    /// System time.
    pub system_percent: f64,
}

/// The local network interface a test went through, from sysfs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetInterface {
    /// Interface name (`eth0`, `lo`).
    pub name: String,
    /// Kernel driver (`r8152`, `veth`), when sysfs names one.
    pub driver: Option<String>,
    /// Link speed in Mbit/s, when the driver reports one.
    pub speed_mbit: Option<u64>,
}

/// A finished network test as the client saw it, both ends' figures merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetRun {
    /// What was asked.
    pub spec: NetSpec,
    /// The peer's version string, when it sent one (iomark servers do).
    pub peer_version: Option<String>,
    /// The local interface the control connection used.
    pub interface: Option<NetInterface>,
    /// Per-stream totals.
    pub streams: Vec<NetStreamResult>,
    /// Per-interval samples as this host measured them.
    pub intervals: Vec<NetInterval>,
    /// CPU use of this host.
    pub cpu_local: CpuUtilization,
    /// CPU use of the peer, from the results exchange.
    pub cpu_remote: CpuUtilization,
    /// Doubts about this run.
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

impl NetRun {
    /// Goodput of one direction, all streams summed: received bytes over the
    /// longest receiver time (iperf3's `sum_received`).
    pub fn goodput(&self, direction: NetDirection) -> Option<BytesPerSec> {
        let mut bytes = 0u64;
        let mut time = Nanos(0);
        let mut any = false;
        for s in self.streams.iter().filter(|s| s.direction == direction) {
            any = true;
            bytes += s.received.get();
            time = time.max(s.receiver_time);
        }
        any.then(|| BytesPerSec::over(Bytes(bytes), time))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goodput_sums_streams_of_one_direction() {
        let stream = |id, direction, received| NetStreamResult {
            id,
            direction,
            sent: Bytes(received),
            received: Bytes(received),
            sender_time: Nanos::from_secs(2),
            receiver_time: Nanos::from_secs(2),
            retransmits: None,
            packets: None,
            lost_packets: None,
            jitter: None,
        };
        let run = NetRun {
            spec: NetSpec {
                host: "h".into(),
                port: 5201,
                protocol: NetProtocol::Tcp,
                parallel: 2,
                duration: Nanos::from_secs(2),
                omit: Nanos(0),
                interval: Nanos::from_secs(1),
                reverse: false,
                bidirectional: false,
                block_len: Bytes(131072),
                window: None,
                target_bits_per_sec: 0,
                no_delay: false,
            },
            peer_version: None,
            interface: None,
            streams: vec![
                stream(1, NetDirection::Upload, 1000),
                stream(3, NetDirection::Upload, 3000),
            ],
            intervals: vec![],
            cpu_local: CpuUtilization::default(),
            cpu_remote: CpuUtilization::default(),
            warnings: vec![],
        };
        assert_eq!(run.goodput(NetDirection::Upload).unwrap().0, 2000.0);
        assert!(run.goodput(NetDirection::Download).is_none());
        let json = serde_json::to_string(&run).unwrap();
        let back: NetRun = serde_json::from_str(&json).unwrap();
        assert_eq!(back, run);
    }
}
