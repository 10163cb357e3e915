//! The client's end of its connections: `-4`/`-6`, `-B ADDR[%DEV]` and
//! `--cport`, shared by the test's connections and the latency probe's.

use std::net::{IpAddr, SocketAddr};

use socket2::{Domain, Socket, Type};

use crate::NetError;

/// Which address family the client uses (`-4`, `-6`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Family {
    /// Whatever the host name resolves to, in the resolver's order.
    #[default]
    Any,
    /// IPv4 only.
    V4,
    /// IPv6 only.
    V6,
}

/// The client's end of its connections.
#[derive(Debug, Clone, Default)]
pub struct LocalEnd {
    /// `-4`/`-6`.
    pub family: Family,
    /// `-B ADDR`: the local address of every connection.
    pub bind: Option<IpAddr>,
    /// `-B ADDR%DEV` or `-B %DEV`: the interface every connection leaves
    /// by (`SO_BINDTODEVICE`).
    pub device: Option<String>,
    /// `--cport`: the data streams' local ports, this one and up.
    pub cport: Option<u16>,
}

impl LocalEnd {
    /// A socket for `server`, bound as asked; `port` is the local port.
    pub(crate) fn socket(
        &self,
        server: SocketAddr,
        ty: Type,
        port: u16,
    ) -> Result<Socket, NetError> {
        let sock = Socket::new(Domain::for_address(server), ty, None)
            .map_err(NetError::io("create a socket"))?;
        if let Some(dev) = &self.device {
            sock.bind_device(Some(dev.as_bytes())).map_err(|e| {
                NetError::Invalid(format!(
                    "-B %{dev}: cannot bind to interface {dev}: {e} (it takes root or CAP_NET_RAW, and an interface that exists)"
                ))
            })?;
        }
        if self.bind.is_some() || port != 0 {
            let ip = self.bind.unwrap_or(if server.is_ipv4() {
                IpAddr::from([0, 0, 0, 0])
            } else {
                IpAddr::from([0u16; 8])
            });
            if port != 0 {
                // The previous test's connections on this port may linger.
                let _ = sock.set_reuse_address(true);
            }
            let local = SocketAddr::new(ip, port);
            sock.bind(&local.into()).map_err(|e| {
                NetError::Invalid(format!(
                    "cannot bind to {local} (-B/--cport): {e}; give an address of this host and a free port"
                ))
            })?;
        }
        Ok(sock)
    }
}
