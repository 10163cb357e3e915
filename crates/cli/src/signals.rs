//! Ctrl-C: the first SIGINT (or SIGTERM, SIGHUP) raises a flag that the
//! runner polls, so a job stops, its figures so far are printed and kept,
//! and the test file is removed on the normal way out.
//!
//! A handler can only raise the flag, not wake a waiting thread, so every
//! wait in the runners (the disk start gate, STREAM's barrier, the wait for a
//! limited mem child, which is passed the stop as SIGINT) also looks at the
//! flag every 50 ms or so.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::Context;

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Stop signals received so far. The flag says only that one came; a wait
/// that began after it (storing an interrupted run) ends at the next.
static RECEIVED: AtomicUsize = AtomicUsize::new(0);

/// How many stop signals have arrived since the handlers were installed.
pub fn stop_signals_received() -> usize {
    RECEIVED.load(Ordering::Relaxed)
}

/// The signals that stop a run.
const STOP_SIGNALS: [std::ffi::c_int; 3] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
];

/// The process-wide stop flag, with the signal handlers installed.
pub fn stop_flag() -> anyhow::Result<&'static AtomicBool> {
    if let Some(flag) = STOP.get() {
        return Ok(flag);
    }
    let flag = Arc::new(AtomicBool::new(false));
    for sig in STOP_SIGNALS {
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .context("cannot install the Ctrl-C handler")?;
        // SAFETY: the action only adds to an atomic counter, which is
        // async-signal-safe: no lock, no allocation.
        unsafe {
            signal_hook::low_level::register(sig, || {
                RECEIVED.fetch_add(1, Ordering::Relaxed);
            })
        }
        .context("cannot install the Ctrl-C handler")?;
    }
    Ok(STOP.get_or_init(|| flag))
}

/// Signals raise `flag` too while the returned guard lives: a job's own
/// stop flag, which something else may raise as well (under MPI, another
/// rank's notice), still stops at Ctrl-C at once.
#[cfg(feature = "mpi")]
pub fn also_raise(flag: &Arc<AtomicBool>) -> anyhow::Result<AlsoRaised> {
    let ids = STOP_SIGNALS
        .into_iter()
        .map(|sig| signal_hook::flag::register(sig, Arc::clone(flag)))
        .collect::<Result<_, _>>()
        .context("cannot install the Ctrl-C handler")?;
    Ok(AlsoRaised(ids))
}

/// Signals stop raising the flag of `also_raise` when this goes.
#[cfg(feature = "mpi")]
#[derive(Debug)]
pub struct AlsoRaised(Vec<signal_hook::SigId>);

#[cfg(feature = "mpi")]
impl Drop for AlsoRaised {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
