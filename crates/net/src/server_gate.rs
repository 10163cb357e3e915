//! Which test a new TCP connection belongs to, and who is told "busy".
//!
//! With one test at a time (iperf3's way, `--max-clients 1`) the acceptor
//! decides by the server's phase alone, without reading a byte: the
//! control connection of a new test when idle, a data stream while streams
//! are being created, and otherwise ACCESS_DENIED at once (section 1.10).
//!
//! With several tests at once the phase cannot tell a data stream from a
//! new client, so each new connection's 37-byte cookie is read first, on a
//! short-lived thread of its own with the first-byte timeout: a cookie of a
//! test that is creating its streams makes the connection that test's data
//! stream; any other cookie is a new test while fewer than `--max-clients`
//! run, and is denied otherwise.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::proto::{Cookie, State};

/// A new test's control connection, with its cookie when the acceptor
/// already read it (several tests at once).
pub(crate) type NewTest = (TcpStream, Option<Cookie>);

/// What the one-test acceptor does with the next connection.
pub(crate) enum Phase {
    Idle,
    Streams(Sender<TcpStream>),
    Busy,
}

/// How connections reach tests.
#[derive(Clone)]
pub(crate) enum Gate {
    /// One test at a time, decided by the phase.
    One(Arc<Mutex<Phase>>),
    /// Up to `max` tests at once, decided by each connection's cookie.
    Many(Arc<Registry>),
}

/// The tests of a server that runs several at once.
pub(crate) struct Registry {
    max: usize,
    running: Mutex<usize>,
    /// Tests creating their streams, by cookie.
    creating: Mutex<HashMap<[u8; Cookie::LEN], Sender<TcpStream>>>,
    first_byte: Duration,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Gate {
    /// The gate for `max_clients` tests at once.
    pub fn new(max_clients: usize, first_byte: Duration) -> Gate {
        if max_clients <= 1 {
            Gate::One(Arc::new(Mutex::new(Phase::Idle)))
        } else {
            Gate::Many(Arc::new(Registry {
                max: max_clients,
                running: Mutex::new(0),
                creating: Mutex::new(HashMap::new()),
                first_byte,
            }))
        }
    }

    /// Route connections with cookie `cookie` to `tx` until
    /// [`Gate::streams_done`].
    pub fn streams_to(&self, cookie: &Cookie, tx: Sender<TcpStream>) {
        match self {
            Gate::One(p) => *lock(p) = Phase::Streams(tx),
            Gate::Many(r) => {
                lock(&r.creating).insert(*cookie.wire(), tx);
            }
        }
    }

    /// The test has its streams: later connections are not its.
    pub fn streams_done(&self, cookie: &Cookie) {
        match self {
            Gate::One(p) => *lock(p) = Phase::Busy,
            Gate::Many(r) => {
                lock(&r.creating).remove(cookie.wire());
            }
        }
    }

    /// Whether a data stream arrives with its cookie already checked.
    pub fn checks_cookies(&self) -> bool {
        matches!(self, Gate::Many(_))
    }

    /// Accept connections on `listener` forever, handing new tests to `tests`.
    pub fn accept_loop(self, listener: TcpListener, tests: Sender<NewTest>) {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            match &self {
                Gate::One(phase) => {
                    let mut p = lock(phase);
                    match &*p {
                        Phase::Idle => {
                            *p = Phase::Busy;
                            if tests.send((conn, None)).is_err() {
                                return;
                            }
                        }
                        Phase::Streams(tx) => {
                            if let Err(e) = tx.send(conn) {
                                deny(e.0);
                            }
                        }
                        Phase::Busy => deny(conn),
                    }
                }
                Gate::Many(r) => classify(Arc::clone(r), conn, tests.clone()),
            }
        }
    }
}

/// Bounds the cookie readers a flood of silent connections can start.
static CLASSIFYING: AtomicUsize = AtomicUsize::new(0);
const MAX_CLASSIFYING: usize = 256;

/// Read `conn`'s cookie on a thread of its own and route it.
fn classify(r: Arc<Registry>, mut conn: TcpStream, tests: Sender<NewTest>) {
    if CLASSIFYING.fetch_add(1, Ordering::Relaxed) >= MAX_CLASSIFYING {
        CLASSIFYING.fetch_sub(1, Ordering::Relaxed);
        deny(conn);
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("net-classify".into())
        .spawn(move || {
            let mut b = [0u8; Cookie::LEN];
            let _ = conn.set_read_timeout(Some(r.first_byte));
            if conn.read_exact(&mut b).is_ok() {
                let _ = conn.set_read_timeout(None);
                route(&r, conn, Cookie::from_wire(b), &tests);
            }
            CLASSIFYING.fetch_sub(1, Ordering::Relaxed);
        });
    if spawned.is_err() {
        CLASSIFYING.fetch_sub(1, Ordering::Relaxed);
    }
}

fn route(r: &Registry, conn: TcpStream, cookie: Cookie, tests: &Sender<NewTest>) {
    if let Some(tx) = lock(&r.creating).get(cookie.wire()) {
        if let Err(e) = tx.send(conn) {
            deny(e.0);
        }
        return;
    }
    let mut running = lock(&r.running);
    if *running >= r.max {
        drop(running);
        deny(conn);
        return;
    }
    *running += 1;
    if tests.send((conn, Some(cookie))).is_err() {
        *running -= 1;
    }
}

/// Makes the test's slot free as soon as the test is decided, so the next
/// client is not told "busy" while this one's sockets are still closing;
/// dropping it does the same on every early return.
pub(crate) struct Release<'a> {
    gate: &'a Gate,
    done: bool,
}

impl<'a> Release<'a> {
    /// The slot of a test that has begun.
    pub fn of(gate: &'a Gate) -> Release<'a> {
        Release { gate, done: false }
    }

    /// Free the slot now.
    pub fn now(&mut self) {
        if !self.done {
            match self.gate {
                Gate::One(p) => *lock(p) = Phase::Idle,
                Gate::Many(r) => {
                    let mut n = lock(&r.running);
                    *n = n.saturating_sub(1);
                }
            }
            self.done = true;
        }
    }
}

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.now();
    }
}

/// ACCESS_DENIED, then a graceful close on a side thread: closing with unread
/// bytes (the intruder's cookie) would send a reset that can destroy the
/// 0xFF before the peer reads it.
pub(crate) fn deny(mut s: TcpStream) {
    // Bounds the drain threads a flood of connections can start.
    static DRAINING: AtomicUsize = AtomicUsize::new(0);
    let _ = s.write_all(&[State::AccessDenied.byte()]);
    let _ = s.shutdown(Shutdown::Write);
    if DRAINING.fetch_add(1, Ordering::Relaxed) >= 64 {
        DRAINING.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("net-deny".into())
        .spawn(move || {
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 512];
            let end = Instant::now() + Duration::from_secs(2);
            while Instant::now() < end {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
            DRAINING.fetch_sub(1, Ordering::Relaxed);
        });
    if spawned.is_err() {
        DRAINING.fetch_sub(1, Ordering::Relaxed);
    }
}
