//! Helpers for the `net_*` tests: free ports, child processes that are
//! killed on drop, waiting for a listener, and running the binary.
#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_iomark");

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

/// Whether `iperf3` can run here; prints the skip reason when not.
pub fn have_iperf3() -> bool {
    let ok = Command::new("iperf3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: needs the iperf3 binary (apt-get install iperf3, or scripts/test)");
    }
    ok
}

/// A child process that is killed and reaped when dropped.
pub struct Proc(pub Option<Child>);

impl Proc {
    pub fn spawn(cmd: &mut Command) -> Proc {
        Proc(Some(
            cmd.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn a child process"),
        ))
    }

    /// Wait for it to end (at most `limit`), returning its output.
    pub fn finish(mut self, limit: Duration) -> Output {
        let mut child = self.0.take().expect("not finished yet");
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if child.try_wait().expect("poll a child").is_some() {
                return child.wait_with_output().expect("collect output");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let out = child.wait_with_output().expect("collect output");
        panic!(
            "child did not finish within {limit:?}; stdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn pid(&self) -> u32 {
        self.0.as_ref().expect("running").id()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
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
        Command::new(BIN)
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

/// Run `iomark net client 127.0.0.1 -p PORT ARGS...` to completion.
pub fn iomark_client(port: u16, args: &[&str]) -> Output {
    Proc::spawn(
        Command::new(BIN)
            .args(["net", "client", "127.0.0.1", "-p", &port.to_string()])
            .args(args),
    )
    .finish(Duration::from_secs(60))
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

pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}); stdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

pub fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}); stdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `end.<key>.bytes` of an iperf3-layout document.
pub fn end_bytes(doc: &serde_json::Value, key: &str) -> u64 {
    doc["end"][key]["bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("end.{key}.bytes missing in {doc}"))
}
