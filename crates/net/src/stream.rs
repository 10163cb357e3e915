//! Data streams: one thread per stream, moving bytes as fast as the socket
//! (or the `-b` pacing) allows and counting them in atomics that the control
//! thread samples every interval.
//!
//! TCP payload is raw bytes in `len`-sized writes (section 1.9). UDP
//! datagrams start with a header of send time (`CLOCK_MONOTONIC` seconds and
//! microseconds) and a sequence number from 1, 32 or 64 bits (section 1.12).

use std::io::{ErrorKind, Read};
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iomark_model::net::NetDirection;

use crate::proto::{Params, Protocol};

mod payload;
mod udp;
use crate::sys;
use payload::{AlignedBuf, Blocks};
use udp::{udp_recv, udp_send};

/// How often a blocked stream thread wakes to look at the stop flag.
const WAKE: Duration = Duration::from_millis(200);

/// Counters a stream thread updates and the control thread reads.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Payload bytes sent or received.
    pub bytes: AtomicU64,
    /// UDP: datagrams sent, or the highest sequence number received.
    pub packets: AtomicU64,
    /// UDP receiver: datagrams missing from the sequence.
    pub lost: AtomicI64,
    /// UDP receiver: datagrams that came late.
    pub out_of_order: AtomicU64,
    /// UDP receiver: RFC 1889 jitter in seconds, as f64 bits.
    pub jitter_bits: AtomicU64,
}

/// A point-in-time reading of a stream's counters.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Snapshot {
    pub bytes: u64,
    pub packets: u64,
    pub lost: i64,
    pub out_of_order: u64,
    pub jitter: f64,
    pub retransmits: u64,
}

impl Snapshot {
    /// What happened between `base` and `self`.
    pub fn since(&self, base: &Snapshot) -> Snapshot {
        Snapshot {
            bytes: self.bytes.saturating_sub(base.bytes),
            packets: self.packets.saturating_sub(base.packets),
            lost: self.lost - base.lost,
            out_of_order: self.out_of_order.saturating_sub(base.out_of_order),
            jitter: self.jitter,
            retransmits: self.retransmits.saturating_sub(base.retransmits),
        }
    }
}

/// One stream as this host saw it: what the report keeps of a [`Stream`]
/// once its socket and thread are gone. It lives here, not in the report,
/// so that the report reads streams and streams never read the report.
#[derive(Debug, Clone)]
pub struct StreamInfo {
    /// Protocol id: 1, 3, 4, ...
    pub id: u32,
    /// Local descriptor, iperf3's label.
    pub fd: i32,
    /// Local address.
    pub local: SocketAddr,
    /// Peer address.
    pub remote: SocketAddr,
    /// This host sent on it.
    pub sending: bool,
    /// Which way the data flowed, seen from the client.
    pub direction: NetDirection,
}

/// The blocks this host's sending streams may still write, shared by them
/// all: `-n` and `-k` count the test's blocks, not each stream's.
#[derive(Debug)]
pub(crate) struct Budget {
    blocks: AtomicU64,
}

impl Budget {
    /// Take one block; false once none is left.
    fn take(&self) -> bool {
        self.blocks
            .fetch_update(Relaxed, Relaxed, |b| b.checked_sub(1))
            .is_ok()
    }
}

/// What every stream of a test does.
#[derive(Debug, Clone)]
pub(crate) struct StreamPlan {
    pub protocol: Protocol,
    pub len: usize,
    /// Bits per second for this stream; 0 is unlimited.
    pub rate: u64,
    pub udp_counters_64bit: bool,
    /// With `-n` or `-k`: the blocks left to send. A sender writes whole
    /// blocks, as iperf3's does, so `-n` sends `num` rounded up to a
    /// block.
    pub budget: Option<Arc<Budget>>,
    /// TCP senders use `sendfile` (`-Z`).
    pub zerocopy: bool,
}

impl StreamPlan {
    /// What the streams of a test with these (resolved) parameters do.
    pub fn of(params: &Params) -> StreamPlan {
        let len = params.len.max(1) as u64;
        let blocks = match (params.num, params.blockcount) {
            (0, 0) => None,
            (0, k) => Some(k),
            (n, _) => Some(n.div_ceil(len)),
        };
        StreamPlan {
            protocol: params.protocol,
            len: params.len as usize,
            rate: params.bandwidth,
            udp_counters_64bit: params.udp_counters_64bit,
            budget: blocks.map(|b| {
                Arc::new(Budget {
                    blocks: AtomicU64::new(b),
                })
            }),
            zerocopy: params.zerocopy,
        }
    }

    /// Bytes after which a `-n`/`-k` test is over, sent or received:
    /// `None` for a timed test.
    pub fn end_bytes(params: &Params) -> Option<u64> {
        match (params.num, params.blockcount) {
            (0, 0) => None,
            (0, k) => Some(k.saturating_mul(params.len as u64)),
            (n, _) => Some(n),
        }
    }

    /// Take a block from the budget, if the test counts them.
    fn next_block(&self) -> bool {
        self.budget.as_ref().is_none_or(|b| b.take())
    }
}

pub(crate) enum DataSock {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

impl DataSock {
    fn fd(&self) -> i32 {
        match self {
            DataSock::Tcp(s) => s.as_raw_fd(),
            DataSock::Udp(s) => s.as_raw_fd(),
        }
    }
}

/// One data stream.
pub(crate) struct Stream {
    /// Protocol stream id: 1, 3, 4, ...
    pub id: u32,
    /// This host writes on it.
    pub sending: bool,
    /// The local descriptor, iperf3's `[  5]` label.
    pub fd: i32,
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub counters: Arc<Counters>,
    sock: DataSock,
    handle: Option<JoinHandle<()>>,
    /// Largest congestion and send windows seen, the last reordering
    /// estimate, and RTT samples, for TCP senders.
    pub max_cwnd: u64,
    pub max_snd_wnd: u64,
    pub reorder: u64,
    pub rtts: Vec<u64>,
}

/// The stream id for the `index`-th stream created (0-based): 1, 3, 4, 5...
pub(crate) fn stream_id(index: usize) -> u32 {
    if index == 0 {
        1
    } else {
        index as u32 + 2
    }
}

impl Stream {
    /// The stream as reported; `sending_is` names which way data flows,
    /// seen from the client, when this host sends on it.
    pub fn info(&self, sending_is: NetDirection) -> StreamInfo {
        let other = match sending_is {
            NetDirection::Upload => NetDirection::Download,
            _ => NetDirection::Upload,
        };
        StreamInfo {
            id: self.id,
            fd: self.fd,
            local: self.local,
            remote: self.remote,
            sending: self.sending,
            direction: if self.sending { sending_is } else { other },
        }
    }

    pub fn new(id: u32, sending: bool, sock: DataSock) -> std::io::Result<Stream> {
        let (local, remote) = match &sock {
            DataSock::Tcp(s) => (s.local_addr()?, s.peer_addr()?),
            DataSock::Udp(s) => (s.local_addr()?, s.peer_addr()?),
        };
        let timeouts = match &sock {
            DataSock::Tcp(s) => s
                .set_read_timeout(Some(WAKE))
                .and(s.set_write_timeout(Some(WAKE))),
            DataSock::Udp(s) => s
                .set_read_timeout(Some(WAKE))
                .and(s.set_write_timeout(Some(WAKE))),
        };
        timeouts?;
        Ok(Stream {
            id,
            sending,
            fd: sock.fd(),
            local,
            remote,
            counters: Arc::default(),
            sock,
            handle: None,
            max_cwnd: 0,
            max_snd_wnd: 0,
            reorder: 0,
            rtts: Vec::new(),
        })
    }

    pub fn is_tcp(&self) -> bool {
        matches!(self.sock, DataSock::Tcp(_))
    }

    /// Start the stream's thread.
    pub fn start(&mut self, plan: &StreamPlan, stop: Arc<AtomicBool>) -> std::io::Result<()> {
        let plan = plan.clone();
        let counters = Arc::clone(&self.counters);
        let sending = self.sending;
        let name = format!("net-stream-{}", self.id);
        // The loop this stream runs: its socket's kind and its direction.
        fn spawn<S: Send + 'static>(
            name: String,
            sock: S,
            work: fn(S, &StreamPlan, &Counters, &AtomicBool),
            plan: StreamPlan,
            counters: Arc<Counters>,
            stop: Arc<AtomicBool>,
        ) -> std::io::Result<JoinHandle<()>> {
            std::thread::Builder::new()
                .name(name)
                .spawn(move || work(sock, &plan, &counters, &stop))
        }
        let handle = match &self.sock {
            DataSock::Tcp(s) => {
                let work = if sending { tcp_send } else { tcp_recv };
                spawn(name, s.try_clone()?, work, plan, counters, stop)?
            }
            DataSock::Udp(s) => {
                let work = if sending { udp_send } else { udp_recv };
                spawn(name, s.try_clone()?, work, plan, counters, stop)?
            }
        };
        self.handle = Some(handle);
        Ok(())
    }

    /// Read the counters, and for a TCP sender `TCP_INFO`.
    pub fn snapshot(&mut self) -> Snapshot {
        let c = &self.counters;
        let mut snap = Snapshot {
            bytes: c.bytes.load(Relaxed),
            packets: c.packets.load(Relaxed),
            lost: c.lost.load(Relaxed),
            out_of_order: c.out_of_order.load(Relaxed),
            jitter: f64::from_bits(c.jitter_bits.load(Relaxed)),
            retransmits: 0,
        };
        if self.sending && self.is_tcp() {
            if let Some(info) = sys::tcp_info(self.fd) {
                snap.retransmits = info.total_retrans;
                self.max_cwnd = self.max_cwnd.max(info.snd_cwnd_bytes);
                self.max_snd_wnd = self.max_snd_wnd.max(info.snd_wnd);
                self.reorder = info.reordering;
                self.rtts.push(info.rtt_us);
            }
        }
        snap
    }

    /// Actual `SO_SNDBUF` and `SO_RCVBUF`.
    pub fn buffers(&self) -> (u64, u64) {
        let r = match &self.sock {
            DataSock::Tcp(s) => socket2::SockRef::from(s),
            DataSock::Udp(s) => socket2::SockRef::from(s),
        };
        (
            r.send_buffer_size().map_or(0, |v| v as u64),
            r.recv_buffer_size().map_or(0, |v| v as u64),
        )
    }

    /// The TCP congestion control algorithm in use.
    pub fn congestion(&self) -> Option<String> {
        let DataSock::Tcp(s) = &self.sock else {
            return None;
        };
        let v = socket2::SockRef::from(s).tcp_congestion().ok()?;
        Some(
            String::from_utf8_lossy(&v)
                .trim_end_matches('\0')
                .to_string(),
        )
    }

    /// `TCP_INFO` now, for a TCP sender.
    pub fn tcp_info(&self) -> Option<sys::TcpInfo> {
        (self.sending && self.is_tcp())
            .then(|| sys::tcp_info(self.fd))
            .flatten()
    }

    /// Wake a thread blocked on the socket and wait for it to end.
    pub fn stop_and_join(&mut self, close: bool) {
        if close {
            if let DataSock::Tcp(s) = &self.sock {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}

/// Sleep until the stream's average rate since `start` is back under
/// `rate`; returns false if the stop flag was raised meanwhile.
fn pace(start: Instant, sent_bytes: u64, rate: u64, stop: &AtomicBool) -> bool {
    if rate == 0 {
        return true;
    }
    let due = start + Duration::from_secs_f64(sent_bytes as f64 * 8.0 / rate as f64);
    loop {
        if stop.load(Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= due {
            return true;
        }
        let left = due - now;
        if left > Duration::from_micros(200) {
            std::thread::sleep((left - Duration::from_micros(100)).min(WAKE));
        } else {
            std::thread::yield_now();
        }
    }
}

fn tcp_send(mut s: TcpStream, plan: &StreamPlan, c: &Counters, stop: &AtomicBool) {
    let blocks = Blocks::new(plan);
    let start = Instant::now();
    let mut sent = 0u64;
    // Where the next write starts in the block: a short write (a send
    // timeout) finishes the block before the budget is asked for another.
    let mut at = 0usize;
    while !stop.load(Relaxed) {
        if at == 0 && (!plan.next_block() || !pace(start, sent, plan.rate, stop)) {
            break;
        }
        match blocks.send(&mut s, at) {
            Ok(n) => {
                sent += n as u64;
                at = (at + n) % plan.len;
                c.bytes.fetch_add(n as u64, Relaxed);
            }
            Err(e) if transient(&e) => {}
            Err(_) => break,
        }
    }
}

fn tcp_recv(mut s: TcpStream, plan: &StreamPlan, c: &Counters, stop: &AtomicBool) {
    let mut buf = AlignedBuf::zeroed(plan.len.max(1));
    let buf = buf.bytes_mut();
    while !stop.load(Relaxed) {
        match s.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                // Bytes that arrive after TEST_END are not counted (iperf3 FAQ).
                if !stop.load(Relaxed) {
                    c.bytes.fetch_add(n as u64, Relaxed);
                }
            }
            Err(e) if transient(&e) => {}
            Err(_) => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_skip_two() {
        let ids: Vec<u32> = (0..4).map(stream_id).collect();
        assert_eq!(ids, [1, 3, 4, 5]);
    }
}
