//! The server's own guards, against a hand-driven client on loopback: the
//! receive timeout that ends a silent test, and the `--max-duration` cap
//! that refuses a long test or ends one without a time.

use super::*;
use crate::proto::frame;
use std::io::Read;
use std::net::IpAddr;
use std::thread::JoinHandle;

const COOKIE: &[u8; Cookie::LEN] = b"abcdefghijklmnopqrstuvwxyz234567abcd\0";

/// A one-off server on a loopback port; the thread returns its stderr.
fn one_off(set: impl FnOnce(&mut ServerConfig)) -> (u16, JoinHandle<String>) {
    let mut cfg = ServerConfig::new();
    cfg.port = 0;
    cfg.bind = Some(IpAddr::from([127, 0, 0, 1]));
    cfg.one_off = true;
    cfg.text = false;
    cfg.rcv_timeout = Duration::from_millis(500);
    set(&mut cfg);
    let server = Server::bind(cfg).unwrap();
    let port = server.local_addr().port();
    let h = std::thread::spawn(move || {
        let mut err = Vec::new();
        server
            .serve(&mut std::io::sink(), &mut err, &mut crate::live::Quiet)
            .unwrap();
        String::from_utf8(err).unwrap()
    });
    (port, h)
}

fn byte(s: &mut TcpStream) -> u8 {
    let mut b = [0u8; 1];
    s.read_exact(&mut b).unwrap();
    b[0]
}

/// Cookie and parameters sent; returns the control connection.
fn ask(port: u16, params: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(COOKIE).unwrap();
    assert_eq!(byte(&mut s), State::ParamExchange.byte());
    s.write_all(&frame::encode(params)).unwrap();
    s
}

/// Up to TEST_RUNNING with one TCP stream; the moment before it opened.
fn run(port: u16, params: &[u8]) -> (TcpStream, TcpStream, Instant) {
    let mut ctrl = ask(port, params);
    assert_eq!(byte(&mut ctrl), State::CreateStreams.byte());
    let before = Instant::now();
    let mut data = TcpStream::connect(("127.0.0.1", port)).unwrap();
    data.write_all(COOKIE).unwrap();
    assert_eq!(byte(&mut ctrl), State::TestStart.byte());
    assert_eq!(byte(&mut ctrl), State::TestRunning.byte());
    (ctrl, data, before)
}

fn server_error(s: &mut TcpStream) -> i32 {
    assert_eq!(byte(s), State::ServerError.byte());
    let mut c = [0u8; 4];
    s.read_exact(&mut c).unwrap();
    i32::from_be_bytes(c)
}

#[test]
fn a_silent_test_without_an_end_ends_at_the_receive_timeout() {
    let (port, h) = one_off(|_| {});
    let (mut ctrl, _data, before) = run(port, br#"{"tcp":true,"time":0,"len":1000}"#);
    assert_eq!(server_error(&mut ctrl), code::NO_MSG);
    let waited = before.elapsed();
    assert!(waited >= Duration::from_millis(500), "{waited:?}");
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    let err = h.join().unwrap();
    assert!(err.contains("--rcv-timeout"), "{err}");
}

#[test]
fn a_time_over_the_cap_is_refused() {
    let (port, h) = one_off(|c| c.max_duration = Duration::from_secs(2));
    let mut ctrl = ask(port, br#"{"tcp":true,"time":3}"#);
    assert_eq!(server_error(&mut ctrl), code::MAX_DURATION);
    let err = h.join().unwrap();
    assert!(
        err.contains("3 s test") && err.contains("--max-duration"),
        "{err}"
    );
}

#[test]
fn a_moving_test_without_an_end_is_capped() {
    let (port, h) = one_off(|c| {
        c.max_duration = Duration::from_secs(1);
        // Well above the writer's pauses, even on a busy host.
        c.rcv_timeout = Duration::from_secs(5);
    });
    let (mut ctrl, mut data, before) = run(port, br#"{"tcp":true,"time":0,"len":1000}"#);
    let w = std::thread::spawn(move || {
        while data.write_all(&[0u8; 1000]).is_ok() {
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    assert_eq!(server_error(&mut ctrl), code::SERVER_DURATION);
    let waited = before.elapsed();
    assert!(waited >= Duration::from_secs(1), "{waited:?}");
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    drop(ctrl);
    w.join().unwrap();
    let err = h.join().unwrap();
    assert!(err.contains("--max-duration"), "{err}");
}
