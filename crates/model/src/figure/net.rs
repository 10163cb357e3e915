//! Network figures and test names.

use super::*;
use crate::net::CpuUtilization;

/// The name of a network test: `tcp P4`, `udp P1 reverse`, `tcp P2 bidir`.
pub fn net_test_name(run: &NetRun) -> String {
    if !run.clients.is_empty() {
        return served_test_name(run);
    }
    net_spec_name(&run.spec)
}

/// The name of the test `s` asks for, as [`net_test_name`] names a client's
/// run (and a live view names a test before it has figures).
pub fn net_spec_name(s: &NetSpec) -> String {
    let proto = match s.protocol {
        NetProtocol::Tcp => "tcp",
        NetProtocol::Udp => "udp",
    };
    let mode = if s.bidirectional {
        " bidir"
    } else if s.reverse {
        " reverse"
    } else {
        ""
    };
    format!("{proto} P{}{mode}", s.parallel)
}

/// A server's run is named by what it served: `served 3 x tcp P1`, or
/// `served tcp P1 + tcp P4 reverse` when the clients' tests differ (in the
/// order they started). Client addresses and ports stay out: the same
/// tests served another day are the same test.
fn served_test_name(run: &NetRun) -> String {
    let names: Vec<String> = run.clients.iter().map(|c| net_test_name(&c.run)).collect();
    if names.len() > 1 && names.iter().all(|n| *n == names[0]) {
        format!("served {} x {}", names.len(), names[0])
    } else {
        format!("served {}", names.join(" + "))
    }
}

/// Figures of a network run, per direction: goodput in bits per second
/// (spread over the per-interval samples), TCP retransmits, UDP loss and
/// jitter; then the CPU of this host (`cpu process %`, `cpu host idle %`,
/// ...) and of the peer (`peer cpu process %`, ...; the machine's only when
/// the peer is iomark). A server's run has its total under its own test
/// name, then, when it served several at once, each client's figures under
/// `NAME, client K`.
pub fn net_figures(run: &NetRun) -> Vec<Figure> {
    let test = net_test_name(run);
    let mut out = test_figures(run, &test);
    // One client's figures are the run's own.
    for (k, c) in run
        .clients
        .iter()
        .enumerate()
        .filter(|_| run.clients.len() > 1)
    {
        out.extend(test_figures(&c.run, &format!("{test}, client {}", k + 1)));
    }
    out
}

fn test_figures(run: &NetRun, test: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    for (dir, name) in [
        (NetDirection::Upload, "upload"),
        (NetDirection::Download, "download"),
    ] {
        let Some(goodput) = run.goodput(dir) else {
            continue;
        };
        let rates: Vec<f64> = run
            .intervals
            .iter()
            .filter(|i| i.direction == dir && !i.omitted && i.end > i.start)
            .map(|i| {
                let secs = (i.end.get() - i.start.get()) as f64 / 1e9;
                i.bytes.get() as f64 * 8.0 / secs
            })
            .collect();
        let mut figs = TestFigures::new(&mut out, test, name);
        let spread = Spread::of(&rates);
        figs.push("goodput", FigureUnit::BitsPerSec, goodput.0 * 8.0, spread);
        let streams = || run.streams.iter().filter(|s| s.direction == dir);
        let retrans: Vec<u64> = streams().filter_map(|s| s.retransmits).collect();
        if !retrans.is_empty() {
            let total = retrans.iter().sum::<u64>() as f64;
            figs.push("retransmits", FigureUnit::Count, total, None);
        }
        let packets: u64 = streams().filter_map(|s| s.packets).sum();
        let lost: Vec<u64> = streams().filter_map(|s| s.lost_packets).collect();
        if packets > 0 && !lost.is_empty() {
            let lost: u64 = lost.iter().sum();
            let loss = lost as f64 * 100.0 / packets as f64;
            figs.push("loss", FigureUnit::Percent, loss, None);
        }
        let jitter: Vec<f64> = streams()
            .filter_map(|s| s.jitter.map(|j| j.get() as f64))
            .collect();
        if !jitter.is_empty() {
            let mean = jitter.iter().sum::<f64>() / jitter.len() as f64;
            figs.push("jitter", FigureUnit::Nanos, mean, None);
        }
    }
    if let Some(l) = &run.latency {
        let mut figs = TestFigures::new(&mut out, test, "");
        for (metric, v) in [
            ("rtt p50", l.rtt_p50),
            ("rtt p90", l.rtt_p90),
            ("rtt p99", l.rtt_p99),
            ("rtt idle", l.idle),
            ("rtt under load", l.loaded),
        ] {
            if let Some(v) = v {
                figs.push(metric, FigureUnit::Nanos, v.get() as f64, None);
            }
        }
    }
    let usage = |c: &CpuUtilization| CpuUsage {
        user_pct: c.user_percent,
        system_pct: c.system_percent,
    };
    cpu_figures(
        &mut TestFigures::new(&mut out, test, ""),
        run.cpu_local.as_ref().map(usage),
        run.host_cpu_local.as_ref(),
    );
    // A peer that sent no results (interrupted) left zeros in runs stored
    // before the field could say "unknown": not a figure either.
    let remote = run
        .cpu_remote
        .as_ref()
        .filter(|r| r.total_percent > 0.0 || run.host_cpu_remote.is_some())
        .map(usage);
    cpu_figures(
        &mut TestFigures::new(&mut out, test, "peer"),
        remote,
        run.host_cpu_remote.as_ref(),
    );
    out
}
