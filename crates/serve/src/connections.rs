//! What keeps the server up whoever connects: how long a connection may
//! say nothing, and how many may be open at once.
//!
//! Three bounds (docs/serve.md, "Connections"):
//!
//! * the **header timeout**, hyper's own (`header_read_timeout`): from
//!   when the server is ready for a request (the connection accepted, the
//!   previous response sent) until the request's head has come whole. A
//!   client sending its headers a byte a second is cut off by it, however
//!   busy it looks;
//! * the **idle timeout**, here: a connection with no request being
//!   answered and no byte moved either way for that long is closed (a
//!   kept-alive connection between requests, a socket that never speaks,
//!   a client that stopped reading its response). hyper 1 has no idle
//!   timeout of its own for HTTP/1;
//! * the **cap** on open connections, here: at the cap, a new connection
//!   closes the one that has been quiet the longest, of those not being
//!   answered, so sockets left open by whoever cannot keep out the next
//!   reader; when every open connection is being answered, the new one is
//!   answered 503 at once. A semaphore would make the next reader wait for
//!   a timeout instead.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// How long a connection may take, and how many may be open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From when the server is ready for a request until its head (the
    /// request line and the headers) has come (`--header-timeout`).
    pub header_timeout: Duration,
    /// No request being answered and no byte moved either way for this
    /// long closes a connection (`--idle-timeout`).
    pub idle_timeout: Duration,
    /// Connections open at once (`--max-connections`).
    pub max_connections: usize,
}

/// The header timeout by default: a request's head is one packet; 20 s
/// leaves a slow link room and holds a socket that trickles its headers
/// for no longer.
const HEADER_TIMEOUT: Duration = Duration::from_secs(20);

/// The idle timeout by default: the live page asks each second, so a
/// browser's connection stays open while a page is shown; nginx keeps an
/// idle connection 75 s, Apache 5 s.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections by default, however many descriptors the process
/// may open: far more than any number of readers the store serves.
const MAX_CONNECTIONS: usize = 1024;

/// The fewest connections the default allows, however few descriptors.
const MIN_CONNECTIONS: usize = 8;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: HEADER_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            max_connections: default_max_connections(),
        }
    }
}

/// Half the descriptors the process may open (its soft `RLIMIT_NOFILE`),
/// at most 1024 (`MAX_CONNECTIONS`): the other half keeps room for the
/// store's files, its reconnections and the runtime's own, so the cap is
/// met before accept runs out of descriptors.
pub fn default_max_connections() -> usize {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    let half = soft.map_or(u64::MAX, |n| n / 2);
    usize::try_from(half)
        .unwrap_or(usize::MAX)
        .clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

/// What one open connection is doing, as the cap and the idle timeout
/// see it.
#[derive(Debug)]
pub(crate) struct Activity {
    /// When a byte last moved either way, ms after [`Connections::epoch`].
    last_ms: AtomicU64,
    /// Requests being answered (drawn on a blocking thread) now.
    answering: AtomicUsize,
    /// Raised when the cap closes this connection for a new one.
    pub(crate) evicted: Notify,
}

/// The open connections.
#[derive(Debug)]
pub(crate) struct Connections {
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    next: AtomicU64,
    max: usize,
    epoch: Instant,
}

impl Connections {
    pub(crate) fn new(max: usize) -> Connections {
        Connections {
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            max: max.max(1),
            epoch: Instant::now(),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Room for a new connection, its number and its activity; at the
    /// cap, the connection quiet the longest is closed to make it. `None`
    /// when every open connection is being answered.
    pub(crate) fn admit(&self) -> Option<(u64, Arc<Activity>)> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        // Bounded: each pass removes one connection, and the loop ends as
        // soon as there is room (the cap never shrinks).
        while open.len() >= self.max {
            if !Self::evict_from(&mut open) {
                return None;
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity {
            last_ms: AtomicU64::new(self.now_ms()),
            answering: AtomicUsize::new(0),
            evicted: Notify::new(),
        });
        open.insert(id, Arc::clone(&activity));
        Some((id, activity))
    }

    /// Close the connection quiet the longest of those not being answered,
    /// if any: a descriptor for the connection waiting in the backlog when
    /// accept found none (EMFILE).
    pub(crate) fn evict_quietest(&self) -> bool {
        Self::evict_from(&mut self.open.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn evict_from(open: &mut HashMap<u64, Arc<Activity>>) -> bool {
        let quietest = open
            .iter()
            .filter(|(_, a)| a.answering.load(Ordering::Relaxed) == 0)
            .min_by_key(|(id, a)| (a.last_ms.load(Ordering::Relaxed), **id))
            .map(|(id, _)| *id);
        match quietest.and_then(|id| open.remove(&id)) {
            Some(a) => {
                // A permit is kept if the task is not waiting right now.
                a.evicted.notify_one();
                true
            }
            None => false,
        }
    }

    /// Connection `id` has closed.
    pub(crate) fn gone(&self, id: u64) {
        self.open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }

    /// Connections open now.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.open.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// A byte moved on the connection of `activity`.
    fn touch(&self, activity: &Activity) {
        activity.last_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// How much longer the connection of `activity` may stay quiet before
    /// the idle timeout closes it: zero when it should close now; the
    /// whole timeout again while a request is being answered (drawing a
    /// page moves no byte, and is no idleness).
    pub(crate) fn idle_left(&self, activity: &Activity, idle: Duration) -> Duration {
        if activity.answering.load(Ordering::Relaxed) > 0 {
            return idle;
        }
        let quiet = self
            .now_ms()
            .saturating_sub(activity.last_ms.load(Ordering::Relaxed));
        idle.saturating_sub(Duration::from_millis(quiet))
    }

    /// A request on `activity`'s connection is being answered until the
    /// guard is dropped (also when hyper drops the answer half-way).
    pub(crate) fn answering(self: &Arc<Self>, activity: &Arc<Activity>) -> Answering {
        activity.answering.fetch_add(1, Ordering::Relaxed);
        Answering {
            connections: Arc::clone(self),
            activity: Arc::clone(activity),
        }
    }
}

/// A request being answered; see [`Connections::answering`].
pub(crate) struct Answering {
    connections: Arc<Connections>,
    activity: Arc<Activity>,
}

impl Drop for Answering {
    fn drop(&mut self) {
        // The idle time starts again from the answer, not from the
        // request: a page that took longer to draw than the idle timeout
        // is still written.
        self.connections.touch(&self.activity);
        self.activity.answering.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection's socket that notes each time a byte moves.
pub(crate) struct Watched {
    pub(crate) stream: TcpStream,
    pub(crate) connections: Arc<Connections>,
    pub(crate) activity: Arc<Activity>,
}

impl Watched {
    fn moved(&self, n: usize) {
        if n > 0 {
            self.connections.touch(&self.activity);
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.moved(buf.filled().len() - before);
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.moved(n);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            self.moved(n);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Whether accept failed for want of a descriptor or kernel memory: the
/// connection stays in the backlog, so accepting again at once fails
/// again at once, and a loop that does spins a core.
pub(crate) fn out_of_room(e: &io::Error) -> bool {
    use rustix::io::Errno;
    e.raw_os_error().is_some_and(|n| {
        [Errno::MFILE, Errno::NFILE, Errno::NOBUFS, Errno::NOMEM]
            .iter()
            .any(|errno| errno.raw_os_error() == n)
    })
}

/// The answer to a connection past the cap when every open connection is
/// being answered: written at once, without reading the request.
pub(crate) const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
Retry-After: 1\r\n\
Connection: close\r\n\
Content-Length: 72\r\n\
\r\n\
every connection the server keeps is busy answering: try again shortly.\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_answer_says_its_length() {
        let text = std::str::from_utf8(BUSY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.contains(&format!("Content-Length: {}", body.len())),
            "{head}"
        );
    }

    #[test]
    fn at_the_cap_the_quietest_connection_not_answering_makes_room() {
        let c = Arc::new(Connections::new(2));
        let (a, first) = c.admit().unwrap();
        let (_, second) = c.admit().unwrap();
        // The first is answering a request: the second, though newer,
        // is the one closed.
        let busy = c.answering(&first);
        let (_, third) = c.admit().unwrap();
        assert_eq!(c.count(), 2);
        assert_eq!(second.answering.load(Ordering::Relaxed), 0);
        // Its task is told (the permit waits for it).
        futures_now(second.evicted.notified());
        // Both open ones answering: no room, the new one is refused.
        let _busy3 = c.answering(&third);
        assert!(c.admit().is_none());
        drop(busy);
        assert!(c.admit().is_some());
        assert!(!c.open.lock().unwrap().contains_key(&a));
    }

    #[test]
    fn a_connection_answering_is_never_idle() {
        let c = Arc::new(Connections::new(4));
        let (_, a) = c.admit().unwrap();
        let idle = Duration::from_millis(1);
        a.last_ms.store(0, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(c.idle_left(&a, idle), Duration::ZERO);
        let busy = c.answering(&a);
        assert_eq!(c.idle_left(&a, idle), idle);
        drop(busy);
        // The answer's end counts as activity.
        assert!(c.idle_left(&a, Duration::from_secs(60)) > Duration::from_secs(59));
    }

    #[test]
    fn the_default_cap_is_half_the_descriptors_within_bounds() {
        let n = default_max_connections();
        assert!((MIN_CONNECTIONS..=MAX_CONNECTIONS).contains(&n), "{n}");
    }

    #[test]
    fn emfile_is_told_from_a_client_gone() {
        let emfile = io::Error::from_raw_os_error(rustix::io::Errno::MFILE.raw_os_error());
        assert!(out_of_room(&emfile));
        assert!(!out_of_room(&io::Error::from(
            io::ErrorKind::ConnectionAborted
        )));
    }

    /// Run `f` to its end on a runtime of its own; it must be ready.
    fn futures_now<F: std::future::Future>(f: F) -> F::Output {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(1), f)
                .await
                .unwrap()
        })
    }
}
