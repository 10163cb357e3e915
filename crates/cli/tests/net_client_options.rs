//! iperf3 3.21's client options, both ways against Debian's iperf3 3.12 and
//! iperf 3.21: iomark's client against their servers, their clients
//! against iomark's server. Each case is a short `-n`/`-k` transfer on
//! loopback whose byte counts are exact, so the checks are equalities.

use std::process::Output;
use std::time::Duration;

use crate::common::*;
use crate::net_common::*;
use iomark_testrig::require;
use serde_json::Value;

/// 10 MiB: a whole number of 128 KiB blocks, so `-n` sends exactly this.
const TEN_MIB: u64 = 10 << 20;

/// iperf3's default block for TCP, `-l`'s 128 KiB.
const BLOCK: u64 = 128 << 10;

/// One client command line and what it must move.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
    /// Bytes the sending side's `end.sum_sent` holds.
    sent: u64,
    /// The server sends (`-R`).
    reverse: bool,
    /// The most an iperf3 sender may send past `sent`: one block per
    /// stream. It checks the count before a block, not within it: iperf
    /// 3.16+'s stream threads send in bursts of ten writes that check it
    /// before each but the last (`iperf_send_mt`; seen: 42 of 40 blocks
    /// with `-P 2`), and a short send (a full socket buffer on a loaded
    /// host; `-Z`'s sendfile) leaves the count off a block boundary, so
    /// the last whole block passes it by less than a block (seen: iperf3
    /// 3.12 `-Z -M 1000` sent 10,563,064 of 10,485,760 bytes in a loaded
    /// run). iomark's streams share one budget and never do: its own
    /// sends are checked for equality.
    peer_overshoot: u64,
}

const CASES: &[Case] = &[
    Case {
        name: "-n",
        args: &["-n", "10M"],
        sent: TEN_MIB,
        reverse: false,
        peer_overshoot: BLOCK,
    },
    Case {
        name: "-k with 2 streams",
        args: &["-k", "40", "-l", "64K", "-P", "2"],
        sent: 40 * 65536,
        reverse: false,
        peer_overshoot: 2 * 65536,
    },
    Case {
        name: "-R -n, -Z",
        args: &["-R", "-n", "10M", "-Z"],
        sent: TEN_MIB,
        reverse: true,
        peer_overshoot: BLOCK,
    },
    Case {
        name: "socket options",
        args: &[
            "-n",
            "10M",
            "-Z",
            "-C",
            "reno",
            "-M",
            "1000",
            "-S",
            "0x10",
            "-4",
            "-B",
            "127.0.0.1",
            "--fq-rate",
            "10G",
            "-A",
            "0,0",
        ],
        sent: TEN_MIB,
        reverse: false,
        peer_overshoot: BLOCK,
    },
];

/// The iperf3 peers: Debian's 3.12 and the 3.21 build (when there is one,
/// see [`iperf3_21`]).
fn peers() -> Result<Vec<(&'static str, String)>, String> {
    have("iperf3")?;
    let mut peers = vec![("iperf3 3.12", "iperf3".to_string())];
    peers.extend(iperf3_21().map(|bin| ("iperf 3.21", bin)));
    Ok(peers)
}

fn doc(out: &Output, who: &str) -> Value {
    assert_ok(out, who);
    json(out)
}

/// What both ends' documents must say of `case`: the sender's own bytes
/// exact; the receiver's own count at most that (it stops counting at
/// TEST_END, as iperf3's, so bytes still in flight or unread when the
/// sender is done are not in it, on a loaded host even all of them), and
/// all of them when the client receives (it ends the test only once they
/// are all in); and the options asked for in place. A server's document has zeros
/// for its peer's side (iperf3 prints it before the exchange), so each side
/// is read from its own document.
fn check(case: &Case, client: &Value, server: &Value, iomark_is_client: bool, who: &str) {
    let name = case.name;
    let (sender, receiver) = if case.reverse {
        (server, client)
    } else {
        (client, server)
    };
    let sent = end_bytes(sender, "sum_sent");
    if iomark_is_client != case.reverse {
        assert_eq!(sent, case.sent, "{who}, {name}: iomark sent");
    } else {
        let most = case.sent + case.peer_overshoot;
        assert!(
            (case.sent..=most).contains(&sent),
            "{who}, {name}: sent {sent}, not in {}..={most}",
            case.sent
        );
    }
    let got = end_bytes(receiver, "sum_received");
    assert!(got <= sent, "{who}, {name}: received {got}");
    if case.reverse {
        assert!(got >= case.sent, "{who}, {name}: the client waits for all");
    }
    let start = &client["start"]["test_start"];
    assert_eq!(start["duration"], 0, "{who}, {name}: -n/-k has no time");
    if case.args.contains(&"-C") {
        assert_eq!(
            sender["end"]["sender_tcp_congestion"], "reno",
            "{who}, {name}"
        );
        assert_eq!(
            server["end"]["receiver_tcp_congestion"], "reno",
            "{who}, {name}: the server set -C too"
        );
        assert_eq!(start["tos"], 16, "{who}, {name}");
        assert_eq!(client["start"]["tcp_mss"], 1000, "{who}, {name}");
        assert_eq!(
            client["start"]["connected"][0]["local_host"], "127.0.0.1",
            "{who}, {name}"
        );
    }
}

#[test]
fn iomark_client_takes_iperf3_options_against_iperf3_servers() {
    let peers = require!(peers());
    for (peer, bin) in &peers {
        for case in CASES {
            let port = free_port();
            let server = peer_server(bin, port, &["-J"]);
            let mut args = vec!["-J", "--no-store"];
            args.extend_from_slice(case.args);
            let client = doc(
                &iomark_client(port, &args),
                &format!("iomark against {peer}"),
            );
            let server = doc(&server.finish(Duration::from_secs(20)), peer);
            check(
                case,
                &client,
                &server,
                true,
                &format!("iomark client, {peer} server"),
            );
        }
    }
}

#[test]
fn iperf3_clients_with_these_options_run_against_iomark() {
    let peers = require!(peers());
    for (peer, bin) in &peers {
        for case in CASES {
            let port = free_port();
            let server = iomark_server(port, &["-1", "-J"]);
            let mut args = vec!["-J"];
            args.extend_from_slice(case.args);
            let client = doc(&peer_client(bin, port, &args), peer);
            let server = doc(&server.finish(Duration::from_secs(20)), "iomark server");
            check(
                case,
                &client,
                &server,
                false,
                &format!("{peer} client, iomark server"),
            );
        }
    }
}

/// `--cport`: the data streams' local ports, one up per stream, as iperf3's.
#[test]
fn cport_numbers_the_data_streams_from_the_port_given() {
    let port = free_port();
    let cport = iomark_testrig::free_ports_in_a_row(2);
    let _server = iomark_server(port, &["-1", "-B", "127.0.0.1"]);
    let c = cport.to_string();
    let client = json(&iomark_client(
        port,
        &["-n", "1M", "-P", "2", "--cport", &c, "-J", "--no-store"],
    ));
    let ports: Vec<u64> = client["start"]["connected"]
        .as_array()
        .expect("connected")
        .iter()
        .map(|s| s["local_port"].as_u64().unwrap())
        .collect();
    assert_eq!(ports, [cport as u64, cport as u64 + 1], "{client}");
}

/// `-T`, `--timestamps`, `-f`, `--logfile` and `--forceflush` dress each
/// line as iperf 3.21 does: the time, then `TITLE:  `, the rate in the
/// unit asked for, all in the log file and nothing on standard output.
#[test]
fn output_options_dress_each_line_as_iperf3_does() {
    let Some(ip321) = iperf3_21() else { return };
    let dir = tempfile::tempdir().unwrap();
    let flags = |log: &str| {
        [
            "-n",
            "10M",
            "-T",
            "lab",
            "-f",
            "M",
            "--timestamps=%Y-%m-%d ",
            "--forceflush",
            "--logfile",
            log,
        ]
        .map(str::to_string)
    };
    let theirs = dir.path().join("iperf3.log");
    let ours = dir.path().join("iomark.log");
    let port = free_port();
    let server = peer_server(&ip321, port, &[]);
    let out = peer_client(
        &ip321,
        port,
        &flags(theirs.to_str().unwrap())
            .each_ref()
            .map(String::as_str),
    );
    assert_ok(&out, "iperf 3.21 client");
    drop(server.finish(Duration::from_secs(20)));
    let port = free_port();
    let _server = iomark_server(port, &["-1"]);
    let mut args: Vec<&str> = vec!["--no-store"];
    let f = flags(ours.to_str().unwrap());
    args.extend(f.iter().map(String::as_str));
    let out = iomark_client(port, &args);
    assert_ok(&out, "iomark client");
    assert_eq!(stdout(&out), "", "everything went to the log file");

    let today = jiff::Zoned::now().strftime("%Y-%m-%d ").to_string();
    for (who, path) in [("iperf 3.21", &theirs), ("iomark", &ours)] {
        let text = std::fs::read_to_string(path).unwrap();
        for line in text.lines() {
            let rest = line
                .strip_prefix(&today)
                .unwrap_or_else(|| panic!("{who}: {text}"));
            assert!(rest.starts_with("lab:  "), "{who}: {line}");
        }
        let sender = text
            .lines()
            .find(|l| l.ends_with("sender"))
            .unwrap_or_else(|| panic!("{who}: {text}"));
        assert!(sender.contains(" MBytes/sec"), "{who}: {sender}");
        assert!(text.contains("lab:  iperf Done."), "{who}: {text}");
    }
}

/// What cannot be done fails before anything connects, naming the flag and
/// the fix, with exit code 2.
#[test]
fn impossible_options_are_refused_by_name() {
    let port = free_port().to_string();
    for (args, needle) in [
        (&["-t", "1", "-n", "1M"][..], "give only one of them"),
        (&["-n", "0"], "-n and -k take at least 1"),
        (
            &["-C", "nosuchcc"],
            "-C nosuchcc: this host's kernel refuses it",
        ),
        (&["-M", "0"], "-M 0 is out of range"),
        (&["-S", "300"], "-S 300: give a TOS byte"),
        (&["--dscp", "zz"], "--dscp zz: give 0 to 63"),
        (&["-S", "16", "--dscp", "ef"], "-S and --dscp"),
        (&["-4", "-6"], "-4 and -6 exclude each other"),
        (&["-Z", "-u"], "UDP has no zerocopy path"),
        (&["-B", "192.0.2.1"], "cannot bind to 192.0.2.1:0"),
        (&["-B", "127.0.0.1%"], "name a device after %"),
        (&["-f", "x"], "-f x: give one of"),
        (&["-A", "a,b"], "-A a,b: give a CPU number"),
        (
            &["--timestamps=%!"],
            "--timestamps=%! is not a strftime format",
        ),
    ] {
        let mut full = vec!["net", "-c", "127.0.0.1", "-p", &port, "--no-store"];
        full.extend_from_slice(args);
        let out = iomark(&full);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        fails_with(&out, needle);
    }
}

/// `--get-server-output`: the server's own lines of the test (text), or its
/// `-J` document, come back in its results and are printed, both ways.
#[test]
fn get_server_output_brings_the_servers_report_both_ways() {
    let peers = require!(peers());
    for (peer, bin) in &peers {
        // iomark's client, their server printing text.
        let port = free_port();
        let server = peer_server(bin, port, &[]);
        let out = iomark_client(port, &["-n", "10M", "--get-server-output", "--no-store"]);
        let text = ok(&out);
        let theirs = text
            .split("Server output:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{peer}: {text}"));
        assert!(theirs.contains("receiver"), "{peer}: {text}");
        drop(server.finish(Duration::from_secs(20)));
        // Their client, iomark's server printing text, then -J.
        for json_server in [false, true] {
            let port = free_port();
            let extra: &[&str] = if json_server { &["-1", "-J"] } else { &["-1"] };
            let server = iomark_server(port, extra);
            let out = peer_client(bin, port, &["-n", "10M", "--get-server-output", "-J"]);
            let doc = json(&out);
            if json_server {
                let own = &doc["server_output_json"];
                let got = end_bytes(own, "sum_received");
                assert!(got <= TEN_MIB, "{peer}: {doc}");
                assert_eq!(
                    own["start"]["test_start"]["bytes"], TEN_MIB,
                    "{peer}: {doc}"
                );
            } else {
                let t = doc["server_output_text"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{peer}: {doc}"));
                assert!(t.starts_with("Accepted connection from "), "{peer}: {t}");
                assert!(t.contains(" receiver"), "{peer}: {t}");
            }
            assert_ok(&server.finish(Duration::from_secs(20)), "iomark server");
        }
    }
}
