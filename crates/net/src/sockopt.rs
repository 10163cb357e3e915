//! What a test's parameters ask of its sockets, set the same way at both
//! ends: buffer sizes (`-w`), `TCP_NODELAY` (`-N`), `TCP_MAXSEG` (`-M`),
//! `TCP_CONGESTION` (`-C`), `IP_TOS`/`IPV6_TCLASS` (`-S`, `--dscp`) and
//! `SO_MAX_PACING_RATE` (`--fq-rate`); and the CPU a test runs on (`-A`).

use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use socket2::SockRef;

use crate::proto::{code, Params, Protocol};
use crate::sys;
use crate::NetError;

/// A socket option the kernel refused: which flag asked for it, and why.
#[derive(Debug)]
pub(crate) struct Refused {
    /// iperf3's flag, e.g. `-C`.
    pub flag: &'static str,
    /// iperf3's error code for it, sent by a server that cannot set it.
    pub code: i32,
    /// What was asked, e.g. `bbr`.
    pub asked: String,
    /// The kernel's answer.
    pub source: std::io::Error,
}

impl Refused {
    /// The error a client reports: the flag, the value and the kernel's reason.
    pub fn into_client_error(self) -> NetError {
        let hint = match self.flag {
            "-C" => {
                "; the kernel's choices are in /proc/sys/net/ipv4/tcp_allowed_congestion_control"
            }
            _ => "",
        };
        NetError::Invalid(format!(
            "{} {}: this host's kernel refuses it: {}{hint}",
            self.flag, self.asked, self.source
        ))
    }
}

/// Set what `params` asks on a data socket to `peer`. The client sets them
/// before it connects (the MSS and window must be in place for the SYN);
/// the server on an accepted socket, where the MSS only lowers later
/// segments.
pub(crate) fn apply(sock: SockRef<'_>, params: &Params, peer: SocketAddr) -> Result<(), Refused> {
    let refused = |flag, code, asked: String| {
        move |source| Refused {
            flag,
            code,
            asked,
            source,
        }
    };
    if let Some(w) = params.window {
        // Best effort, as iperf3: the kernel clamps to its limits; the
        // sizes it gave are reported.
        let _ = sock.set_send_buffer_size(w as usize);
        let _ = sock.set_recv_buffer_size(w as usize);
    }
    if let Some(tos) = params.tos {
        let r = if carries_ipv4(peer) {
            sock.set_tos(tos)
        } else {
            sock.set_tclass_v6(tos)
        };
        r.map_err(refused("-S", code::SET_TOS, tos.to_string()))?;
    }
    if let Some(rate) = params.fqrate {
        sys::set_max_pacing_rate(sock.as_raw_fd(), rate / 8).map_err(refused(
            "--fq-rate",
            code::SET_PACING,
            rate.to_string(),
        ))?;
    }
    if params.protocol != Protocol::Tcp {
        return Ok(());
    }
    if params.nodelay {
        let _ = sock.set_nodelay(true);
    }
    if let Some(mss) = params.mss.filter(|&m| m > 0) {
        sock.set_mss(mss)
            .map_err(refused("-M", code::SET_MSS, mss.to_string()))?;
    }
    if let Some(cc) = &params.congestion {
        sock.set_tcp_congestion(cc.as_bytes()).map_err(refused(
            "-C",
            code::SET_CONGESTION,
            cc.clone(),
        ))?;
    }
    Ok(())
}

/// IPv4 on the wire: an IPv4 peer, or one a dual-stack socket sees as
/// `::ffff:a.b.c.d`.
fn carries_ipv4(a: SocketAddr) -> bool {
    match a {
        SocketAddr::V6(v6) => v6.ip().to_ipv4_mapped().is_some(),
        SocketAddr::V4(_) => true,
    }
}

/// The calling thread pinned to one CPU until dropped; threads it starts
/// meanwhile (the data streams) inherit the pin.
pub(crate) struct Pinned {
    before: libc::cpu_set_t,
}

impl Pinned {
    /// Pin the calling thread to `cpu`.
    pub fn to(cpu: u32) -> std::io::Result<Pinned> {
        let before = sys::thread_affinity()?;
        let set = sys::one_cpu(cpu)
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no such CPU"))?;
        sys::set_thread_affinity(&set)?;
        Ok(Pinned { before })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = sys::set_thread_affinity(&self.before);
    }
}
