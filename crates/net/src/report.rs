//! What a finished test looked like from this host, and its two renderings:
//! iperf3-style text (interval lines, sender/receiver totals, CPU) and
//! iperf3's `-J` JSON layout, so scripts that read iperf3 read iomark.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use iomark_model::net::{
    CpuUtilization, NetDirection, NetInterface, NetInterval, NetProtocol, NetRun, NetSpec,
    NetStreamResult,
};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::warning::{Warning, WarningKind};
use serde::Serialize;

use crate::proto::{Params, Protocol, Results};
use crate::stream::Snapshot;
use crate::sys::TcpInfo;

/// Which end of the test this host was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The side that connected.
    Client,
    /// The side that listened.
    Server,
}

/// One stream as this host saw it.
#[derive(Debug, Clone)]
pub struct StreamInfo {
    /// Protocol id: 1, 3, 4, ...
    pub id: u32,
    /// Local descriptor, iperf3's label.
    pub fd: i32,
    /// Local address.
    pub local: SocketAddr,
    /// Peer address.
    pub remote: SocketAddr,
    /// This host sent on it.
    pub sending: bool,
    /// Which way the data flowed, seen from the client.
    pub direction: NetDirection,
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
    pub min_rtt: Option<u64>,
    pub max_rtt: Option<u64>,
    pub mean_rtt: Option<u64>,
}

/// A finished test, from this host's side, with the peer's results merged.
#[derive(Debug, Clone)]
pub struct TestReport {
    /// Client or server.
    pub role: Role,
    /// The test's parameters.
    pub params: Params,
    /// The test's cookie text.
    pub cookie: String,
    /// The peer as named (client: the host given; server: the peer address).
    pub peer_host: String,
    /// The peer's port.
    pub peer_port: u16,
    /// Local end of the control connection.
    pub control_local: SocketAddr,
    /// When the test started.
    pub started: SystemTime,
    /// When it finished.
    pub finished: SystemTime,
    /// The control connection's MSS.
    pub tcp_mss: Option<u32>,
    /// `-w` as asked, 0 when not.
    pub sock_bufsize: u64,
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
    /// The peer's results message.
    pub remote: Option<Results>,
    /// The interval length, 0 when disabled.
    pub interval_secs: f64,
    /// Stopped by Ctrl-C: the figures are this host's only, up to then.
    pub interrupted: bool,
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
    fn udp(&self) -> bool {
        self.params.protocol == Protocol::Udp
    }

    fn bidir(&self) -> bool {
        self.params.bidirectional
    }

    /// The sender and receiver views of stream `i`, local and remote merged.
    fn sides(&self, i: usize) -> (Side, Side) {
        let s = &self.streams[i];
        let t = &self.totals[i];
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
            let t = &self.totals[i];
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

    fn tag(&self, i: usize) -> &'static str {
        if !self.bidir() {
            return "";
        }
        match (self.role, self.streams[i].sending) {
            (Role::Client, true) => "[TX-C]",
            (Role::Client, false) => "[RX-C]",
            (Role::Server, true) => "[TX-S]",
            (Role::Server, false) => "[RX-S]",
        }
    }

    // ---- text ----------------------------------------------------------

    /// The lines printed once the streams are connected.
    pub fn header_text(&self) -> String {
        let mut o = String::new();
        if self.role == Role::Client && self.params.reverse {
            let _ = writeln!(o, "Reverse mode, remote host {} is sending", self.peer_host);
        }
        for s in &self.streams {
            let _ = writeln!(
                o,
                "[{:>3}] local {} port {} connected to {} port {}",
                s.fd,
                s.local.ip(),
                s.local.port(),
                s.remote.ip(),
                s.remote.port()
            );
        }
        o
    }

    fn interval_header(&self, sending: bool) -> &'static str {
        match (self.udp(), sending) {
            (false, true) => "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd",
            (false, false) => "[ ID] Interval           Transfer     Bitrate",
            (true, true) => "[ ID] Interval           Transfer     Bitrate         Total Datagrams",
            (true, false) => {
                "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams"
            }
        }
    }

    /// The text for one interval (one line per stream, a sum per direction).
    pub(crate) fn interval_text(&self, rec: &IntervalRecord, first: bool) -> String {
        let mut o = String::new();
        let many = self.streams.len() > 1;
        if first {
            let any_send = self.streams.iter().any(|s| s.sending);
            let _ = writeln!(o, "{}", self.interval_header(any_send && !self.bidir()));
        } else if many {
            let _ = writeln!(o, "- - - - - - - - - - - - - - - - - - - - - - - - -");
        }
        let omit = if rec.omitted { "  (omitted)" } else { "" };
        let secs = rec.end - rec.start;
        for d in self.directions() {
            let idx = self.of(d);
            let (mut bytes, mut retr, mut pkts, mut lost, mut jit) = (0u64, 0u64, 0u64, 0i64, 0.0);
            for is in rec.streams.iter().filter(|is| idx.contains(&is.index)) {
                let s = &self.streams[is.index];
                bytes += is.delta.bytes;
                retr += is.delta.retransmits;
                pkts += is.delta.packets;
                lost += is.delta.lost;
                jit += is.delta.jitter;
                let label = format!("[{:>3}]{}", s.fd, self.tag(is.index));
                let extra = self.interval_extra(s.sending, &is.delta, is.tcp.as_ref());
                let _ = writeln!(
                    o,
                    "{label} {:6.2}-{:<6.2} sec  {}  {}{extra}{omit}",
                    rec.start,
                    rec.end,
                    fmt_bytes(is.delta.bytes as f64),
                    fmt_rate(is.delta.bytes as f64 * 8.0 / secs.max(1e-9)),
                );
            }
            if idx.len() > 1 {
                let sending = self.streams[idx[0]].sending;
                let sum = Snapshot {
                    bytes,
                    packets: pkts,
                    lost,
                    jitter: jit / idx.len() as f64,
                    retransmits: retr,
                    out_of_order: 0,
                };
                let tag = if self.bidir() { self.tag(idx[0]) } else { "" };
                let extra = self.interval_extra(sending, &sum, None);
                let _ = writeln!(
                    o,
                    "[SUM]{tag} {:6.2}-{:<6.2} sec  {}  {}{extra}{omit}",
                    rec.start,
                    rec.end,
                    fmt_bytes(bytes as f64),
                    fmt_rate(bytes as f64 * 8.0 / secs.max(1e-9)),
                );
            }
        }
        o
    }

    fn interval_extra(&self, sending: bool, d: &Snapshot, tcp: Option<&TcpInfo>) -> String {
        match (self.udp(), sending) {
            (false, true) => match tcp {
                Some(t) => format!(
                    "  {:>4}   {}",
                    d.retransmits,
                    fmt_bytes(t.snd_cwnd_bytes as f64)
                ),
                None => format!("  {:>4}", d.retransmits),
            },
            (false, false) => String::new(),
            (true, true) => format!("  {}", d.packets),
            (true, false) => format!(
                "  {:.3} ms  {}/{} ({})",
                d.jitter * 1e3,
                d.lost,
                d.packets,
                fmt_pct(d.lost, d.packets as i64)
            ),
        }
    }

    /// The closing summary: sender and receiver totals and the CPU line.
    pub fn summary_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "- - - - - - - - - - - - - - - - - - - - - - - - -");
        let _ = writeln!(
            o,
            "{}",
            if self.udp() {
                "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams"
            } else {
                "[ ID] Interval           Transfer     Bitrate         Retr"
            }
        );
        for d in self.directions() {
            let idx = self.of(d);
            let mut sum_s = Side::default();
            let mut sum_r = Side::default();
            let (mut lost, mut jit) = (0i64, 0.0);
            for &i in &idx {
                let (snd, rcv) = self.sides(i);
                let label = format!("[{:>3}]{}", self.streams[i].fd, self.tag(i));
                let (j, l, _) = self.udp_receiver(i);
                self.summary_lines(&mut o, &label, &snd, &rcv, j, l);
                sum_s.bytes += snd.bytes;
                sum_s.seconds = sum_s.seconds.max(snd.seconds);
                sum_s.retransmits = match (sum_s.retransmits, snd.retransmits) {
                    (a, None) => a,
                    (a, Some(b)) => Some(a.unwrap_or(0) + b),
                };
                sum_s.packets = Some(sum_s.packets.unwrap_or(0) + snd.packets.unwrap_or(0));
                sum_r.bytes += rcv.bytes;
                sum_r.seconds = sum_r.seconds.max(rcv.seconds);
                lost += l;
                jit += j;
            }
            if idx.len() > 1 {
                let tag = if self.bidir() { self.tag(idx[0]) } else { "" };
                let label = format!("[SUM]{tag}");
                self.summary_lines(&mut o, &label, &sum_s, &sum_r, jit / idx.len() as f64, lost);
            }
        }
        let c = &self.cpu_local;
        let r = self.remote.as_ref();
        let local_sends = self.streams.iter().any(|s| s.sending);
        let (lr, rr) = if self.bidir() || local_sends {
            ("sender", "receiver")
        } else {
            ("receiver", "sender")
        };
        let _ = writeln!(
            o,
            "CPU Utilization: local/{lr} {:.1}% ({:.1}%u/{:.1}%s), remote/{rr} {:.1}% ({:.1}%u/{:.1}%s)",
            c.total_percent,
            c.user_percent,
            c.system_percent,
            r.map_or(0.0, |r| r.cpu_util_total),
            r.map_or(0.0, |r| r.cpu_util_user),
            r.map_or(0.0, |r| r.cpu_util_system),
        );
        o
    }

    fn summary_lines(
        &self,
        o: &mut String,
        label: &str,
        snd: &Side,
        rcv: &Side,
        jit: f64,
        lost: i64,
    ) {
        if self.udp() {
            let pk = snd.packets.unwrap_or(0) as i64;
            let _ = writeln!(
                o,
                "{label} {:6.2}-{:<6.2} sec  {}  {}  {:.3} ms  {}/{} ({})  sender",
                0.0,
                snd.seconds,
                fmt_bytes(snd.bytes as f64),
                fmt_rate(rate(snd.bytes, snd.seconds)),
                0.0,
                0,
                pk,
                fmt_pct(0, pk)
            );
            let _ = writeln!(
                o,
                "{label} {:6.2}-{:<6.2} sec  {}  {}  {:.3} ms  {}/{} ({})  receiver",
                0.0,
                rcv.seconds,
                fmt_bytes(rcv.bytes as f64),
                fmt_rate(rate(rcv.bytes, rcv.seconds)),
                jit * 1e3,
                lost,
                pk,
                fmt_pct(lost, pk)
            );
        } else {
            let retr = snd
                .retransmits
                .map_or_else(|| "    ".to_string(), |r| format!("{r:>4}"));
            let _ = writeln!(
                o,
                "{label} {:6.2}-{:<6.2} sec  {}  {}  {retr}             sender",
                0.0,
                snd.seconds,
                fmt_bytes(snd.bytes as f64),
                fmt_rate(rate(snd.bytes, snd.seconds)),
            );
            let _ = writeln!(
                o,
                "{label} {:6.2}-{:<6.2} sec  {}  {}                  receiver",
                0.0,
                rcv.seconds,
                fmt_bytes(rcv.bytes as f64),
                fmt_rate(rate(rcv.bytes, rcv.seconds)),
            );
        }
    }

    // ---- iperf3 -J -----------------------------------------------------

    /// The whole run in iperf3's `-J` layout, pretty-printed like iperf3.
    pub fn to_iperf3_json(&self) -> String {
        serde_json::to_string_pretty(&self.iperf3_doc()).expect("the report always serialises")
    }

    fn iperf3_doc(&self) -> JDoc {
        let udp = self.udp();
        let p = &self.params;
        let secs = self
            .started
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let start = JStart {
            connected: self
                .streams
                .iter()
                .map(|s| JConnected {
                    socket: s.fd,
                    local_host: s.local.ip().to_string(),
                    local_port: s.local.port(),
                    remote_host: s.remote.ip().to_string(),
                    remote_port: s.remote.port(),
                })
                .collect(),
            version: format!("iomark {}", env!("CARGO_PKG_VERSION")),
            system_info: system_info(),
            timestamp: JTimestamp {
                time: http_date(secs),
                timesecs: secs,
            },
            connecting_to: (self.role == Role::Client).then(|| JHostPort {
                host: self.peer_host.clone(),
                port: self.peer_port,
            }),
            accepted_connection: (self.role == Role::Server).then(|| JHostPort {
                host: self.peer_host.clone(),
                port: self.peer_port,
            }),
            cookie: self.cookie.clone(),
            tcp_mss_default: if udp { None } else { self.tcp_mss },
            target_bitrate: p.bandwidth,
            fq_rate: 0,
            sock_bufsize: self.sock_bufsize,
            sndbuf_actual: self.sndbuf_actual,
            rcvbuf_actual: self.rcvbuf_actual,
            test_start: JTestStart {
                protocol: if udp { "UDP" } else { "TCP" },
                num_streams: p.parallel,
                blksize: p.len,
                omit: p.omit,
                duration: p.time,
                bytes: p.num,
                blocks: p.blockcount,
                reverse: p.reverse as u8,
                tos: p.tos.unwrap_or(0),
                target_bitrate: p.bandwidth,
                bidir: p.bidirectional as u8,
                fqrate: 0,
                interval: self.interval_secs,
            },
        };
        let intervals = self
            .intervals
            .iter()
            .map(|rec| {
                let secs = rec.end - rec.start;
                let fig = |is: &IntervalStream| {
                    let s = &self.streams[is.index];
                    let d = &is.delta;
                    let mut f = JFig::span(rec.start, rec.end, d.bytes, s.sending);
                    f.socket = Some(s.fd);
                    f.omitted = Some(rec.omitted);
                    self.fill_interval(&mut f, s.sending, d, is.tcp.as_ref());
                    let _ = secs;
                    f
                };
                let streams: Vec<JFig> = rec.streams.iter().map(fig).collect();
                let sum_of = |d: NetDirection| -> Option<JFig> {
                    let idx = self.of(d);
                    let first = *idx.first()?;
                    let mut tot = Snapshot::default();
                    for is in rec.streams.iter().filter(|is| idx.contains(&is.index)) {
                        tot.bytes += is.delta.bytes;
                        tot.retransmits += is.delta.retransmits;
                        tot.packets += is.delta.packets;
                        tot.lost += is.delta.lost;
                        tot.jitter += is.delta.jitter / idx.len() as f64;
                    }
                    let sending = self.streams[first].sending;
                    let mut f = JFig::span(rec.start, rec.end, tot.bytes, sending);
                    f.omitted = Some(rec.omitted);
                    self.fill_interval(&mut f, sending, &tot, None);
                    Some(f)
                };
                let (main, rev) = self.sum_directions();
                JInterval {
                    streams,
                    sum: sum_of(main).unwrap_or_default(),
                    sum_bidir_reverse: rev.and_then(sum_of),
                }
            })
            .collect();
        JDoc {
            start,
            intervals,
            end: self.iperf3_end(),
            title: p.title.clone(),
            extra_data: p.extra_data.clone(),
        }
    }

    /// Which direction is iperf3's plain `sum`, and which (with `--bidir`)
    /// its `*_bidir_reverse`.
    fn sum_directions(&self) -> (NetDirection, Option<NetDirection>) {
        if self.bidir() {
            (NetDirection::Upload, Some(NetDirection::Download))
        } else if self.params.reverse {
            (NetDirection::Download, None)
        } else {
            (NetDirection::Upload, None)
        }
    }

    fn fill_interval(&self, f: &mut JFig, sending: bool, d: &Snapshot, tcp: Option<&TcpInfo>) {
        match (self.udp(), sending) {
            (false, true) => {
                f.retransmits = Some(d.retransmits);
                if let Some(t) = tcp {
                    f.snd_cwnd = Some(t.snd_cwnd_bytes);
                    f.rtt = Some(t.rtt_us);
                    f.rttvar = Some(t.rttvar_us);
                    f.pmtu = Some(t.pmtu);
                }
            }
            (false, false) => {}
            (true, true) => f.packets = Some(d.packets as i64),
            (true, false) => {
                f.jitter_ms = Some(d.jitter * 1e3);
                f.lost_packets = Some(d.lost);
                f.packets = Some(d.packets as i64);
                f.lost_percent = Some(pct(d.lost, d.packets as i64));
            }
        }
    }

    fn iperf3_end(&self) -> JEnd {
        let udp = self.udp();
        let mut streams = Vec::new();
        for i in 0..self.streams.len() {
            let s = &self.streams[i];
            let t = &self.totals[i];
            let (snd, rcv) = self.sides(i);
            if udp {
                let (j, l, ooo) = self.udp_receiver(i);
                let pk = snd.packets.unwrap_or(0) as i64;
                let mut f = JFig::span(0.0, snd.seconds, snd.bytes, s.sending);
                f.socket = Some(s.fd);
                f.jitter_ms = Some(j * 1e3);
                f.lost_packets = Some(l);
                f.packets = Some(pk);
                f.lost_percent = Some(pct(l, pk));
                f.out_of_order = Some(ooo);
                streams.push(JEndStream {
                    udp: Some(f),
                    ..JEndStream::default()
                });
            } else {
                let mut fs = JFig::span(0.0, snd.seconds, snd.bytes, s.sending);
                fs.socket = Some(s.fd);
                fs.retransmits = snd.retransmits;
                if s.sending {
                    fs.max_snd_cwnd = Some(t.max_cwnd);
                    fs.max_rtt = t.max_rtt;
                    fs.min_rtt = t.min_rtt;
                    fs.mean_rtt = t.mean_rtt;
                }
                let mut fr = JFig::span(0.0, rcv.seconds, rcv.bytes, s.sending);
                fr.socket = Some(s.fd);
                streams.push(JEndStream {
                    sender: Some(fs),
                    receiver: Some(fr),
                    udp: None,
                });
            }
        }
        let sums = |d: NetDirection| -> Option<(JFig, JFig, JFig)> {
            let idx = self.of(d);
            let first = *idx.first()?;
            let sending = self.streams[first].sending;
            let (mut sb, mut ss, mut rb, mut rs, mut retr) = (0u64, 0f64, 0u64, 0f64, None);
            let (mut pk, mut lost, mut jit) = (0i64, 0i64, 0f64);
            for &i in &idx {
                let (snd, rcv) = self.sides(i);
                sb += snd.bytes;
                ss = ss.max(snd.seconds);
                rb += rcv.bytes;
                rs = rs.max(rcv.seconds);
                if let Some(r) = snd.retransmits {
                    retr = Some(retr.unwrap_or(0) + r);
                }
                let (j, l, _) = self.udp_receiver(i);
                pk += snd.packets.unwrap_or(0) as i64;
                lost += l;
                jit += j / idx.len() as f64;
            }
            let mut sent = JFig::span(0.0, ss, sb, sending);
            let mut recv = JFig::span(0.0, rs, rb, sending);
            let mut legacy = JFig::span(0.0, ss, sb, sending);
            if udp {
                for f in [&mut sent, &mut recv, &mut legacy] {
                    f.jitter_ms = Some(jit * 1e3);
                    f.lost_packets = Some(lost);
                    f.packets = Some(pk);
                    f.lost_percent = Some(pct(lost, pk));
                }
                sent.jitter_ms = Some(0.0);
                sent.lost_packets = Some(0);
                sent.lost_percent = Some(0.0);
            } else {
                sent.retransmits = retr;
            }
            Some((sent, recv, legacy))
        };
        let (main, rev) = self.sum_directions();
        let m = sums(main);
        let r = rev.and_then(sums);
        let cpu = &self.cpu_local;
        let remote = self.remote.as_ref();
        let (sum_sent, sum_received, sum) = match m {
            Some((a, b, c)) => (Some(a), Some(b), udp.then_some(c)),
            None => (None, None, None),
        };
        let (sum_sent_bidir_reverse, sum_received_bidir_reverse, sum_bidir_reverse) = match r {
            Some((a, b, c)) => (Some(a), Some(b), udp.then_some(c)),
            None => (None, None, None),
        };
        let cc = (!udp).then(|| self.congestion.clone()).flatten();
        JEnd {
            streams,
            sum,
            sum_sent,
            sum_received,
            sum_bidir_reverse,
            sum_sent_bidir_reverse,
            sum_received_bidir_reverse,
            cpu_utilization_percent: JCpu {
                host_total: cpu.total_percent,
                host_user: cpu.user_percent,
                host_system: cpu.system_percent,
                remote_total: remote.map_or(0.0, |r| r.cpu_util_total),
                remote_user: remote.map_or(0.0, |r| r.cpu_util_user),
                remote_system: remote.map_or(0.0, |r| r.cpu_util_system),
            },
            sender_tcp_congestion: cc.clone(),
            receiver_tcp_congestion: cc,
        }
    }

    // ---- iomark's own model --------------------------------------------

    /// The run in iomark's result model, for the store.
    pub fn to_net_run(&self, interface: Option<NetInterface>) -> NetRun {
        let p = &self.params;
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
        for rec in &self.intervals {
            for d in self.directions() {
                let idx = self.of(d);
                let mut bytes = 0;
                let mut retr = None;
                for is in rec.streams.iter().filter(|is| idx.contains(&is.index)) {
                    bytes += is.delta.bytes;
                    if self.streams[is.index].sending && !self.udp() {
                        retr = Some(retr.unwrap_or(0) + is.delta.retransmits);
                    }
                }
                intervals.push(NetInterval {
                    start: ns(rec.start),
                    end: ns(rec.end),
                    direction: d,
                    bytes: Bytes(bytes),
                    retransmits: retr,
                    omitted: rec.omitted,
                });
            }
        }
        NetRun {
            spec: NetSpec {
                host: self.peer_host.clone(),
                port: self.peer_port,
                protocol: if self.udp() {
                    NetProtocol::Udp
                } else {
                    NetProtocol::Tcp
                },
                parallel: p.parallel,
                duration: Nanos::from_secs(p.time as u64),
                omit: Nanos::from_secs(p.omit as u64),
                interval: ns(self.interval_secs),
                reverse: p.reverse,
                bidirectional: p.bidirectional,
                block_len: Bytes(p.len as u64),
                window: p.window.map(|w| Bytes(w as u64)),
                target_bits_per_sec: p.bandwidth,
                no_delay: p.nodelay,
            },
            peer_version: None,
            interface,
            streams,
            intervals,
            warnings: self.warnings(),
            cpu_local: self.cpu_local,
            cpu_remote: self.remote.as_ref().map_or(CpuUtilization::default(), |r| {
                CpuUtilization {
                    total_percent: r.cpu_util_total,
                    user_percent: r.cpu_util_user,
                    system_percent: r.cpu_util_system,
                }
            }),
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

fn cores() -> f64 {
    std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
}

fn rate(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

fn pct(lost: i64, total: i64) -> f64 {
    if total > 0 {
        lost as f64 * 100.0 / total as f64
    } else {
        0.0
    }
}

fn fmt_pct(lost: i64, total: i64) -> String {
    let p = pct(lost, total);
    if p == 0.0 {
        "0%".into()
    } else if p < 0.1 {
        format!("{p:.2e}%")
    } else {
        format!("{p:.2}%")
    }
}

/// iperf3's adaptive number: 4 characters, 2, 1 or 0 decimals.
fn fmt_num(v: f64) -> String {
    if v < 9.995 {
        format!("{v:4.2}")
    } else if v < 99.95 {
        format!("{v:4.1}")
    } else {
        format!("{v:4.0}")
    }
}

/// Bytes the way iperf3 prints them: 1024-based, `GBytes`.
pub(crate) fn fmt_bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    let (v, u) = if b >= K * K * K {
        (b / (K * K * K), "GBytes")
    } else if b >= K * K {
        (b / (K * K), "MBytes")
    } else if b >= K {
        (b / K, "KBytes")
    } else {
        (b, "Bytes")
    };
    format!("{} {u}", fmt_num(v))
}

/// Bits per second the way iperf3 prints them: 1000-based, `Gbits/sec`.
pub(crate) fn fmt_rate(bps: f64) -> String {
    let (v, u) = if bps >= 1e9 {
        (bps / 1e9, "Gbits")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mbits")
    } else if bps >= 1e3 {
        (bps / 1e3, "Kbits")
    } else {
        (bps, "bits")
    };
    format!("{} {u}/sec", fmt_num(v))
}

fn system_info() -> String {
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string());
    let host = read("/proc/sys/kernel/hostname").unwrap_or_default();
    let rel = read("/proc/sys/kernel/osrelease").unwrap_or_default();
    let ver = read("/proc/sys/kernel/version").unwrap_or_default();
    format!("Linux {host} {rel} {ver} {}", std::env::consts::ARCH)
}

/// RFC 7231 date, as iperf3's `timestamp.time`.
fn http_date(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86400;
    let rem = secs % 86400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        DAYS[(days % 7) as usize],
        d,
        MONTHS[(m - 1) as usize],
        y,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

// ---- iperf3 -J layout, field order as iperf3 prints it -----------------

#[derive(Serialize)]
struct JDoc {
    start: JStart,
    intervals: Vec<JInterval>,
    end: JEnd,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra_data: Option<String>,
}

#[derive(Serialize)]
struct JStart {
    connected: Vec<JConnected>,
    version: String,
    system_info: String,
    timestamp: JTimestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    connecting_to: Option<JHostPort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    accepted_connection: Option<JHostPort>,
    cookie: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tcp_mss_default: Option<u32>,
    target_bitrate: u64,
    fq_rate: u64,
    sock_bufsize: u64,
    sndbuf_actual: u64,
    rcvbuf_actual: u64,
    test_start: JTestStart,
}

#[derive(Serialize)]
struct JConnected {
    socket: i32,
    local_host: String,
    local_port: u16,
    remote_host: String,
    remote_port: u16,
}

#[derive(Serialize)]
struct JTimestamp {
    time: String,
    timesecs: u64,
}

#[derive(Serialize)]
struct JHostPort {
    host: String,
    port: u16,
}

#[derive(Serialize)]
struct JTestStart {
    protocol: &'static str,
    num_streams: u32,
    blksize: u32,
    omit: u32,
    duration: u32,
    bytes: u64,
    blocks: u64,
    reverse: u8,
    tos: u32,
    target_bitrate: u64,
    bidir: u8,
    fqrate: u64,
    interval: f64,
}

#[derive(Serialize)]
struct JInterval {
    streams: Vec<JFig>,
    sum: JFig,
    #[serde(skip_serializing_if = "Option::is_none")]
    sum_bidir_reverse: Option<JFig>,
}

/// A stream or sum figure; which optional keys appear depends on protocol
/// and role, as in iperf3.
#[derive(Serialize, Default)]
struct JFig {
    #[serde(skip_serializing_if = "Option::is_none")]
    socket: Option<i32>,
    start: f64,
    end: f64,
    seconds: f64,
    bytes: u64,
    bits_per_second: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    jitter_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lost_packets: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    packets: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lost_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    out_of_order: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retransmits: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    snd_cwnd: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rtt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rttvar: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pmtu: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_snd_cwnd: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_rtt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_rtt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mean_rtt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    omitted: Option<bool>,
    sender: bool,
}

impl JFig {
    fn span(start: f64, end: f64, bytes: u64, sender: bool) -> JFig {
        let seconds = end - start;
        JFig {
            start,
            end,
            seconds,
            bytes,
            bits_per_second: rate(bytes, seconds),
            sender,
            ..JFig::default()
        }
    }
}

#[derive(Serialize, Default)]
struct JEndStream {
    #[serde(skip_serializing_if = "Option::is_none")]
    sender: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receiver: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    udp: Option<JFig>,
}

#[derive(Serialize)]
struct JEnd {
    streams: Vec<JEndStream>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sum: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sum_sent: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sum_received: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sum_bidir_reverse: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sum_sent_bidir_reverse: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sum_received_bidir_reverse: Option<JFig>,
    cpu_utilization_percent: JCpu,
    #[serde(skip_serializing_if = "Option::is_none")]
    sender_tcp_congestion: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    receiver_tcp_congestion: Option<String>,
}

#[derive(Serialize)]
struct JCpu {
    host_total: f64,
    host_user: f64,
    host_system: f64,
    remote_total: f64,
    remote_user: f64,
    remote_system: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_print_like_iperf3() {
        assert_eq!(fmt_bytes(1.82 * 1024.0 * 1024.0 * 1024.0), "1.82 GBytes");
        assert_eq!(fmt_bytes(18.2 * 1024.0 * 1024.0 * 1024.0), "18.2 GBytes");
        assert_eq!(fmt_rate(15.6e9), "15.6 Gbits/sec");
        assert_eq!(fmt_rate(941.0e6), " 941 Mbits/sec");
    }

    #[test]
    fn http_date_matches_a_known_day() {
        assert_eq!(http_date(1_795_294_652), "Sat, 21 Nov 2026 20:57:32 GMT");
    }
}
