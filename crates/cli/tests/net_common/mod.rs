//! Helpers for the `net_*` tests: free ports, waiting for a listener, and
//! iomark and iperf3 servers and clients on loopback. What is not about the
//! network (running the binary, children killed on drop) is in `common`.
// Each net_* test binary uses a different subset of these.
#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{Proc, IOMARK};

/// A port nothing listens on right now (TCP and UDP).
pub fn free_port() -> u16 {
    loop {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
        let port = l.local_addr().unwrap().port();
        drop(l);
        if std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// Whether some socket listens on TCP `port` (from /proc, without
/// connecting, which would count as a client).
pub fn listening(port: u16) -> bool {
    let want = format!(":{port:04X} ");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3
                    && format!("{} ", &cols[1][cols[1].len() - 5..]) == want
                    && cols[3] == "0A"
            })
        })
    })
}

pub fn wait_listening(port: u16) {
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if listening(port) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("nothing listens on port {port} after 10 s");
}

/// `iomark net server` on `port` with extra arguments, once it listens.
pub fn iomark_server(port: u16, extra: &[&str]) -> Proc {
    let p = Proc::spawn(
        Command::new(IOMARK)
            .args(["net", "server", "-p", &port.to_string()])
            .args(extra),
    );
    wait_listening(port);
    p
}

/// `iperf3 -s` on `port` with extra arguments, once it listens.
pub fn iperf3_server(port: u16, extra: &[&str]) -> Proc {
    let p = Proc::spawn(
        Command::new("iperf3")
            .args(["-s", "-p", &port.to_string()])
            .args(extra),
    );
    wait_listening(port);
    p
}

/// Start `iomark net client 127.0.0.1 -p PORT ARGS...`.
pub fn spawn_iomark_client(port: u16, args: &[&str]) -> Proc {
    Proc::spawn(
        Command::new(IOMARK)
            .args(["net", "client", "127.0.0.1", "-p", &port.to_string()])
            .args(args),
    )
}

/// Run `iomark net client 127.0.0.1 -p PORT ARGS...` to completion.
pub fn iomark_client(port: u16, args: &[&str]) -> Output {
    spawn_iomark_client(port, args).finish(Duration::from_secs(60))
}

/// Run `iperf3 -c 127.0.0.1 -p PORT ARGS...` to completion.
pub fn iperf3_client(port: u16, args: &[&str]) -> Output {
    Proc::spawn(
        Command::new("iperf3")
            .args(["-c", "127.0.0.1", "-p", &port.to_string()])
            .args(args),
    )
    .finish(Duration::from_secs(60))
}

/// `end.<key>.bytes` of an iperf3-layout document.
pub fn end_bytes(doc: &serde_json::Value, key: &str) -> u64 {
    doc["end"][key]["bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("end.{key}.bytes missing in {doc}"))
}
