//! The conversion to iomark's result model ([`NetRun`]), the form the
//! results store keeps and compares across runs.
//!
//! It follows `iomark_model::net`: durations in nanoseconds, sizes in
//! bytes, one interval per direction rather than per stream, and the doubts
//! about the figures as [`Warning`]s with what to do about them.

use iomark_model::net::{
    CpuUtilization, NetInterface, NetInterval, NetProtocol, NetRun, NetSpec, NetStreamResult,
};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::warning::{Warning, WarningKind};

use super::{pct, TestReport};

impl TestReport {
    /// What the test asks for, in iomark's result model.
    pub(crate) fn spec(&self) -> NetSpec {
        let p = &self.params;
        NetSpec {
            host: self.peering.peer_host.clone(),
            port: self.peering.peer_port,
            protocol: if self.udp() {
                NetProtocol::Udp
            } else {
                NetProtocol::Tcp
            },
            parallel: p.parallel,
            duration: Nanos::from_secs(p.time as u64),
            omit: Nanos::from_secs(p.omit as u64),
            interval: Nanos((self.interval_secs.max(0.0) * 1e9).round() as u64),
            reverse: p.reverse,
            bidirectional: p.bidirectional,
            block_len: Bytes(p.len as u64),
            window: p.window.map(|w| Bytes(w as u64)),
            target_bits_per_sec: p.bandwidth,
            no_delay: p.nodelay,
        }
    }

    /// The run in iomark's result model, for the store.
    pub fn to_net_run(&self, interface: Option<NetInterface>) -> NetRun {
        let ns = |s: f64| Nanos((s.max(0.0) * 1e9).round() as u64);
        let streams = (0..self.streams.len())
            .map(|i| {
                let (snd, rcv) = self.sides(i);
                let (j, l, _) = self.udp_receiver(i);
                let udp = self.udp();
                NetStreamResult {
                    id: self.streams[i].id,
                    direction: self.streams[i].direction,
                    sent: Bytes(snd.bytes),
                    received: Bytes(rcv.bytes),
                    sender_time: ns(snd.seconds),
                    receiver_time: ns(rcv.seconds),
                    retransmits: snd.retransmits,
                    packets: udp.then_some(snd.packets.unwrap_or(0)),
                    lost_packets: udp.then_some(l.max(0) as u64),
                    jitter: udp.then_some(ns(j)),
                }
            })
            .collect();
        let mut intervals = Vec::new();
        let peer_cpu = self
            .remote
            .as_ref()
            .and_then(|r| r.iomark_cpu_intervals.as_deref())
            .unwrap_or(&[]);
        for (k, rec) in self.intervals.iter().enumerate() {
            for d in self.directions() {
                let idx = self.of(d);
                let mut bytes = 0;
                let mut retr = None;
                let mut rtts = Vec::new();
                for is in rec.streams.iter().filter(|is| idx.contains(&is.index)) {
                    bytes += is.delta.bytes;
                    if self.streams[is.index].sending && !self.udp() {
                        retr = Some(retr.unwrap_or(0) + is.delta.retransmits);
                        rtts.extend(is.tcp.map(|t| t.rtt_us).filter(|&r| r > 0));
                    }
                }
                let rtt = (!rtts.is_empty())
                    .then(|| Nanos(rtts.iter().sum::<u64>() * 1000 / rtts.len() as u64));
                intervals.push(NetInterval {
                    start: ns(rec.start),
                    end: ns(rec.end),
                    direction: d,
                    bytes: Bytes(bytes),
                    retransmits: retr,
                    omitted: rec.omitted,
                    rtt,
                    cpu: Some(rec.cpu),
                    peer_cpu: peer_cpu.get(k).copied(),
                });
            }
        }
        NetRun {
            spec: self.spec(),
            peer_version: None,
            interface,
            streams,
            intervals,
            warnings: self.warnings(),
            latency: self.latency(),
            clients: Vec::new(),
            cpu_local: Some(self.cpu_local),
            cpu_remote: self.remote.as_ref().map(|r| CpuUtilization {
                total_percent: r.cpu_util_total,
                user_percent: r.cpu_util_user,
                system_percent: r.cpu_util_system,
            }),
            host_cpu_local: self.host_cpu_local,
            host_cpu_remote: self.remote.as_ref().and_then(|r| r.iomark_host_cpu),
            nic_local: None,
            nic_remote: self
                .remote
                .as_ref()
                .and_then(|r| r.iomark_interface.clone()),
        }
    }

    /// Doubts about the figures, with what to do about them.
    fn warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        let remote = self.remote.as_ref().map(|r| r.cpu_util_total);
        for (side, cpu) in [
            ("this host", Some(self.cpu_local.total_percent)),
            ("the peer", remote),
        ] {
            // Percent of one core, summed over threads: each stream thread
            // can use at most one core, and the host has only so many.
            let busy = 90.0 * cores().min(self.streams.len().max(1) as f64);
            if cpu.is_some_and(|c| c >= busy) {
                w.push(Warning::new(
                    WarningKind::Other,
                    format!(
                        "{side} used {:.0}% CPU: the figure may measure the host, not the link; \
                         try -P with more streams or a faster host",
                        cpu.unwrap_or(0.0)
                    ),
                ));
            }
        }
        // What the machine did at either end: a CPU quota that throttled
        // iomark's cgroup, other processes keeping every CPU busy.
        let wall = std::time::Duration::from_secs_f64(
            self.totals.iter().map(|t| t.seconds).fold(0.0, f64::max),
        );
        let ends = [
            (
                "this host",
                Some((
                    self.cpu_local,
                    self.host_cpu_local,
                    self.throttle_local.clone(),
                    self.quota_unchecked_local.clone(),
                )),
            ),
            (
                "the peer",
                self.remote.as_ref().map(|r| {
                    (
                        r.cpu(),
                        r.iomark_host_cpu,
                        r.iomark_cpu_throttle.clone(),
                        r.iomark_cpu_quota_unchecked.clone(),
                    )
                }),
            ),
        ];
        for (side, end) in ends {
            let Some((process, host, throttle, unchecked)) = end else {
                continue;
            };
            let process = iomark_model::cpu::CpuUsage {
                user_pct: process.user_percent,
                system_pct: process.system_percent,
            };
            w.extend(iomark_host::machine::machine_warnings(
                side,
                wall,
                process,
                host.as_ref(),
                throttle.as_ref(),
                unchecked.as_deref(),
            ));
        }
        if self.udp() {
            for i in 0..self.streams.len() {
                let (snd, _) = self.sides(i);
                let (_, lost, _) = self.udp_receiver(i);
                let pk = snd.packets.unwrap_or(0) as i64;
                if pk > 0 && pct(lost, pk) > 1.0 {
                    w.push(Warning::new(
                        WarningKind::Other,
                        format!(
                            "stream {} lost {:.1}% of its datagrams; most UDP loss is receive-buffer \
                             overflow at the receiver: retry with -w 4M or a lower -b",
                            self.streams[i].id,
                            pct(lost, pk)
                        ),
                    ));
                }
            }
        }
        w
    }
}

/// Cores this process may use; 1 when unknown, which errs towards warning.
fn cores() -> f64 {
    std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
}
