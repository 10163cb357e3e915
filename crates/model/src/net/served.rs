//! A server's run: the tests it served in one busy period, from the first
//! test's start until no test was running. With iperf3's one test at a
//! time that is one test; with `--max-clients N` the tests that overlapped,
//! whose sum is what the server carried. Each client keeps its own figures
//! (its test as the server saw it); the run's are their total.

use serde::{Deserialize, Serialize};

use super::{NetDirection, NetInterval, NetRun, NetSpec};
use crate::units::{Bytes, BytesPerSec, Nanos};
use crate::warning::Warning;

/// One client's test in a server's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetClientTest {
    /// The client's control connection: `ADDRESS port PORT`.
    pub client: String,
    /// From the run's start (the first test's measured start) to this
    /// test's measured start, after its `-O` omit period.
    pub start: Nanos,
    /// The test as the server saw it: the client's spec, its streams,
    /// intervals and CPU (this server's process, over the test).
    pub run: NetRun,
}

impl NetRun {
    /// A server's run of `clients`, ordered by start: their streams, their
    /// intervals summed into the run's interval grid (each client's bytes
    /// spread over the run's intervals it overlaps, in proportion), their
    /// warnings naming the client (when there are several), and the CPU of the longest test (this
    /// process, every test's threads, over that test).
    ///
    /// The spec is the first client's, with every client's address and
    /// stream count summed; the test name comes from the clients.
    pub fn served(mut clients: Vec<NetClientTest>) -> NetRun {
        clients.sort_by_key(|c| c.start);
        let mut warnings = Vec::new();
        // One client: the server's own view, so no name to tell it apart.
        if let [only] = clients.as_mut_slice() {
            warnings = std::mem::take(&mut only.run.warnings);
        }
        for (i, c) in clients.iter_mut().enumerate() {
            for w in std::mem::take(&mut c.run.warnings) {
                let text = format!("client {} ({}): {}", i + 1, c.client, w.message);
                warnings.push(Warning { message: text, ..w });
            }
        }
        let first = clients.first().map(|c| &c.run);
        let only = first.filter(|_| clients.len() == 1);
        let mut spec = first.map_or_else(empty_spec, |r| r.spec.clone());
        let mut hosts: Vec<&str> = Vec::new();
        for c in &clients {
            if !hosts.contains(&c.run.spec.host.as_str()) {
                hosts.push(&c.run.spec.host);
            }
        }
        spec.host = hosts.join(", ");
        spec.parallel = clients.iter().map(|c| c.run.spec.parallel).sum();
        spec.duration = clients
            .iter()
            .map(|c| c.run.spec.duration)
            .max()
            .unwrap_or(Nanos(0));
        let longest = clients
            .iter()
            .max_by_key(|c| c.run.streams.iter().map(|s| s.receiver_time).max())
            .map(|c| &c.run);
        NetRun {
            intervals: summed_intervals(&clients, spec.interval),
            streams: clients
                .iter()
                .flat_map(|c| c.run.streams.iter().cloned())
                .collect(),
            peer_version: None,
            interface: first.and_then(|r| r.interface.clone()),
            cpu_local: longest.and_then(|r| r.cpu_local),
            host_cpu_local: longest.and_then(|r| r.host_cpu_local),
            nic_local: first.and_then(|r| r.nic_local.clone()),
            // The peer's figures only when there is one peer; several
            // peers' are in their clients' runs.
            cpu_remote: only.and_then(|r| r.cpu_remote),
            host_cpu_remote: only.and_then(|r| r.host_cpu_remote),
            nic_remote: only.and_then(|r| r.nic_remote.clone()),
            latency: only.and_then(|r| r.latency.clone()),
            warnings,
            spec,
            clients,
        }
    }
}

/// Every client's received bytes of `direction` over the span from the
/// earliest measured start to the latest end among the clients that moved
/// data that way.
pub(super) fn total_goodput(
    clients: &[NetClientTest],
    direction: NetDirection,
) -> Option<BytesPerSec> {
    let mut bytes = 0u64;
    let mut span: Option<(Nanos, Nanos)> = None;
    for c in clients {
        let mut streams = c.run.streams.iter().filter(|s| s.direction == direction);
        let Some(first) = streams.next() else {
            continue;
        };
        let mut time = first.receiver_time;
        bytes += first.received.get();
        for s in streams {
            bytes += s.received.get();
            time = time.max(s.receiver_time);
        }
        let end = Nanos(c.start.get() + time.get());
        span = Some(span.map_or((c.start, end), |(a, b)| (a.min(c.start), b.max(end))));
    }
    span.map(|(a, b)| BytesPerSec::over(Bytes(bytes), Nanos(b.get() - a.get())))
}

/// The clients' intervals on one grid of `interval` from the run's start,
/// per direction: a client interval's bytes go to the grid intervals it
/// overlaps, in proportion to the overlap. Omitted intervals stay out. The
/// grid is cut to the span the clients moved data in, and a cut edge
/// shorter than half an interval is left out of the series (its bytes are
/// in the totals): a sliver's rate would be noise.
fn summed_intervals(clients: &[NetClientTest], interval: Nanos) -> Vec<NetInterval> {
    let step = interval.get();
    if step == 0 {
        return Vec::new();
    }
    // (download?, grid index) -> (bytes, retransmits)
    let mut grid: std::collections::BTreeMap<(bool, u64), (f64, Option<u64>)> = Default::default();
    let (mut first, mut last) = (u64::MAX, 0);
    for c in clients {
        for i in c.run.intervals.iter().filter(|i| !i.omitted) {
            let (a, b) = (c.start.get() + i.start.get(), c.start.get() + i.end.get());
            if b <= a {
                continue;
            }
            (first, last) = (first.min(a), last.max(b));
            for k in a / step..b.div_ceil(step) {
                let overlap = b.min((k + 1) * step) - a.max(k * step);
                let download = i.direction == NetDirection::Download;
                let cell = grid.entry((download, k)).or_default();
                cell.0 += i.bytes.get() as f64 * overlap as f64 / (b - a) as f64;
                // Retransmits are counted where the client's interval starts.
                if k == a / step {
                    if let Some(r) = i.retransmits {
                        cell.1 = Some(cell.1.unwrap_or(0) + r);
                    }
                }
            }
        }
    }
    grid.into_iter()
        .map(|((download, k), (bytes, retransmits))| NetInterval {
            start: Nanos((k * step).max(first)),
            end: Nanos(((k + 1) * step).min(last)),
            direction: if download {
                NetDirection::Download
            } else {
                NetDirection::Upload
            },
            bytes: Bytes(bytes.round() as u64),
            retransmits,
            omitted: false,
            // Each client's RTT and CPU are in its own run.
            rtt: None,
            cpu: None,
            peer_cpu: None,
        })
        .filter(|i| i.end.get() - i.start.get() >= step / 2)
        .collect()
}

fn empty_spec() -> NetSpec {
    NetSpec {
        host: String::new(),
        port: 0,
        protocol: super::NetProtocol::Tcp,
        parallel: 0,
        duration: Nanos(0),
        omit: Nanos(0),
        interval: Nanos(0),
        reverse: false,
        bidirectional: false,
        block_len: Bytes(0),
        window: None,
        target_bits_per_sec: 0,
        no_delay: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{CpuUtilization, NetStreamResult};

    fn client(host: &str, start_s: u64, secs: u64, bytes_per_sec: u64) -> NetClientTest {
        let run = NetRun {
            streams: vec![NetStreamResult {
                id: 1,
                direction: NetDirection::Upload,
                sent: Bytes(bytes_per_sec * secs),
                received: Bytes(bytes_per_sec * secs),
                sender_time: Nanos::from_secs(secs),
                receiver_time: Nanos::from_secs(secs),
                retransmits: Some(1),
                packets: None,
                lost_packets: None,
                jitter: None,
            }],
            intervals: (0..secs)
                .map(|s| NetInterval {
                    start: Nanos::from_secs(s),
                    end: Nanos::from_secs(s + 1),
                    direction: NetDirection::Upload,
                    bytes: Bytes(bytes_per_sec),
                    retransmits: None,
                    omitted: false,
                    rtt: None,
                    cpu: None,
                    peer_cpu: None,
                })
                .collect(),
            cpu_local: Some(CpuUtilization {
                total_percent: secs as f64,
                user_percent: 0.0,
                system_percent: secs as f64,
            }),
            warnings: vec![Warning::new(crate::warning::WarningKind::Other, "slow")],
            ..NetRun::example(NetSpec {
                host: host.into(),
                port: 40000,
                duration: Nanos::from_secs(secs),
                ..NetSpec::example()
            })
        };
        NetClientTest {
            client: format!("{host} port 40000"),
            start: Nanos::from_secs(start_s),
            run,
        }
    }

    #[test]
    fn overlapping_clients_add_up_over_the_busy_span() {
        // 100 B/s for 4 s from 0, 300 B/s for 2 s from 1: 1000 B over 4 s.
        let run = NetRun::served(vec![
            client("10.0.0.2", 1, 2, 300),
            client("10.0.0.1", 0, 4, 100),
        ]);
        assert_eq!(run.goodput(NetDirection::Upload).unwrap().0, 250.0);
        assert!(run.goodput(NetDirection::Download).is_none());
        assert_eq!(run.clients[0].client, "10.0.0.1 port 40000", "by start");
        assert_eq!(run.spec.host, "10.0.0.1, 10.0.0.2");
        assert_eq!(run.spec.parallel, 2);
        assert_eq!(run.streams.len(), 2);
        let bytes: Vec<u64> = run.intervals.iter().map(|i| i.bytes.get()).collect();
        assert_eq!(bytes, [100, 400, 400, 100]);
        assert_eq!(
            run.cpu_local.unwrap().total_percent,
            4.0,
            "the longest test's"
        );
        assert_eq!(
            run.warnings[1].message,
            "client 2 (10.0.0.2 port 40000): slow"
        );
        assert!(run.clients.iter().all(|c| c.run.warnings.is_empty()));
    }

    #[test]
    fn a_client_interval_across_the_grid_is_shared_in_proportion() {
        let mut late = client("h", 0, 2, 100);
        late.start = Nanos(500_000_000);
        let mut early = client("h", 0, 1, 100);
        early.start = Nanos(0);
        let run = NetRun::served(vec![late, early]);
        let cut: Vec<(u64, u64, u64)> = run
            .intervals
            .iter()
            .map(|i| {
                (
                    i.start.get() / 1_000_000,
                    i.end.get() / 1_000_000,
                    i.bytes.get(),
                )
            })
            .collect();
        // 0-1 s: all of `early` and half of `late`'s first second; 1-2 s:
        // the rest of it and half of its second; 2-2.5 s: the last half.
        assert_eq!(cut, [(0, 1000, 150), (1000, 2000, 100), (2000, 2500, 50)]);
        let total: u64 = cut.iter().map(|c| c.2).sum();
        assert_eq!(total, 300, "no byte lost or made up");
    }

    #[test]
    fn a_sliver_at_the_edge_is_not_an_interval() {
        let mut late = client("h", 0, 2, 100);
        late.start = Nanos(100_000_000);
        let run = NetRun::served(vec![client("h", 0, 2, 100), late]);
        let ends: Vec<u64> = run.intervals.iter().map(|i| i.end.get()).collect();
        assert_eq!(ends, [1_000_000_000, 2_000_000_000], "2.0-2.1 s left out");
        assert_eq!(run.goodput(NetDirection::Upload).unwrap().0, 400.0 / 2.1);
    }

    #[test]
    fn a_served_run_reads_back() {
        let run = NetRun::served(vec![client("a", 0, 2, 10), client("b", 0, 2, 10)]);
        let json = serde_json::to_string(&run).unwrap();
        let back: NetRun = serde_json::from_str(&json).unwrap();
        assert_eq!(back, run);
        // A client's run has no clients field in its JSON at all.
        assert!(!serde_json::to_string(&back.clients[0].run)
            .unwrap()
            .contains("\"clients\""));
    }
}
