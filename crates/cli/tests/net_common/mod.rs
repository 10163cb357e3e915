//! Helpers for the `net_*` tests: free ports, waiting for a listener, and
//! iomark and iperf3 servers and clients on loopback. What is not about the
//! network (running the binary, children killed on drop) is in `common`.
// Each net_* test binary uses a different subset of these.
#![allow(dead_code)]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{stderr, Proc, IOMARK};

pub use iomark_testrig::free_port;

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

/// `iomark net server` on `port` with extra arguments, once it listens;
/// it stores nothing unless `extra` names a `--db`.
pub fn iomark_server(port: u16, extra: &[&str]) -> Proc {
    let no_store = (!extra.contains(&"--db")).then_some("--no-store");
    let p = Proc::spawn(
        Command::new(IOMARK)
            .args(["net", "server", "-p", &port.to_string()])
            .args(no_store)
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

/// Two network namespaces joined by a veth pair (TEST-RIGS.md); deletes
/// the namespaces (and with them the veth pair) on drop, also when the test
/// fails.
/// Deletes the namespaces (and with them the veth pair) on drop, also when
/// the test fails.
pub struct Rig {
    /// The client's namespace (10.201.0.1).
    pub client_ns: String,
    /// The server's namespace (10.201.0.2).
    pub server_ns: String,
    /// The client's end of the veth pair.
    pub client_if: String,
}

impl Rig {
    /// The rig, each veth end shaped to `rate` (tc tbf) when one is given.
    pub fn up(rate: Option<&str>) -> Result<Rig, String> {
        // Unique per process and per rig: tests of one binary run at once.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pid = std::process::id();
        let (ci, si) = (format!("imc{pid}x{n}"), format!("ims{pid}x{n}"));
        let rig = Rig {
            client_ns: format!("iomk-c-{pid}-{n}"),
            server_ns: format!("iomk-s-{pid}-{n}"),
            client_if: ci.clone(),
        };
        let (c, s) = (&rig.client_ns, &rig.server_ns);
        let steps: Vec<Vec<&str>> = vec![
            vec!["netns", "add", c],
            vec!["netns", "add", s],
            vec![
                "link", "add", &ci, "netns", c, "type", "veth", "peer", "name", &si, "netns", s,
            ],
            vec!["-n", c, "addr", "add", "10.201.0.1/24", "dev", &ci],
            vec!["-n", s, "addr", "add", "10.201.0.2/24", "dev", &si],
            vec!["-n", c, "link", "set", &ci, "up"],
            vec!["-n", s, "link", "set", &si, "up"],
            vec!["-n", c, "link", "set", "lo", "up"],
            vec!["-n", s, "link", "set", "lo", "up"],
        ];
        for args in steps {
            run("ip", &args)?;
        }
        let Some(rate) = rate else {
            return Ok(rig);
        };
        for (ns, dev) in [(c, &ci), (s, &si)] {
            run(
                "tc",
                &[
                    "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate, "burst",
                    "256kb", "latency", "50ms",
                ],
            )?;
        }
        Ok(rig)
    }

    /// Waits until something listens on `port` in the server's namespace
    /// (checked there with `ss`: no connection that would count as a test);
    /// panics after about five seconds.
    pub fn wait_server_listening(&self, port: &str) {
        for _ in 0..200 {
            let out = Command::new("ip")
                .args(["netns", "exec", &self.server_ns, "ss", "-Hltn"])
                .arg(format!("sport = :{port}"))
                .output()
                .expect("run ss");
            if !String::from_utf8_lossy(&out.stdout).trim().is_empty() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("server did not start in the rig");
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        for ns in [&self.client_ns, &self.server_ns] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

pub fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd)
        .args(args)
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{cmd} {}: {}", args.join(" "), stderr(&out).trim()))
    }
}

/// `Ok` when this machine can build the rig (root, `ip`, `tc`), else why
/// not (for `require!`).
pub fn can_build_rig() -> Result<(), &'static str> {
    // Root is effective uid 0 in /proc/self/status.
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"))
    });
    if !root {
        return Err("the shaped-link rig needs root");
    }
    let tools = ["ip", "tc"].iter().all(|t| {
        Command::new(t)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    });
    if !tools {
        return Err("the shaped-link rig needs `ip` and `tc` (iproute2)");
    }
    Ok(())
}

/// iperf 3.21 as scripts/lib/peers.sh's `ensure_iperf3_21` builds it:
/// `$IOMARK_IPERF3_21`, else its default place; `None` when the test goes
/// without it. Not built although its source tarball is here: a skip (a
/// failure under IOMARK_REQUIRE_RIGS). No tarball on this machine
/// (`$IOMARK_PEER_TARBALLS`, default /work/shared/peers): noted and counted
/// as a skip, never a failure, since no package registry has 3.21 and
/// nothing scripts/test can do brings it.
pub fn iperf3_21() -> Option<String> {
    let path = std::env::var("IOMARK_IPERF3_21")
        .unwrap_or_else(|_| "/tmp/iomark-bench-peers/iperf/src/iperf3".into());
    if std::path::Path::new(&path).is_file() {
        return Some(path);
    }
    let tarballs =
        std::env::var("IOMARK_PEER_TARBALLS").unwrap_or_else(|_| "/work/shared/peers".into());
    let source_here = std::fs::read_dir(&tarballs).is_ok_and(|d| {
        d.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("iperf-3.21-") && name.ends_with(".tar.gz")
        })
    });
    let how = format!(
        "iperf 3.21 is not built at {path}: run `. scripts/lib/peers.sh && ensure_iperf3_21` \
         (it builds from iperf-3.21-*.tar.gz in {tarballs})"
    );
    if source_here {
        iomark_testrig::skipped(&how);
    } else {
        iomark_testrig::skipped_for_want_of_source(&format!(
            "{how}; there is no such tarball on this machine"
        ));
    }
    None
}

/// `PEER -s -1 -p PORT EXTRA...` with a given iperf3 binary, once it listens.
pub fn peer_server(bin: &str, port: u16, extra: &[&str]) -> Proc {
    let p = Proc::spawn(
        Command::new(bin)
            .args(["-s", "-1", "-p", &port.to_string()])
            .args(extra),
    );
    wait_listening(port);
    p
}

/// Run `PEER -c 127.0.0.1 -p PORT ARGS...` with a given iperf3 binary.
pub fn peer_client(bin: &str, port: u16, args: &[&str]) -> Output {
    Proc::spawn(
        Command::new(bin)
            .args(["-c", "127.0.0.1", "-p", &port.to_string()])
            .args(args),
    )
    .finish(Duration::from_secs(60))
}
