//! iperf3's plain text output (3.x clients, with or without `-V`) as a
//! network run, for the logs people kept before they knew `-J` (issue 32:
//! the network study's iperf3 logs were text).
//!
//! Read from the client's lines:
//!
//! - `Connecting to host H, port P` and `Reverse mode, remote host ... is
//!   sending` (the direction);
//! - `[  5] local ... connected to ...`: one line per stream;
//! - the interval lines before the `- - -` rule, `[SUM]` when there are
//!   several streams, each stream's own otherwise;
//! - the summary lines ending in `sender` and `receiver`, per stream;
//! - with `-V`: `iperf 3.12`, `Time: Fri, 27 Nov 2026 05:39:28 GMT` (the
//!   start) and `CPU Utilization: local/sender 9.6% (0.0%u/9.6%s), ...`.
//!
//! Text rounds: `559 MBytes` is three significant digits (iperf3's `MBytes`
//! are 2^20 bytes, its `Mbits` 10^6 bits). The figures carry that rounding,
//! under 0.5%; `-J` output imports exactly. Without `-V` the text says
//! neither when the run was nor which iperf3 wrote it: the run is dated
//! when it is imported, and the version is `3.x`. A server's output, and
//! `--bidir`'s `[TX-C]`/`[RX-C]` lines, are refused with what to import
//! instead.

use iomark_model::net::{
    CpuUtilization, NetDirection, NetInterval, NetProtocol, NetRun, NetSpec, NetStreamResult,
};
use iomark_model::units::Nanos;
use iomark_model::{Bytes, RunBody, RunDocument};

use super::ImportError;

const TOOL: &str = "iperf3";

/// Whether `text` looks like iperf3's text output rather than JSON.
pub(super) fn looks_like(text: &str) -> bool {
    let head = text.trim_start();
    !head.starts_with('{')
        && !head.starts_with('[')
        && text.lines().any(|l| l.starts_with("[ ID] Interval"))
}

/// One `[  5]   0.00-1.00   sec  559 MBytes  3.78 Gbits/sec ...` line.
#[derive(Debug, Clone, PartialEq)]
struct Line {
    /// The stream's id, `None` for `[SUM]`.
    id: Option<u32>,
    start: f64,
    end: f64,
    bytes: u64,
    /// What follows the bitrate, split on whitespace.
    rest: Vec<String>,
}

fn bad(line: usize, what: &str) -> ImportError {
    ImportError::Unsupported(format!(
        "iperf3 text, line {line}: {what}; import iperf3's -J output instead if this is not a 3.x client's log"
    ))
}

/// `559 MBytes` (iperf3's byte units are powers of 1024).
fn bytes(number: &str, unit: &str) -> Option<u64> {
    let n: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)?;
    let scale = match unit {
        "Bytes" => 1.0,
        "KBytes" => 1024.0,
        "MBytes" => 1024.0 * 1024.0,
        "GBytes" => 1024.0 * 1024.0 * 1024.0,
        "TBytes" => 1024.0f64.powi(4),
        _ => return None,
    };
    Some((n * scale).round() as u64)
}

/// Parse a measurement line; `None` for any other line.
fn parse_line(l: &str) -> Option<Line> {
    let rest = l.strip_prefix('[')?;
    let (tag, rest) = rest.split_once(']')?;
    let tag = tag.trim();
    let id = match tag {
        "SUM" => None,
        t => Some(t.parse::<u32>().ok()?),
    };
    let mut words = rest.split_whitespace();
    let (from, to) = words.next()?.split_once('-')?;
    if words.next()? != "sec" {
        return None;
    }
    let bytes = bytes(words.next()?, words.next()?)?;
    // The bitrate, recomputed from the bytes: it is rounded too.
    let _rate = (words.next()?, words.next()?);
    Some(Line {
        id,
        start: from.parse().ok()?,
        end: to.parse().ok()?,
        bytes,
        rest: words.map(str::to_string).collect(),
    })
}

fn secs(s: f64) -> Nanos {
    Nanos((s.max(0.0) * 1e9).round() as u64)
}

/// `9.6% (0.0%u/9.6%s)` as a CPU figure.
fn cpu(text: &str) -> Option<CpuUtilization> {
    let (total, parts) = text.trim().split_once(' ')?;
    let total = total.strip_suffix('%')?.parse().ok()?;
    let parts = parts.trim().strip_prefix('(')?.strip_suffix(')')?;
    let (user, system) = parts.split_once('/')?;
    Some(CpuUtilization {
        total_percent: total,
        user_percent: user.strip_suffix("%u")?.parse().ok()?,
        system_percent: system.strip_suffix("%s")?.parse().ok()?,
    })
}

pub(super) fn convert(text: &str) -> Result<RunDocument, ImportError> {
    if text.lines().any(|l| l.starts_with("Server listening on")) {
        return Err(ImportError::Unsupported(
            "this is an iperf3 server's text output: import the client's (its summary has both \
             ends), or the server's -J output"
                .into(),
        ));
    }
    if text.contains("[TX-C]") || text.contains("[RX-C]") {
        return Err(ImportError::Unsupported(
            "iperf3 --bidir text output is not imported: rerun with -J and import that".into(),
        ));
    }
    let mut host = String::new();
    let mut port = 5201u16;
    let mut reverse = false;
    let mut version = "3.x".to_string();
    let mut started_at_ms = None;
    let mut streams_seen: Vec<u32> = Vec::new();
    let mut intervals_per_stream: Vec<Line> = Vec::new();
    let mut interval_sums: Vec<Line> = Vec::new();
    let mut summary: Vec<(Line, bool)> = Vec::new();
    let mut udp = false;
    // Unknown without a `CPU Utilization` line (no -V), not 0%.
    let mut cpu_local = None;
    let mut cpu_remote = None;
    let mut duration = None;
    let mut block_len = 0u64;
    let mut in_summary = false;
    let mut intervals_header_seen = false;
    let mut rule_seen = false;
    for (n, l) in text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end())) {
        if let Some(v) = l.strip_prefix("iperf ") {
            if v.starts_with('3') && !v.contains(' ') {
                version = v.to_string();
            }
        } else if let Some(t) = l.strip_prefix("Time: ") {
            let at = jiff::fmt::rfc2822::parse(t.trim())
                .map_err(|e| bad(n, &format!("the time '{t}' does not read ({e})")))?;
            started_at_ms = Some(at.timestamp().as_millisecond().max(0) as u64);
        } else if let Some(to) = l.strip_prefix("Connecting to host ") {
            let (h, p) = to.split_once(", port ").ok_or_else(|| bad(n, "no port"))?;
            host = h.to_string();
            port = p
                .trim()
                .parse()
                .map_err(|_| bad(n, "the port is not a number"))?;
        } else if l.starts_with("Reverse mode") {
            reverse = true;
        } else if let Some(t) = l.strip_prefix("Starting Test: ") {
            for part in t.split(", ") {
                if let Some(b) = part.strip_suffix(" byte blocks") {
                    block_len = b.trim().parse().unwrap_or(0);
                } else if let Some(d) = part.strip_suffix(" second test") {
                    duration = d.trim().parse::<f64>().ok();
                }
            }
        } else if l.starts_with("[ ID]") {
            // The first header is the intervals'; the summary's comes after
            // a `- - -` rule. Its columns say nothing reliable: macOS's and
            // Windows' iperf3, and any client in reverse mode, print no
            // `Retr  Cwnd` in the intervals' header either.
            udp |= l.contains("Datagrams");
            in_summary |= intervals_header_seen && rule_seen;
            intervals_header_seen = true;
        } else if l.starts_with("- - -") {
            rule_seen = true;
        } else if l.contains(" local ") && l.contains(" connected to ") {
            if let Some(id) = parse_id(l) {
                streams_seen.push(id);
            }
        } else if let Some(rest) = l.strip_prefix("CPU Utilization: ") {
            for side in rest.split("), ") {
                let (name, figure) = side.split_once(' ').unwrap_or(("", ""));
                let figure = if figure.ends_with(')') {
                    figure.to_string()
                } else {
                    format!("{figure})")
                };
                let parsed = cpu(&figure).ok_or_else(|| bad(n, "the CPU line does not read"))?;
                if name.starts_with("local") {
                    cpu_local = Some(parsed);
                } else {
                    cpu_remote = Some(parsed);
                }
            }
        } else if let Some(line) = parse_line(l) {
            let end_word = line.rest.last().map(String::as_str);
            // A line that ends in sender or receiver is the summary's
            // whatever came before it.
            in_summary |= matches!(end_word, Some("sender" | "receiver"));
            match (in_summary, end_word) {
                (true, Some("sender")) => summary.push((line, true)),
                (true, Some("receiver")) => summary.push((line, false)),
                (true, _) => {}
                (false, _) if line.id.is_none() => interval_sums.push(line),
                (false, _) => intervals_per_stream.push(line),
            }
        }
    }
    if host.is_empty() {
        return Err(ImportError::Missing {
            tool: TOOL,
            field: "the \"Connecting to host H, port P\" line".into(),
        });
    }
    // What this host sent went up (client to server), unless reversed.
    let direction = if reverse {
        NetDirection::Download
    } else {
        NetDirection::Upload
    };
    let mut streams = Vec::new();
    for id in &streams_seen {
        let of = |sender: bool| {
            summary
                .iter()
                .find(|(l, s)| l.id == Some(*id) && *s == sender)
                .map(|(l, _)| l)
        };
        let (Some(snd), Some(rcv)) = (of(true), of(false)) else {
            continue;
        };
        let (retransmits, packets, lost, jitter) = if udp {
            // `0.023 ms  0/39 (0%)  receiver`
            let lost_total = rcv
                .rest
                .iter()
                .find(|w| w.contains('/') && !w.contains('%'));
            let (lost, total) = lost_total
                .and_then(|w| w.split_once('/'))
                .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
                .unwrap_or((0, 0));
            let jitter = rcv
                .rest
                .first()
                .and_then(|j| j.parse::<f64>().ok())
                .map(|ms| secs(ms / 1e3));
            (None, Some(total), Some(lost), jitter)
        } else {
            let retr = snd.rest.first().and_then(|r| r.parse::<u64>().ok());
            (retr, None, None, None)
        };
        streams.push(NetStreamResult {
            id: *id,
            direction,
            sent: Bytes(snd.bytes),
            received: Bytes(rcv.bytes),
            sender_time: secs(snd.end - snd.start),
            receiver_time: secs(rcv.end - rcv.start),
            retransmits,
            packets,
            lost_packets: lost,
            jitter,
        });
    }
    if streams.is_empty() {
        return Err(ImportError::Missing {
            tool: TOOL,
            field: "the summary's sender and receiver lines (the run did not finish?)".into(),
        });
    }
    let interval_lines = if streams.len() > 1 {
        interval_sums
    } else {
        intervals_per_stream
    };
    let intervals = interval_lines
        .iter()
        .map(|l| NetInterval {
            start: secs(l.start),
            end: secs(l.end),
            direction,
            bytes: Bytes(l.bytes),
            retransmits: (!udp && !reverse)
                .then(|| l.rest.first().and_then(|r| r.parse().ok()))
                .flatten(),
            omitted: l.rest.iter().any(|w| w == "(omitted)"),
            // The text's interval lines have no RTT (only Cwnd).
            rtt: None,
            cpu: None,
            peer_cpu: None,
        })
        .collect();
    let measured = summary.iter().map(|(l, _)| l.end).fold(0.0, f64::max);
    let spec = NetSpec {
        host,
        port,
        protocol: if udp {
            NetProtocol::Udp
        } else {
            NetProtocol::Tcp
        },
        parallel: streams.len() as u32,
        duration: secs(duration.unwrap_or(measured)),
        omit: Nanos(0),
        interval: Nanos::from_secs(1),
        reverse,
        bidirectional: false,
        block_len: Bytes(block_len),
        window: None,
        target_bits_per_sec: 0,
        no_delay: false,
    };
    let run = NetRun {
        spec,
        peer_version: None,
        interface: None,
        streams,
        intervals,
        cpu_local,
        cpu_remote,
        host_cpu_local: None,
        host_cpu_remote: None,
        nic_local: None,
        nic_remote: None,
        warnings: Vec::new(),
        latency: None,
        clients: Vec::new(),
    };
    let mut doc = RunDocument::new(TOOL, version, Vec::new(), RunBody::Net(run));
    if let Some(at) = started_at_ms {
        doc.started_at_ms = at;
        doc.finished_at_ms = at + (measured * 1e3).round() as u64;
    }
    Ok(doc)
}

/// The stream id of a `[  5] local ... connected to ...` line.
fn parse_id(l: &str) -> Option<u32> {
    let (tag, _) = l.strip_prefix('[')?.split_once(']')?;
    tag.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const P2_V: &str = "iperf 3.12
Linux vm 6.18.44 #1 SMP PREEMPT_DYNAMIC @0 x86_64
Control connection MSS 32768
Time: Fri, 27 Nov 2026 05:39:28 GMT
Connecting to host 127.0.0.1, port 5999
      Cookie: hw6pk5i33flfkgay5ryabtkvaqx2isbhdfuy
      TCP MSS: 32768 (default)
[  5] local 127.0.0.1 port 50606 connected to 127.0.0.1 port 5999
[  7] local 127.0.0.1 port 50614 connected to 127.0.0.1 port 5999
Starting Test: protocol: TCP, 2 streams, 131072 byte blocks, omitting 0 seconds, 2 second test, tos 0
[ ID] Interval           Transfer     Bitrate         Retr  Cwnd
[  5]   0.00-1.24   sec   559 MBytes  3.78 Gbits/sec    2   1.25 MBytes
[  7]   0.00-1.24   sec   676 MBytes  4.58 Gbits/sec    0   4.50 MBytes
[SUM]   0.00-1.24   sec  1.21 GBytes  8.36 Gbits/sec    2
- - - - - - - - - - - - - - - - - - - - - - - - -
[  5]   1.24-2.01   sec  30.0 MBytes   326 Mbits/sec    5   1.37 MBytes
[  7]   1.24-2.01   sec  41.2 MBytes   448 Mbits/sec    0   4.37 MBytes
[SUM]   1.24-2.01   sec  71.2 MBytes   775 Mbits/sec    5
- - - - - - - - - - - - - - - - - - - - - - - - -
Test Complete. Summary Results:
[ ID] Interval           Transfer     Bitrate         Retr
[  5]   0.00-2.01   sec   589 MBytes  2.46 Gbits/sec    7             sender
[  5]   0.00-2.11   sec   584 MBytes  2.32 Gbits/sec                  receiver
[  7]   0.00-2.01   sec   718 MBytes  2.99 Gbits/sec    0             sender
[  7]   0.00-2.11   sec   705 MBytes  2.81 Gbits/sec                  receiver
[SUM]   0.00-2.01   sec  1.28 GBytes  5.45 Gbits/sec    7             sender
[SUM]   0.00-2.11   sec  1.26 GBytes  5.13 Gbits/sec                  receiver
CPU Utilization: local/sender 9.6% (0.0%u/9.6%s), remote/receiver 8.8% (0.3%u/8.4%s)
snd_tcp_congestion bbr
rcv_tcp_congestion bbr

iperf Done.
";

    const UDP: &str = "Connecting to host 127.0.0.1, port 5999
[  5] local 127.0.0.1 port 40214 connected to 127.0.0.1 port 5999
[ ID] Interval           Transfer     Bitrate         Total Datagrams
[  5]   0.00-1.00   sec  1.22 MBytes  10.2 Mbits/sec  39
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams
[  5]   0.00-1.00   sec  1.22 MBytes  10.2 Mbits/sec  0.000 ms  0/39 (0%)  sender
[  5]   0.00-1.00   sec  1.22 MBytes  10.2 Mbits/sec  0.023 ms  2/39 (5.1%)  receiver

iperf Done.
";

    fn net(doc: &RunDocument) -> &NetRun {
        match &doc.body {
            RunBody::Net(n) => n,
            _ => panic!("not a net run"),
        }
    }

    #[test]
    fn a_verbose_tcp_client_log_with_two_streams() {
        assert!(looks_like(P2_V));
        let doc = convert(P2_V).unwrap();
        assert_eq!(
            (doc.tool.as_str(), doc.tool_version.as_str()),
            ("iperf3", "3.12")
        );
        // Fri, 27 Nov 2026 05:39:28 GMT.
        assert_eq!(doc.started_at_ms, 1_795_757_968_000);
        let run = net(&doc);
        assert_eq!((run.spec.host.as_str(), run.spec.port), ("127.0.0.1", 5999));
        assert_eq!((run.spec.parallel, run.spec.block_len), (2, Bytes(131072)));
        assert_eq!(run.spec.protocol, NetProtocol::Tcp);
        assert_eq!(run.streams.len(), 2);
        let s5 = &run.streams[0];
        assert_eq!((s5.id, s5.direction), (5, NetDirection::Upload));
        assert_eq!(s5.sent, Bytes(589 << 20));
        assert_eq!(s5.received, Bytes(584 << 20));
        assert_eq!(s5.retransmits, Some(7));
        assert_eq!(s5.receiver_time, Nanos(2_110_000_000));
        // Two streams: the [SUM] lines are the intervals.
        assert_eq!(run.intervals.len(), 2);
        assert_eq!(
            run.intervals[1].bytes,
            Bytes((71.2f64 * 1048576.0).round() as u64)
        );
        assert_eq!(run.intervals[0].retransmits, Some(2));
        assert!((run.cpu_local.unwrap().total_percent - 9.6).abs() < 1e-9);
        assert!((run.cpu_remote.unwrap().system_percent - 8.4).abs() < 1e-9);
    }

    #[test]
    fn a_udp_log_keeps_loss_and_jitter() {
        let doc = convert(UDP).unwrap();
        let run = net(&doc);
        assert_eq!(run.spec.protocol, NetProtocol::Udp);
        let s = &run.streams[0];
        assert_eq!((s.packets, s.lost_packets), (Some(39), Some(2)));
        assert_eq!(s.jitter, Some(Nanos(23_000)));
        assert_eq!(doc.tool_version, "3.x");
    }

    #[test]
    fn reverse_mode_is_a_download_and_servers_and_bidir_are_refused() {
        let reversed = UDP.replace(
            "Connecting to host 127.0.0.1, port 5999\n",
            "Connecting to host 127.0.0.1, port 5999\nReverse mode, remote host 127.0.0.1 is sending\n",
        );
        let doc = convert(&reversed).unwrap();
        assert_eq!(net(&doc).streams[0].direction, NetDirection::Download);
        let server = format!("Server listening on 5201\n{UDP}");
        let err = convert(&server).unwrap_err().to_string();
        assert!(err.contains("import the client's"), "{err}");
        let bidir = UDP.replace("[  5]   0.00-1.00", "[  5][TX-C]   0.00-1.00");
        assert!(convert(&bidir).unwrap_err().to_string().contains("--bidir"));
        // A log cut before its summary has nothing to import.
        let cut = &P2_V[..P2_V.find("Test Complete").unwrap()];
        assert!(convert(cut).is_err());
    }

    /// A client log of each layout: the intervals' header and the
    /// summary's differ by platform and mode, and none of them may decide
    /// where the intervals end (issue 46: a header without `Retr  Cwnd`
    /// kept 0 intervals). Linux's are real (iperf 3.12 on this project's
    /// VM; forward `-u` intervals count datagrams without jitter or loss); macOS's (3.x from Homebrew: no TCP_INFO retransmits, so no
    /// `Retr` or `Cwnd` anywhere) and Windows' (the 3.1.3 build most
    /// people have: `Bandwidth`, stream 4) are written as those builds
    /// print them.
    const LAYOUTS: [(&str, &str, usize); 7] = [
        (
            "linux -u",
            "Connecting to host 127.0.0.1, port 5987
[  5] local 127.0.0.1 port 47571 connected to 127.0.0.1 port 5987
[ ID] Interval           Transfer     Bitrate         Total Datagrams
[  5]   0.00-1.00   sec  11.9 MBytes   100 Mbits/sec  382  
[  5]   1.00-2.00   sec  11.9 MBytes  99.9 Mbits/sec  381  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams
[  5]   0.00-2.00   sec  23.8 MBytes   100 Mbits/sec  0.000 ms  0/763 (0%)  sender
[  5]   0.00-2.00   sec  23.8 MBytes  99.9 Mbits/sec  0.025 ms  0/763 (0%)  receiver

iperf Done.
",
            2,
        ),
        (
            "linux -R",
            "Connecting to host 127.0.0.1, port 5987
Reverse mode, remote host 127.0.0.1 is sending
[  5] local 127.0.0.1 port 43238 connected to 127.0.0.1 port 5987
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  12.0 MBytes   101 Mbits/sec                  
[  5]   1.00-2.00   sec  11.9 MBytes  99.6 Mbits/sec                  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Retr
[  5]   0.00-2.00   sec  23.9 MBytes   100 Mbits/sec    0             sender
[  5]   0.00-2.00   sec  23.9 MBytes   100 Mbits/sec                  receiver

iperf Done.
",
            2,
        ),
        (
            "linux -R -P 2",
            "Connecting to host 127.0.0.1, port 5987
Reverse mode, remote host 127.0.0.1 is sending
[  5] local 127.0.0.1 port 43252 connected to 127.0.0.1 port 5987
[  7] local 127.0.0.1 port 43268 connected to 127.0.0.1 port 5987
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  12.0 MBytes   101 Mbits/sec                  
[  7]   0.00-1.00   sec  12.0 MBytes   101 Mbits/sec                  
[SUM]   0.00-1.00   sec  24.0 MBytes   201 Mbits/sec                  
- - - - - - - - - - - - - - - - - - - - - - - - -
[  5]   1.00-2.00   sec  11.9 MBytes  99.6 Mbits/sec                  
[  7]   1.00-2.00   sec  11.9 MBytes  99.6 Mbits/sec                  
[SUM]   1.00-2.00   sec  23.8 MBytes   199 Mbits/sec                  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Retr
[  5]   0.00-2.00   sec  23.9 MBytes   100 Mbits/sec    0             sender
[  5]   0.00-2.00   sec  23.9 MBytes   100 Mbits/sec                  receiver
[  7]   0.00-2.00   sec  23.9 MBytes   100 Mbits/sec    0             sender
[  7]   0.00-2.00   sec  23.9 MBytes   100 Mbits/sec                  receiver
[SUM]   0.00-2.00   sec  47.8 MBytes   200 Mbits/sec    0             sender
[SUM]   0.00-2.00   sec  47.8 MBytes   200 Mbits/sec                  receiver

iperf Done.
",
            2,
        ),
        (
            "linux -u -R",
            "Connecting to host 127.0.0.1, port 5987
Reverse mode, remote host 127.0.0.1 is sending
[  5] local 127.0.0.1 port 59561 connected to 127.0.0.1 port 5987
[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams
[  5]   0.00-1.00   sec  11.9 MBytes   100 Mbits/sec  0.021 ms  0/382 (0%)  
[  5]   1.00-2.00   sec  11.9 MBytes  99.9 Mbits/sec  0.018 ms  0/381 (0%)  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams
[  5]   0.00-2.00   sec  23.8 MBytes   100 Mbits/sec  0.000 ms  0/763 (0%)  sender
[  5]   0.00-2.00   sec  23.8 MBytes   100 Mbits/sec  0.018 ms  0/763 (0%)  receiver

iperf Done.
",
            2,
        ),
        (
            "macOS",
            "Connecting to host 192.168.1.10, port 5201
[  5] local 192.168.1.20 port 50123 connected to 192.168.1.10 port 5201
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec   112 MBytes   940 Mbits/sec
[  5]   1.00-2.00   sec   112 MBytes   941 Mbits/sec
[  5]   2.00-3.00   sec   112 MBytes   941 Mbits/sec
[  5]   3.00-4.00   sec   112 MBytes   940 Mbits/sec
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-4.00   sec   448 MBytes   940 Mbits/sec                  sender
[  5]   0.00-4.01   sec   447 MBytes   936 Mbits/sec                  receiver

iperf Done.
",
            4,
        ),
        (
            "macOS -P 2",
            "Connecting to host 192.168.1.10, port 5201
[  5] local 192.168.1.20 port 50124 connected to 192.168.1.10 port 5201
[  7] local 192.168.1.20 port 50125 connected to 192.168.1.10 port 5201
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  56.0 MBytes   470 Mbits/sec
[  7]   0.00-1.00   sec  56.1 MBytes   471 Mbits/sec
[SUM]   0.00-1.00   sec   112 MBytes   941 Mbits/sec
- - - - - - - - - - - - - - - - - - - - - - - - -
[  5]   1.00-2.00   sec  56.0 MBytes   470 Mbits/sec
[  7]   1.00-2.00   sec  56.0 MBytes   470 Mbits/sec
[SUM]   1.00-2.00   sec   112 MBytes   940 Mbits/sec
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-2.00   sec   112 MBytes   470 Mbits/sec                  sender
[  5]   0.00-2.01   sec   112 MBytes   468 Mbits/sec                  receiver
[  7]   0.00-2.00   sec   112 MBytes   470 Mbits/sec                  sender
[  7]   0.00-2.01   sec   112 MBytes   468 Mbits/sec                  receiver
[SUM]   0.00-2.00   sec   224 MBytes   940 Mbits/sec                  sender
[SUM]   0.00-2.01   sec   224 MBytes   936 Mbits/sec                  receiver

iperf Done.
",
            2,
        ),
        (
            "Windows 3.1.3",
            "Connecting to host 10.0.0.1, port 5201
[  4] local 10.0.0.2 port 50000 connected to 10.0.0.1 port 5201
[ ID] Interval           Transfer     Bandwidth
[  4]   0.00-1.00   sec   108 MBytes   902 Mbits/sec
[  4]   1.00-2.00   sec   108 MBytes   903 Mbits/sec
[  4]   2.00-3.00   sec   107 MBytes   901 Mbits/sec
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bandwidth
[  4]   0.00-3.00   sec   323 MBytes   902 Mbits/sec                  sender
[  4]   0.00-3.00   sec   323 MBytes   902 Mbits/sec                  receiver

iperf Done.
",
            3,
        ),
    ];

    #[test]
    fn every_layout_keeps_its_intervals_and_no_cpu_line_is_unknown_cpu() {
        for (layout, log, intervals) in LAYOUTS {
            let doc = convert(log).unwrap_or_else(|e| panic!("{layout}: {e}"));
            let run = net(&doc);
            assert_eq!(run.intervals.len(), intervals, "{layout}: intervals kept");
            assert!(
                run.intervals.iter().all(|i| i.bytes.get() > 0),
                "{layout}: {:?}",
                run.intervals
            );
            assert!(!run.streams.is_empty(), "{layout}: streams");
            // No `CPU Utilization` line (no -V): unknown, not 0%.
            assert_eq!(
                (run.cpu_local, run.cpu_remote),
                (None, None),
                "{layout}: CPU"
            );
        }
        // The reverse logs are downloads whose intervals carry no
        // retransmits (the receiver has none to count).
        let run = net(&convert(LAYOUTS[1].1).unwrap()).clone();
        assert_eq!(run.streams[0].direction, NetDirection::Download);
        assert!(run.intervals.iter().all(|i| i.retransmits.is_none()));
        assert_eq!(run.streams[0].retransmits, Some(0));
        // macOS: no Retr anywhere, so none is made up.
        let mac = net(&convert(LAYOUTS[4].1).unwrap()).clone();
        assert_eq!(mac.streams[0].retransmits, None);
        assert_eq!(mac.streams[0].sent, Bytes(448 << 20));
        // A forward UDP test is an upload, its intervals counting
        // datagrams only (no jitter or loss until the summary).
        let udp = net(&convert(LAYOUTS[0].1).unwrap()).clone();
        assert_eq!(udp.streams[0].direction, NetDirection::Upload);
        assert_eq!(udp.intervals.len(), 2);
    }
}
