//! What `-V` adds to the text output, as iperf3's `-V` does: the cookie,
//! the MSS and a `Starting Test:` line before the intervals, and after the
//! summary each TCP stream's window and round-trip figures and the
//! congestion control of both ends. Only what this side knows is printed;
//! nothing is filled in where a figure is missing.

use std::fmt::Write as _;

use super::TestReport;
use crate::proto::Protocol;

impl TestReport {
    /// The lines `-V` adds once the streams are connected.
    pub fn verbose_header_text(&self) -> String {
        let p = &self.params;
        let mut o = String::new();
        let _ = writeln!(o, "Cookie: {}", self.peering.cookie);
        if let (Protocol::Tcp, Some(mss)) = (p.protocol, self.peering.tcp_mss) {
            let _ = writeln!(o, "TCP MSS: {mss} (default)");
        }
        let amount = if p.num > 0 {
            format!("{} bytes to send", p.num)
        } else if p.blockcount > 0 {
            format!("{} blocks to send", p.blockcount)
        } else {
            format!("{} second test", p.time)
        };
        let _ = writeln!(
            o,
            "Starting Test: protocol: {}, {} streams, {} byte blocks, omitting {} seconds, {amount}, tos {}",
            match p.protocol {
                Protocol::Tcp => "TCP",
                Protocol::Udp => "UDP",
            },
            p.parallel,
            p.len,
            p.omit,
            p.tos.unwrap_or(0),
        );
        let _ = writeln!(
            o,
            "Socket buffers: send {} bytes, receive {} bytes{}",
            self.sndbuf_actual,
            self.rcvbuf_actual,
            p.window
                .map_or(String::new(), |w| format!(" (-w {w} asked)"))
        );
        o
    }

    /// The lines `-V` adds after the summary.
    pub fn verbose_summary_text(&self) -> String {
        let mut o = String::new();
        if self.params.protocol == Protocol::Tcp {
            for (s, t) in self.streams.iter().zip(&self.totals) {
                if !s.sending {
                    continue;
                }
                let rtt = match (t.min_rtt, t.mean_rtt, t.max_rtt) {
                    (Some(a), Some(b), Some(c)) => format!(", RTT min/mean/max {a}/{b}/{c} us"),
                    _ => String::new(),
                };
                let _ = writeln!(
                    o,
                    "[{:>3}] sender: max cwnd {} bytes, {} retransmits{rtt}",
                    s.fd,
                    t.max_cwnd,
                    t.retransmits.unwrap_or(0)
                );
            }
            let local_sends = self.streams.iter().any(|s| s.sending);
            let local_receives = self.streams.iter().any(|s| !s.sending);
            let remote = self.remote.as_ref().and_then(|r| r.congestion_used.clone());
            let (snd, rcv) = match (local_sends, local_receives) {
                (true, true) => (self.congestion.clone(), self.congestion.clone()),
                (true, false) => (self.congestion.clone(), remote),
                _ => (remote, self.congestion.clone()),
            };
            if let Some(c) = snd {
                let _ = writeln!(o, "snd_tcp_congestion {c}");
            }
            if let Some(c) = rcv {
                let _ = writeln!(o, "rcv_tcp_congestion {c}");
            }
        }
        o
    }
}
