//! The server under abuse: a second client, silent and slow connections,
//! bad parameter JSON, clients that vanish. After each, it must still serve
//! the next valid test. And the client's own errors: refused, busy, unknown
//! host. The server's 10 s / 30 s / 40 s timeouts are shortened through its
//! hidden flags, and its 120 s receive timeout and 24 h test cap through
//! `--rcv-timeout` and `--max-duration`, so the suite stays fast. Bounds on
//! how long the server took are generous upper limits (a busy 2-core host
//! only delays it) plus lower limits that hold whatever the load.

use std::io::{Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::ops::Range;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::net_common::*;
use iomark_testrig::require;

const COOKIE: &[u8; 37] = b"abcdefghijklmnopqrstuvwxyz234567abcd\0";

/// `iomark net server` on a free port with its first-byte, set-up and
/// grace timeouts shortened to 1 s, 2 s and 2 s, and `extra` flags: the
/// port and the server, which is stopped on drop.
fn server_with(extra: &[&str]) -> (u16, Proc) {
    let port = free_port();
    let mut args = vec![
        "--first-byte-timeout",
        "1s",
        "--setup-timeout",
        "2s",
        "--grace",
        "2s",
    ];
    args.extend_from_slice(extra);
    (port, iomark_server(port, &args))
}

fn server() -> (u16, Proc) {
    server_with(&[])
}

/// The server of `server()` with receive timeout `rcv` and `extra` flags.
fn limited_server(rcv: &str, extra: &[&str]) -> (u16, Proc) {
    server_with(&[&["--rcv-timeout", rcv], extra].concat())
}

/// `took` is within `ms` milliseconds: at least the start, less than the end.
fn assert_took(took: Duration, ms: Range<u128>, what: &str) {
    assert!(
        ms.contains(&took.as_millis()),
        "{what} after {took:?}, outside {ms:?} ms"
    );
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the test server");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

fn read_byte(s: &mut TcpStream) -> Option<u8> {
    let mut b = [0u8; 1];
    match read_some(s, &mut b) {
        Ok(1) => Some(b[0]),
        _ => None,
    }
}

/// Start a test by hand up to the parameters step.
fn handshake(port: u16) -> TcpStream {
    let mut s = connect(port);
    s.write_all(COOKIE).unwrap();
    assert_eq!(read_byte(&mut s), Some(9), "PARAM_EXCHANGE expected");
    s
}

fn send_frame(s: &mut TcpStream, body: &[u8]) {
    let mut m = (body.len() as u32).to_be_bytes().to_vec();
    m.extend_from_slice(body);
    s.write_all(&m).unwrap();
}

/// SERVER_ERROR and its iperf3 code, or what came instead.
fn server_error(s: &mut TcpStream) -> Result<i32, String> {
    let mut b = [0u8; 1];
    match read_some(s, &mut b) {
        Ok(1) if b[0] == 0xfe => {
            let mut code = [0u8; 4];
            s.read_exact(&mut code).map_err(|e| e.to_string())?;
            Ok(i32::from_be_bytes(code))
        }
        Ok(1) => Err(format!("expected SERVER_ERROR, got state {}", b[0])),
        Ok(_) => Err("expected SERVER_ERROR, the connection closed".into()),
        Err(e) => Err(format!("expected SERVER_ERROR, reading failed: {e}")),
    }
}

/// Waits until the server is back at its loop for test number `next` (it
/// says "Server listening on PORT (test #N)" once the test before has
/// ended, whatever ended it; every connection it took as a test counts).
fn wait_ready_for(srv: &mut Proc, next: u32) {
    srv.wait_stdout(&format!("(test #{next})"), Duration::from_secs(60));
}

/// Once the server is ready for test number `next`, a short valid test
/// (that test) must pass: the server is still serving after `after`.
fn still_serves(srv: &mut Proc, port: u16, next: u32, after: &str) {
    wait_ready_for(srv, next);
    let out = iomark_client(port, &["-t", "1", "-J"]);
    assert_ok(&out, &format!("a test after {after}"));
    assert!(end_bytes(&json(&out), "sum_received") > 0, "after {after}");
}

#[test]
fn second_client_is_denied_and_first_test_is_unharmed() {
    let (port, mut srv) = server();
    let first = spawn_iomark_client(port, &["-t", "3", "-J"]);
    // Its data stream is connected: the test is under way.
    srv.wait_stdout("connected to", Duration::from_secs(30));
    // A raw intruder gets 0xFF at once, without sending anything.
    let mut intruder = connect(port);
    let t = Instant::now();
    assert_eq!(read_byte(&mut intruder), Some(0xff));
    assert_within("ACCESS_DENIED", t.elapsed(), Duration::from_secs(1));
    // A real client says the server is busy, with exit code 2.
    let busy = iomark_client(port, &["-t", "1"]);
    assert_eq!(busy.status.code(), Some(2));
    let err = stderr(&busy);
    assert!(err.contains("busy"), "{err}");
    let out = first.finish(Duration::from_secs(30));
    assert_ok(&out, "the first test");
    let doc = json(&out);
    let secs = doc["end"]["sum_received"]["seconds"].as_f64().unwrap();
    assert!((2.9..3.5).contains(&secs), "first test ran {secs} s");
    assert!(end_bytes(&doc, "sum_received") > 0);
    // The denied ones were never tests: the first one was test #1.
    still_serves(&mut srv, port, 2, "a denied second client");
}

#[test]
fn silent_and_slow_connections_are_dropped() {
    let (port, mut srv) = server();
    // Sends nothing: dropped after the first-byte timeout (1 s here, 10 s default).
    let mut silent = connect(port);
    let t = Instant::now();
    let mut buf = [0u8; 16];
    let _ = read_some(&mut silent, &mut buf);
    assert_took(t.elapsed(), 900..4000, "a silent connection dropped");
    still_serves(&mut srv, port, 2, "a silent connection");
    // Sends the parameters one byte at a time, slower than the set-up limit.
    let mut slow = handshake(port);
    let t = Instant::now();
    let body = br#"{"tcp":true,"time":1,"parallel":1,"len":131072}"#;
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(body);
    let mut closed = false;
    for b in frame {
        if slow.write_all(&[b]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(400));
        if t.elapsed() > Duration::from_secs(6) {
            break;
        }
    }
    let _ = slow.set_read_timeout(Some(Duration::from_secs(3)));
    let answer = server_error(&mut slow);
    assert!(
        closed || answer.is_ok() || t.elapsed() < Duration::from_secs(6),
        "slow sender was not dropped: {answer:?}"
    );
    assert_within(
        "a slow sender dropped",
        t.elapsed(),
        Duration::from_secs(10),
    );
    still_serves(&mut srv, port, 4, "a slow connection");
}

#[test]
fn bad_parameters_get_server_error_with_iperf3_codes() {
    let (port, mut srv) = server();
    let cases: &[(&str, Vec<u8>, i32)] = &[
        ("malformed", b"{\"tcp\":tru".to_vec(), 114),
        ("not an object", b"[1,2,3]".to_vec(), 114),
        (
            "parallel 0",
            br#"{"tcp":true,"time":1,"parallel":0}"#.to_vec(),
            6,
        ),
        (
            "parallel 500",
            br#"{"tcp":true,"time":1,"parallel":500}"#.to_vec(),
            6,
        ),
        (
            "time 1e6",
            br#"{"tcp":true,"time":1000000,"parallel":1}"#.to_vec(),
            5,
        ),
        (
            "len 2M",
            br#"{"tcp":true,"time":1,"parallel":1,"len":2097152}"#.to_vec(),
            7,
        ),
        (
            "udp len 8",
            br#"{"udp":true,"time":1,"parallel":1,"len":8}"#.to_vec(),
            20,
        ),
        (
            "window 1G",
            br#"{"tcp":true,"time":1,"window":1073741824}"#.to_vec(),
            8,
        ),
        (
            "reverse as string",
            br#"{"tcp":true,"reverse":"yes"}"#.to_vec(),
            114,
        ),
    ];
    for (name, body, code) in cases {
        let mut s = handshake(port);
        send_frame(&mut s, body);
        assert_eq!(server_error(&mut s), Ok(*code), "{name}");
    }
    // Oversized: the 9000-byte length is refused from the header alone.
    let mut s = handshake(port);
    s.write_all(&9000u32.to_be_bytes()).unwrap();
    assert_eq!(server_error(&mut s), Ok(114), "oversized");
    // Zero length.
    let mut s = handshake(port);
    s.write_all(&0u32.to_be_bytes()).unwrap();
    assert_eq!(server_error(&mut s), Ok(114), "empty");
    // Nine cases, the oversized one and the empty one.
    still_serves(&mut srv, port, 12, "bad parameters");
}

#[test]
fn vanishing_clients_end_the_test_cleanly() {
    let (port, mut srv) = server();
    // Vanishes after CREATE_STREAMS without opening any stream.
    {
        let mut s = handshake(port);
        send_frame(
            &mut s,
            br#"{"tcp":true,"time":5,"parallel":2,"len":131072}"#,
        );
        assert_eq!(read_byte(&mut s), Some(10), "CREATE_STREAMS expected");
    }
    // Noticed from the closed control connection, well before the 2 s
    // set-up limit.
    let t = Instant::now();
    still_serves(
        &mut srv,
        port,
        2,
        "a client that vanished before its streams",
    );
    assert_within(
        "the server free again",
        t.elapsed(),
        Duration::from_secs(10),
    );
    // Vanishes mid-test: control and data streams just close.
    {
        let (_ctrl, mut data, _) =
            running_test(port, br#"{"tcp":true,"time":30,"parallel":1,"len":131072}"#);
        for _ in 0..50 {
            data.write_all(&[0u8; 65536]).unwrap();
        }
    }
    let t = Instant::now();
    still_serves(&mut srv, port, 4, "a client that vanished mid-test");
    assert_within(
        "the server free again",
        t.elapsed(),
        Duration::from_secs(10),
    );
    // A real client killed mid-test.
    wait_ready_for(&mut srv, 5);
    let victim = spawn_iomark_client(port, &["-t", "30"]);
    // Its data stream is connected (printed after the banner for test 5).
    srv.wait_stdout("connected to", Duration::from_secs(30));
    drop(victim);
    still_serves(&mut srv, port, 6, "a killed client");
}

#[test]
fn client_errors_are_clear() {
    // Refused: nothing listens.
    let port = free_port();
    let out = iomark_client(port, &["-t", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("refused"), "{err}");
    // Unknown host.
    let out = Proc::spawn(&mut iomark_cmd(&[
        "net",
        "client",
        "no-such-host.invalid",
        "-t",
        "1",
    ]))
    .finish(Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("cannot resolve host 'no-such-host.invalid'"),
        "{err}"
    );
    // Bad flags.
    let out = iomark_client(port, &["-P", "200"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("1 to 128"));
}

#[test]
fn ctrl_c_ends_a_client_test_cleanly() {
    let (port, mut srv) = server();
    let mut client = spawn_iomark_client(port, &["-t", "20"]);
    // Its first interval is printed: the test is running.
    client.wait_stdout("0.00-1.00", Duration::from_secs(30));
    let status = std::process::Command::new("kill")
        .args(["-INT", &client.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    let out = client.finish(Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "Ctrl-C exits with 130");
    let text = stdout(&out);
    assert!(
        text.contains("sender") && text.contains("Interrupted"),
        "{text}"
    );
    still_serves(&mut srv, port, 2, "a client stopped with Ctrl-C");
}

/// Run a test by hand up to TEST_RUNNING with one TCP data stream. Returns
/// the control and data connections and the moment just before the data
/// stream was opened: the server's test cannot have started earlier.
fn running_test(port: u16, params: &[u8]) -> (TcpStream, TcpStream, Instant) {
    let mut ctrl = handshake(port);
    send_frame(&mut ctrl, params);
    assert_eq!(read_byte(&mut ctrl), Some(10), "CREATE_STREAMS expected");
    let before = Instant::now();
    let mut data = connect(port);
    data.write_all(COOKIE).unwrap();
    assert_eq!(read_byte(&mut ctrl), Some(1), "TEST_START expected");
    assert_eq!(read_byte(&mut ctrl), Some(2), "TEST_RUNNING expected");
    (ctrl, data, before)
}

/// SERVER_ERROR `code` on `ctrl`, within `ms` milliseconds after `since`;
/// a failure shows what `srv` said, which names why it ended otherwise.
fn ended_with(
    ctrl: &mut TcpStream,
    srv: &Proc,
    code: i32,
    since: Instant,
    ms: Range<u128>,
    what: &str,
) {
    ctrl.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let got = server_error(ctrl);
    let waited = since.elapsed();
    assert_eq!(
        got,
        Ok(code),
        "{what}: after {waited:?}; the server's stderr: {}",
        srv.stderr_so_far()
    );
    assert_took(waited, ms, what);
}

#[test]
fn silent_client_without_an_end_is_released_within_rcv_timeout() {
    let (port, mut srv) = limited_server("2s", &[]);
    // time 0 and no byte or block count: only the client could end these,
    // and it goes silent after TEST_RUNNING. Reverse: it never reads either.
    let cases: &[(&str, &[u8])] = &[
        (
            "time 0",
            br#"{"tcp":true,"time":0,"num":0,"blockcount":0,"parallel":1,"len":131072}"#,
        ),
        (
            "time 0, reverse",
            br#"{"tcp":true,"time":0,"num":0,"blockcount":0,"parallel":1,"len":131072,"reverse":true}"#,
        ),
    ];
    for (n, (name, params)) in (0..).zip(cases) {
        let (mut ctrl, data, before) = running_test(port, params);
        // SERVER_ERROR 144: iperf3's "idle timeout for receiving data".
        let what = format!("{name}: ended, with a 2 s receive timeout,");
        ended_with(&mut ctrl, &srv, 144, before, 1900..15000, &what);
        drop(data);
        // This case was test 2n + 1, the check after it is 2n + 2.
        let after = format!("a silent client ({name})");
        still_serves(&mut srv, port, 2 * n + 2, &after);
    }
}

#[test]
fn client_that_stops_sending_mid_test_is_dropped_within_rcv_timeout() {
    let (port, mut srv) = limited_server("2s", &[]);
    // A 60 s test: without the receive timeout it would hold the server for
    // 60 s + grace.
    let (mut ctrl, mut data, _) = running_test(
        port,
        br#"{"tcp":true,"time":60,"num":0,"blockcount":0,"parallel":1,"len":131072}"#,
    );
    let sending = Instant::now();
    while sending.elapsed() < Duration::from_secs(1) {
        data.write_all(&[0u8; 65536]).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    let stopped = Instant::now();
    let what = "a stalled 60 s test dropped, with a 2 s receive timeout, once the data stopped";
    ended_with(&mut ctrl, &srv, 144, stopped, 1000..15000, what);
    drop(data);
    still_serves(&mut srv, port, 2, "a client that stopped sending");
}

#[test]
fn max_duration_refuses_long_tests_and_caps_unbounded_ones() {
    // A receive timeout well above the cap: a writer starved by a busy
    // host must not turn the cap into an idle end.
    let (port, mut srv) = limited_server("10s", &["--max-duration", "3s"]);
    // A timed test longer than the cap is refused up front (iperf3's code
    // for --server-max-duration), before any stream is opened.
    let mut s = handshake(port);
    send_frame(&mut s, br#"{"tcp":true,"time":10,"parallel":1}"#);
    assert_eq!(server_error(&mut s), Ok(37), "time 10 over a 3 s cap");
    // One within the cap runs.
    let out = iomark_client(port, &["-t", "2", "-J"]);
    assert_ok(&out, "a 2 s test under a 3 s cap");
    // An unbounded test whose client keeps sending is ended at the cap with
    // SERVER_ERROR 160 ("server test duration expired"), like a timed test
    // whose client never sends TEST_END.
    let (mut ctrl, mut data, before) = running_test(
        port,
        br#"{"tcp":true,"time":0,"num":0,"blockcount":0,"parallel":1,"len":131072}"#,
    );
    let writer = std::thread::spawn(move || {
        // Paced, to keep the stream moving without taking a core.
        while data.write_all(&[0u8; 16384]).is_ok() {
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let what = "a time 0 test that never ends capped, with a 3 s --max-duration,";
    ended_with(&mut ctrl, &srv, 160, before, 2900..20000, what);
    drop(ctrl);
    writer.join().unwrap();
    // The refused one, the 2 s one and the unbounded one.
    still_serves(&mut srv, port, 4, "an unbounded test that reached the cap");
}

#[test]
fn iperf3_client_tests_with_counts_and_without_an_end_are_served() {
    require!(have("iperf3"));
    let (port, mut srv) = limited_server("10s", &["--max-duration", "4s"]);
    // -n and -k: the client ends the test, the caps never come into it.
    for args in [
        &["-n", "20M", "-J"][..],
        &["-n", "20M", "-R", "-J"],
        &["-k", "200", "-J"],
        &["-k", "200", "-R", "-J"],
        &["-t", "2", "-J"],
    ] {
        let out = iperf3_client(port, args);
        assert_ok(&out, &format!("iperf3 {args:?}"));
        let doc = json(&out);
        assert!(doc.get("error").is_none(), "{args:?}: {}", doc["error"]);
        assert!(end_bytes(&doc, "sum_received") > 0, "{args:?}");
    }
    // -t 0 (run until stopped) is served, and ended at the cap.
    let t = Instant::now();
    let out = iperf3_client(port, &["-t", "0"]);
    let took = t.elapsed();
    assert!(
        !out.status.success(),
        "iperf3 -t 0 should end with the server's error; stdout:\n{}",
        stdout(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("bits/sec"),
        "iperf3 -t 0 moved no data:\n{text}"
    );
    assert_took(
        took,
        4000..30000,
        "iperf3 -t 0 ended, with a 4 s --max-duration,",
    );
    // Five counted tests and the -t 0 one.
    still_serves(&mut srv, port, 7, "iperf3 -t 0 at the cap");
}

/// Parameters of a UDP `-R` test at 10 Mbit/s: the server streams
/// datagrams to wherever the stream's hello came from.
const UDP_REVERSE: &[u8] =
    br#"{"udp":true,"time":2,"parallel":1,"len":1400,"bandwidth":10000000,"reverse":true}"#;

/// Every datagram waiting on `sock`, without blocking.
fn drain(sock: &UdpSocket) -> usize {
    sock.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 65536];
    let mut n = 0;
    while sock.recv(&mut buf).is_ok() {
        n += 1;
    }
    n
}

#[test]
fn udp_hello_from_another_address_gets_nothing() {
    let (port, mut srv) = server();
    // The address the attacker wants flooded: a socket there counts what
    // arrives. The control connection comes from 127.0.0.1 (connect's
    // choice), the hello from 127.0.0.2.
    let victim = UdpSocket::bind(("127.0.0.2", 0)).expect("bind a UDP socket on 127.0.0.2");
    // The attacker's hello alone: the server waits for one from 127.0.0.1
    // until its 2 s set-up limit, then ends the test, naming both.
    let mut ctrl = handshake(port);
    send_frame(&mut ctrl, UDP_REVERSE);
    assert_eq!(read_byte(&mut ctrl), Some(10), "CREATE_STREAMS expected");
    victim.send_to(b"9876", ("127.0.0.1", port)).unwrap();
    srv.wait_stderr("test #1 ended", Duration::from_secs(30));
    let log = srv.stderr_so_far();
    assert!(
        log.contains("no UDP hello came from 127.0.0.1")
            && log.contains("(the first from 127.0.0.2:"),
        "{log}"
    );
    assert_eq!(read_byte(&mut ctrl), None, "the test must not start");
    // The attacker's hello, then a real one from the control connection's
    // host: the test runs, and its datagrams go there.
    wait_ready_for(&mut srv, 2);
    let mut ctrl = handshake(port);
    send_frame(&mut ctrl, UDP_REVERSE);
    assert_eq!(read_byte(&mut ctrl), Some(10), "CREATE_STREAMS expected");
    victim.send_to(b"9876", ("127.0.0.1", port)).unwrap();
    let client = UdpSocket::bind(("127.0.0.1", 0)).unwrap();
    client.connect(("127.0.0.1", port)).unwrap();
    client.send(b"9876").unwrap();
    assert_eq!(read_byte(&mut ctrl), Some(1), "TEST_START expected");
    assert_eq!(read_byte(&mut ctrl), Some(2), "TEST_RUNNING expected");
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 65536];
    // The reply and 20 data datagrams (about 22 ms at 10 Mbit/s).
    for _ in 0..21 {
        client
            .recv(&mut buf)
            .expect("the test's datagrams on 127.0.0.1");
    }
    srv.wait_stderr("ignored 1 UDP hello(s)", Duration::from_secs(10));
    // The client vanishes; once the server serves the next test it has
    // stopped sending, and everything it sent has arrived (loopback
    // delivers within the send call).
    drop(ctrl);
    still_serves(&mut srv, port, 3, "a hello from another address");
    // Not even the reply: a forged hello gets no answer at all.
    assert_eq!(drain(&victim), 0, "datagrams reached 127.0.0.2");
    wait_ready_for(&mut srv, 4);
    let out = iomark_client(port, &["-u", "-R", "-t", "1", "-J"]);
    assert_ok(&out, "a UDP -R test after a hello from another address");
    assert!(end_bytes(&json(&out), "sum_received") > 0);
}

#[test]
fn udp_reverse_test_outlives_the_receive_timeout_while_its_client_is_there() {
    // The client of a UDP -R test sends nothing once its hello is answered;
    // its host still answers the control connection's keepalive probes,
    // and that keeps a 5 s test alive under a 2 s receive timeout.
    let (port, mut srv) = limited_server("2s", &[]);
    let out = iomark_client(port, &["-u", "-R", "-b", "1M", "-t", "5", "-J"]);
    assert_ok(&out, "a 5 s UDP -R test with a 2 s receive timeout");
    let doc = json(&out);
    let secs = doc["end"]["sum_received"]["seconds"].as_f64().unwrap();
    assert!(secs > 4.9, "the test ended after {secs} s");
    if have("iperf3").is_ok() {
        wait_ready_for(&mut srv, 2);
        let out = iperf3_client(port, &["-u", "-R", "-b", "1M", "-t", "5", "-J"]);
        assert_ok(&out, "iperf3 -u -R -t 5 with a 2 s receive timeout");
        let doc = json(&out);
        assert!(doc.get("error").is_none(), "{}", doc["error"]);
    } else {
        iomark_testrig::skipped("iperf3's UDP -R client (iperf3 is not installed)");
    }
}

#[test]
fn udp_reverse_test_whose_client_answers_nothing_ends_at_the_receive_timeout() {
    require!(can_build_rig());
    let rig = require!(Rig::up(None));
    let port = free_port().to_string();
    let mut srv = Proc::spawn(
        Command::new("ip")
            .args(["netns", "exec", &rig.server_ns])
            .args([
                IOMARK,
                "net",
                "server",
                "--no-store",
                "-p",
                &port,
                "--rcv-timeout",
                "2s",
                "--grace",
                "2s",
            ]),
    );
    rig.wait_server_listening(&port);
    // A 60 s test: without the receive timeout the server would stream to
    // its client for 60 s + grace whatever became of it.
    let mut client = Proc::spawn(
        Command::new("ip")
            .args(["netns", "exec", &rig.client_ns])
            .args([
                IOMARK,
                "net",
                "client",
                "10.201.0.2",
                "-p",
                &port,
                "-u",
                "-R",
                "-b",
                "10M",
                "-t",
                "60",
                "--no-store",
            ]),
    );
    client.wait_stdout("0.00-1.00", Duration::from_secs(30));
    // From now on nothing leaves the client's namespace: no data, no ACK,
    // no answer to a keepalive probe, no ICMP. The server's datagrams still
    // arrive, and its sends still succeed.
    run(
        "tc",
        &[
            "-n",
            &rig.client_ns,
            "qdisc",
            "add",
            "dev",
            &rig.client_if,
            "root",
            "bfifo",
            "limit",
            "0",
        ],
    )
    .expect("drop everything the client sends");
    let silent = Instant::now();
    srv.wait_stderr("test #1 ended", Duration::from_secs(40));
    let log = srv.stderr_so_far();
    assert!(log.contains("(--rcv-timeout)"), "{log}");
    // The last answer came at most a keepalive period (1 s) before the
    // drop; then 2 s, a 250 ms poll and up to 1 s of linger.
    assert_took(
        silent.elapsed(),
        900..15000,
        "a UDP -R test whose client went silent ended, with a 2 s receive timeout,",
    );
    // The server's SERVER_ERROR still reached the client.
    let out = client.finish(Duration::from_secs(30));
    assert!(
        stderr(&out).contains("idle timeout for receiving data"),
        "{}",
        stderr(&out)
    );
    drop(srv);
}

/// A cookie that retitles a terminal window: iperf3 never checks the
/// cookie's alphabet, and `-V` prints it.
const EVIL_COOKIE: &[u8; 37] = b"\x1b]0;owned\x07ghijklmnopqrstuvwxyz234567\0";

/// Parameters whose free text holds escape sequences (C0 and C1).
const EVIL_PARAMS: &[u8] = br#"{"tcp":true,"time":1,"parallel":1,"len":131072,"title":"\u001b]0;title\u0007","extra_data":"\u001b[2J\u009b2J","client_version":"\u001b[31m3.12"}"#;

/// A results message as a peer sends it: CPU `cpu` %, congestion control
/// `congestion` (the text of a JSON string), stream 1 with `bytes`, then
/// the `extra` keys.
fn results_json(cpu: &str, congestion: &str, bytes: &str, extra: &str) -> Vec<u8> {
    format!(
        r#"{{"cpu_util_total":{cpu},"cpu_util_user":0,"cpu_util_system":{cpu},"sender_has_retransmits":-1,"congestion_used":"{congestion}","streams":[{{"id":1,"bytes":{bytes},"retransmits":-1,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1}}]{extra}}}"#
    )
    .into_bytes()
}

/// Escape sequences a peer smuggles in, and the refusal each impossible
/// figure must get, naming the field.
fn bad_results() -> [(&'static str, Vec<u8>, &'static str); 3] {
    [
        (
            "a congestion name with escapes",
            results_json("1.5", r"\u001b]0;owned\u0007cubic", "65536", ""),
            "congestion_used is not a congestion control name (\"\\x1b]0;owned\\x07cubic\")",
        ),
        (
            "CPU 1e308",
            results_json("1e308", "cubic", "65536", ""),
            "cpu_util_total is out of range (1e+308 > 819200)",
        ),
        (
            "bytes -5",
            results_json("1.5", "cubic", "-5", ""),
            "streams[0].bytes is negative (-5 < 0)",
        ),
    ]
}

/// Neither raw ESC nor a raw C1 control (U+009B is CSI) in `text`.
fn assert_no_raw_controls(text: &str, what: &str) {
    assert!(
        !text.contains('\x1b') && !text.contains('\u{9b}'),
        "a raw control character in {what}:\n{text:?}"
    );
}

/// One TCP test by hand, with `cookie` on both connections, up to the
/// results exchange: the server's results, or `None` when it refused ours
/// and closed.
fn exchange_results(
    port: u16,
    cookie: &[u8; 37],
    params: &[u8],
    results: &[u8],
) -> Option<Vec<u8>> {
    let mut ctrl = connect(port);
    ctrl.write_all(cookie).unwrap();
    assert_eq!(read_byte(&mut ctrl), Some(9), "PARAM_EXCHANGE expected");
    send_frame(&mut ctrl, params);
    assert_eq!(read_byte(&mut ctrl), Some(10), "CREATE_STREAMS expected");
    let mut data = connect(port);
    data.write_all(cookie).unwrap();
    assert_eq!(read_byte(&mut ctrl), Some(1), "TEST_START expected");
    assert_eq!(read_byte(&mut ctrl), Some(2), "TEST_RUNNING expected");
    data.write_all(&[0u8; 65536]).unwrap();
    ctrl.write_all(&[4]).unwrap();
    assert_eq!(read_byte(&mut ctrl), Some(13), "EXCHANGE_RESULTS expected");
    send_frame(&mut ctrl, results);
    let mut len = [0u8; 4];
    ctrl.read_exact(&mut len).ok()?;
    let mut theirs = vec![0u8; u32::from_be_bytes(len) as usize];
    ctrl.read_exact(&mut theirs).unwrap();
    assert_eq!(read_byte(&mut ctrl), Some(14), "DISPLAY_RESULTS expected");
    ctrl.write_all(&[16]).unwrap();
    Some(theirs)
}

#[test]
fn server_shows_a_clients_strings_escaped_and_refuses_impossible_results() {
    let (port, mut srv) = server_with(&["-V"]);
    // Asking for a congestion control that is no name: refused with the
    // code iperf3 sends for one it cannot set.
    let mut s = handshake(port);
    send_frame(
        &mut s,
        br#"{"tcp":true,"time":1,"parallel":1,"congestion":"\u001b]0;x\u0007cubic"}"#,
    );
    assert_eq!(server_error(&mut s), Ok(134), "congestion with escapes");
    // Each impossible figure refuses the client's results, naming it.
    for (n, (name, results, refusal)) in (2..).zip(bad_results()) {
        wait_ready_for(&mut srv, n);
        let answer = exchange_results(port, EVIL_COOKIE, EVIL_PARAMS, &results);
        assert_eq!(answer, None, "{name}: the server took the results");
        srv.wait_stderr(&format!("test #{n} ended"), Duration::from_secs(30));
        srv.wait_stderr(refusal, Duration::from_secs(1));
    }
    // Results a test can have: the test completes, the peer's strings shown
    // escaped (`-V` prints the cookie and the client's congestion control).
    wait_ready_for(&mut srv, 5);
    let ok = results_json("1.5", "cubic", "65536", "");
    let theirs = exchange_results(port, EVIL_COOKIE, EVIL_PARAMS, &ok);
    assert!(theirs.is_some(), "valid results refused");
    srv.wait_stdout(r"Cookie: \x1b]0;owned\x07ghij", Duration::from_secs(30));
    srv.wait_stdout("snd_tcp_congestion cubic", Duration::from_secs(30));
    still_serves(
        &mut srv,
        port,
        6,
        "a client's escapes and impossible figures",
    );
    assert_no_raw_controls(&srv.stdout_so_far(), "the server's stdout");
    assert_no_raw_controls(&srv.stderr_so_far(), "the server's stderr");
}

/// The next length-prefixed JSON message on `s`.
fn read_frame(s: &mut TcpStream) -> Vec<u8> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).unwrap();
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).unwrap();
    body
}

/// A server by hand that runs one TCP test with a client and answers the
/// client's results with `results`: its port, and the thread.
fn hand_written_server(results: Vec<u8>) -> (u16, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let serve = move || {
        let (mut ctrl, _) = listener.accept().unwrap();
        ctrl.set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut cookie = [0u8; 37];
        ctrl.read_exact(&mut cookie).unwrap();
        ctrl.write_all(&[9]).unwrap();
        read_frame(&mut ctrl);
        ctrl.write_all(&[10]).unwrap();
        let (mut data, _) = listener.accept().unwrap();
        data.read_exact(&mut cookie).unwrap();
        // Take the client's data until it closes the stream.
        let sink = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            while read_some(&mut data, &mut buf).is_ok_and(|n| n > 0) {}
        });
        ctrl.write_all(&[1, 2]).unwrap();
        assert_eq!(read_byte(&mut ctrl), Some(4), "TEST_END expected");
        ctrl.write_all(&[13]).unwrap();
        read_frame(&mut ctrl);
        send_frame(&mut ctrl, &results);
        // A client that refused the results has closed already.
        let _ = ctrl.write_all(&[14]);
        let _ = read_byte(&mut ctrl);
        drop(ctrl);
        sink.join().unwrap();
    };
    (port, std::thread::spawn(serve))
}

/// `iomark net client -V` against a hand-written server answering with
/// `results`.
fn client_of_hand_written_server(results: Vec<u8>) -> std::process::Output {
    let (port, server) = hand_written_server(results);
    let out = Proc::spawn(&mut iomark_cmd(&[
        "net",
        "client",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-t",
        "1",
        "-V",
        "--no-store",
    ]))
    .finish(Duration::from_secs(60));
    server.join().expect("the hand-written server");
    assert_no_raw_controls(&stdout(&out), "the client's stdout");
    assert_no_raw_controls(&stderr(&out), "the client's stderr");
    out
}

#[test]
fn client_shows_a_servers_strings_escaped_and_refuses_impossible_results() {
    for (name, results, refusal) in bad_results() {
        let out = client_of_hand_written_server(results);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = stderr(&out);
        assert!(err.contains(refusal), "{name}: {err}");
    }
    // Results a test can have, with an interface name that retitles a
    // terminal window and a link speed (1 Mb/s) the 1 Gbit/s it reports
    // exceeds: the warning about that link names the interface, escaped.
    let interface =
        r#","iomark_interface":{"name":"eth\u001b]0;owned\u0007\u009b2J","speed_mbit":1}"#;
    let out = client_of_hand_written_server(results_json("1.5", "cubic", "125000000", interface));
    assert_ok(&out, "a server's escapes in what it may send");
    let err = stderr(&out);
    assert!(
        err.contains(r"the peer's interface eth\x1b]0;owned\x07\x9b2J reports 1 Mb/s"),
        "{err}"
    );
    assert!(
        stdout(&out).contains("rcv_tcp_congestion cubic"),
        "{}",
        stdout(&out)
    );
}
