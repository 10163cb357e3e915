//! `iomark serve` stays up whoever connects: sockets that say nothing,
//! headers sent a byte a second and more connections than the cap keep
//! no reader out and are closed within the timeouts; out of descriptors,
//! the server rests instead of spinning a core, and serves again.
//! Loopback only; every wait bounded.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::report_html::fixtures;

/// A store of one run.
fn one_run() -> ScratchDb {
    let db = ScratchDb::new();
    db.import("cdm", &fixtures::cdm(&["usb3"], 40.0));
    db
}

/// Sockets process `pid` holds open.
fn sockets_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    std::fs::read_link(e.path())
                        .is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
                })
                .count()
        })
        .unwrap_or(0)
}

/// Descriptors process `pid` holds open.
fn descriptors_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// CPU time process `pid` has used, every thread's, in clock ticks
/// (utime + stime of /proc/PID/stat).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    // After the name: state is field 3 of the file, utime 14, stime 15.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Whether the server has closed `s`: a read sees the end (or a reset)
/// within `limit`.
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 512];
    let end = Instant::now() + limit;
    // Bounded: each read waits at most until `end`.
    while Instant::now() < end {
        match read_some(s, &mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
            Err(_) => return true,
        }
    }
    false
}

/// GET / answered 200, and how long it took.
fn timed_get(served: &Served) -> Duration {
    let t = Instant::now();
    let res = served.get("/");
    assert_eq!(res.status, 200, "{}", res.text());
    t.elapsed()
}

#[test]
fn idle_and_trickling_sockets_keep_no_reader_out_and_are_closed_within_the_timeouts() {
    let db = one_run();
    let (cap, idle, header) = (8, Duration::from_secs(2), Duration::from_secs(3));
    let served = Served::start(
        db.db(),
        &[
            "--max-connections",
            "8",
            "--idle-timeout",
            "2s",
            "--header-timeout",
            "3s",
        ],
    );
    let pid = served.proc.pid();
    let baseline = sockets_of(pid);
    let slack = Duration::from_millis(1500);

    // Headers a byte a second, from threads that stop when the server
    // closes them or after twice the header timeout.
    let stop = Arc::new(AtomicBool::new(false));
    let trickling: Vec<_> = (0..4)
        .map(|_| {
            let mut s = TcpStream::connect(&served.addr).unwrap();
            let opened = Instant::now();
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let head =
                    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
                for b in head.iter().cycle().take(2 * 3 + 2) {
                    if stop.load(Ordering::Relaxed) || s.write_all(&[*b]).is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
                let closed = closed_within(&mut s, Duration::from_secs(1));
                (closed, opened.elapsed())
            })
        })
        .collect();
    // Idle sockets, twice the cap.
    let mut idle_sockets: Vec<(TcpStream, Instant)> = (0..2 * cap)
        .map(|_| (TcpStream::connect(&served.addr).unwrap(), Instant::now()))
        .collect();

    // A reader is answered at once all the same, again and again.
    for _ in 0..5 {
        let took = timed_get(&served);
        assert!(took < Duration::from_secs(1), "GET / took {took:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The server never holds more than the cap (and the one it is
    // accepting) whatever is opened.
    let held = sockets_of(pid) - baseline;
    assert!(held <= cap + 1, "{held} connections open, cap {cap}");

    // Every idle socket is closed by the server within the idle timeout.
    for (s, opened) in &mut idle_sockets {
        let left = (*opened + idle + slack).saturating_duration_since(Instant::now());
        assert!(
            closed_within(s, left),
            "an idle socket still open {:?} after it was opened",
            opened.elapsed()
        );
    }
    // The tricklers within the header timeout (or sooner, by the cap).
    for t in trickling {
        let (closed, after) = t.join().unwrap();
        assert!(closed, "a trickling socket still open after {after:?}");
        assert!(after < header + slack + Duration::from_secs(1), "{after:?}");
    }
    stop.store(true, Ordering::Relaxed);
    wait_until(
        Duration::from_secs(5),
        "the server to close every connection",
        || sockets_of(pid) == baseline,
    );
    // A kept-alive connection is closed after the idle timeout too.
    let mut kept = TcpStream::connect(&served.addr).unwrap();
    kept.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let answered = Instant::now();
    let mut first = [0u8; 12];
    kept.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    assert!(closed_within(&mut kept, idle + slack));
    let after = answered.elapsed();
    assert!(after >= idle - Duration::from_millis(200), "{after:?}");
}

#[test]
fn out_of_descriptors_the_server_rests_and_serves_again() {
    require!(have_command("prlimit", "util-linux"));
    let db = one_run();
    // A cap above what 64 descriptors allow: accept meets EMFILE.
    let served = Served::spawn(Command::new("prlimit").args([
        "--nofile=64",
        IOMARK,
        "serve",
        "--db",
        db.db(),
        "--bind",
        "127.0.0.1:0",
        "--max-connections",
        "1000",
        "--idle-timeout",
        "60s",
        "--header-timeout",
        "60s",
    ]));
    let pid = served.proc.pid();
    // More than the descriptors left: the rest wait in the backlog.
    let held: Vec<TcpStream> = (0..80)
        .map(|_| TcpStream::connect(&served.addr).unwrap())
        .collect();
    wait_until(
        Duration::from_secs(5),
        "the server to run out of descriptors",
        || descriptors_of(pid) >= 60,
    );
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_ticks(pid) - before;
    // Spinning would be about 200 ticks (100 a second).
    assert!(used <= 20, "{used} ticks of CPU in 2 s out of descriptors");
    drop(held);
    wait_until(
        Duration::from_secs(5),
        "a request answered once the sockets closed",
        || served.get("/").status == 200,
    );
    let took = timed_get(&served);
    assert!(took < Duration::from_secs(1), "GET / took {took:?}");

    // By default the cap is half the descriptors: 80 sockets held keep
    // no reader out, and accept never runs out.
    let served = Served::spawn(Command::new("prlimit").args([
        "--nofile=64",
        IOMARK,
        "serve",
        "--db",
        db.db(),
        "--bind",
        "127.0.0.1:0",
    ]));
    let pid = served.proc.pid();
    let held: Vec<TcpStream> = (0..80)
        .map(|_| TcpStream::connect(&served.addr).unwrap())
        .collect();
    for _ in 0..3 {
        let took = timed_get(&served);
        assert!(took < Duration::from_secs(1), "GET / took {took:?}");
    }
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(1));
    assert!(cpu_ticks(pid) - before <= 10);
    drop(held);
}
