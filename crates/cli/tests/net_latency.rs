//! Latency under load: the client prints "RTT idle X ms, under load Y ms"
//! (TCP handshakes with the server's port before and during the load) and
//! the sending streams' RTT percentiles, and stores them as figures;
//! against a stock iperf3 server, which must not notice the probe.

use std::time::Duration;

use crate::common::*;
use crate::net_common::*;
use iomark_testrig::require;

#[test]
fn rtt_idle_and_under_load_are_printed_and_stored_against_iperf3() {
    require!(have("iperf3"));
    let db = ScratchDb::new();
    let port = free_port();
    let server = iperf3_server(port, &["-1"]);
    let out = iomark_client(port, &["-t", "2", "-P", "2", "--db", db.db()]);
    let text = ok(&out);
    // iomark's own line, kept to 80 columns: it goes on under a two-space
    // indent.
    let mut from = text.lines().skip_while(|l| !l.starts_with("RTT idle "));
    let first = from.next().unwrap_or_else(|| panic!("{text}"));
    let rest: Vec<&str> = from.take_while(|l| l.starts_with("  ")).collect();
    let line = flat(&format!("{first} {}", rest.join(" ")));
    let line = line.as_str();
    // The control connection's handshake and each data stream's.
    assert!(line.contains(": 3 before the load,"), "{line}");
    assert!(
        !line.contains("under load -"),
        "no probe under load: {line}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("Sending streams' RTT p50 ")),
        "{text}"
    );
    // The server ran the test to its end: the probe's connections were
    // denied, not taken for part of the test.
    let served = server.finish(Duration::from_secs(20));
    assert_ok(&served, "iperf3 server");
    assert!(!stderr(&served).contains("error"), "{}", stderr(&served));
    let csv = ok(&results(db.db(), &["export", "--format", "csv", "1"]));
    for metric in [
        "rtt idle",
        "rtt under load",
        "rtt p50",
        "rtt p90",
        "rtt p99",
    ] {
        assert!(csv.contains(metric), "{metric} not stored: {csv}");
    }
}
