//! The kernel's unbound workers ahead of the host's other work while a
//! rate rig lives: a loop device does its I/O in them, so they are the
//! emulated drive's firmware, and a drive does not wait for the host's CPU.
//!
//! The loop driver queues each device's I/O on its own unbound workqueue
//! (`loopN`), which runs in the shared pool of `kworker/uN:M` threads at
//! nice 0. Traced on two cores beside two busy loops and two rig tests
//! (`workqueue_queue_work` to `workqueue_execute_start` of
//! `loop_rootcg_workfn`), a queued batch waited up to 0.52 s for a worker
//! to run: the device served 2 MB/s for 0.7 s of a 40 MiB/s stretch, then
//! caught up at 125 MB/s, and the PTS rig tests failed 4 times in 7. With
//! the pool's workers at a higher priority the longest wait was 9 ms and
//! they passed 5 times in 5. The loop workqueue has no `nice` of its own
//! in sysfs (it is not `WQ_SYSFS`), so the workers themselves are raised.
//!
//! The pool starts workers as it needs them, so a thread raises each new
//! one within [`SCAN`]; when the last holder goes, every worker it raised
//! and that is still one at the raised priority is put back to nice 0.

use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often new workers are looked for.
const SCAN: Duration = Duration::from_millis(20);
/// The priority the workers get: the highest an ordinary thread can have,
/// as the kernel's own high-priority pools (`kworker/uN:MH`).
const RAISED: i32 = -20;
/// `PF_KTHREAD` in `/proc/PID/stat`'s flags.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Holds the unbound kernel workers at nice -20 while it lives.
#[derive(Debug)]
pub struct WorkersFirst(());

/// The one scanner of this process, and how many hold it.
struct Scanner {
    holders: usize,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    raised: Arc<Mutex<Vec<i32>>>,
}

static SCANNER: Mutex<Option<Scanner>> = Mutex::new(None);

/// An unbound kernel worker's pid and nice value, from its
/// `/proc/PID/stat`; `None` for any other process.
fn worker(stat: &str) -> Option<(i32, i32)> {
    let (head, rest) = stat.rsplit_once(") ")?;
    let (pid, comm) = head.split_once(" (")?;
    if !comm.starts_with("kworker/u") {
        return None;
    }
    // After the comm: state (field 3) ... flags is field 9, nice field 19.
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let flags: u64 = fields.get(6)?.parse().ok()?;
    let nice: i32 = fields.get(16)?.parse().ok()?;
    (flags & PF_KTHREAD != 0).then_some((pid.parse().ok()?, nice))
}

/// The pid of an unbound kernel worker at nice 0, one to raise.
fn unbound_worker(stat: &str) -> Option<i32> {
    worker(stat)
        .filter(|&(_, nice)| nice == 0)
        .map(|(pid, _)| pid)
}

fn set_nice(pid: i32, nice: i32) -> std::io::Result<()> {
    // SAFETY: setpriority takes plain integers and touches no memory of
    // ours; a pid that has gone gives ESRCH.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, pid as libc::id_t, nice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Raises every unbound worker at nice 0 now; the pids raised are added
/// to `raised`.
fn raise_all(raised: &Mutex<Vec<i32>>) -> Result<(), String> {
    let procs = fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))?;
    for entry in procs.flatten() {
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(pid) = unbound_worker(&stat) else {
            continue;
        };
        match set_nice(pid, RAISED) {
            Ok(()) => raised.lock().unwrap_or_else(|p| p.into_inner()).push(pid),
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(e) => return Err(format!("cannot raise kernel worker {pid}: {e}")),
        }
    }
    Ok(())
}

/// Puts each worker in `raised` that is still one at [`RAISED`] back.
fn restore(raised: &[i32]) {
    for &pid in raised {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if worker(&stat).is_some_and(|(_, nice)| nice == RAISED) {
            let _ = set_nice(pid, 0);
        }
    }
}

impl WorkersFirst {
    /// Raises the workers now and keeps raising new ones until the last
    /// holder is dropped. Needs root (`CAP_SYS_NICE`).
    pub fn hold() -> Result<Self, String> {
        let mut scanner = SCANNER.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = scanner.as_mut() {
            s.holders += 1;
            return Ok(WorkersFirst(()));
        }
        let raised = Arc::new(Mutex::new(Vec::new()));
        if let Err(e) = raise_all(&raised) {
            restore(&raised.lock().unwrap_or_else(|p| p.into_inner()));
            return Err(e);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (stop, raised) = (Arc::clone(&stop), Arc::clone(&raised));
            std::thread::Builder::new()
                .name("workers-first".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(SCAN);
                        let _ = raise_all(&raised);
                    }
                })
                .map_err(|e| format!("cannot start the workers' scanner: {e}"))?
        };
        *scanner = Some(Scanner {
            holders: 1,
            stop,
            thread: Some(thread),
            raised,
        });
        Ok(WorkersFirst(()))
    }
}

impl Drop for WorkersFirst {
    fn drop(&mut self) {
        let mut scanner = SCANNER.lock().unwrap_or_else(|p| p.into_inner());
        let Some(s) = scanner.as_mut() else { return };
        s.holders -= 1;
        if s.holders > 0 {
            return;
        }
        let mut s = scanner.take().expect("checked above");
        s.stop.store(true, Ordering::Relaxed);
        if let Some(t) = s.thread.take() {
            let _ = t.join();
        }
        restore(&s.raised.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unbound_kernel_workers_at_nice_0_are_taken() {
        // pid (comm) state ppid pgrp session tty tpgid flags ... nice.
        let stat = |comm: &str, flags: u64, nice: i32| {
            format!(
                "21568 ({comm}) I 2 0 0 0 -1 {flags} 0 0 0 0 0 0 0 0 20 {nice} 1 0 \
                 45 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 1"
            )
        };
        assert_eq!(
            unbound_worker(&stat("kworker/u8:10-loop1", 0x0420_8060, 0)),
            Some(21568)
        );
        // Raised already, a bound worker, a high-priority pool, a user
        // process named like one.
        assert_eq!(
            unbound_worker(&stat("kworker/u8:1", 0x0420_8060, -20)),
            None
        );
        assert_eq!(unbound_worker(&stat("kworker/1:3", 0x0420_8060, 0)), None);
        assert_eq!(
            unbound_worker(&stat("kworker/u9:0", 0x0420_8060, -20)),
            None
        );
        assert_eq!(unbound_worker(&stat("kworker/u8:1", 0x0040_0100, 0)), None);
        // A comm with ") " in it is cut at the last one.
        assert_eq!(unbound_worker(&stat("a) (b", 0x0420_8060, 0)), None);
    }

    /// A worker's nice value now, or `None` once it has gone.
    fn nice_of(pid: i32) -> Option<i32> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        worker(&stat).map(|(_, nice)| nice)
    }

    #[test]
    fn holding_raises_the_workers_and_the_last_drop_puts_them_back() {
        crate::require!(crate::require_root());
        let first = WorkersFirst::hold().expect("root may raise kernel workers");
        let second = WorkersFirst::hold().expect("a second holder shares the scanner");
        let raised = {
            let guard = SCANNER.lock().unwrap();
            let s = guard.as_ref().expect("held");
            assert_eq!(s.holders, 2);
            let raised = s.raised.lock().unwrap().clone();
            raised
        };
        assert!(!raised.is_empty(), "a machine has unbound kernel workers");
        for &pid in &raised {
            assert!(matches!(nice_of(pid), Some(RAISED) | None), "worker {pid}");
        }
        drop(first);
        for &pid in &raised {
            assert!(matches!(nice_of(pid), Some(RAISED) | None), "worker {pid}");
        }
        drop(second);
        assert!(SCANNER.lock().unwrap().is_none());
        for &pid in &raised {
            assert!(matches!(nice_of(pid), Some(0) | None), "worker {pid}");
        }
    }
}
