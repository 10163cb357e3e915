//! A write cache that runs out, on a loop device: a watcher thread that
//! lowers the device's write throttle once a known number of bytes has
//! been written, and optionally raises it again after the device has been
//! idle (a drive that frees its cache while nobody writes).
//!
//! The watcher polls the device's sectors-written counter (field 7 of
//! `/sys/block/loopN/stat`, 512-byte sectors) every millisecond and sets
//! the rule in cgroup v1's root blkio group
//! (`blkio.throttle.write_bps_device`), which holds every process, so
//! the program under test needs no moving. Counters are read at the start:
//! a reused loop device keeps its counts. Writes already past the throttle
//! when the limit drops complete at the old rate, so the cache comes out a
//! few hundred KiB larger than asked, well under a test's tolerance.
//!
//! A drive's firmware does not wait for the host's CPU, so neither does
//! the emulation: the watcher runs at a real-time priority (SCHED_FIFO).
//! At an ordinary priority, on two cores with two busy loops beside the
//! suite, it woke late enough for the rate to fall 39 MiB past the cache
//! (+15%). Where the rate really fell is kept all the same
//! ([`ThrottleCliff::fell_at`]), so a test compares a measured cliff with
//! where the rig put it, not with where it meant to.
//!
//! Nor does the loop device's worker, an ordinary kernel thread: beside
//! busy loops it served less than the throttle allows (3 ranks on ext4
//! over the rig were served 7.9% under the slow rate, loaded run 22; a
//! writer of the raw device 11% under the fast rate, loaded run 1 of
//! b50f5ee), and stalled for up to half a second (issue 44). The rig
//! holds the kernel's unbound workers ahead of other work while it lives
//! ([`WorkersFirst`]), and the watcher still keeps what the device really
//! served before and after the fall ([`ThrottleCliff::served`]): a
//! measured rate is held to that, not to the rule.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::{LoopDevice, WorkersFirst};

const RULE: &str = "/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device";
const POLL: Duration = Duration::from_millis(1);

/// What the emulated drive does.
#[derive(Debug, Clone, Copy)]
pub struct CacheShape {
    /// Write rate into the cache, bytes per second.
    pub fast_bps: u64,
    /// Bytes the cache takes before the rate falls.
    pub cache: u64,
    /// Write rate once the cache is full.
    pub slow_bps: u64,
    /// After this long without a write, `(idle, bytes)`: this many bytes
    /// of cache are free again (the fast rate is back for them).
    pub recovers: Option<(Duration, u64)>,
}

/// The watcher; dropping it stops the thread and removes the rule.
#[derive(Debug)]
pub struct ThrottleCliff {
    majmin: String,
    stop: Arc<AtomicBool>,
    falls: Arc<AtomicU32>,
    fell_at: Arc<Mutex<Vec<u64>>>,
    rose_at: Arc<Mutex<Vec<u64>>>,
    log: Arc<Mutex<Log>>,
    thread: Option<JoinHandle<()>>,
    _workers: WorkersFirst,
}

/// Rates the device served, bytes per second, as its own counter saw them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Served {
    /// From its first write to the first fall.
    pub before: f64,
    /// How long that was.
    pub before_window: Duration,
    /// From the first fall to the last write of the stream that followed
    /// it: up to the first idle gap, or the rate's first rise.
    pub after: f64,
    /// How long that was.
    pub after_window: Duration,
}

impl Served {
    /// Fails the test unless what the device served after the fall is in
    /// the throttle's band around the slow rule (`slow_bps`): the rig did
    /// impose its rule, whatever its worker could keep up with.
    pub fn assert_after_within_the_rule(&self, slow_bps: u64) {
        crate::bounds::assert_at_the_throttle(
            "rig: the device served after the fall",
            self.after,
            slow_bps as f64,
            self.after_window,
            crate::bounds::WindowStart::Streaming,
        );
    }
}

/// Times and byte counts the watcher saw: the first write, the first
/// fall, and the stream of writes after it.
#[derive(Debug, Default, Clone)]
struct Log {
    first: Option<(Instant, u64)>,
    fell: Option<(Instant, u64)>,
    /// Every change of the counter in the stream after the fall, in
    /// order, its last write the last: what it served over any stretch of
    /// it.
    after: Vec<(Instant, u64)>,
    /// The stream after the fall has ended: the device went idle for
    /// [`STREAM_GAP`] or the rate rose again.
    after_ended: bool,
}

/// An idle gap that ends the stream after the fall. The writers keep the
/// throttled queue busy, so the device's counter moves every few
/// milliseconds while they run; a write after half a second of quiet is
/// the filesystem's (ext4's journal commit or lazy inode-table init), and
/// counting it stretched the window past the writers' end (loaded run 1
/// of e31f658: the MPI ranks' rate after the fall read 12% over what the
/// device had served).
const STREAM_GAP: Duration = Duration::from_millis(500);

impl Log {
    /// Notes a change of the device's write counter to `bytes` at `at`;
    /// `quiet` is how long the counter had not moved before it.
    fn wrote(&mut self, at: Instant, bytes: u64, quiet: Duration, rose: bool) {
        self.first.get_or_insert((at, bytes));
        if self.fell.is_none() || self.after_ended {
            return;
        }
        if rose || (!self.after.is_empty() && quiet >= STREAM_GAP) {
            self.after_ended = true;
        } else {
            self.after.push((at, bytes));
        }
    }

    /// The rate over the last `span` of the stream after the fall: from
    /// its last change at least `span` before its end to its end.
    fn served_last(&self, span: Duration) -> Option<(f64, Duration)> {
        let &(t1, b1) = self.after.last()?;
        let &(t0, b0) = self
            .after
            .iter()
            .rev()
            .find(|(t, _)| t1.saturating_duration_since(*t) >= span)?;
        let took = t1.saturating_duration_since(t0);
        Some((b1.saturating_sub(b0) as f64 / took.as_secs_f64(), took))
    }

    fn served(&self) -> Option<Served> {
        let rate = |(t0, b0): (Instant, u64), (t1, b1): (Instant, u64)| {
            let secs = t1.saturating_duration_since(t0).as_secs_f64();
            (secs > 0.0).then(|| b1.saturating_sub(b0) as f64 / secs)
        };
        let (first, fell, last) = (self.first?, self.fell?, *self.after.last()?);
        Some(Served {
            before: rate(first, fell)?,
            before_window: fell.0.saturating_duration_since(first.0),
            after: rate(fell, last)?,
            after_window: last.0.saturating_duration_since(fell.0),
        })
    }
}

fn sectors_written(stat: &Path) -> Option<u64> {
    let text = fs::read_to_string(stat).ok()?;
    text.split_whitespace().nth(6)?.parse().ok()
}

fn set_rule(majmin: &str, bps: u64) -> Result<(), String> {
    fs::write(RULE, format!("{majmin} {bps}")).map_err(|e| format!("{RULE}: {e}"))
}

impl ThrottleCliff {
    /// Throttle `dev` to the fast rate now, and watch it.
    pub fn new(dev: &LoopDevice, shape: CacheShape) -> Result<Self, String> {
        if !Path::new(RULE).exists() {
            return Err(
                "needs cgroup v1 blkio (the cliff rig sets its rule in the root group)".into(),
            );
        }
        let majmin = dev.majmin()?;
        let name = dev.dev.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let stat = PathBuf::from(format!("/sys/block/{name}/stat"));
        let start =
            sectors_written(&stat).ok_or_else(|| format!("{}: unreadable", stat.display()))?;
        let workers = WorkersFirst::hold()?;
        set_rule(&majmin, shape.fast_bps)?;
        let stop = Arc::new(AtomicBool::new(false));
        let falls = Arc::new(AtomicU32::new(0));
        let fell_at = Arc::new(Mutex::new(Vec::new()));
        let rose_at = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::new(Mutex::new(Log::default()));
        let mut rig = ThrottleCliff {
            majmin: majmin.clone(),
            stop: Arc::clone(&stop),
            falls: Arc::clone(&falls),
            fell_at: Arc::clone(&fell_at),
            rose_at: Arc::clone(&rose_at),
            log: Arc::clone(&log),
            thread: None,
            _workers: workers,
        };
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("cliff-rig".into())
            .spawn(move || {
                if let Err(e) = real_time() {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
                let _ = ready_tx.send(Ok(()));
                let seen = Seen {
                    falls: &falls,
                    fell_at: &fell_at,
                    rose_at: &rose_at,
                    log: &log,
                };
                watch(&stat, &majmin, shape, start * 512, &stop, seen)
            })
            .map_err(|e| format!("cannot start the watcher: {e}"))?;
        rig.thread = Some(thread);
        ready_rx
            .recv()
            .map_err(|_| "the watcher ended before it began".to_string())??;
        Ok(rig)
    }

    /// Where the rate fell each time so far: bytes written to the device
    /// since the rig began when the slow rule was set.
    pub fn fell_at(&self) -> Vec<u64> {
        locked(&self.fell_at).clone()
    }

    /// Where the fast rate came back each time (after an idle time, with
    /// [`CacheShape::recovers`]): bytes written since the rig began.
    pub fn rose_at(&self) -> Vec<u64> {
        locked(&self.rose_at).clone()
    }

    /// What the device served before and after the first fall, by its
    /// own counter; `None` before it has fallen and been written after.
    pub fn served(&self) -> Option<Served> {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).served()
    }

    /// What the device served over the last `span` of the stream after
    /// the first fall, by its own counter, and the exact stretch that was
    /// (the change at least `span` before the stream's end, to its end):
    /// the same seconds as a measurement's last ones, where a steady-state
    /// window ends the job. `None` while the stream is shorter.
    pub fn served_last(&self, span: Duration) -> Option<(f64, Duration)> {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .served_last(span)
    }

    /// How often the rate has fallen so far.
    pub fn falls(&self) -> u32 {
        self.falls.load(Ordering::Relaxed)
    }
}

/// A device whose write rate never settles: the rule flips between two
/// rates every `period`, for as long as the rig lives (the steady-state
/// detector's case of "not reached"). Dropping it removes the rule.
pub struct AlternatingThrottle {
    majmin: String,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    _workers: WorkersFirst,
}

impl AlternatingThrottle {
    /// Throttle `dev`'s writes to `rates.0` now, to `rates.1` after
    /// `period`, and so on.
    pub fn new(dev: &LoopDevice, rates: (u64, u64), period: Duration) -> Result<Self, String> {
        if !Path::new(RULE).exists() {
            return Err("needs cgroup v1 blkio (the rig sets its rule in the root group)".into());
        }
        let majmin = dev.majmin()?;
        let workers = WorkersFirst::hold()?;
        set_rule(&majmin, rates.0)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (rule, flag) = (majmin.clone(), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("alternating-rig".into())
            .spawn(move || {
                // Late flips would only make the rates' spans uneven,
                // which keeps the rate unsteady all the same.
                let _ = real_time();
                let mut next = Instant::now() + period;
                let mut slow = false;
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(POLL.max(Duration::from_millis(5)));
                    if Instant::now() >= next {
                        slow = !slow;
                        let _ = set_rule(&rule, if slow { rates.1 } else { rates.0 });
                        next += period;
                    }
                }
            })
            .map_err(|e| format!("cannot start the flipper: {e}"))?;
        Ok(AlternatingThrottle {
            majmin,
            stop,
            thread: Some(thread),
            _workers: workers,
        })
    }
}

impl Drop for AlternatingThrottle {
    fn drop(&mut self) {
        stop_and_clear(&self.stop, self.thread.take(), &self.majmin);
    }
}

/// Stops a rig's thread, waits for it, and removes the device's rule.
fn stop_and_clear(stop: &AtomicBool, thread: Option<JoinHandle<()>>, majmin: &str) {
    stop.store(true, Ordering::Relaxed);
    if let Some(t) = thread {
        let _ = t.join();
    }
    // 0 removes the rule.
    let _ = set_rule(majmin, 0);
}

/// Puts the calling thread at real-time priority 10 (SCHED_FIFO), above
/// every ordinary process however busy the machine is. It sleeps a
/// millisecond between looks, so it takes little of a core.
fn real_time() -> Result<(), String> {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: sched_setscheduler reads `param` for the duration of the
    // call; pid 0 is the calling thread. No memory is shared.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc != 0 {
        return Err(format!(
            "the cliff rig's watcher cannot run at real-time priority: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// What the watcher tells the rig.
struct Seen<'a> {
    falls: &'a AtomicU32,
    fell_at: &'a Mutex<Vec<u64>>,
    rose_at: &'a Mutex<Vec<u64>>,
    log: &'a Mutex<Log>,
}

impl Seen<'_> {
    fn rose_at_is_empty(&self) -> bool {
        locked(self.rose_at).is_empty()
    }
}

/// The list behind `m`, also after a test thread panicked holding it.
fn locked(m: &Mutex<Vec<u64>>) -> std::sync::MutexGuard<'_, Vec<u64>> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn watch(stat: &Path, majmin: &str, shape: CacheShape, start: u64, stop: &AtomicBool, seen: Seen) {
    // Bytes written when the cache is full.
    let mut full_at = Some(start + shape.cache);
    let mut last = start;
    let mut last_change = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(POLL);
        let Some(now) = sectors_written(stat).map(|s| s * 512) else {
            continue;
        };
        if now != last {
            let quiet = last_change.elapsed();
            last = now;
            last_change = Instant::now();
            let mut log = seen.log.lock().unwrap_or_else(|p| p.into_inner());
            log.wrote(last_change, now, quiet, !seen.rose_at_is_empty());
        }
        match (full_at, shape.recovers) {
            (Some(limit), _) if now >= limit && set_rule(majmin, shape.slow_bps).is_ok() => {
                full_at = None;
                locked(seen.fell_at).push(now - start);
                let mut log = seen.log.lock().unwrap_or_else(|p| p.into_inner());
                log.fell.get_or_insert((Instant::now(), now));
                seen.falls.fetch_add(1, Ordering::Relaxed);
            }
            (None, Some((idle, bytes)))
                if last_change.elapsed() >= idle && set_rule(majmin, shape.fast_bps).is_ok() =>
            {
                full_at = Some(now + bytes);
                locked(seen.rose_at).push(now - start);
            }
            _ => {}
        }
    }
}

impl Drop for ThrottleCliff {
    fn drop(&mut self) {
        stop_and_clear(&self.stop, self.thread.take(), &self.majmin);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_stream_after_the_fall_ends_at_its_first_idle_gap() {
        let t0 = Instant::now();
        let mut log = Log::default();
        log.wrote(t0, 0, Duration::ZERO, false);
        log.fell = Some((t0 + ms(1000), 100_000_000));
        // The writers: 10 MB a second for two seconds, a write every 10 ms.
        for i in 1..=200u64 {
            log.wrote(
                t0 + ms(1000 + 10 * i),
                100_000_000 + i * 100_000,
                ms(10),
                false,
            );
        }
        // A journal commit two seconds later must not stretch the window.
        log.wrote(t0 + ms(5000), 120_100_000, ms(2000), false);
        log.wrote(t0 + ms(5010), 120_200_000, ms(10), false);
        let served = log.served().expect("a fall and a stream after it");
        assert_eq!(served.before_window, ms(1000));
        assert_eq!(served.after_window, ms(2000));
        assert!((served.after - 10_000_000.0).abs() < 1.0, "{served:?}");
    }

    #[test]
    fn what_the_stream_served_over_its_last_seconds() {
        let t0 = Instant::now();
        let mut log = Log::default();
        log.wrote(t0, 0, Duration::ZERO, false);
        log.fell = Some((t0 + ms(1000), 100_000_000));
        assert_eq!(log.served_last(ms(500)), None);
        // Half a second at 2 MB/s, then three at 10 MB/s, a write every
        // 50 ms.
        let mut bytes = 100_000_000;
        for i in 1..=70u64 {
            bytes += if i <= 10 { 100_000 } else { 500_000 };
            log.wrote(t0 + ms(1000 + 50 * i), bytes, ms(50), false);
        }
        let (rate, took) = log.served_last(ms(3000)).expect("3.5 s of stream");
        assert_eq!(took, ms(3000));
        assert!((rate - 10_000_000.0).abs() < 1.0, "{rate}");
        assert!(log.served_last(ms(3600)).is_none());
        // The whole stream's rate counts the slow half second.
        let whole = log.served().unwrap().after;
        assert!((whole - 31_000_000.0 / 3.5).abs() < 1.0, "{whole}");
    }

    #[test]
    fn a_rise_ends_the_stream_after_the_fall() {
        let t0 = Instant::now();
        let mut log = Log::default();
        log.wrote(t0, 0, Duration::ZERO, false);
        log.fell = Some((t0 + ms(1000), 1_000));
        log.wrote(t0 + ms(1100), 2_000, ms(100), false);
        log.wrote(t0 + ms(1200), 9_000, ms(100), true);
        let served = log.served().expect("a fall and a stream after it");
        assert_eq!(served.after_window, ms(100));
        assert!((served.after - 10_000.0).abs() < 1e-6, "{served:?}");
    }
}
