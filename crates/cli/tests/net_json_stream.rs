//! `--json-stream`: iomark's client and server print iperf3 3.17+'s
//! layout, one JSON object per line (`start`, an `interval` per report
//! interval, `end`), read by the same parser as iperf 3.21's own stream.

use std::collections::BTreeSet;
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::*;
use crate::net_common::*;
use iomark_testrig::require;
use serde_json::{json, Value};

/// `iperf3 -c 127.0.0.1 -p PORT ARGS...` (Debian's), running.
fn spawn_iperf3_client(port: u16, args: &[&str]) -> Proc {
    Proc::spawn(
        Command::new("iperf3")
            .args(["-c", "127.0.0.1", "-p", &port.to_string()])
            .args(args),
    )
}

/// A `--json-stream` as a consumer reads it: every line one event object
/// with `event` and `data`, a `start` first, `interval`s, an `end` last.
struct Stream {
    start: Value,
    intervals: Vec<Value>,
    end: Value,
}

fn parse(out: &Output, who: &str) -> Stream {
    parse_text(&ok(out), who)
}

fn parse_text(text: &str, who: &str) -> Stream {
    let mut events = text.lines().map(|l| {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{who}: {e}: {l}"));
        let event = v["event"]
            .as_str()
            .unwrap_or_else(|| panic!("{who}: {l}"))
            .to_string();
        assert!(v["data"].is_object(), "{who}: {l}");
        (event, v["data"].clone())
    });
    let (first, start) = events.next().unwrap_or_else(|| panic!("{who}: nothing"));
    assert_eq!(first, "start", "{who}");
    let mut rest: Vec<(String, Value)> = events.collect();
    let (last, end) = rest.pop().unwrap_or_else(|| panic!("{who}: no end"));
    assert_eq!(last, "end", "{who}");
    let intervals = rest
        .into_iter()
        .map(|(e, d)| {
            assert_eq!(e, "interval", "{who}");
            d
        })
        .collect();
    Stream {
        start,
        intervals,
        end,
    }
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map_or_else(BTreeSet::new, |m| m.keys().cloned().collect())
}

/// Every key of each of `theirs`' objects is in `ours`'.
fn same_keys(pairs: &[(&Value, &Value, &str)]) {
    for (t, o, what) in pairs {
        assert!(!keys(t).is_empty(), "{what}: 3.21 has no such object");
        let missing: Vec<_> = keys(t).difference(&keys(o)).cloned().collect();
        assert!(missing.is_empty(), "{what}: iomark lacks {missing:?}");
    }
}

#[test]
fn json_stream_reads_as_iperf3_321s_does() {
    let Some(ip321) = iperf3_21() else { return };
    let args = ["-t", "2", "--json-stream"];
    let port = free_port();
    let _server = iomark_server(port, &["-1"]);
    let theirs = parse(&peer_client(&ip321, port, &args), "iperf 3.21");
    let port = free_port();
    let server = peer_server(&ip321, port, &[]);
    let mut a = args.to_vec();
    a.push("--no-store");
    let ours = parse(&iomark_client(port, &a), "iomark");
    drop(server);

    for (who, s) in [("iperf 3.21", &theirs), ("iomark", &ours)] {
        assert_eq!(s.intervals.len(), 2, "{who}: one per second");
        let streamed: u64 = s
            .intervals
            .iter()
            .map(|i| i["sum"]["bytes"].as_u64().unwrap())
            .sum();
        // The end counts every byte; a last sliver after the final
        // interval (under a tenth of one) gets no interval of its own.
        let total = end_bytes(&json!({ "end": s.end }), "sum_sent");
        assert!(
            streamed <= total && streamed as f64 >= 0.9 * total as f64,
            "{who}: intervals {streamed}, end {total}"
        );
        assert_eq!(s.start["test_start"]["duration"], 2, "{who}");
    }
    // What a consumer of 3.21's stream reads is in iomark's: every key.
    let pairs = [
        (&theirs.start, &ours.start, "start"),
        (
            &theirs.start["test_start"],
            &ours.start["test_start"],
            "start test_start",
        ),
        (
            &theirs.start["timestamp"],
            &ours.start["timestamp"],
            "start timestamp",
        ),
        (
            &theirs.intervals[0]["sum"],
            &ours.intervals[0]["sum"],
            "interval sum",
        ),
        (
            &theirs.intervals[0]["streams"][0],
            &ours.intervals[0]["streams"][0],
            "interval stream",
        ),
        (&theirs.end, &ours.end, "end"),
        (
            &theirs.end["streams"][0]["sender"],
            &ours.end["streams"][0]["sender"],
            "end stream sender",
        ),
        (
            &theirs.end["sum_sent"],
            &ours.end["sum_sent"],
            "end sum_sent",
        ),
    ];
    same_keys(&pairs);
}

/// A server's stream: one test's start, its intervals as they end (read
/// while the test runs), its end; as iperf 3.21's server prints it.
#[test]
fn a_servers_json_stream_reads_as_iperf3_321s_server_does() {
    require!(have("iperf3"));
    let Some(ip321) = iperf3_21() else { return };
    let port = free_port();
    let mut server = iomark_server(port, &["-1", "--json-stream"]);
    let mut client = spawn_iperf3_client(port, &["-t", "3"]);
    server.wait_stdout("{\"event\":\"interval\"", Duration::from_secs(30));
    assert!(client.running(), "the first interval came at the end");
    assert!(ok(&client.finish(Duration::from_secs(60))).contains("receiver"));
    let ours = parse(&server.finish(Duration::from_secs(60)), "iomark server");
    let port = free_port();
    let server = peer_server(&ip321, port, &["--json-stream"]);
    let out = iperf3_client(port, &["-t", "3"]);
    assert!(ok(&out).contains("receiver"));
    let theirs = parse(&server.finish(Duration::from_secs(60)), "iperf 3.21 server");
    for (who, s) in [("iperf 3.21", &theirs), ("iomark", &ours)] {
        assert!((3..=4).contains(&s.intervals.len()), "{who}: one a second");
        let streamed: u64 = s
            .intervals
            .iter()
            .map(|i| i["sum"]["bytes"].as_u64().unwrap())
            .sum();
        let total = end_bytes(&json!({ "end": s.end }), "sum_received");
        assert!(
            streamed.abs_diff(total) as f64 <= 0.1 * total as f64,
            "{who}: intervals {streamed}, end {total}"
        );
    }
    same_keys(&[
        (&theirs.start, &ours.start, "start"),
        (
            &theirs.start["test_start"],
            &ours.start["test_start"],
            "start test_start",
        ),
        (
            &theirs.intervals[0]["sum"],
            &ours.intervals[0]["sum"],
            "interval sum",
        ),
        (&theirs.end, &ours.end, "end"),
        (
            &theirs.end["sum_received"],
            &ours.end["sum_received"],
            "end sum_received",
        ),
    ]);
}

/// `-T`, `--timestamps` and `--forceflush` dress iperf3's text lines, never
/// a `--json-stream`'s, as iperf 3.21 prints its stream: every line is one
/// JSON object to a `str.splitlines()` reader, whatever the title holds (a
/// newline, ESC, U+2028, U+0085). `-J` keeps the title, exact, at the top
/// of its document, where iperf3 puts it (its stream has none).
#[test]
fn a_json_stream_is_one_object_a_line_whatever_the_title() {
    require!(have("python3"));
    let title = "lab\nnext \x1b]0;owned\x07 \u{2028}sep\u{85}\u{202e}end";
    let port = free_port();
    let server = iomark_server(port, &["-1", "--json-stream"]);
    let args = [
        "-t",
        "1",
        "--json-stream",
        "-T",
        title,
        "--timestamps",
        "--forceflush",
        "--no-store",
    ];
    let text = ok(&iomark_client(port, &args));
    python_json_lines(&text, "client");
    let client = parse_text(&text, "client");
    assert!(!client.intervals.is_empty(), "{text}");
    let text = ok(&server.finish(Duration::from_secs(60)));
    python_json_lines(&text, "server");
    parse_text(&text, "server");

    let port = free_port();
    let _server = iomark_server(port, &["-1"]);
    let args = ["-t", "1", "-J", "-T", title, "--timestamps", "--no-store"];
    let text = ok(&iomark_client(port, &args));
    assert_eq!(
        python_splitlines(&text),
        text.lines().collect::<Vec<_>>(),
        "splitlines() cuts a line of -J"
    );
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(doc["title"], title);
    assert!(
        text.contains("\\u2028") && text.contains("\\u202e"),
        "{text}"
    );
}
