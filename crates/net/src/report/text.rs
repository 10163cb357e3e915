//! iperf3's text output: the connection lines, one line per stream and
//! interval with a `[SUM]` per direction, the sender/receiver totals and
//! the CPU line.
//!
//! The layout follows iperf3 3.x (`iperf_locale.c` for the lines,
//! `units.c` for the numbers: 1024-based bytes, 1000-based bits, four
//! significant characters), so that eyes and scripts used to iperf3 read
//! iomark the same way.

use std::fmt::Write as _;

use super::{pct, rate, IntervalRecord, Role, Side, TestReport};
use crate::stream::Snapshot;
use crate::sys::TcpInfo;

/// The interval lines of a running test: written out as they come when
/// text output is on, and counted either way, since the first line of a
/// test carries the column header.
pub(crate) struct IntervalLines {
    text: bool,
    /// `--json-stream`: one `{"event":"interval",...}` line each instead.
    json_stream: bool,
    printed: usize,
}

impl IntervalLines {
    /// None printed yet; `text` says whether to print at all.
    pub(crate) fn new(text: bool) -> IntervalLines {
        IntervalLines {
            text,
            json_stream: false,
            printed: 0,
        }
    }

    /// `--json-stream`'s interval events instead of text lines.
    pub(crate) fn json_stream() -> IntervalLines {
        IntervalLines {
            text: false,
            json_stream: true,
            printed: 0,
        }
    }

    /// Print `recs` to `out` and flush, so each shows when it ends.
    pub(crate) fn print(
        &mut self,
        report: &TestReport,
        recs: &[IntervalRecord],
        out: &mut dyn std::io::Write,
    ) {
        if self.json_stream && !recs.is_empty() {
            let _ = write!(out, "{}", report.json_stream_intervals(recs));
            let _ = out.flush();
        }
        for rec in recs {
            if self.text {
                let _ = write!(out, "{}", report.interval_text(rec, self.printed == 0));
                let _ = out.flush();
            }
            self.printed += 1;
        }
    }
}

impl TestReport {
    /// iperf3's `--bidir` label (`[TX-C]`, `[RX-S]`, ...); without
    /// `--bidir` there is one direction and iperf3 prints none.
    fn tag(&self, i: usize) -> &'static str {
        if !self.bidir() {
            return "";
        }
        match (self.peering.role, self.streams[i].sending) {
            (Role::Client, true) => "[TX-C]",
            (Role::Client, false) => "[RX-C]",
            (Role::Server, true) => "[TX-S]",
            (Role::Server, false) => "[RX-S]",
        }
    }

    /// The lines printed once the streams are connected.
    pub fn header_text(&self) -> String {
        let mut o = String::new();
        if self.peering.role == Role::Client && self.params.reverse {
            let _ = writeln!(
                o,
                "Reverse mode, remote host {} is sending",
                self.peering.peer_host
            );
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
                    self.rate_format
                        .rate(is.delta.bytes as f64 * 8.0 / secs.max(1e-9)),
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
                    self.rate_format.rate(bytes as f64 * 8.0 / secs.max(1e-9)),
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
        // Not an iperf3 line: the whole machine, where softirq shows the
        // receive path a process's CPU does not.
        if let Some(h) = &self.host_cpu_local {
            o += &own_line(&format!("Machine CPU: local {h}"));
        }
        if let Some(h) = r.and_then(|r| r.iomark_host_cpu.as_ref()) {
            o += &own_line(&format!("Machine CPU: remote {h}"));
        }
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
        // What both lines start with: the span, the bytes and the rate.
        let span = |side: &Side| {
            format!(
                "{label} {:6.2}-{:<6.2} sec  {}  {}",
                0.0,
                side.seconds,
                fmt_bytes(side.bytes as f64),
                self.rate_format.rate(rate(side.bytes, side.seconds)),
            )
        };
        let (snd_line, rcv_line) = (span(snd), span(rcv));
        if self.udp() {
            let pk = snd.packets.unwrap_or(0) as i64;
            let _ = writeln!(
                o,
                "{snd_line}  {:.3} ms  {}/{} ({})  sender",
                0.0,
                0,
                pk,
                fmt_pct(0, pk)
            );
            let _ = writeln!(
                o,
                "{rcv_line}  {:.3} ms  {}/{} ({})  receiver",
                jit * 1e3,
                lost,
                pk,
                fmt_pct(lost, pk)
            );
        } else {
            let retr = snd
                .retransmits
                .map_or_else(|| "    ".to_string(), |r| format!("{r:>4}"));
            let _ = writeln!(o, "{snd_line}  {retr}             sender");
            let _ = writeln!(o, "{rcv_line}                  receiver");
        }
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
pub(super) fn fmt_num(v: f64) -> String {
    if v < 9.995 {
        format!("{v:4.2}")
    } else if v < 99.95 {
        format!("{v:4.1}")
    } else {
        format!("{v:4.0}")
    }
}

/// Bytes the way iperf3 prints them: 1024-based, `GBytes`.
fn fmt_bytes(b: f64) -> String {
    fmt_scaled(b, 1024.0, ["GBytes", "MBytes", "KBytes", "Bytes"])
}

/// `v` in the largest unit it reaches, each `step` times the next (the
/// units largest first), as iperf3's adaptive number.
fn fmt_scaled(v: f64, step: f64, units: [&str; 4]) -> String {
    let (scale, unit) = [step * step * step, step * step, step]
        .into_iter()
        .zip(units)
        .find(|&(scale, _)| v >= scale)
        .unwrap_or((1.0, units[3]));
    format!("{} {unit}", fmt_num(v / scale))
}

/// Columns iomark's own lines keep to (issue 48: an 80-column terminal).
/// iperf3's lines keep iperf3's layout, whatever their width: scripts
/// read them.
const OWN_LINE_WIDTH: usize = 80;

/// A line of iomark's own in the iperf3-shaped text, with its newline:
/// past [`OWN_LINE_WIDTH`] it goes on under a two-space indent, broken at
/// spaces.
pub(super) fn own_line(line: &str) -> String {
    let mut out = String::new();
    let mut width = 0;
    for word in line.split(' ') {
        let n = word.chars().count();
        if width > 0 && width + 1 + n > OWN_LINE_WIDTH {
            out.push_str("\n  ");
            width = 2;
        } else if width > 0 {
            out.push(' ');
            width += 1;
        }
        out.push_str(word);
        width += n;
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_print_like_iperf3() {
        assert_eq!(fmt_bytes(1.82 * 1024.0 * 1024.0 * 1024.0), "1.82 GBytes");
        assert_eq!(fmt_bytes(18.2 * 1024.0 * 1024.0 * 1024.0), "18.2 GBytes");
    }

    #[test]
    fn an_own_line_past_80_columns_goes_on_indented_and_iperf3s_keep_theirs() {
        let line = "Machine CPU: local user 2.1%, system 41.0%, iowait 0.0%, softirq 23.3%, \
                    idle 33.6% of 2 CPUs";
        let out = own_line(line);
        assert_eq!(
            out,
            "Machine CPU: local user 2.1%, system 41.0%, iowait 0.0%, softirq 23.3%, idle\n  \
             33.6% of 2 CPUs\n"
        );
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
        assert_eq!(own_line("short"), "short\n");
    }
}
