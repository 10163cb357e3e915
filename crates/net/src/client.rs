//! The client: connects, describes the test, opens the data streams, decides
//! when the test ends, and exchanges results (message sequence of section
//! 1.5 of the protocol notes; `-R` and `--bidir` in 1.6; UDP set-up in 1.12).

use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

use iomark_pipeline::{ReportLines, RunDisplay};
use socket2::{Domain, Socket, Type};

use crate::control::{Control, Wait};
pub use crate::local::{Family, LocalEnd};
use crate::probe;
use crate::proto::{code, params, Cookie, Params, Protocol, State};
use crate::proto::{UDP_HELLO, UDP_REPLY, UDP_REPLY_LEGACY};
use crate::report::{IntervalLines, Peering, Role, TestReport};
use crate::session::Session;
use crate::sockopt::{self, Pinned};
use crate::stream::{stream_id, DataSock, Stream, StreamPlan};
use crate::NetError;

/// Below this, the control loop sleeps instead of waiting on the socket.
const PRECISE_SLEEP: Duration = Duration::from_millis(10);
/// How long the client waits for each step of the set-up.
const SETUP_WAIT: Duration = Duration::from_secs(30);
/// How often a `-n`/`-k` test looks whether its bytes are through.
const COUNTED_POLL: Duration = Duration::from_millis(2);

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
    /// Limit for connecting the control connection (`--connect-timeout`).
    pub connect_timeout: Duration,
    /// Where the client's sockets come from (`-4`/`-6`, `-B`, `--cport`).
    pub local: LocalEnd,
    /// The CPU the client runs on (`-A`).
    pub affinity: Option<u32>,
    /// The rate column's unit (`-f`).
    pub rate_format: crate::RateFormat,
    /// Time TCP handshakes with the server's port before and during the
    /// test (`--no-rtt-probe` turns it off).
    pub rtt_probe: bool,
    /// `--json-stream`: a JSON line at the start, per interval and at the
    /// end, as iperf3 3.17+ (with `text` off).
    pub json_stream: bool,
    /// iperf3's authentication, for a server that requires it.
    pub auth: Option<crate::auth::Credentials>,
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
            local: LocalEnd::default(),
            affinity: None,
            rate_format: crate::RateFormat::default(),
            rtt_probe: true,
            json_stream: false,
            auth: None,
            interrupt: None,
        }
    }
}

/// Run one test against a server; its text (iperf3's, if enabled) goes
/// to `display` a line at a time ([`RunDisplay::report_line`]).
pub fn run(cfg: &ClientConfig, display: &mut dyn RunDisplay) -> Result<TestReport, NetError> {
    run_observed(cfg, display, &mut crate::live::Quiet)
}

/// [`run`], telling `obs` of the test as it opens and of each interval
/// (the store's sink, through [`crate::recording::LiveClient`]).
pub fn run_observed(
    cfg: &ClientConfig,
    display: &mut dyn RunDisplay,
    obs: &mut dyn crate::live::TestObserver,
) -> Result<TestReport, NetError> {
    let out = &mut ReportLines::new(display);
    let _pinned = match cfg.affinity {
        Some(cpu) => Some(Pinned::to(cpu).map_err(|e| {
            NetError::Invalid(format!(
                "-A {cpu}: cannot run on CPU {cpu}: {e}; give a CPU of this host (0 to {})",
                std::thread::available_parallelism().map_or(0, |n| n.get() - 1)
            ))
        })?),
        None => None,
    };
    let addrs: Vec<SocketAddr> = (cfg.host.as_str(), cfg.port)
        .to_socket_addrs()
        .map_err(|source| NetError::Resolve {
            host: cfg.host.clone(),
            source,
        })?
        .filter(|a| match cfg.local.family {
            Family::Any => true,
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
        })
        .filter(|a| cfg.local.bind.is_none_or(|b| b.is_ipv4() == a.is_ipv4()))
        .collect();
    if addrs.is_empty() {
        return Err(NetError::Invalid(format!(
            "{} has no address of the family asked for (-4/-6, or that of -B)",
            cfg.host
        )));
    }
    // The kernel's word on -C, -M, -S and --fq-rate before the server is
    // involved: a refusal then ends the run without a half-set-up test.
    let probe_ty = match cfg.params.protocol {
        Protocol::Tcp => Type::STREAM,
        Protocol::Udp => Type::DGRAM,
    };
    let probe = Socket::new(Domain::for_address(addrs[0]), probe_ty, None)
        .map_err(NetError::io("create a socket"))?;
    sockopt::apply(socket2::SockRef::from(&probe), &cfg.params, addrs[0])
        .map_err(sockopt::Refused::into_client_error)?;
    drop(probe);
    let connecting = Instant::now();
    let sock = connect_any(&addrs, &cfg.local, cfg.connect_timeout)?;
    // The handshakes before the load are the idle round trips: this one
    // and each TCP data stream's.
    let mut idle_rtts = vec![connecting.elapsed()];
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
        authtoken: match &cfg.auth {
            Some(c) => Some(c.token(unix_now())?),
            None => None,
        },
        ..cfg.params.clone()
    };
    ctrl.write_frame(&params.to_json())?;
    expect(&mut ctrl, State::CreateStreams, "CREATE_STREAMS")?;

    let mut streams = Vec::with_capacity(params.stream_count());
    for i in 0..params.stream_count() {
        let sending = params.client_sends(i);
        // --cport: stream i from that port + i, as iperf3 (its reverse
        // streams of --bidir from the port + P + i).
        let port = cfg.local.cport.map_or(0, |p| p.wrapping_add(i as u16));
        let sock = match params.protocol {
            Protocol::Tcp => {
                let (s, handshake) = tcp_stream(server, cfg, &params, port, &cookie)?;
                idle_rtts.push(handshake);
                DataSock::Tcp(s)
            }
            Protocol::Udp => DataSock::Udp(udp_stream(server, cfg, &params, port, !sending)?),
        };
        let s = Stream::new(stream_id(i), sending, sock)
            .map_err(NetError::io("set up a data stream"))?;
        streams.push(s);
    }
    expect(&mut ctrl, State::TestStart, "TEST_START")?;
    expect(&mut ctrl, State::TestRunning, "TEST_RUNNING")?;
    // The test's clock starts here, as the server's starts when it says so.
    let running = Instant::now();

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
    let end_bytes = StreamPlan::end_bytes(&params);
    // A -n/-k test has no time: it ends when its bytes are through.
    let end_after = match end_bytes {
        None => omit + Duration::from_secs(params.time as u64),
        Some(_) => Duration::MAX,
    };
    let mut report = TestReport::opening(peering, params, &streams, started, cfg.interval);
    report.rate_format = cfg.rate_format;
    if cfg.text {
        let _ = write!(out, "{}", report.header_text());
        if cfg.verbose {
            let _ = write!(out, "{}", report.verbose_header_text());
        }
    }
    if cfg.json_stream {
        let _ = writeln!(out, "{}", report.json_stream_start());
        let _ = out.flush();
    }

    let mut session = Session::start(streams, plan, omit, cfg.interval, running)?;
    // Told once the streams move data: the store's work (the observer
    // records the run as begun) overlaps the test instead of delaying it.
    obs.started(&report);
    // Under load from the end of the omit period, or a quarter second in.
    let loaded_probe = cfg.rtt_probe.then(|| {
        probe::Loaded::start(
            server,
            cfg.local.clone(),
            omit.max(Duration::from_millis(250)),
        )
    });
    let end_at = running.checked_add(end_after);
    let mut lines = if cfg.json_stream {
        IntervalLines::json_stream()
    } else {
        IntervalLines::new(cfg.text)
    };
    let mut interrupted = false;
    loop {
        let now = Instant::now();
        if end_at.is_some_and(|e| now >= e) {
            break;
        }
        // -n/-k: over once this host has sent or received them all, as
        // iperf3 decides; the streams are checked every COUNTED_POLL.
        let mut wake = session
            .next_wake()
            .into_iter()
            .chain(end_at)
            .fold(now + SETUP_WAIT, Instant::min);
        if let Some(total) = end_bytes {
            let (sent, received) = session.bytes_sent_received();
            if sent >= total || received >= total {
                break;
            }
            wake = wake.min(now + COUNTED_POLL);
        }
        let left = wake.saturating_duration_since(now);
        // A socket read timeout counts in jiffies (4 ms at HZ=250) and
        // rounds up; the last few milliseconds are slept precisely, so the
        // test ends on time.
        if left < PRECISE_SLEEP && end_bytes.is_none() {
            std::thread::sleep(left);
            let recs = session.tick(Instant::now());
            crate::live::tell(obs, &report, &recs);
            lines.print(&report, &recs, out);
            continue;
        }
        let poll = left
            .saturating_sub(PRECISE_SLEEP / 2)
            .max(Duration::from_millis(1));
        match ctrl.poll_state(poll) {
            Ok(None) => {}
            Ok(Some(s)) => return Err(peer_state(&mut ctrl, s, "the test")),
            Err(NetError::Interrupted) => {
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        }
        let recs = session.tick(Instant::now());
        crate::live::tell(obs, &report, &recs);
        lines.print(&report, &recs, out);
    }
    let (totals, last) = session.finish(false);
    report.rtt_probe = crate::RttProbe {
        idle: idle_rtts,
        loaded: loaded_probe.map(probe::Loaded::finish).unwrap_or_default(),
    };
    crate::live::tell(obs, &report, &last);
    lines.print(&report, &last, out);
    if interrupted {
        // Like iperf3: tell the server, keep what was measured, skip the exchange.
        let _ = ctrl.write_state(State::ClientTerminate);
        ctrl.close();
        let mine = session.results(&totals);
        report.close(&mut session.intervals, totals, &mine, None);
        report.interrupted = true;
        drop(session);
        if cfg.json_stream {
            let _ = writeln!(out, "{}", report.json_stream_end());
        }
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
    if cfg.json_stream {
        let _ = writeln!(out, "{}", report.json_stream_end());
    }
    if cfg.text {
        if cfg.verbose {
            let _ = writeln!(out, "Test Complete. Summary Results:");
        }
        let _ = write!(out, "{}", report.summary_text());
        if cfg.verbose {
            let _ = write!(out, "{}", report.verbose_summary_text());
        }
        let _ = write!(out, "{}", report.latency_text());
        // --get-server-output, as iperf3 prints it.
        if let Some(r) = &report.remote {
            if let Some(t) = &r.server_output_text {
                let _ = write!(out, "\nServer output:\n{t}");
            } else if let Some(j) = &r.server_output_json {
                let _ = write!(out, "\nServer JSON output:\n{j:#}\n");
            }
        }
        let _ = writeln!(out, "\niperf Done.");
    }
    Ok(report)
}

/// Seconds since 1970, the authtoken's timestamp.
fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn connect_any(
    addrs: &[SocketAddr],
    local: &LocalEnd,
    timeout: Duration,
) -> Result<TcpStream, NetError> {
    let mut last = None;
    for a in addrs {
        let sock = local.socket(*a, Type::STREAM, 0)?;
        match sock.connect_timeout(&(*a).into(), timeout) {
            Ok(()) => return Ok(sock.into()),
            Err(e) if e.kind() == ErrorKind::TimedOut || e.kind() == ErrorKind::WouldBlock => {
                last = Some((
                    *a,
                    std::io::Error::new(
                        ErrorKind::TimedOut,
                        format!("no answer within {timeout:?} (--connect-timeout)"),
                    ),
                ))
            }
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
    params: &Params,
    port: u16,
    cookie: &Cookie,
) -> Result<(TcpStream, Duration), NetError> {
    let sock = cfg.local.socket(server, Type::STREAM, port)?;
    // Before connect, so the window scale and MSS in the SYN fit.
    sockopt::apply(socket2::SockRef::from(&sock), params, server)
        .map_err(sockopt::Refused::into_client_error)?;
    let t = Instant::now();
    sock.connect_timeout(&server.into(), cfg.connect_timeout)
        .map_err(NetError::io(format!("open a data stream to {server}")))?;
    let handshake = t.elapsed();
    let mut s: TcpStream = sock.into();
    s.write_all(cookie.wire())
        .map_err(NetError::io("send the cookie on a data stream"))?;
    Ok((s, handshake))
}

fn udp_stream(
    server: SocketAddr,
    cfg: &ClientConfig,
    params: &Params,
    port: u16,
    receives: bool,
) -> Result<UdpSocket, NetError> {
    let len = params.len;
    let sock = cfg.local.socket(server, Type::DGRAM, port)?;
    sockopt::apply(socket2::SockRef::from(&sock), params, server)
        .map_err(sockopt::Refused::into_client_error)?;
    match params.window {
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
    if cfg.local.bind.is_none() && port == 0 {
        let any: SocketAddr = if server.is_ipv4() {
            "0.0.0.0:0".parse().expect("literal")
        } else {
            "[::]:0".parse().expect("literal")
        };
        sock.bind(&any.into())
            .map_err(NetError::io("bind a UDP socket"))?;
    }
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
