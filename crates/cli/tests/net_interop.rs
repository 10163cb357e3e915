//! Wire compatibility with the real iperf3 on loopback, both ways: the byte
//! counts one side measured must be exactly what the other side reports
//! after the results exchange.

use std::process::{Command, Output};
use std::time::Duration;

use crate::common::*;
use crate::net_common::*;
use iomark_testrig::require;
use serde_json::Value;

const CASES: &[(&str, &[&str])] = &[
    ("tcp 1 stream", &[]),
    ("tcp 4 streams", &["-P", "4"]),
    ("tcp reverse", &["-R"]),
    ("tcp bidir", &["--bidir"]),
    ("udp 20M", &["-u", "-b", "20M"]),
    (
        "udp 10M reverse 2 streams",
        &["-u", "-b", "10M", "-R", "-P", "2"],
    ),
];

/// Which sum holds the bytes the *server* measured itself.
fn server_local_key(args: &[&str]) -> &'static str {
    if args.contains(&"-R") {
        "sum_sent"
    } else {
        "sum_received"
    }
}

/// The client's run `out` and then the server's one-off test succeeded:
/// their JSON documents, the client's first.
fn both_ok(name: &str, client: (&str, Output), server: (&str, Proc)) -> (Value, Value) {
    assert_ok(&client.1, &format!("{} client, {name}", client.0));
    let srv = server.1.finish(Duration::from_secs(20));
    assert_ok(&srv, &format!("{} server, {name}", server.0));
    (json(&client.1), json(&srv))
}

/// The server (`server_name`) moved data, and for TCP its own count reached
/// the client in the results exchange.
fn assert_server_count_reached_client(
    name: &str,
    args: &[&str],
    server: &Value,
    server_name: &str,
    client: &Value,
) {
    let key = server_local_key(args);
    let b = end_bytes(server, key);
    assert!(b > 0, "{name}: {server_name} moved no data");
    if !args.contains(&"-u") {
        assert_eq!(end_bytes(client, key), b, "{name}: {key} differs");
    }
}

#[test]
fn iomark_client_against_iperf3_server() {
    require!(have("iperf3"));
    for (name, args) in CASES {
        let port = free_port();
        let server = iperf3_server(port, &["-1", "-J"]);
        let mut a = vec!["-t", "1", "-J"];
        a.extend_from_slice(args);
        let out = iomark_client(port, &a);
        let (ours, theirs) = both_ok(name, ("iomark", out), ("iperf3", server));
        assert_server_count_reached_client(name, args, &theirs, "iperf3", &ours);
        if args.contains(&"-u") {
            assert!(end_bytes(&ours, "sum_received") > 0, "{name}: no UDP data");
            let lost = ours["end"]["sum_received"]["lost_percent"]
                .as_f64()
                .unwrap();
            assert!(lost < 5.0, "{name}: {lost}% lost at a low rate on loopback");
        }
        if args.contains(&"--bidir") {
            assert!(end_bytes(&ours, "sum_received_bidir_reverse") > 0, "{name}");
        }
        let intervals = ours["intervals"].as_array().unwrap();
        assert!(!intervals.is_empty(), "{name}: no interval reports");
        assert!(
            ours["end"]["cpu_utilization_percent"]["remote_total"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
}

#[test]
fn iperf3_client_against_iomark_server() {
    require!(have("iperf3"));
    for (name, args) in CASES {
        let port = free_port();
        let server = iomark_server(port, &["-1", "-J"]);
        let out = Proc::spawn(
            Command::new("iperf3")
                .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1", "-J"])
                .args(*args),
        )
        .finish(Duration::from_secs(30));
        let (theirs, ours) = both_ok(name, ("iperf3", out), ("iomark", server));
        assert!(theirs.get("error").is_none(), "{name}: {}", theirs["error"]);
        assert_server_count_reached_client(name, args, &ours, "iomark", &theirs);
        if args.contains(&"-u") {
            let got = end_bytes(&theirs, "sum_received");
            assert!(got > 0, "{name}: iperf3 saw no UDP data");
        }
        if args.contains(&"--bidir") {
            assert_eq!(
                end_bytes(&theirs, "sum_sent_bidir_reverse"),
                end_bytes(&ours, "sum_sent_bidir_reverse"),
                "{name}"
            );
        }
    }
}

#[test]
fn text_output_has_intervals_totals_and_cpu() {
    require!(have("iperf3"));
    let port = free_port();
    let server = iperf3_server(port, &["-1"]);
    let out = iomark_client(port, &["-t", "2", "-P", "2"]);
    assert_ok(&out, "text client");
    drop(server);
    let text = stdout(&out);
    assert!(text.contains("Connecting to host 127.0.0.1"), "{text}");
    assert!(text.contains(" 1.00-2.00 "), "{text}");
    assert!(text.contains("[SUM]"), "{text}");
    assert!(
        text.contains("sender") && text.contains("receiver"),
        "{text}"
    );
    assert!(text.contains("CPU Utilization: local/sender"), "{text}");
    assert!(text.contains("iperf Done."), "{text}");
}
