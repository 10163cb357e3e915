//! The server: one test at a time on one listening port (section 1.1).
//!
//! An acceptor thread owns the listener and decides what each new TCP
//! connection is from the server's phase: the control connection of a new
//! test when idle, a data stream while streams are being created, and
//! otherwise a second client, answered with ACCESS_DENIED at once so the
//! running test never waits on it (section 1.10). No client can keep the
//! server busy for long: every read of a message the client owes has a
//! first-byte and a total timeout, a running test ends once its data streams
//! stay still for the receive timeout (iperf3's `--rcv-timeout`), and every
//! test has an end the server enforces itself: duration + omit + grace for a
//! timed test, the `--max-duration` cap for one without a time.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use socket2::SockRef;

use crate::control::{Control, Wait};
use crate::live::{ServedTest, ServerObserver, TestObserver};
use crate::proto::{code, Cookie, Params, Protocol, State, MAX_PARAMS_LEN};
use crate::report::{IntervalLines, Peering, Role, TestReport};
use crate::server_gate::{Gate, NewTest, Release};
use crate::server_output::Captured;
use crate::session::Session;
use crate::sockopt::{self, Pinned};
use crate::stream::{stream_id, DataSock, Stream, StreamPlan};
use crate::NetError;

mod config;
mod sockets;
pub use config::ServerConfig;
use sockets::{linger, listen, udp_listener, UdpHellos};

/// How often a running test looks at its data counters: an idle test is
/// ended at most this much after the receive timeout.
const PROGRESS_POLL: Duration = Duration::from_millis(250);

/// A bound server, ready to [`Server::serve`].
pub struct Server {
    cfg: ServerConfig,
    local: SocketAddr,
    gate: Gate,
    /// New tests from the acceptor; in a mutex so that test threads can
    /// share the server (a receiver is not `Sync`).
    tests: Mutex<Receiver<NewTest>>,
}

impl Server {
    /// Bind the listener and start accepting.
    pub fn bind(cfg: ServerConfig) -> Result<Server, NetError> {
        let listener = listen(&cfg)?;
        let local = listener
            .local_addr()
            .map_err(NetError::io("read the listening address"))?;
        let gate = Gate::new(cfg.max_clients, cfg.owed(cfg.first_byte_timeout));
        let (tx, tests) = mpsc::channel();
        let acceptor = gate.clone();
        std::thread::Builder::new()
            .name("net-accept".into())
            .spawn(move || acceptor.accept_loop(listener, tx))
            .map_err(NetError::io("start the acceptor thread"))?;
        Ok(Server {
            cfg,
            local,
            gate,
            tests: Mutex::new(tests),
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    pub(crate) fn config(&self) -> &ServerConfig {
        &self.cfg
    }

    /// Whether the server was told to stop.
    pub(crate) fn interrupted(&self) -> bool {
        self.cfg
            .interrupt
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The next test's control connection, waiting at most `wait`.
    pub(crate) fn next_test(&self, wait: Duration) -> Result<NewTest, RecvTimeoutError> {
        self.tests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .recv_timeout(wait)
    }

    /// Serve tests until `-1` says stop; text output goes to `out`. A test
    /// that fails is reported to `err` and the server goes on. `obs` hears
    /// each test as it opens and each of its intervals, and each busy
    /// period's finished tests once no test runs (one test each with
    /// iperf3's one at a time; those that overlapped with `--max-clients`),
    /// in the order they ended.
    pub fn serve(
        &self,
        out: &mut dyn Write,
        err: &mut dyn Write,
        obs: &mut dyn ServerObserver,
    ) -> Result<(), NetError> {
        if self.gate.checks_cookies() {
            return self.serve_many(out, err, obs);
        }
        let mut n = 0;
        loop {
            if self.cfg.text {
                let _ = writeln!(
                    out,
                    "-----------------------------------------------------------\n\
                     Server listening on {} (test #{})\n\
                     -----------------------------------------------------------",
                    self.local.port(),
                    n + 1
                );
                let _ = out.flush();
            }
            let (conn, cookie) = loop {
                if self.interrupted() {
                    return Ok(());
                }
                match self.next_test(Duration::from_millis(100)) {
                    Ok(t) => break t,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(NetError::Closed {
                            during: "accepting connections",
                        })
                    }
                }
            };
            n += 1;
            let mut test = ServedTest {
                obs: &mut *obs,
                test: n,
            };
            let result = self.serve_test(conn, cookie, n, out, err, &mut test);
            match result {
                Ok(report) => {
                    if self.cfg.json {
                        let _ = writeln!(out, "{}", report.to_iperf3_json());
                    }
                    let _ = out.flush();
                    obs.served(vec![(n, report)]);
                }
                Err(e) => {
                    // The message may quote what the client sent.
                    let e = iomark_model::escape::escape_controls(&e.to_string()).into_owned();
                    let _ = writeln!(err, "iomark: test #{n} ended: {e}");
                    obs.failed(n);
                }
            }
            let _ = out.flush();
            if self.cfg.one_off {
                return Ok(());
            }
        }
    }

    pub(crate) fn serve_test(
        &self,
        conn: TcpStream,
        cookie: Option<Cookie>,
        n: u32,
        out: &mut dyn Write,
        err: &mut dyn Write,
        obs: &mut dyn TestObserver,
    ) -> Result<TestReport, NetError> {
        let cfg = &self.cfg;
        let mut release = Release::of(&self.gate);
        let mut ctrl = Control::new(conn)?;
        let (peer, control_local) = ctrl.ends()?;
        // The dual-stack listener sees an IPv4 client as ::ffff:a.b.c.d;
        // iperf3 prints, and the store keeps, the plain a.b.c.d.
        let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
        let setup_end = Instant::now() + cfg.setup_timeout;
        let wait = Wait {
            first: Some(cfg.owed(cfg.first_byte_timeout)),
            deadline: Some(setup_end),
        };
        let cookie = match cookie.map_or_else(
            || ctrl.read_bytes(Cookie::LEN, wait, "the cookie"),
            |c| Ok(c.wire().to_vec()),
        ) {
            Ok(b) => Cookie::from_wire(b.try_into().expect("read_bytes returns LEN bytes")),
            Err(e) => {
                release.now();
                ctrl.write_server_error(code::RECV_COOKIE, 0);
                return Err(e);
            }
        };
        let accepted = if cfg.text {
            format!(
                "Accepted connection from {}, port {}\n",
                peer.ip(),
                peer.port()
            )
        } else {
            String::new()
        };
        let _ = write!(out, "{accepted}");
        ctrl.write_state(State::ParamExchange)?;
        let params = match ctrl
            .read_frame(MAX_PARAMS_LEN, wait, "the parameters")
            .and_then(|b| Params::from_json(&b).map_err(NetError::from))
        {
            Ok(p) => p,
            Err(e) => {
                let c = match &e {
                    NetError::Proto(p) => p.iperf_code(),
                    _ => code::RECV_PARAMS,
                };
                release.now();
                ctrl.write_server_error(c, 0);
                return Err(e);
            }
        };
        if let Err(why) = cfg.authorize(&params, out) {
            release.now();
            ctrl.write_server_error(code::AUTH_TEST, 0);
            return Err(why);
        }
        let out = &mut Captured::new(out, params.get_server_output, &accepted);
        if Duration::from_secs(params.time.into()) > cfg.max_duration {
            release.now();
            ctrl.write_server_error(code::MAX_DURATION, 0);
            return Err(NetError::DurationRefused {
                asked: params.time,
                max: cfg.max_duration,
            });
        }

        // -A n,m: this test's thread, and the stream threads it starts, on
        // CPU m until the test ends.
        let _pinned = match params.server_affinity.map(Pinned::to) {
            Some(Err(e)) => {
                release.now();
                ctrl.write_server_error(code::AFFINITY, e.raw_os_error().unwrap_or(0));
                return Err(NetError::Invalid(format!(
                    "the client asked for CPU {} (-A n,m), which this host refuses: {e}",
                    params.server_affinity.unwrap_or(0)
                )));
            }
            pinned => pinned.and_then(Result::ok),
        };
        let total = params.stream_count();
        let udp = match params.protocol {
            Protocol::Udp => match udp_listener(self.local, None) {
                Ok(u) => Some(u),
                Err(e) => {
                    release.now();
                    ctrl.write_server_error(code::LISTEN, 0);
                    return Err(e);
                }
            },
            Protocol::Tcp => None,
        };
        let (tx, rx) = mpsc::channel();
        if udp.is_none() {
            self.gate.streams_to(&cookie, tx);
        }
        ctrl.write_state(State::CreateStreams)?;
        let socks = match udp {
            None => self.accept_tcp_streams(&mut ctrl, &rx, &cookie, total, setup_end),
            Some(first) => {
                let mut hellos = UdpHellos {
                    sock: first,
                    local: self.local,
                    control_peer: peer.ip(),
                    ignored: 0,
                    first_ignored: None,
                };
                let socks = hellos.accept(&params, total, setup_end);
                if let (Ok(_), Some(from)) = (&socks, hellos.first_ignored) {
                    let _ = writeln!(
                        err,
                        "iomark: test #{n}: ignored {} UDP hello(s) from an address other than \
                         the control connection's {} (the first from {from}): UDP data goes \
                         only to the control connection's address",
                        hellos.ignored,
                        peer.ip().to_canonical()
                    );
                }
                socks
            }
        };
        self.gate.streams_done(&cookie);
        let socks = socks?;
        let mut streams = Vec::with_capacity(total);
        for (i, sock) in socks.into_iter().enumerate() {
            let sending = !params.client_sends(i);
            if let DataSock::Tcp(s) = &sock {
                if let Err(r) = sockopt::apply(SockRef::from(s), &params, peer) {
                    release.now();
                    ctrl.write_server_error(r.code, r.source.raw_os_error().unwrap_or(0));
                    return Err(NetError::Invalid(format!(
                        "the client asked for {} {}, which this host's kernel refuses: {}",
                        r.flag, r.asked, r.source
                    )));
                }
            }
            streams.push(
                Stream::new(stream_id(i), sending, sock)
                    .map_err(NetError::io("set up a data stream"))?,
            );
        }
        ctrl.write_state(State::TestStart)?;
        ctrl.write_state(State::TestRunning)?;
        // The test's clock starts as the client is told to start: the
        // report and the store's work below come out of the first interval.
        let running = Instant::now();

        let plan = StreamPlan::of(&params);
        let peering = Peering {
            role: Role::Server,
            cookie: cookie.as_text(),
            peer_host: peer.ip().to_string(),
            peer_port: peer.port(),
            control_local,
            tcp_mss: ctrl.mss(),
        };
        let mut report =
            TestReport::opening(peering, params, &streams, SystemTime::now(), cfg.interval);
        if cfg.json_stream {
            let _ = writeln!(out, "{}", report.json_stream_start());
            let _ = out.flush();
        }
        if cfg.text {
            let _ = write!(out, "{}", report.header_text());
            if cfg.verbose {
                let _ = write!(out, "{}", report.verbose_header_text());
            }
        }
        let omit = Duration::from_secs(report.params.omit as u64);
        let mut session = Session::start(streams, plan, omit, cfg.interval, running)?;
        // Told once the streams move data, as the client does.
        obs.started(&report);
        // The client decides the end; these timers only catch a client that
        // never does. A timed test gets iperf3's duration + omit + grace. A
        // test without a time (-t 0, or -n/-k, whose length the server cannot
        // know) would otherwise hold the only test slot for as long as its
        // client likes, so it gets the --max-duration cap instead.
        let timed = report.params.time > 0;
        let give_up = running.checked_add(if timed {
            omit + Duration::from_secs(report.params.time.into()) + cfg.grace
        } else {
            omit + cfg.max_duration
        });
        // iperf3's --rcv-timeout watches only received data, so it never
        // ends a reverse test. Here it watches every sign that the client is
        // there: bytes received, and TCP bytes sent (they stall when the
        // client stops reading). For a server that only receives that is
        // iperf3's rule. UDP datagrams leave whether or not anyone is there,
        // so they count only as of the last time the client's host answered
        // on the control connection, which keepalive probes ask it to do
        // while the test runs: a client that vanished, or whose replies no
        // longer arrive, ends the test at the receive timeout instead of
        // taking a stream of datagrams until --max-duration.
        let sends_udp =
            report.params.protocol == Protocol::Udp && report.streams.iter().any(|s| s.sending);
        if sends_udp {
            ctrl.keep_alive(cfg.keepalive_period())?;
        }
        let mut with_peer = session.moved_with_peer();
        let mut udp_sent = session.udp_sent();
        let mut moved_at = running;
        let mut lines = if cfg.json_stream {
            IntervalLines::json_stream()
        } else {
            IntervalLines::new(cfg.text)
        };
        let outcome = loop {
            let now = Instant::now();
            let m = session.moved_with_peer();
            if m != with_peer {
                with_peer = m;
                moved_at = now;
            }
            let u = session.udp_sent();
            if u != udp_sent {
                udp_sent = u;
                // Without TCP_INFO nothing tells a live client from a
                // vanished one: the datagrams count, as iperf3 counts them.
                let heard = ctrl
                    .last_heard()
                    .map_or(Some(now), |ago| now.checked_sub(ago));
                moved_at = heard.map_or(moved_at, |h| moved_at.max(h));
            }
            if self.interrupted() {
                let _ = ctrl.write_state(State::ServerTerminate);
                break Err(NetError::Terminated { who: "server" });
            }
            if give_up.is_some_and(|g| now >= g) {
                ctrl.write_server_error(code::SERVER_DURATION, 0);
                linger(&mut ctrl);
                break Err(if timed {
                    NetError::Timeout {
                        what: "the client's TEST_END (test duration expired)",
                    }
                } else {
                    NetError::DurationCapped {
                        max: cfg.max_duration,
                    }
                });
            }
            let idle_at = moved_at.checked_add(cfg.rcv_timeout);
            if idle_at.is_some_and(|t| now >= t) {
                ctrl.write_server_error(code::NO_MSG, 0);
                linger(&mut ctrl);
                break Err(NetError::Idle {
                    limit: cfg.rcv_timeout,
                });
            }
            let wake = [session.next_wake(), give_up, idle_at]
                .into_iter()
                .flatten()
                .fold(now + PROGRESS_POLL, Instant::min);
            match ctrl.poll_state(wake.saturating_duration_since(now)) {
                Ok(None) => {}
                Ok(Some(State::TestEnd)) => break Ok(()),
                Ok(Some(State::ClientTerminate)) => {
                    break Err(NetError::Terminated { who: "client" })
                }
                Ok(Some(s)) => {
                    break Err(NetError::Unexpected {
                        got: s,
                        expected: "TEST_END",
                    })
                }
                Err(e) => break Err(e),
            }
            let recs = session.tick(Instant::now());
            lines.print(&report, &recs, out);
            crate::live::tell(obs, &report, &recs);
        };
        if outcome.is_err() {
            release.now();
        }
        // The server closes the data sockets first (section 1.5).
        let (totals, last) = session.finish(true);
        outcome?;
        lines.print(&report, &last, out);
        crate::live::tell(obs, &report, &last);
        ctrl.write_state(State::ExchangeResults)?;
        let theirs = ctrl.read_results(
            Wait::within(cfg.owed(cfg.setup_timeout)),
            "the client's results",
        )?;
        let mut mine = session.results(&totals);
        out.fill(&mut mine, &report, &session.intervals, &totals, cfg.json);
        // For an iomark client's record; iperf3 ignores the key.
        mine.iomark_interface = crate::iface::describe(control_local.ip())
            .and_then(|i| iomark_host::nic_chain(&i.name))
            .map(Box::new);
        ctrl.write_frame(&mine.to_json())?;
        ctrl.write_state(State::DisplayResults)?;
        release.now();
        // IPERF_DONE or a close; either ends the test.
        let _ = ctrl.read_state(Wait::within(cfg.owed(cfg.first_byte_timeout)), "IPERF_DONE");
        ctrl.close();

        report.close(&mut session.intervals, totals, &mine, Some(theirs));
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
        }
        Ok(report)
    }
}

/// Bind, listen and serve forever (or one test with `-1`) on stdout/stderr,
/// telling `obs` of each test as it goes and of each busy period's tests.
pub fn run(cfg: ServerConfig, obs: &mut dyn ServerObserver) -> Result<(), NetError> {
    let server = Server::bind(cfg)?;
    server.serve(&mut std::io::stdout(), &mut std::io::stderr(), obs)
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
