//! The start gate: where a job's threads wait for each other so all start
//! together, and which a refused thread or a stop signal can open.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Where a job's threads wait for each other, so all start together. Unlike
/// `std::sync::Barrier` it can be called off, for a party that will never
/// come (a thread the kernel refused), and it opens when `stop` is raised.
#[derive(Debug)]
pub(super) struct StartGate {
    parties: usize,
    state: Mutex<GateState>,
    opened: Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    arrived: usize,
    open: bool,
    called_off: bool,
}

/// How often a waiting thread looks at `stop`: the signal handler only
/// raises a flag, it cannot wake a condition variable.
const STOP_POLL: Duration = Duration::from_millis(50);

impl StartGate {
    pub(super) fn new(parties: usize) -> Self {
        StartGate {
            parties,
            state: Mutex::new(GateState::default()),
            opened: Condvar::new(),
        }
    }

    /// Wait until every party arrived (true), or until the gate was called
    /// off or `stop` raised (false).
    pub(super) fn arrive(&self, stop: &AtomicBool) -> bool {
        // A poisoned lock only means a thread panicked while holding it; the
        // counts stay meaningful.
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.arrived += 1;
        if st.arrived >= self.parties {
            st.open = true;
            self.opened.notify_all();
        }
        loop {
            if st.called_off {
                return false;
            }
            if st.open {
                return true;
            }
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            st = self
                .opened
                .wait_timeout(st, STOP_POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Release every waiting party without starting.
    pub(super) fn call_off(&self) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.called_off = true;
        self.opened.notify_all();
    }
}
