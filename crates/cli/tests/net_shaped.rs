//! Accuracy on the shaped-link rig (TEST-RIGS.md): two network namespaces
//! joined by a veth pair, tbf-shaped to 984 Mbit/s in both directions (the
//! goodput of a real 1GbE link, about 941 Mbit/s; the 2461mbit 2.5GbE rig
//! needs a quiet host to hold 1%, because at that rate a few milliseconds
//! of scheduling delay from other load drain the socket buffer). iomark's
//! client and server must measure a goodput within 1% of what iperf3
//! measures on the same rig in the same test on a quiet host
//! (bench/rig-accuracy), within 10% on a busy one: for a timed test, for
//! `-n` and `-k` transfers, and for two iperf3 clients at once against
//! iomark's server (`--max-clients 2`) and against two iperf3 servers.
//! Needs root and `ip netns`; skips with a reason otherwise.

use std::process::Command;
use std::time::Duration;

use crate::common::*;
use crate::net_common::*;
use iomark_testrig::require;

/// One test in the rig: server in the server namespace, client in the
/// client namespace, the client given `args` (`-t 3`, `-n 100M`, ...);
/// returns the client's goodput in bit/s.
fn goodput(rig: &Rig, iomark: bool, args: &[&str]) -> f64 {
    let port = free_port().to_string();
    let (srv_cmd, mut cli_cmd): (Vec<&str>, Vec<&str>) = if iomark {
        (
            vec![IOMARK, "net", "server", "-1", "--no-store", "-p", &port],
            vec![
                IOMARK,
                "net",
                "client",
                "10.201.0.2",
                "-p",
                &port,
                "-J",
                "--no-store",
            ],
        )
    } else {
        (
            vec!["iperf3", "-s", "-1", "-p", &port],
            vec!["iperf3", "-c", "10.201.0.2", "-p", &port, "-J"],
        )
    };
    cli_cmd.extend_from_slice(args);
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

/// `CLIENTS` stock iperf3 clients at once in the client namespace, for
/// `secs`, against one iomark server with `--max-clients` (`iomark`) or
/// against as many iperf3 servers on as many ports; returns the sum of
/// their goodputs in bit/s.
fn many_goodput(rig: &Rig, iomark: bool, clients: usize, secs: &str) -> f64 {
    let in_ns = |ns: &str, cmd: &[&str]| {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns, "nice", "-n", "-10"]).args(cmd);
        c
    };
    let mut servers = Vec::new();
    let ports: Vec<String> = if iomark {
        let port = free_port().to_string();
        let n = clients.to_string();
        servers.push(Proc::spawn(&mut in_ns(
            &rig.server_ns,
            &[
                IOMARK,
                "net",
                "server",
                "--no-store",
                "-p",
                &port,
                "--max-clients",
                &n,
            ],
        )));
        rig.wait_server_listening(&port);
        vec![port; clients]
    } else {
        (0..clients)
            .map(|_| {
                let port = free_port().to_string();
                servers.push(Proc::spawn(&mut in_ns(
                    &rig.server_ns,
                    &["iperf3", "-s", "-1", "-p", &port],
                )));
                rig.wait_server_listening(&port);
                port
            })
            .collect()
    };
    let runs: Vec<Proc> = ports
        .iter()
        .map(|port| {
            Proc::spawn(&mut in_ns(
                &rig.client_ns,
                &["iperf3", "-c", "10.201.0.2", "-p", port, "-t", secs, "-J"],
            ))
        })
        .collect();
    let total = runs
        .into_iter()
        .map(|r| {
            let out = r.finish(Duration::from_secs(60));
            assert_ok(&out, "an iperf3 client of several in the rig");
            json(&out)["end"]["sum_received"]["bits_per_second"]
                .as_f64()
                .expect("sum_received.bits_per_second")
        })
        .sum();
    drop(servers);
    total
}

/// How close iomark must come to iperf3: 10% on a busy host by default,
/// the 1% claim with IOMARK_NET_RIG_TOLERANCE=0.01 on a quiet one
/// (bench/rig-accuracy).
fn tolerance() -> f64 {
    std::env::var("IOMARK_NET_RIG_TOLERANCE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(0.10)
}

/// Three alternations of `theirs` and `ours`, the median of the pairs'
/// ratios checked and printed; returns iomark's best run, which the
/// caller holds under the shaper.
fn compare(case: &str, mut theirs: impl FnMut() -> f64, mut ours: impl FnMut() -> f64) -> f64 {
    let (mut o, mut t) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        t.push(theirs());
        o.push(ours());
    }
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let gbit = |v: &[f64]| {
        v.iter()
            .map(|v| (v / 1e6).round() / 1e3)
            .collect::<Vec<_>>()
    };
    // Each iomark run against the iperf3 run just before it, and the
    // median of those: a disturbance of the host that lasts a few seconds
    // falls on both halves of a pair alike, and one disturbed pair of three
    // cannot move the median (stop 46 saw iperf3's three runs at 0.70-0.75
    // Gbit/s while iomark's last reached 0.85: best against best said
    // +13%, the pairs 0.83, 0.98 and 1.21).
    let mut pairs: Vec<f64> = o.iter().zip(&t).map(|(o, t)| o / t).collect();
    pairs.sort_by(f64::total_cmp);
    let ratio = pairs[pairs.len() / 2];
    eprintln!(
        "rig-accuracy: shaped 984mbit, {case}: iomark {:?} Gbit/s, iperf3 {:?} Gbit/s, paired ratios {:?}, median {ratio:.4}",
        gbit(&o),
        gbit(&t),
        pairs.iter().map(|r| (r * 1e4).round() / 1e4).collect::<Vec<_>>(),
    );
    assert_near(
        &format!("iomark/iperf3 goodput ratio, {case}"),
        ratio,
        1.0,
        tolerance(),
    );
    best(&o)
}

#[test]
fn goodput_matches_iperf3_on_a_shaped_1gbe_link() {
    require!(can_build_rig());
    require!(have("iperf3"));
    let rig = require!(Rig::up(Some("984mbit"))
        .map_err(|e| format!("cannot build the network-namespace rig: {e}")));
    // Alternate the tools so drift in the host affects both alike, both at
    // raised priority, and compare each pair's ratio (`compare`); every run
    // is printed. On a
    // host so busy that neither tool reaches the shaper (seen in CI: best
    // runs of 0.87 and 0.90 Gbit/s) the runs measure the host, not the
    // link, so the test holds the ratio to 10% by default; the 1% claim is
    // bench/rig-accuracy's, on a quiet machine (IOMARK_NET_RIG_TOLERANCE).
    // -n and -k are transfers of a set size (100 MiB, a second at 1GbE),
    // whose goodput counts the end of the transfer as well.
    for (case, args) in [
        ("-t 3", &["-t", "3"][..]),
        ("-n 100M", &["-n", "100M"]),
        ("-k 800", &["-k", "800", "-l", "128K"]),
    ] {
        let o = compare(
            case,
            || goodput(&rig, false, args),
            || goodput(&rig, true, args),
        );
        // Never above a real 1GbE link's goodput (about 941 Mbit/s): that
        // would be a counting error, whatever the load. On a quiet host it
        // is there, within 4%.
        assert!(o < 0.96e9, "{case}: iomark goodput {o} is above the shaper");
        if tolerance() <= 0.01 {
            assert!(o >= 0.9e9, "{case}: iomark goodput {o} on a quiet host");
        }
    }
    // Several clients share the link: two iperf3 clients against iomark's
    // one server (--max-clients 2) move what they move against two iperf3
    // servers, together at most the link's goodput. (In this test, not one
    // of its own, so that two rigs never load the host at once.)
    let o = compare(
        "2 iperf3 clients at once",
        || many_goodput(&rig, false, 2, "3"),
        || many_goodput(&rig, true, 2, "3"),
    );
    assert!(o < 0.96e9, "2 clients: {o} together, above the shaper");
}
