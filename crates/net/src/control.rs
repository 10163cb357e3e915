//! The control connection: a TCP socket plus the pure [`Decoder`], with
//! read timeouts so a silent peer cannot hold a side forever.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::proto::{frame, Decoder, Results, State};
use crate::NetError;

/// The largest results message accepted from the peer.
const MAX_RESULTS_LEN: usize = 64 << 20;

/// How long a read may wait: for its first byte, and for the whole message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wait {
    /// Longest wait for the first byte.
    pub first: Option<Duration>,
    /// Nothing may arrive after this.
    pub deadline: Option<Instant>,
}

impl Wait {
    /// Wait at most `d` in all.
    pub fn within(d: Duration) -> Wait {
        Wait {
            first: Some(d),
            deadline: Some(Instant::now() + d),
        }
    }
}

/// How often a wait looks at the interrupt flag.
const INTERRUPT_POLL: Duration = Duration::from_millis(100);

pub(crate) struct Control {
    sock: TcpStream,
    /// Raised by a signal handler: reads give up with `Interrupted`.
    interrupt: Option<&'static AtomicBool>,
    dec: Decoder,
    buf: Box<[u8; 4096]>,
}

impl Control {
    pub fn new(sock: TcpStream) -> Result<Control, NetError> {
        // Every state message is one byte; Nagle would delay each of them.
        sock.set_nodelay(true)
            .map_err(NetError::io("set TCP_NODELAY on the control connection"))?;
        Ok(Control {
            sock,
            interrupt: None,
            dec: Decoder::new(),
            buf: Box::new([0; 4096]),
        })
    }

    /// Check `flag` while waiting for the peer.
    pub fn with_interrupt(mut self, flag: Option<&'static AtomicBool>) -> Control {
        self.interrupt = flag;
        self
    }

    pub fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// The connection's two ends: the peer's address, then this host's.
    pub fn ends(&self) -> Result<(SocketAddr, SocketAddr), NetError> {
        let peer = self
            .sock
            .peer_addr()
            .map_err(NetError::io("read the peer address"))?;
        let local = self
            .sock
            .local_addr()
            .map_err(NetError::io("read the local address"))?;
        Ok((peer, local))
    }

    /// The connection's MSS, when the kernel gives it.
    pub fn mss(&self) -> Option<u32> {
        socket2::SockRef::from(&self.sock).mss().ok()
    }

    /// TCP keepalive probes once the connection has been quiet for
    /// `every`, so that a peer whose host is there answers (its kernel
    /// ACKs each probe) even while it sends nothing, and [`Self::last_heard`]
    /// tells a live peer from a vanished one. The kernel drops the
    /// connection only after eight unanswered probes, so the caller's own
    /// limit on [`Self::last_heard`] acts first.
    pub fn keep_alive(&self, every: Duration) -> Result<(), NetError> {
        let ka = socket2::TcpKeepalive::new()
            .with_time(every)
            .with_interval(every)
            .with_retries(8);
        socket2::SockRef::from(&self.sock)
            .set_tcp_keepalive(&ka)
            .map_err(NetError::io(
                "turn on TCP keepalive on the control connection",
            ))
    }

    /// How long ago the peer last sent anything on this connection, data
    /// or an ACK; `None` when the kernel does not say.
    pub fn last_heard(&self) -> Option<Duration> {
        use std::os::fd::AsRawFd;
        crate::sys::tcp_info(self.sock.as_raw_fd()).map(|i| Duration::from_millis(i.last_heard_ms))
    }

    /// Read more bytes into the decoder. `Ok(false)` on end of file.
    fn fill(&mut self, timeout: Option<Duration>, what: &'static str) -> Result<bool, NetError> {
        if timeout.is_some_and(|t| t.is_zero()) {
            return Err(NetError::Timeout { what });
        }
        let until = timeout.map(|t| Instant::now() + t);
        loop {
            if self.interrupted() {
                return Err(NetError::Interrupted);
            }
            // With a signal flag to watch, wait in short slices.
            let left = until.map(|u| u.saturating_duration_since(Instant::now()));
            let slice = match (self.interrupt, left) {
                (Some(_), Some(l)) => Some(l.min(INTERRUPT_POLL)),
                (Some(_), None) => Some(INTERRUPT_POLL),
                (None, l) => l,
            };
            if slice.is_some_and(|s| s.is_zero()) {
                return Err(NetError::Timeout { what });
            }
            self.sock
                .set_read_timeout(slice)
                .map_err(NetError::io("set a read timeout"))?;
            match self.sock.read(&mut self.buf[..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.dec.feed(&self.buf[..n]);
                    return Ok(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if until.is_some_and(|u| Instant::now() >= u) {
                        return Err(NetError::Timeout { what });
                    }
                    if until.is_none() && self.interrupt.is_none() {
                        return Err(NetError::Timeout { what });
                    }
                }
                Err(e) if e.kind() == ErrorKind::ConnectionReset => return Ok(false),
                Err(e) => return Err(NetError::io(format!("read {what}"))(e)),
            }
        }
    }

    fn timeout(wait: Wait, started: bool) -> Option<Duration> {
        let left = wait
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()));
        let first = if started { None } else { wait.first };
        match (first, left) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next state byte.
    pub fn read_state(&mut self, wait: Wait, what: &'static str) -> Result<State, NetError> {
        loop {
            if let Some(s) = self.dec.next_state() {
                return Ok(s?);
            }
            if !self.fill(Self::timeout(wait, false), what)? {
                return Err(NetError::Closed { during: what });
            }
        }
    }

    /// Exactly `n` raw bytes (the cookie).
    pub fn read_bytes(
        &mut self,
        n: usize,
        wait: Wait,
        what: &'static str,
    ) -> Result<Vec<u8>, NetError> {
        let mut started = false;
        loop {
            if let Some(b) = self.dec.next_bytes(n) {
                return Ok(b);
            }
            if !self.fill(Self::timeout(wait, started), what)? {
                return Err(NetError::Closed { during: what });
            }
            started = true;
        }
    }

    /// A state byte if one arrives within `timeout`; `Ok(None)` otherwise.
    pub fn poll_state(&mut self, timeout: Duration) -> Result<Option<State>, NetError> {
        if let Some(s) = self.dec.next_state() {
            return Ok(Some(s?));
        }
        match self.fill(Some(timeout.max(Duration::from_millis(1))), "a state") {
            Ok(true) => Ok(self.dec.next_state().transpose()?),
            Ok(false) => Err(NetError::Closed { during: "the test" }),
            Err(NetError::Timeout { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The next length-prefixed JSON body, at most `limit` bytes.
    pub fn read_frame(
        &mut self,
        limit: usize,
        wait: Wait,
        what: &'static str,
    ) -> Result<Vec<u8>, NetError> {
        let mut started = self.dec.pending() > 0;
        loop {
            if let Some(f) = self.dec.next_frame(limit) {
                return Ok(f?);
            }
            if !self.fill(Self::timeout(wait, started), what)? {
                return Err(NetError::Closed { during: what });
            }
            started = true;
        }
    }

    /// The peer's results message (section 1.8), `what` for the errors.
    pub fn read_results(&mut self, wait: Wait, what: &'static str) -> Result<Results, NetError> {
        let body = self.read_frame(MAX_RESULTS_LEN, wait, what)?;
        Ok(Results::from_json(&body)?)
    }

    /// SERVER_ERROR's code and errno; older servers may close after the code.
    pub fn read_error_detail(&mut self) -> (i32, i32) {
        let wait = Wait::within(Duration::from_secs(5));
        let next = |c: &mut Control| loop {
            if let Some(v) = c.dec.next_i32() {
                return Some(v);
            }
            match c.fill(Self::timeout(wait, false), "the error code") {
                Ok(true) => continue,
                _ => return None,
            }
        };
        let code = next(self).unwrap_or(0);
        let errno = next(self).unwrap_or(0);
        (code, errno)
    }

    pub fn write_raw(&mut self, b: &[u8]) -> Result<(), NetError> {
        self.sock
            .write_all(b)
            .map_err(NetError::io("write to the control connection"))
    }

    pub fn write_state(&mut self, s: State) -> Result<(), NetError> {
        self.sock
            .write_all(&[s.byte()])
            .map_err(NetError::io(format!("send state {s:?}")))
    }

    pub fn write_frame(&mut self, json: &[u8]) -> Result<(), NetError> {
        self.sock
            .write_all(&frame::encode(json))
            .map_err(NetError::io("send a JSON message"))
    }

    pub fn write_server_error(&mut self, code: i32, errno: i32) {
        let _ = self
            .sock
            .write_all(&frame::encode_server_error(code, errno));
    }

    /// Close as iperf3 3.21 does: shut down our side, read until the peer
    /// closes (bounded), then drop. Avoids the RST race of esnet/iperf#499.
    pub fn close(mut self) {
        let _ = self.sock.shutdown(Shutdown::Write);
        let _ = self.sock.set_read_timeout(Some(Duration::from_secs(2)));
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            match self.sock.read(&mut self.buf[..]) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
}
