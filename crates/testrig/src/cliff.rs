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

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::LoopDevice;

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
    thread: Option<JoinHandle<()>>,
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
        set_rule(&majmin, shape.fast_bps)?;
        let stop = Arc::new(AtomicBool::new(false));
        let falls = Arc::new(AtomicU32::new(0));
        let mut rig = ThrottleCliff {
            majmin: majmin.clone(),
            stop: Arc::clone(&stop),
            falls: Arc::clone(&falls),
            thread: None,
        };
        let thread = std::thread::Builder::new()
            .name("cliff-rig".into())
            .spawn(move || watch(&stat, &majmin, shape, start * 512, &stop, &falls))
            .map_err(|e| format!("cannot start the watcher: {e}"))?;
        rig.thread = Some(thread);
        Ok(rig)
    }

    /// How often the rate has fallen so far.
    pub fn falls(&self) -> u32 {
        self.falls.load(Ordering::Relaxed)
    }
}

fn watch(
    stat: &Path,
    majmin: &str,
    shape: CacheShape,
    start: u64,
    stop: &AtomicBool,
    falls: &AtomicU32,
) {
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
            last = now;
            last_change = Instant::now();
        }
        match (full_at, shape.recovers) {
            (Some(limit), _) if now >= limit && set_rule(majmin, shape.slow_bps).is_ok() => {
                full_at = None;
                falls.fetch_add(1, Ordering::Relaxed);
            }
            (None, Some((idle, bytes)))
                if last_change.elapsed() >= idle && set_rule(majmin, shape.fast_bps).is_ok() =>
            {
                full_at = Some(now + bytes);
            }
            _ => {}
        }
    }
}

impl Drop for ThrottleCliff {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // 0 removes the rule.
        let _ = set_rule(&self.majmin, 0);
    }
}
