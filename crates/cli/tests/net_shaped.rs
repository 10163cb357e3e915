//! Accuracy on the shaped-link rig (TEST-RIGS.md): two network namespaces
//! joined by a veth pair, tbf-shaped to 984 Mbit/s in both directions (the
//! goodput of a real 1GbE link, about 941 Mbit/s; the 2461mbit 2.5GbE rig
//! needs a quiet host to hold 1%, because at that rate a few milliseconds
//! of scheduling delay from other load drain the socket buffer). iomark's
//! client and server must measure a goodput within 1% of what iperf3
//! measures on the same rig in the same test on a quiet host
//! (bench/rig-accuracy), within 10% on a busy one. Needs root and `ip
//! netns`; skips with a reason otherwise.

use std::process::Command;
use std::time::Duration;

use crate::common::*;
use crate::net_common::*;
use iomark_testrig::require;

/// One test in the rig: server in the server namespace, client in the
/// client namespace; returns the client's goodput in bit/s.
fn goodput(rig: &Rig, iomark: bool, secs: &str) -> f64 {
    let port = free_port().to_string();
    let (srv_cmd, cli_cmd): (Vec<&str>, Vec<&str>) = if iomark {
        (
            vec![IOMARK, "net", "server", "-1", "-p", &port],
            vec![
                IOMARK,
                "net",
                "client",
                "10.201.0.2",
                "-p",
                &port,
                "-t",
                secs,
                "-J",
            ],
        )
    } else {
        (
            vec!["iperf3", "-s", "-1", "-p", &port],
            vec!["iperf3", "-c", "10.201.0.2", "-p", &port, "-t", secs, "-J"],
        )
    };
    let server = Proc::spawn(
        Command::new("ip")
            .args(["netns", "exec", &rig.server_ns, "nice", "-n", "-10"])
            .args(&srv_cmd),
    );
    rig.wait_server_listening(&port);
    let out = Proc::spawn(
        Command::new("ip")
            .args(["netns", "exec", &rig.client_ns, "nice", "-n", "-10"])
            .args(&cli_cmd),
    )
    .finish(Duration::from_secs(60));
    assert_ok(
        &out,
        if iomark {
            "iomark in the rig"
        } else {
            "iperf3 in the rig"
        },
    );
    let _ = server.finish(Duration::from_secs(20));
    json(&out)["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .expect("sum_received.bits_per_second")
}

#[test]
fn goodput_matches_iperf3_on_a_shaped_1gbe_link() {
    require!(can_build_rig());
    require!(have("iperf3"));
    let rig = require!(Rig::up(Some("984mbit"))
        .map_err(|e| format!("cannot build the network-namespace rig: {e}")));
    // Alternate the tools so drift in the host affects both alike, both at
    // raised priority. Compare the best run of each of three: the rig's
    // goodput is a ceiling, and on a busy host (other builds and tests)
    // the best run is the one least disturbed; every run is printed. On a
    // host so busy that neither tool reaches the shaper (seen in CI: best
    // runs of 0.87 and 0.90 Gbit/s) the runs measure the host, not the
    // link, so the test holds the ratio to 10% by default; the 1% claim is
    // bench/rig-accuracy's, on a quiet machine (IOMARK_NET_RIG_TOLERANCE).
    let tolerance = std::env::var("IOMARK_NET_RIG_TOLERANCE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(0.10);
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    for _ in 0..3 {
        theirs.push(goodput(&rig, false, "3"));
        ours.push(goodput(&rig, true, "3"));
    }
    let ratio = best(&ours) / best(&theirs);
    let (o, t) = (best(&ours), best(&theirs));
    let gbit = |v: &[f64]| {
        v.iter()
            .map(|v| (v / 1e6).round() / 1e3)
            .collect::<Vec<_>>()
    };
    eprintln!(
        "rig-accuracy: shaped 984mbit: iomark best {:.4} Gbit/s of {:?}, iperf3 best {:.4} Gbit/s of {:?}, ratio {ratio:.4}",
        o / 1e9,
        gbit(&ours),
        t / 1e9,
        gbit(&theirs),
    );
    assert_near("iomark/iperf3 goodput ratio", ratio, 1.0, tolerance);
    // And never above a real 1GbE link's goodput (about 941 Mbit/s): that
    // would be a counting error, whatever the load. On a quiet host it is
    // there, within 4%.
    assert!(o < 0.96e9, "iomark goodput {o} is above the shaper");
    if tolerance <= 0.01 {
        assert!(o >= 0.9e9, "iomark goodput {o} on a quiet host");
    }
}
