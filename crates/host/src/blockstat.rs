//! A block device's own counters, read while a job runs: the busy time and
//! weighted time in queue of `stat` (iostat's `%util` and `aqu-sz` come
//! from their deltas) and the requests in flight of `inflight`.
//! Documented in the kernel's `Documentation/block/stat.rst`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::DeviceChain;

/// The counters of one block device (a partition has its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockStat {
    name: String,
    dir: PathBuf,
}

/// Two cumulative times of `stat`, in milliseconds as the kernel counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockTicks {
    /// Field 10, `io_ticks`: time with at least one request in flight.
    pub busy: Duration,
    /// Field 11, `time_in_queue`: the sum over requests of their time from
    /// the block layer taking them to completion.
    pub in_queue: Duration,
}

impl BlockStat {
    /// The device behind `path` (a file's file system's device, or the
    /// device node itself); none when there is none (tmpfs) or sysfs does
    /// not show it.
    pub fn for_path(path: impl AsRef<Path>) -> Option<BlockStat> {
        let chain = DeviceChain::for_path(path).ok()?;
        let layer = chain.report().device.as_ref()?;
        let dir = PathBuf::from(&layer.sysfs_path);
        dir.join("stat").is_file().then(|| BlockStat {
            name: layer.name.clone(),
            dir,
        })
    }

    /// The kernel name, e.g. `loop3`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The cumulative busy and queue times now.
    pub fn ticks(&self) -> Option<BlockTicks> {
        parse_ticks(&std::fs::read_to_string(self.dir.join("stat")).ok()?)
    }

    /// Requests started and not completed now, reads and writes together.
    pub fn inflight(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.dir.join("inflight")).ok()?;
        text.split_whitespace()
            .map(|n| n.parse::<u64>().ok())
            .sum::<Option<u64>>()
    }
}

fn parse_ticks(stat: &str) -> Option<BlockTicks> {
    let fields: Vec<u64> = stat
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    Some(BlockTicks {
        busy: Duration::from_millis(*fields.get(9)?),
        in_queue: Duration::from_millis(*fields.get(10)?),
    })
}

impl BlockTicks {
    /// iostat's `aqu-sz` and `%util` between `earlier` and this reading,
    /// `wall` apart.
    pub fn since(&self, earlier: &BlockTicks, wall: Duration) -> (f64, f64) {
        let wall = wall.as_secs_f64();
        if wall <= 0.0 {
            return (0.0, 0.0);
        }
        let queue = self.in_queue.saturating_sub(earlier.in_queue).as_secs_f64() / wall;
        let busy = self.busy.saturating_sub(earlier.busy).as_secs_f64() / wall;
        (queue, (100.0 * busy).min(100.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_come_from_fields_ten_and_eleven() {
        // A line of a real /sys/block/vda/stat (kernel 6.1, 17 fields).
        let line = "   38223     1260  2841178    20564   120436   118745  3953512   \
                    283364        0   139884   311724        0        0        0        \
                    0    14350    7795\n";
        let t = parse_ticks(line).unwrap();
        assert_eq!(t.busy, Duration::from_millis(139_884));
        assert_eq!(t.in_queue, Duration::from_millis(311_724));
        assert!(parse_ticks("1 2 3").is_none());
    }

    #[test]
    fn queue_size_and_utilization_are_deltas_over_wall_time() {
        let a = BlockTicks {
            busy: Duration::from_millis(1_000),
            in_queue: Duration::from_millis(5_000),
        };
        let b = BlockTicks {
            busy: Duration::from_millis(1_900),
            in_queue: Duration::from_millis(12_000),
        };
        let (queue, util) = b.since(&a, Duration::from_secs(1));
        assert!((queue - 7.0).abs() < 1e-9);
        assert!((util - 90.0).abs() < 1e-9);
        assert_eq!(a.since(&b, Duration::ZERO), (0.0, 0.0));
    }
}
