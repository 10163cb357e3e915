//! The client: connects, describes the test, opens the data streams, decides
//! when the test ends, and exchanges results (message sequence of section
//! 1.5 of the protocol notes; `-R` and `--bidir` in 1.6; UDP set-up in 1.12).

use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

use socket2::{Domain, Socket, Type};

use crate::control::{Control, Wait};
use crate::proto::{code, params, Cookie, Params, Protocol, State};
use crate::proto::{UDP_HELLO, UDP_REPLY, UDP_REPLY_LEGACY};
use crate::report::{IntervalLines, Peering, Role, TestReport};
use crate::session::Session;
use crate::stream::{stream_id, DataSock, Stream, StreamPlan};
use crate::NetError;

/// Below this, the control loop sleeps instead of waiting on the socket.
const PRECISE_SLEEP: Duration = Duration::from_millis(10);
/// How long the client waits for each step of the set-up.
const SETUP_WAIT: Duration = Duration::from_secs(30);

/// What the client runs, in iperf3's terms.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Server host name or address.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// The test, sent to the server as it is but for two fields: a `len`
    /// of 0 becomes iperf3's default (128 KiB for TCP, the control
    /// connection's MSS for UDP), and `client_version` names iomark. The
    /// client ends the test after `omit` + `time` seconds. A `bandwidth` of
    /// 0 is unlimited, as `-b 0` is; iperf3's UDP default is
    /// [`params::DEFAULT_UDP_RATE`].
    pub params: Params,
    /// Report interval; `None` disables interval reports.
    pub interval: Option<Duration>,
    /// Print the text report while running (off for `-J`).
    pub text: bool,
    /// With `text`, add what iperf3's `-V` adds (cookie, test parameters,
    /// per-stream TCP figures).
    pub verbose: bool,
    /// Limit for connecting the control connection.
    pub connect_timeout: Duration,
    /// A flag a signal handler raises (Ctrl-C): the client then sends
    /// CLIENT_TERMINATE and returns what it measured so far.
    pub interrupt: Option<&'static AtomicBool>,
}

impl ClientConfig {
    /// iperf3's defaults against `host`: a 10 s TCP test on one stream.
    pub fn new(host: impl Into<String>) -> ClientConfig {
        ClientConfig {
            host: host.into(),
            port: 5201,
            params: Params {
                len: 0,
                ..Params::default()
            },
            interval: Some(Duration::from_secs(1)),
            text: true,
            verbose: false,
            connect_timeout: Duration::from_secs(10),
            interrupt: None,
        }
    }
}

/// Run one test against a server; text output (if enabled) goes to `out`.
pub fn run(cfg: &ClientConfig, out: &mut dyn Write) -> Result<TestReport, NetError> {
    let addrs: Vec<SocketAddr> = (cfg.host.as_str(), cfg.port)
        .to_socket_addrs()
        .map_err(|source| NetError::Resolve {
            host: cfg.host.clone(),
            source,
        })?
        .collect();
    let sock = connect_any(&addrs, cfg.connect_timeout)?;
    let started = SystemTime::now();
    if cfg.text {
        let _ = writeln!(out, "Connecting to host {}, port {}", cfg.host, cfg.port);
    }
    let mut ctrl = Control::new(sock)?.with_interrupt(cfg.interrupt);
    let (server, control_local) = ctrl.ends()?;
    let cookie = Cookie::random();
    ctrl.write_raw(cookie.wire())?;
    expect(&mut ctrl, State::ParamExchange, "PARAM_EXCHANGE")?;

    let mss = ctrl.mss();
    let params = Params {
        len: match (cfg.params.len, cfg.params.protocol) {
            (0, Protocol::Tcp) => params::DEFAULT_TCP_LEN,
            (0, Protocol::Udp) => mss.filter(|&m| m > 0).unwrap_or(1460),
            (len, _) => len,
        },
        client_version: Some(format!("iomark {}", env!("CARGO_PKG_VERSION"))),
        ..cfg.params.clone()
    };
    ctrl.write_frame(&params.to_json())?;
    expect(&mut ctrl, State::CreateStreams, "CREATE_STREAMS")?;

    let mut streams = Vec::with_capacity(params.stream_count());
    for i in 0..params.stream_count() {
        let sending = params.client_sends(i);
        let sock = match params.protocol {
            Protocol::Tcp => DataSock::Tcp(tcp_stream(server, cfg, &cookie)?),
            Protocol::Udp => DataSock::Udp(udp_stream(server, cfg, params.len, !sending)?),
        };
        let s = Stream::new(stream_id(i), sending, sock)
            .map_err(NetError::io("set up a data stream"))?;
        streams.push(s);
    }
    expect(&mut ctrl, State::TestStart, "TEST_START")?;
    expect(&mut ctrl, State::TestRunning, "TEST_RUNNING")?;

    let plan = StreamPlan::of(&params);
    let peering = Peering {
        role: Role::Client,
        cookie: cookie.as_text(),
        peer_host: cfg.host.clone(),
        peer_port: cfg.port,
        control_local,
        tcp_mss: mss,
    };
    let omit = Duration::from_secs(params.omit as u64);
    let end_after = omit + Duration::from_secs(params.time as u64);
    let mut report = TestReport::opening(peering, params, &streams, started, cfg.interval);
    if cfg.text {
        let _ = write!(out, "{}", report.header_text());
        if cfg.verbose {
            let _ = write!(out, "{}", report.verbose_header_text());
        }
    }

    let mut session = Session::start(streams, plan, omit, cfg.interval)?;
    let end_at = Instant::now() + end_after;
    let mut lines = IntervalLines::new(cfg.text);
    let mut interrupted = false;
    loop {
        let now = Instant::now();
        if now >= end_at {
            break;
        }
        let wake = session.next_wake().map_or(end_at, |w| w.min(end_at));
        let left = wake.saturating_duration_since(now);
        // A socket read timeout counts in jiffies (4 ms at HZ=250) and
        // rounds up; the last few milliseconds are slept precisely, so the
        // test ends on time.
        if left < PRECISE_SLEEP {
            std::thread::sleep(left);
            lines.print(&report, &session.tick(Instant::now()), out);
            continue;
        }
        match ctrl.poll_state(left - PRECISE_SLEEP / 2) {
            Ok(None) => {}
            Ok(Some(s)) => return Err(peer_state(&mut ctrl, s, "the test")),
            Err(NetError::Interrupted) => {
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        }
        lines.print(&report, &session.tick(Instant::now()), out);
    }
    let (totals, last) = session.finish(false);
    lines.print(&report, &last, out);
    if interrupted {
        // Like iperf3: tell the server, keep what was measured, skip the exchange.
        let _ = ctrl.write_state(State::ClientTerminate);
        ctrl.close();
        let mine = session.results(&totals);
        report.close(&mut session.intervals, totals, &mine, None);
        report.interrupted = true;
        drop(session);
        if cfg.text {
            let _ = write!(out, "{}", report.summary_text());
            let _ = writeln!(
                out,
                "\nInterrupted: the figures cover the time until Ctrl-C."
            );
        }
        return Ok(report);
    }
    ctrl.write_state(State::TestEnd)?;
    expect(&mut ctrl, State::ExchangeResults, "EXCHANGE_RESULTS")?;
    let mine = session.results(&totals);
    ctrl.write_frame(&mine.to_json())?;
    let theirs = ctrl.read_results(Wait::within(SETUP_WAIT), "the server's results")?;
    expect(&mut ctrl, State::DisplayResults, "DISPLAY_RESULTS")?;
    ctrl.write_state(State::IperfDone)?;
    ctrl.close();

    report.close(&mut session.intervals, totals, &mine, Some(theirs));
    drop(session);
    if cfg.text {
        if cfg.verbose {
            let _ = writeln!(out, "Test Complete. Summary Results:");
        }
        let _ = write!(out, "{}", report.summary_text());
        if cfg.verbose {
            let _ = write!(out, "{}", report.verbose_summary_text());
        }
        let _ = writeln!(out, "\niperf Done.");
    }
    Ok(report)
}

fn connect_any(addrs: &[SocketAddr], timeout: Duration) -> Result<TcpStream, NetError> {
    let mut last = None;
    for a in addrs {
        match TcpStream::connect_timeout(a, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some((*a, e)),
        }
    }
    match last {
        Some((a, e)) if e.kind() == ErrorKind::ConnectionRefused => Err(NetError::Refused {
            addr: a.to_string(),
        }),
        Some((a, e)) => Err(NetError::io(format!("connect to {a}"))(e)),
        None => Err(NetError::Resolve {
            host: "?".into(),
            source: std::io::Error::new(ErrorKind::NotFound, "no address"),
        }),
    }
}

/// Wait for `want`; a busy or failing server becomes its error.
fn expect(ctrl: &mut Control, want: State, name: &'static str) -> Result<(), NetError> {
    let got = ctrl.read_state(Wait::within(SETUP_WAIT), name)?;
    if got == want {
        Ok(())
    } else {
        Err(peer_state(ctrl, got, name))
    }
}

/// The error a state byte from the server means when it was not expected.
fn peer_state(ctrl: &mut Control, got: State, expected: &'static str) -> NetError {
    match got {
        State::AccessDenied => NetError::Busy,
        State::ServerError => {
            let (c, _errno) = ctrl.read_error_detail();
            if c == code::ACCESS_DENIED {
                return NetError::Busy;
            }
            NetError::ServerError {
                code: c,
                message: code::describe(c),
            }
        }
        State::ServerTerminate => NetError::Terminated { who: "server" },
        got => NetError::Unexpected { got, expected },
    }
}

fn tcp_stream(
    server: SocketAddr,
    cfg: &ClientConfig,
    cookie: &Cookie,
) -> Result<TcpStream, NetError> {
    let sock = Socket::new(Domain::for_address(server), Type::STREAM, None)
        .map_err(NetError::io("create a data socket"))?;
    if let Some(w) = cfg.params.window {
        // Before connect, so the window scale in the SYN fits the buffer.
        let _ = sock.set_send_buffer_size(w as usize);
        let _ = sock.set_recv_buffer_size(w as usize);
    }
    if cfg.params.nodelay {
        let _ = sock.set_nodelay(true);
    }
    sock.connect_timeout(&server.into(), cfg.connect_timeout)
        .map_err(NetError::io(format!("open a data stream to {server}")))?;
    let mut s: TcpStream = sock.into();
    s.write_all(cookie.wire())
        .map_err(NetError::io("send the cookie on a data stream"))?;
    Ok(s)
}

fn udp_stream(
    server: SocketAddr,
    cfg: &ClientConfig,
    len: u32,
    receives: bool,
) -> Result<UdpSocket, NetError> {
    let sock = Socket::new(Domain::for_address(server), Type::DGRAM, None)
        .map_err(NetError::io("create a UDP socket"))?;
    match cfg.params.window {
        Some(w) => {
            let _ = sock.set_send_buffer_size(w as usize);
            let _ = sock.set_recv_buffer_size(w as usize);
        }
        // Most UDP "loss" is receive-buffer overflow (notes 4.b); ask for room.
        None if receives => {
            let _ = sock.set_recv_buffer_size((len as usize * 64).max(4 << 20));
        }
        None => {}
    }
    let any: SocketAddr = if server.is_ipv4() {
        "0.0.0.0:0".parse().expect("literal")
    } else {
        "[::]:0".parse().expect("literal")
    };
    sock.bind(&any.into())
        .map_err(NetError::io("bind a UDP socket"))?;
    sock.connect(&server.into())
        .map_err(NetError::io(format!("connect a UDP socket to {server}")))?;
    let s: UdpSocket = sock.into();
    s.send(&UDP_HELLO)
        .map_err(NetError::io("send the UDP hello"))?;
    s.set_read_timeout(Some(SETUP_WAIT))
        .map_err(NetError::io("set a UDP timeout"))?;
    let mut buf = vec![0u8; 65536];
    // With -R up to two data datagrams may overtake the reply.
    for _ in 0..3 {
        match s.recv(&mut buf) {
            Ok(4) if buf[..4] == UDP_REPLY || buf[..4] == UDP_REPLY_LEGACY => return Ok(s),
            Ok(_) => continue,
            Err(e) => return Err(NetError::io("wait for the server's UDP reply")(e)),
        }
    }
    Err(NetError::Timeout {
        what: "the server's UDP reply",
    })
}
