//! iperf3's `-J` JSON: the whole test as one document, for scripts that
//! already read iperf3's.
//!
//! The mirror structs below reproduce iperf3 3.x's document (built with
//! cJSON in `iperf_api.c`): the same keys in the same order, present or
//! absent by protocol and role as iperf3 has them, numbers in its units
//! (bits per second, milliseconds of jitter, microseconds of RTT).

use iomark_model::net::NetDirection;
use serde::Serialize;

mod mirror;

use super::{pct, IntervalRecord, IntervalStream, Role, TestReport};
use crate::stream::Snapshot;
use crate::sys::TcpInfo;
use mirror::{
    JConnected, JCpu, JDoc, JEnd, JEndStream, JFig, JHostPort, JInterval, JStart, JTestStart,
    JTimestamp,
};

impl TestReport {
    /// The whole run in iperf3's `-J` layout, pretty-printed like iperf3;
    /// a U+2028 in the title written `\u2028`, as every JSON iomark prints.
    pub fn to_iperf3_json(&self) -> String {
        iomark_model::escape::to_json_pretty(&self.iperf3_doc())
            .expect("the report always serialises")
    }

    fn iperf3_doc(&self) -> JDoc {
        let p = &self.params;
        let remote = self.remote.as_ref();
        JDoc {
            start: self.j_start(),
            intervals: self
                .intervals
                .iter()
                .map(|rec| self.j_interval(rec))
                .collect(),
            end: self.iperf3_end(),
            title: p.title.clone(),
            extra_data: p.extra_data.clone(),
            server_output_json: remote.and_then(|r| r.server_output_json.clone()),
            server_output_text: remote.and_then(|r| r.server_output_text.clone()),
        }
    }

    /// `--json-stream`'s first line: `{"event":"start","data":{...}}`,
    /// the `-J` document's `start`.
    pub fn json_stream_start(&self) -> String {
        event("start", &self.j_start())
    }

    /// `--json-stream`'s line for each of `recs`: `{"event":"interval",...}`.
    pub(crate) fn json_stream_intervals(&self, recs: &[IntervalRecord]) -> String {
        recs.iter()
            .map(|rec| event("interval", &self.j_interval(rec)) + "\n")
            .collect()
    }

    /// `--json-stream`'s last line: `{"event":"end","data":{...}}`.
    pub fn json_stream_end(&self) -> String {
        event("end", &self.iperf3_end())
    }

    fn j_start(&self) -> JStart {
        let udp = self.udp();
        let p = &self.params;
        let millis = iomark_model::epoch_ms(self.started);
        let secs = millis / 1000;
        // A client says where it connected to, a server whom it accepted.
        let peer = Some(JHostPort {
            host: self.peering.peer_host.clone(),
            port: self.peering.peer_port,
        });
        let (connecting_to, accepted_connection) = match self.peering.role {
            Role::Client => (peer, None),
            Role::Server => (None, peer),
        };
        JStart {
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
                timemillisecs: millis,
            },
            connecting_to,
            accepted_connection,
            cookie: self.peering.cookie.clone(),
            // iperf3 names the key for where the MSS came from: -M or the kernel.
            tcp_mss_default: if udp || p.mss.is_some() {
                None
            } else {
                self.peering.tcp_mss
            },
            tcp_mss: if udp { None } else { p.mss },
            target_bitrate: p.bandwidth,
            fq_rate: p.fqrate.unwrap_or(0),
            sock_bufsize: p.window.map_or(0, u64::from),
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
                fqrate: p.fqrate.unwrap_or(0),
                interval: self.interval_secs,
                // iperf 3.21's UDP GSO/GRO (--gsro), which iomark does not use.
                gso: 0,
                gro: 0,
            },
        }
    }

    fn j_interval(&self, rec: &IntervalRecord) -> JInterval {
        {
            {
                let fig = |is: &IntervalStream| {
                    let s = &self.streams[is.index];
                    let d = &is.delta;
                    let mut f = JFig::span(rec.start, rec.end, d.bytes, s.sending);
                    f.socket = Some(s.fd);
                    f.omitted = Some(rec.omitted);
                    self.fill_interval(&mut f, s.sending, d, is.tcp.as_ref());
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
            }
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
                    f.snd_wnd = Some(t.snd_wnd);
                    f.rtt = Some(t.rtt_us);
                    f.rttvar = Some(t.rttvar_us);
                    f.pmtu = Some(t.pmtu);
                    f.reorder = Some(t.reordering);
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
                    fs.reorder = Some(t.reorder);
                    fs.max_snd_cwnd = Some(t.max_cwnd);
                    fs.max_snd_wnd = Some(t.max_snd_wnd);
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
}

/// iperf3's `system_info`, the fields of `uname -a`. A field that cannot be
/// read is left empty: the string only informs, and the test has already
/// run.
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

/// One `--json-stream` line (without its newline).
fn event<T: Serialize>(event: &str, data: &T) -> String {
    iomark_model::live::stream_event(event, data)
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
