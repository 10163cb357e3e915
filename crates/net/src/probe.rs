//! The loaded half of the idle-versus-loaded latency probe: TCP handshakes
//! with the server's own port, on connections of their own, while the data
//! streams run. (The idle half is the test's own handshakes before the
//! load: the control connection's and each TCP data stream's.)
//!
//! A handshake is a round trip that any server answers in its kernel, so
//! the probe works against iperf3 as well as iomark, without a port or a
//! protocol of its own. It runs only while the test runs, when both iperf3
//! (3.12 to 3.21) and iomark answer a new connection with ACCESS_DENIED
//! without reading from it; before the streams are made, iperf3 would take
//! it for one of them and end the test. The SYN waits in the same queues as
//! the test's data, so it shows what those queues add to a round trip.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use socket2::Type;

use crate::local::LocalEnd;

/// Time between handshakes under load.
const LOADED_EVERY: Duration = Duration::from_millis(100);
/// A handshake slower than this counts as lost, not timed.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// One handshake with `server`: the time `connect` took, `None` when it
/// failed or took longer than the timeout.
fn handshake(server: SocketAddr, local: &LocalEnd) -> Option<Duration> {
    let sock = local.socket(server, Type::STREAM, 0).ok()?;
    let _ = sock.set_nodelay(true);
    let t = Instant::now();
    sock.connect_timeout(&server.into(), PROBE_TIMEOUT).ok()?;
    let took = t.elapsed();
    // A reset, not a FIN: nothing is owed to a connection the server denies.
    let _ = sock.set_linger(Some(Duration::ZERO));
    Some(took)
}

/// Handshakes every [`LOADED_EVERY`] on a thread of its own while the test runs.
pub(crate) struct Loaded {
    stop: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<Duration>>>,
    handle: Option<JoinHandle<()>>,
}

impl Loaded {
    /// Start probing `server` once `after` has passed (the load's own
    /// start-up, e.g. slow start, is not "under load" yet).
    pub fn start(server: SocketAddr, local: LocalEnd, after: Duration) -> Loaded {
        let stop = Arc::new(AtomicBool::new(false));
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (s, out) = (Arc::clone(&stop), Arc::clone(&samples));
        let handle = std::thread::Builder::new()
            .name("net-rtt-probe".into())
            .spawn(move || {
                let mut next = Instant::now() + after;
                loop {
                    while Instant::now() < next {
                        if s.load(Relaxed) {
                            return;
                        }
                        std::thread::sleep((next - Instant::now()).min(Duration::from_millis(20)));
                    }
                    if s.load(Relaxed) {
                        return;
                    }
                    if let Some(d) = handshake(server, &local) {
                        if !s.load(Relaxed) {
                            out.lock().unwrap_or_else(|e| e.into_inner()).push(d);
                        }
                    }
                    next += LOADED_EVERY;
                }
            })
            .ok();
        Loaded {
            stop,
            samples,
            handle,
        }
    }

    /// Stop probing; the handshakes timed while the test ran.
    pub fn finish(mut self) -> Vec<Duration> {
        self.stop.store(true, Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        std::mem::take(&mut *self.samples.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}
