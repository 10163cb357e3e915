//! Network test specs and results, with iperf3's vocabulary and meaning.
//!
//! A [`NetSpec`] is what the client asked for (iperf3's `-t`, `-P`, `-R`,
//! `--bidir`, `-u -b`); a [`NetRun`] is what both ends measured, merged from
//! the results exchange. Every figure is kept in base units: bytes,
//! nanoseconds, packet counts; bits per second are derived.

use serde::{Deserialize, Serialize};

use crate::cpu::HostCpu;
use crate::device::{Hop, LinkCeiling, PcieLink, UsbLink};
use crate::units::{Bytes, BytesPerSec, Nanos};
use crate::warning::Warning;

mod served;
pub use served::NetClientTest;

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
    /// Mean smoothed round-trip time (`TCP_INFO`) of this host's sending
    /// TCP streams of this direction at the interval's end; absent when
    /// this host did not send TCP that way (and in older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<Nanos>,
    /// This host's process CPU over the interval, percent of one core (as
    /// iperf3's end-of-test figure); absent in imports and older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<f64>,
    /// The peer's, when the peer is iomark (its interval of the same
    /// position; the two ends tick on their own clocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_cpu: Option<f64>,
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

/// A network interface and the links under it, nearest first: what
/// `iomark info IFACE` shows and what each end of a net run records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NicChain {
    /// Interface name (`eth0`, `enx00e04c680001`, `veth0`).
    pub name: String,
    /// Kernel driver (`r8152`, `igc`, `veth`).
    pub driver: Option<String>,
    /// The driver's version (ethtool's, else the module's `version`).
    pub driver_version: Option<String>,
    /// The adapter's firmware version, as the driver reports it.
    pub firmware_version: Option<String>,
    /// The link speed the interface reports, Mbit/s (none when down or not
    /// reported).
    pub speed_mbit: Option<u64>,
    /// `full` or `half`, when reported.
    pub duplex: Option<String>,
    /// `up`, `down`, `unknown`, ...
    pub operstate: Option<String>,
    /// For an interface without a device under it (veth, loopback, bridge,
    /// tun): its kind. Its reported speed is a number the driver picked,
    /// not a link.
    pub virtual_kind: Option<String>,
    /// The sysfs directories from the adapter up, nearest first.
    #[serde(default)]
    pub hops: Vec<Hop>,
    /// The USB link, for a USB adapter.
    pub usb: Option<UsbLink>,
    /// Every PCIe link from the adapter up, nearest first.
    #[serde(default)]
    pub pcie: Vec<PcieLink>,
    /// Ceilings of the bus links under the adapter (USB, PCIe), nearest
    /// first; the Ethernet link's own is [`NicChain::link_ceiling`].
    #[serde(default)]
    pub bus_ceilings: Vec<LinkCeiling>,
}

impl NicChain {
    /// The reported link speed as a ceiling (no framing overhead taken off:
    /// goodput above it is impossible on a real link).
    pub fn link_ceiling(&self) -> Option<LinkCeiling> {
        let mbit = self.speed_mbit.filter(|_| self.virtual_kind.is_none())?;
        Some(LinkCeiling {
            name: format!("Ethernet {}", mbit_label(mbit)),
            hard: BytesPerSec(mbit as f64 * 1e6 / 8.0),
            typical: None,
        })
    }

    /// The slowest link: the Ethernet link or a bus under it, by hard
    /// ceiling; none for a virtual interface or when nothing is known.
    pub fn slowest(&self) -> Option<LinkCeiling> {
        self.link_ceiling()
            .into_iter()
            .chain(self.bus_ceilings.iter().cloned())
            .min_by(|a, b| a.hard.0.total_cmp(&b.hard.0))
    }
}

/// `1000 Mb/s`, `2.5 Gb/s`.
pub fn mbit_label(mbit: u64) -> String {
    if mbit >= 1000 {
        let g = mbit as f64 / 1000.0;
        if mbit.is_multiple_of(1000) {
            format!("{g:.0} Gb/s")
        } else {
            format!("{g} Gb/s")
        }
    } else {
        format!("{mbit} Mb/s")
    }
}

/// A finished network test as the client saw it, both ends' figures merged;
/// or, stored by a server, the tests it served at once (see `clients`).
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
    /// CPU use of this host; `None` where it is not known (an iperf3 text
    /// log without its `CPU Utilization` line), never zeros that would be
    /// shown and compared as 0%.
    #[serde(default)]
    pub cpu_local: Option<CpuUtilization>,
    /// CPU use of the peer, from the results exchange; `None` where the
    /// peer sent none.
    #[serde(default)]
    pub cpu_remote: Option<CpuUtilization>,
    /// The whole machine's CPU on this host over the test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_local: Option<HostCpu>,
    /// The whole machine's CPU on the peer, when the peer is iomark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_remote: Option<HostCpu>,
    /// This host's interface and the links under it (boxed, as are the
    /// peer's, to keep `RunBody` variants of similar size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_local: Option<Box<NicChain>>,
    /// The peer's interface, when the peer is iomark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_remote: Option<Box<NicChain>>,
    /// Round-trip times under the test's load, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<NetLatency>,
    /// Doubts about this run.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// A server's run: each test it served in one busy period (several
    /// overlap with `--max-clients`), in the order they started; the run's
    /// streams and intervals are then theirs summed and its goodput their
    /// total ([`NetRun::served`]). Empty in a client's run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<NetClientTest>,
}

/// Latency under load: what a link's queues add to a round trip while a
/// test fills them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NetLatency {
    /// The kernel's smoothed RTT of this host's sending TCP streams
    /// (`TCP_INFO`), one sample per stream per interval: how many.
    pub rtt_samples: u64,
    /// Its median, 90th and 99th percentile and largest sample.
    pub rtt_p50: Option<Nanos>,
    /// 90th percentile.
    pub rtt_p90: Option<Nanos>,
    /// 99th percentile.
    pub rtt_p99: Option<Nanos>,
    /// Largest.
    pub rtt_max: Option<Nanos>,
    /// Median TCP handshake time to the server's port before the load
    /// (a connection of its own, closed at once; any server answers it).
    pub idle: Option<Nanos>,
    /// Median handshake time while the test ran.
    pub loaded: Option<Nanos>,
    /// Handshakes timed before the load.
    pub idle_probes: u32,
    /// Handshakes timed during it.
    pub loaded_probes: u32,
}

impl NetLatency {
    /// The nearest-rank `p`th percentile (0 to 100) of `sorted`.
    pub fn percentile(sorted: &[Nanos], p: f64) -> Option<Nanos> {
        if sorted.is_empty() {
            return None;
        }
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        Some(sorted[rank.clamp(1, sorted.len()) - 1])
    }

    /// The latency of `rtts` (the streams' samples) and the probes'
    /// handshake times, `None` when there is none of either.
    pub fn from_samples(
        mut rtts: Vec<Nanos>,
        idle: &[Nanos],
        loaded: &[Nanos],
    ) -> Option<NetLatency> {
        if rtts.is_empty() && idle.is_empty() && loaded.is_empty() {
            return None;
        }
        rtts.sort();
        let median = |v: &[Nanos]| {
            let mut v = v.to_vec();
            v.sort();
            NetLatency::percentile(&v, 50.0)
        };
        Some(NetLatency {
            rtt_samples: rtts.len() as u64,
            rtt_p50: NetLatency::percentile(&rtts, 50.0),
            rtt_p90: NetLatency::percentile(&rtts, 90.0),
            rtt_p99: NetLatency::percentile(&rtts, 99.0),
            rtt_max: rtts.last().copied(),
            idle: median(idle),
            loaded: median(loaded),
            idle_probes: idle.len() as u32,
            loaded_probes: loaded.len() as u32,
        })
    }
}

impl NetRun {
    /// Goodput of one direction, all streams summed: received bytes over the
    /// longest receiver time (iperf3's `sum_received`); in a server's run,
    /// every client's bytes over the span from the first client's measured
    /// start to the last one's end.
    pub fn goodput(&self, direction: NetDirection) -> Option<BytesPerSec> {
        if !self.clients.is_empty() {
            return served::total_goodput(&self.clients, direction);
        }
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

impl NetSpec {
    /// An example test, for tests: iperf3's defaults (one TCP stream up
    /// to port 5201 for 10 s, 128 KiB writes, 1 s intervals) to `example`.
    #[doc(hidden)]
    pub fn example() -> Self {
        NetSpec {
            host: "example".into(),
            port: 5201,
            protocol: NetProtocol::Tcp,
            parallel: 1,
            duration: Nanos::from_secs(10),
            omit: Nanos(0),
            interval: Nanos::from_secs(1),
            reverse: false,
            bidirectional: false,
            block_len: Bytes(128 << 10),
            window: None,
            target_bits_per_sec: 0,
            no_delay: false,
        }
    }
}

impl NetRun {
    /// An example run of `spec` that measured nothing (no stream, no
    /// interval, no CPU), for tests to fill in what they look at.
    #[doc(hidden)]
    pub fn example(spec: NetSpec) -> Self {
        NetRun {
            spec,
            peer_version: None,
            interface: None,
            streams: Vec::new(),
            intervals: Vec::new(),
            cpu_local: Some(CpuUtilization::default()),
            cpu_remote: Some(CpuUtilization::default()),
            host_cpu_local: None,
            host_cpu_remote: None,
            nic_local: None,
            nic_remote: None,
            latency: None,
            warnings: Vec::new(),
            clients: Vec::new(),
        }
    }
}

#[cfg(test)]
#[path = "net_tests.rs"]
mod tests;
