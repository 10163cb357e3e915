//! The server's sockets: the listener, and each test's data streams, TCP
//! connections routed by cookie or UDP sockets connected to each stream's
//! hello; and the control connection's last moment after a SERVER_ERROR.

use std::io::Read;
use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use socket2::{Domain, SockRef, Socket, Type};

use super::{Server, ServerConfig};
use crate::control::Control;
use crate::proto::{Cookie, Params, UDP_REPLY};
use crate::server_gate::deny;
use crate::stream::DataSock;
use crate::NetError;

impl Server {
    pub(super) fn accept_tcp_streams(
        &self,
        ctrl: &mut Control,
        rx: &Receiver<TcpStream>,
        cookie: &Cookie,
        n: usize,
        until: Instant,
    ) -> Result<Vec<DataSock>, NetError> {
        let mut socks = Vec::with_capacity(n);
        while socks.len() < n {
            let left = until.saturating_duration_since(Instant::now());
            let mut s = match rx.recv_timeout(left.min(Duration::from_millis(200))) {
                Ok(s) => s,
                Err(RecvTimeoutError::Timeout) if !left.is_zero() => {
                    // A client that gave up (closed its control connection or
                    // sent CLIENT_TERMINATE) frees the server at once.
                    match ctrl.poll_state(Duration::from_millis(1)) {
                        Ok(None) => continue,
                        Ok(Some(got)) => {
                            return Err(NetError::Unexpected {
                                got,
                                expected: "the data streams",
                            })
                        }
                        Err(e) => return Err(e),
                    }
                }
                Err(_) => {
                    return Err(NetError::Timeout {
                        what: "the data streams",
                    })
                }
            };
            let wait = left
                .min(self.cfg.owed(self.cfg.first_byte_timeout))
                .max(Duration::from_millis(1));
            let _ = s.set_read_timeout(Some(wait));
            let mut b = [0u8; Cookie::LEN];
            // With several tests at once the acceptor routed the stream by
            // its cookie already.
            let ok = self.gate.checks_cookies()
                || s.read_exact(&mut b).is_ok() && Cookie::from_wire(b).matches(cookie);
            if ok {
                let _ = s.set_read_timeout(None);
                socks.push(DataSock::Tcp(s));
            } else {
                deny(s);
            }
        }
        Ok(socks)
    }
}

pub(super) fn listen(cfg: &ServerConfig) -> Result<TcpListener, NetError> {
    let bind = |addr: SocketAddr| -> std::io::Result<TcpListener> {
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
        if addr.is_ipv6() && cfg.bind.is_none() {
            s.set_only_v6(false)?;
        }
        s.set_reuse_address(true)?;
        s.bind(&addr.into())?;
        s.listen(128)?;
        Ok(s.into())
    };
    let what =
        |a: SocketAddr| format!("listen on {a} (is another server using port {}?)", a.port());
    match cfg.bind {
        Some(ip) => {
            let a = SocketAddr::new(ip, cfg.port);
            bind(a).map_err(NetError::io(what(a)))
        }
        None => {
            let v6 = SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), cfg.port);
            bind(v6).or_else(|e| {
                if e.kind() == std::io::ErrorKind::AddrInUse {
                    return Err(NetError::io(what(v6))(e));
                }
                // No IPv6 on this host: IPv4 only.
                let v4 = SocketAddr::from(([0, 0, 0, 0], cfg.port));
                bind(v4).map_err(NetError::io(what(v4)))
            })
        }
    }
}

pub(super) fn udp_listener(
    local: SocketAddr,
    rcvbuf: Option<usize>,
) -> Result<UdpSocket, NetError> {
    let s = Socket::new(Domain::for_address(local), Type::DGRAM, None)
        .map_err(NetError::io("create a UDP socket"))?;
    if local.is_ipv6() && local.ip().is_unspecified() {
        let _ = s.set_only_v6(false);
    }
    s.set_reuse_address(true)
        .map_err(NetError::io("set SO_REUSEADDR on the UDP socket"))?;
    // Most UDP "loss" is receive-buffer overflow (notes 4.b); ask for room.
    let _ = s.set_recv_buffer_size(rcvbuf.unwrap_or(4 << 20));
    s.bind(&local.into())
        .map_err(NetError::io(format!("bind UDP port {}", local.port())))?;
    Ok(s.into())
}

/// The UDP side of stream set-up: each stream starts with the client's
/// hello datagram, and the server sends that stream's data to wherever the
/// hello came from.
pub(super) struct UdpHellos {
    /// The socket the next hello arrives on.
    pub(super) sock: UdpSocket,
    pub(super) local: SocketAddr,
    /// The address of the control connection's peer: the only one a hello
    /// is taken from.
    pub(super) control_peer: IpAddr,
    /// Hellos from other addresses, and the first of them.
    pub(super) ignored: u64,
    pub(super) first_ignored: Option<SocketAddr>,
}

impl UdpHellos {
    /// One connected socket per stream, once each stream's hello came from
    /// the control connection's address; `ignored` and `first_ignored`
    /// then tell what came from elsewhere.
    ///
    /// A hello from another address is ignored, not answered: anyone can
    /// send a datagram with a forged source, and the server would then
    /// stream its data (a `-R` test at `-b 0`) at a victim that never asked
    /// for it. iperf3 clients send their hellos from the host of their
    /// control connection; the port may differ, and does.
    pub(super) fn accept(
        &mut self,
        params: &Params,
        n: usize,
        until: Instant,
    ) -> Result<Vec<DataSock>, NetError> {
        let mut socks = Vec::with_capacity(n);
        let mut buf = [0u8; 64];
        let rcvbuf = params.window.map(|w| w as usize);
        if let Some(w) = params.window {
            let _ = SockRef::from(&self.sock).set_send_buffer_size(w as usize);
        }
        while socks.len() < n {
            let from = self.next_hello(&mut buf, until)?;
            let sock = &self.sock;
            sock.connect(from)
                .map_err(NetError::io(format!("connect the UDP stream to {from}")))?;
            // Bind the next stream's socket before replying: the client sends
            // its next hello as soon as the reply arrives.
            let next = if socks.len() + 1 < n {
                udp_listener(self.local, rcvbuf)?
            } else {
                sock.try_clone()
                    .map_err(NetError::io("clone a UDP socket"))?
            };
            sock.send(&UDP_REPLY)
                .map_err(NetError::io("send the UDP reply"))?;
            socks.push(DataSock::Udp(std::mem::replace(&mut self.sock, next)));
        }
        Ok(socks)
    }

    /// The source of the next hello from the control connection's address.
    fn next_hello(&mut self, buf: &mut [u8], until: Instant) -> Result<SocketAddr, NetError> {
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(self.timed_out());
            }
            let _ = self.sock.set_read_timeout(Some(left));
            let (_, from) = self.sock.recv_from(buf).map_err(|e| {
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) {
                    self.timed_out()
                } else {
                    NetError::io("receive a UDP hello")(e)
                }
            })?;
            // The dual-stack socket sees IPv4 peers as ::ffff:a.b.c.d; the
            // control connection may name the same peer either way.
            if from.ip().to_canonical() == self.control_peer.to_canonical() {
                return Ok(from);
            }
            self.ignored += 1;
            self.first_ignored
                .get_or_insert(SocketAddr::new(from.ip().to_canonical(), from.port()));
        }
    }

    fn timed_out(&self) -> NetError {
        match self.first_ignored {
            Some(first) => NetError::UdpHelloElsewhere {
                control: self.control_peer.to_canonical(),
                first,
                ignored: self.ignored,
            },
            None => NetError::Timeout {
                what: "the UDP hello datagrams",
            },
        }
    }
}

/// After a SERVER_ERROR that ends a running test, let the client read it
/// before its data streams close: a client still writing would otherwise
/// stop at the broken stream (iperf3: "Broken pipe") and never show the
/// server's reason. Waits for the client to close, at most a second.
pub(super) fn linger(ctrl: &mut Control) {
    let end = Instant::now() + Duration::from_secs(1);
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() || ctrl.poll_state(left).is_err() {
            return;
        }
    }
}
