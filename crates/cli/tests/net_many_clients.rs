//! `iomark net -s --max-clients N`: several tests at once, from stock
//! iperf3 clients (3.12 and 3.21) and iomark's, each reported on its own;
//! one client past N is told "busy", as iperf3's server tells every second
//! client. The server stores the tests that overlapped as one run: each
//! client's figures and their total.

use std::process::Command;
use std::time::Duration;

use crate::common::*;
use crate::net_common::*;
use iomark_testrig::require;

#[test]
fn three_clients_run_at_once_and_a_fourth_is_told_busy() {
    require!(have("iperf3"));
    // Without 3.21 on this machine its place goes to a second 3.12 client.
    let (second, second_bin) = match iperf3_21() {
        Some(bin) => ("iperf 3.21", bin),
        None => ("a second iperf3 3.12", "iperf3".to_string()),
    };
    let port = free_port();
    let p = port.to_string();
    let db = ScratchDb::new();
    let mut server = iomark_server(
        port,
        &[
            "--max-clients",
            "3",
            "-B",
            "127.0.0.1",
            "--db",
            db.db(),
            "--label",
            "three",
        ],
    );
    server.wait_stdout("up to 3 tests at once", Duration::from_secs(10));
    // Each client prints its first interval line at 1 s, while the test
    // runs (--forceflush: iperf3 buffers a pipe otherwise); once all three
    // have, the three tests overlap, with a second of each left.
    let iperf3 = |bin: &str| {
        Proc::spawn(Command::new(bin).args([
            "-c",
            "127.0.0.1",
            "-p",
            &p,
            "-t",
            "2",
            "--forceflush",
        ]))
    };
    let mut clients = [
        ("iperf3 3.12", iperf3("iperf3")),
        (second, iperf3(&second_bin)),
        (
            "iomark",
            spawn_iomark_client(port, &["-t", "2", "--forceflush", "--no-store"]),
        ),
    ];
    for (_, c) in &mut clients {
        c.wait_stdout(" 0.00-1.", Duration::from_secs(20));
    }
    let fourth = iperf3_client(port, &["-t", "1"]);
    assert!(!fourth.status.success(), "a fourth client ran");
    assert!(
        stderr(&fourth).contains("busy") || stdout(&fourth).contains("busy"),
        "{}",
        stderr(&fourth)
    );
    for (who, c) in clients {
        let out = c.finish(Duration::from_secs(30));
        let text = ok(&out);
        assert!(text.contains("receiver"), "{who}: {text}");
    }
    // Each test's report is printed whole when it ends: three reports,
    // each with its own receiver line.
    wait_until(Duration::from_secs(20), "three reports", || {
        server.stdout_so_far().matches(" receiver\n").count() >= 3
    });
    let text = server.stdout_so_far();
    assert_eq!(
        text.matches("Accepted connection from").count(),
        3,
        "{text}"
    );

    // Once the last of the three ended, the server stored them as one run.
    server.wait_stderr("stored as run 1", Duration::from_secs(20));
    let shown = json_of(&results(db.db(), &["show", "1", "--json"]));
    let doc = &shown["document"];
    assert_eq!(doc["labels"][0], "three", "{doc}");
    let clients = doc["body"]["clients"].as_array().expect("clients");
    assert_eq!(clients.len(), 3, "{doc}");
    let goodput = |test: &str| {
        shown["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["test"] == test && f["metric"] == "upload goodput")
            .unwrap_or_else(|| panic!("no upload goodput of {test} in {shown}"))["value"]
            .as_f64()
            .unwrap()
    };
    let each: Vec<f64> = (1..=3)
        .map(|k| goodput(&format!("served 3 x tcp P1, client {k}")))
        .collect();
    let total = goodput("served 3 x tcp P1");
    // The total is every byte over the span from the first start to the
    // last end: more than any one client, at most their sum.
    let sum: f64 = each.iter().sum();
    let most = each.iter().cloned().fold(0.0, f64::max);
    assert!(
        total > most && total <= sum * 1.000_001,
        "total {total}, clients {each:?}"
    );
    // Stored as it went: each test's seconds, as the run's tests 1 to 3.
    let mut store = iomark_store::open_read_only(Some(db.db())).unwrap();
    let seconds = store.samples(iomark_store::RunId(1), None).unwrap();
    for step in 1..=3 {
        let of: Vec<_> = seconds.iter().filter(|(_, s)| s.step == step).collect();
        assert!(
            of.len() >= 2 && of.iter().all(|(_, s)| s.bytes > 0),
            "test {step}: {seconds:?}"
        );
    }
}

/// Tests one after the other are runs of their own, even when the next
/// client connects while the server still tears the last one down; Ctrl-C
/// stops a storing server at once, with what it served stored.
#[test]
fn back_to_back_clients_are_runs_of_their_own_and_ctrl_c_stops_the_server() {
    require!(have("iperf3"));
    let port = free_port();
    let db = ScratchDb::new();
    // Dual-stack (no -B): the IPv4 client arrives as ::ffff:127.0.0.1.
    let mut server = iomark_server(port, &["--max-clients", "2", "--db", db.db()]);
    for k in 1..=3 {
        let out = iperf3_client(port, &["-t", "1"]);
        assert!(ok(&out).contains("receiver"), "client {k}");
    }
    server.wait_stderr("stored as run 3", Duration::from_secs(20));
    let listed = ok(&results(db.db(), &["list"]));
    assert_eq!(listed.matches("complete").count(), 3, "{listed}");
    let mut store = iomark_store::open_read_only(Some(db.db())).unwrap();
    let runs = store.list(&iomark_store::RunQuery::default()).unwrap();
    assert_eq!(runs.len(), 3, "{listed}");
    for run in runs {
        // Each stored as it went: a second at least, all its own test's.
        let seconds = store.samples(run.id, None).unwrap();
        assert!(!seconds.is_empty(), "run {}", run.id);
        assert!(seconds.iter().all(|(_, s)| s.step == 1), "{seconds:?}");
    }
    for id in ["1", "2", "3"] {
        let shown = json_of(&results(db.db(), &["show", id, "--json"]));
        let clients = shown["document"]["body"]["clients"].as_array().unwrap();
        assert_eq!(clients.len(), 1, "run {id}: {shown}");
        // An IPv4 client is named as iperf3 names it, not ::ffff:a.b.c.d.
        assert_eq!(shown["document"]["body"]["spec"]["host"], "127.0.0.1");
    }
    let text = server.stdout_so_far();
    assert!(
        text.contains("Accepted connection from 127.0.0.1, port "),
        "{text}"
    );
    server.signal(rustix::process::Signal::INT);
    let (out, took) = server.finish_timed(Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(took < Duration::from_secs(5), "Ctrl-C took {took:?}");
}
