//! Starting the kernels' threads, and the barrier STREAM's threads meet at.
//!
//! A thread the kernel refuses (a pids cgroup limit: EAGAIN) must become an
//! error, not a panic in `Scope::spawn` that leaves the threads already
//! started waiting forever at a barrier for one that never comes. So threads
//! are started with `spawn`, and the barrier can be called off.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::Duration;

use crate::MemError;

/// The most threads a job may ask for, whatever the machine.
pub const MAX_THREADS: u32 = 4096;

/// Threads per CPU a job may ask for: more only adds switching, and a
/// mistyped count should not start thousands of threads.
pub const THREADS_PER_CPU: u32 = 64;

/// The most threads a job may use here: [`THREADS_PER_CPU`] per CPU this
/// process may run on, and never more than [`MAX_THREADS`].
pub fn max_threads() -> u32 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    u32::try_from(cpus)
        .unwrap_or(u32::MAX)
        .saturating_mul(THREADS_PER_CPU)
        .min(MAX_THREADS)
}

/// Start thread `index` (0-based) of `total` in `scope`, or say why not.
pub(crate) fn spawn<'scope, T, F>(
    scope: &'scope Scope<'scope, '_>,
    index: usize,
    total: usize,
    f: F,
) -> Result<ScopedJoinHandle<'scope, T>, MemError>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    std::thread::Builder::new()
        .name(format!("iomark-mem-{index}"))
        .spawn_scoped(scope, f)
        .map_err(|reason| MemError::ThreadStart {
            index: index + 1,
            total,
            reason,
        })
}

/// Start one thread per task in `scope`, each held at a start line until
/// all of them run, so a job gets every thread it asked for at once or
/// fails. Threads that each finished their share before the next one was
/// started would slip under a pids limit by the luck of the timing, and the
/// job would run with fewer threads alive than it says. When a thread is
/// refused, the ones already started leave without running their task.
pub(crate) fn spawn_together<'scope, F>(
    scope: &'scope Scope<'scope, '_>,
    tasks: Vec<F>,
) -> Result<(), MemError>
where
    F: FnOnce() + Send + 'scope,
{
    let total = tasks.len();
    let start = Arc::new(Barrier::new(total));
    for (index, task) in tasks.into_iter().enumerate() {
        let line = Arc::clone(&start);
        let started = spawn(scope, index, total, move || {
            if line.wait(&AtomicBool::new(false)).is_ok() {
                task();
            }
        });
        if let Err(e) = started {
            start.call_off();
            return Err(e);
        }
    }
    Ok(())
}

/// How often a waiting thread looks at `stop`: the signal handler only
/// raises a flag, it cannot wake a condition variable.
const STOP_POLL: Duration = Duration::from_millis(50);

/// The barrier was called off (a party will not come, or `stop` was raised
/// while waiting); every party leaves at its next wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CalledOff;

/// A reusable barrier for `parties` threads that, unlike
/// `std::sync::Barrier`, can be called off.
#[derive(Debug)]
pub(crate) struct Barrier {
    parties: usize,
    state: Mutex<State>,
    turned: Condvar,
}

#[derive(Debug, Default)]
struct State {
    arrived: usize,
    generation: u64,
    called_off: bool,
}

impl Barrier {
    pub(crate) fn new(parties: usize) -> Self {
        Barrier {
            parties: parties.max(1),
            state: Mutex::new(State::default()),
            turned: Condvar::new(),
        }
    }

    /// Wait for every party. A wait that outlasts [`STOP_POLL`] while `stop`
    /// is raised calls the barrier off, so a stop is never held up by a
    /// party that is slow to come.
    pub(crate) fn wait(&self, stop: &AtomicBool) -> Result<(), CalledOff> {
        // A poisoned lock only means a party panicked while holding it; the
        // counts stay meaningful, and its guard calls the barrier off.
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if st.called_off {
            return Err(CalledOff);
        }
        st.arrived += 1;
        if st.arrived == self.parties {
            st.arrived = 0;
            st.generation = st.generation.wrapping_add(1);
            self.turned.notify_all();
            return Ok(());
        }
        let generation = st.generation;
        loop {
            st = self
                .turned
                .wait_timeout(st, STOP_POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            if st.generation != generation {
                return Ok(());
            }
            if st.called_off {
                return Err(CalledOff);
            }
            if stop.load(Ordering::Relaxed) {
                st.called_off = true;
                self.turned.notify_all();
                return Err(CalledOff);
            }
        }
    }

    /// Release every party, now and at every later wait.
    pub(crate) fn call_off(&self) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.called_off = true;
        self.turned.notify_all();
    }
}

/// Calls a barrier off when dropped during a panic, so the other parties do
/// not wait for a thread that died.
pub(crate) struct OffOnPanic<'a>(pub(crate) &'a Barrier);

impl Drop for OffOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.call_off();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn a_called_off_barrier_releases_its_waiters() {
        let b = Barrier::new(3);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let h = s.spawn(|| b.wait(&stop));
            std::thread::sleep(Duration::from_millis(20));
            b.call_off();
            assert_eq!(h.join().unwrap(), Err(CalledOff));
        });
        assert_eq!(b.wait(&stop), Err(CalledOff), "and stays off");
    }

    #[test]
    fn stop_releases_a_wait_for_a_party_that_never_comes() {
        let b = Barrier::new(2);
        let stop = AtomicBool::new(true);
        let t = Instant::now();
        assert_eq!(b.wait(&stop), Err(CalledOff));
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn the_barrier_is_reusable() {
        let b = Barrier::new(2);
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| (0..100).all(|_| b.wait(&stop).is_ok()));
            assert!((0..100).all(|_| b.wait(&stop).is_ok()));
        });
    }

    /// The names of this process's threads, from /proc.
    fn thread_names() -> Vec<String> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .map(|n| n.trim().to_string())
            .collect()
    }

    #[test]
    fn threads_started_together_are_all_alive_when_the_first_task_runs() {
        const N: usize = 8;
        let first = std::sync::atomic::AtomicBool::new(true);
        let counted = AtomicBool::new(false);
        let seen = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            let tasks: Vec<_> = (0..N)
                .map(|_| {
                    || {
                        if first.swap(false, Ordering::SeqCst) {
                            *seen.lock().unwrap() = thread_names();
                            counted.store(true, Ordering::SeqCst);
                        } else {
                            // Stay alive until the first task has looked.
                            while !counted.load(Ordering::SeqCst) {
                                std::thread::yield_now();
                            }
                        }
                    }
                })
                .collect();
            spawn_together(s, tasks).unwrap();
        });
        let seen = seen.into_inner().unwrap();
        for index in 0..N {
            let name = format!("iomark-mem-{index}");
            assert!(seen.contains(&name), "{name} not running yet: {seen:?}");
        }
    }

    #[test]
    fn the_bound_is_at_least_one_cpus_worth() {
        assert!(max_threads() >= THREADS_PER_CPU.min(MAX_THREADS));
        assert!(max_threads() <= MAX_THREADS);
    }
}
