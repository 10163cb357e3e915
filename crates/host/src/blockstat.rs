//! A block device's own counters, read while a job runs: the `stat` line
//! (requests, merges, sectors and times per direction, busy time, time in
//! queue; iostat's figures come from their deltas) and the requests in
//! flight now, the stretches in which it held requests and completed
//! none ([`StallWatch`]), and the queue limits that cut an I/O into
//! requests. Documented in the kernel's `Documentation/block/stat.rst` and
//! `Documentation/block/queue-sysfs.rst`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use iomark_model::blockio::{DeviceDirection, DeviceIo, QueueLimits};
use iomark_model::units::{Bytes, Nanos};

use crate::read::{num, text};
use crate::sysfs::selected_choice;
use crate::DeviceChain;

/// The counters of one block device (a partition has its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockStat {
    name: String,
    dir: PathBuf,
}

/// The cumulative counters of one `stat` line. Kernels before 4.18 print
/// 11 fields, 4.18 adds four for discards, 5.5 two for flushes; only the
/// first 11 are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockCounters {
    /// Fields 1-4: reads completed, merged, sectors, milliseconds.
    pub read: DirectionCounters,
    /// Fields 5-8: writes completed, merged, sectors, milliseconds.
    pub write: DirectionCounters,
    /// Field 9: requests in flight now (not cumulative).
    pub in_flight: u64,
    /// Field 10, `io_ticks`: time with at least one request in flight.
    pub busy: Duration,
    /// Field 11, `time_in_queue`: the sum over requests of their time from
    /// the block layer taking them to completion.
    pub in_queue: Duration,
}

/// One direction's four cumulative counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirectionCounters {
    /// Requests completed.
    pub requests: u64,
    /// Requests merged into a neighbour.
    pub merges: u64,
    /// 512-byte sectors, whatever the device's block size.
    pub sectors: u64,
    /// Milliseconds the requests took, summed.
    pub time: Duration,
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

    /// The whole disk when this is a partition: sysfs puts a partition's
    /// directory, with its `partition` file, inside its disk's.
    pub fn partition_of(&self) -> Option<String> {
        if !self.dir.join("partition").is_file() {
            return None;
        }
        let disk = self.dir.parent()?.file_name()?;
        Some(disk.to_string_lossy().into_owned())
    }

    /// The cumulative counters now.
    pub fn counters(&self) -> Option<BlockCounters> {
        parse_counters(&std::fs::read_to_string(self.dir.join("stat")).ok()?)
    }

    /// The queue's limits; a partition's are its disk's.
    pub fn limits(&self) -> QueueLimits {
        let disk = if self.partition_of().is_some() {
            self.dir.parent().unwrap_or(&self.dir)
        } else {
            &self.dir
        };
        queue_limits(&disk.join("queue"))
    }
}

fn queue_limits(q: &Path) -> QueueLimits {
    let kib = |f: &str| num::<u64>(&q.join(f)).map(|k| Bytes(k * Bytes::KIB));
    QueueLimits {
        max_request: kib("max_sectors_kb"),
        max_hw_request: kib("max_hw_sectors_kb"),
        max_segments: num(&q.join("max_segments")),
        max_segment_size: num::<u64>(&q.join("max_segment_size")).map(Bytes),
        memory_page: Some(Bytes(rustix::param::page_size() as u64)),
        scheduler: text(&q.join("scheduler")).and_then(|s| selected_choice(&s)),
    }
}

/// A `stat` line's counters; none when it has fewer than 11 numbers.
pub fn parse_counters(stat: &str) -> Option<BlockCounters> {
    let fields: Vec<u64> = stat
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    if fields.len() < 11 {
        return None;
    }
    let direction = |at: usize| DirectionCounters {
        requests: fields[at],
        merges: fields[at + 1],
        sectors: fields[at + 2],
        time: Duration::from_millis(fields[at + 3]),
    };
    Some(BlockCounters {
        read: direction(0),
        write: direction(4),
        in_flight: fields[8],
        busy: Duration::from_millis(fields[9]),
        in_queue: Duration::from_millis(fields[10]),
    })
}

/// The kernel counts in 512-byte sectors whatever the block size.
const SECTOR: u64 = 512;

impl DirectionCounters {
    fn since(&self, earlier: &DirectionCounters) -> DeviceDirection {
        DeviceDirection {
            requests: self.requests.saturating_sub(earlier.requests),
            merges: self.merges.saturating_sub(earlier.merges),
            bytes: Bytes(self.sectors.saturating_sub(earlier.sectors) * SECTOR),
            time: Nanos::from_duration(self.time.saturating_sub(earlier.time)),
        }
    }
}

impl BlockCounters {
    /// Requests completed in either direction.
    pub fn completed(&self) -> u64 {
        self.read.requests + self.write.requests
    }

    /// iostat's `aqu-sz` and `%util` between `earlier` and this reading,
    /// `wall` apart.
    pub fn queue_and_utilization(&self, earlier: &BlockCounters, wall: Duration) -> (f64, f64) {
        let wall = wall.as_secs_f64();
        if wall <= 0.0 {
            return (0.0, 0.0);
        }
        let queue = self.in_queue.saturating_sub(earlier.in_queue).as_secs_f64() / wall;
        let busy = self.busy.saturating_sub(earlier.busy).as_secs_f64() / wall;
        (queue, (100.0 * busy).min(100.0))
    }

    /// What `stat` moved by between `earlier` and this reading, `wall`
    /// apart, as the stored record of device `of`.
    pub fn since(&self, earlier: &BlockCounters, wall: Duration, of: &BlockStat) -> DeviceIo {
        DeviceIo {
            name: of.name().to_string(),
            partition_of: of.partition_of(),
            wall: Nanos::from_duration(wall),
            read: self.read.since(&earlier.read),
            write: self.write.since(&earlier.write),
            busy: Nanos::from_duration(self.busy.saturating_sub(earlier.busy)),
            in_queue: Nanos::from_duration(self.in_queue.saturating_sub(earlier.in_queue)),
            stalled: Nanos(0),
            limits: of.limits(),
        }
    }
}

/// A stretch shorter than this is never a stall: looks ten times a second
/// can only see stretches of a few of their intervals.
const STALL_MIN: Duration = Duration::from_millis(250);

/// The stretches in which a device held requests and completed none, from
/// looks at its counters while a job runs. A stretch is known only between
/// looks: from the first look that found requests in flight to the last
/// one that found no more completed. That is a lower bound of the stall
/// (it may have begun before the first look and ended just before the next
/// one), so what it excuses is never more than what happened.
#[derive(Debug, Clone, Default)]
pub struct StallWatch {
    last: Option<(Instant, u64, u64)>,
    open: Option<(Instant, Instant)>,
    stretches: Vec<Duration>,
}

impl StallWatch {
    /// A look at `counters`, read at `at`.
    pub fn look(&mut self, at: Instant, counters: &BlockCounters) {
        let done = counters.completed();
        if let Some((then, done_then, held_then)) = self.last {
            if held_then > 0 && done == done_then {
                let from = self.open.map_or(then, |(from, _)| from);
                self.open = Some((from, at));
            } else {
                self.close();
            }
        }
        self.last = Some((at, done, counters.in_flight));
    }

    fn close(&mut self) {
        if let Some((from, to)) = self.open.take() {
            self.stretches.push(to.saturating_duration_since(from));
        }
    }

    /// The time spent in stretches longer than `longer_than` (and than
    /// 250 ms (`STALL_MIN`)), a stretch still open at the end included.
    pub fn stalled(mut self, longer_than: Duration) -> Duration {
        self.close();
        let bar = longer_than.max(STALL_MIN);
        self.stretches.iter().filter(|d| **d > bar).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of a real /sys/block/vda/stat (kernel 6.1, 17 fields).
    const LINE_17: &str = "   38223     1260  2841178    20564   120436   118745  3953512   \
                    283364        0   139884   311724        0        0        0        \
                    0    14350    7795\n";

    #[test]
    fn every_field_count_since_2_6_parses_the_same_first_eleven() {
        let c = parse_counters(LINE_17).unwrap();
        assert_eq!(
            c.read,
            DirectionCounters {
                requests: 38_223,
                merges: 1_260,
                sectors: 2_841_178,
                time: Duration::from_millis(20_564)
            }
        );
        assert_eq!(c.write.requests, 120_436);
        assert_eq!(c.write.merges, 118_745);
        assert_eq!(c.write.sectors, 3_953_512);
        assert_eq!(c.write.time, Duration::from_millis(283_364));
        assert_eq!(c.in_flight, 0);
        assert_eq!(c.busy, Duration::from_millis(139_884));
        assert_eq!(c.in_queue, Duration::from_millis(311_724));
        // The same counters as 4.18 (15 fields: discards) and 2.6 (11)
        // print them.
        let words: Vec<&str> = LINE_17.split_whitespace().collect();
        for n in [15, 11] {
            assert_eq!(parse_counters(&words[..n].join(" ")), Some(c), "{n} fields");
        }
        assert!(parse_counters(&words[..10].join(" ")).is_none());
        assert!(parse_counters("1 2 3 4 5 6 7 8 9 10 x").is_none());
        assert!(parse_counters("").is_none());
    }

    #[test]
    fn a_stall_is_the_time_between_looks_that_saw_requests_held_and_none_completed() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let look = |done: u64, held: u64| BlockCounters {
            read: DirectionCounters {
                requests: done,
                ..DirectionCounters::default()
            },
            in_flight: held,
            ..BlockCounters::default()
        };
        let mut w = StallWatch::default();
        // Completing: no stall.
        w.look(ms(0), &look(10, 4));
        w.look(ms(100), &look(20, 4));
        // Held from the look at 100 ms to the one at 900 ms, then done.
        for t in (200..=900).step_by(100) {
            w.look(ms(t), &look(20, 4));
        }
        w.look(ms(1000), &look(24, 0));
        // Idle (nothing held, nothing completed) is no stall.
        w.look(ms(1100), &look(24, 0));
        w.look(ms(1600), &look(24, 0));
        // 200 ms held: shorter than STALL_MIN.
        w.look(ms(1700), &look(24, 2));
        w.look(ms(1900), &look(24, 2));
        w.look(ms(2000), &look(26, 0));
        // Held at the end, 300 ms: still counted.
        w.look(ms(2100), &look(26, 4));
        w.look(ms(2400), &look(26, 4));
        assert_eq!(
            w.clone().stalled(Duration::ZERO),
            Duration::from_millis(1100)
        );
        // A stretch counts only when longer than the device's own bar.
        assert_eq!(
            w.stalled(Duration::from_millis(500)),
            Duration::from_millis(800)
        );
    }

    #[test]
    fn deltas_are_bytes_and_nanoseconds() {
        let of = BlockStat {
            name: "loop7".into(),
            dir: PathBuf::from("/nonexistent/loop7"),
        };
        let a = parse_counters("10 1 16 5 1 0 8 3 0 100 200").unwrap();
        let b = parse_counters("26 3 4112 25 15 2 2056 9 1 900 1900").unwrap();
        let d = b.since(&a, Duration::from_secs(1), &of);
        assert_eq!(d.name, "loop7");
        assert_eq!(d.partition_of, None);
        assert_eq!(d.read.requests, 16);
        assert_eq!(d.read.merges, 2);
        assert_eq!(d.read.bytes, Bytes(4096 * 512));
        assert_eq!(d.read.time, Nanos(20_000_000));
        assert_eq!(d.read.mean_request(), Some(Bytes(128 << 10)));
        assert_eq!(d.write.requests, 14);
        assert_eq!(d.write.bytes, Bytes(2048 * 512));
        assert_eq!(d.busy, Nanos(800_000_000));
        assert_eq!(d.in_queue, Nanos(1_700_000_000));
        assert_eq!(d.limits.max_request, None);
        let (queue, util) = b.queue_and_utilization(&a, Duration::from_secs(1));
        assert!((queue - 1.7).abs() < 1e-9);
        assert!((util - 80.0).abs() < 1e-9);
        assert_eq!(a.queue_and_utilization(&b, Duration::ZERO), (0.0, 0.0));
    }

    #[test]
    fn limits_and_parent_come_from_sysfs_files() {
        let root = tempfile::tempdir().unwrap();
        let disk = root.path().join("sdz");
        let part = disk.join("sdz1");
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join("partition"), "1\n").unwrap();
        for (f, v) in [
            ("max_sectors_kb", "128"),
            ("max_hw_sectors_kb", "32767"),
            ("max_segments", "168"),
            ("max_segment_size", "65536"),
            ("scheduler", "none [mq-deadline] kyber"),
        ] {
            std::fs::write(disk.join("queue").join(f), format!("{v}\n")).unwrap();
        }
        let p = BlockStat {
            name: "sdz1".into(),
            dir: part,
        };
        assert_eq!(p.partition_of().as_deref(), Some("sdz"));
        let l = p.limits();
        assert_eq!(l.max_request, Some(Bytes(128 << 10)));
        assert_eq!(l.max_hw_request, Some(Bytes(32_767 << 10)));
        assert_eq!(l.max_segments, Some(168));
        assert_eq!(l.max_segment_size, Some(Bytes(65_536)));
        assert_eq!(l.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(
            l.memory_page,
            Some(Bytes(rustix::param::page_size() as u64))
        );
        let d = BlockStat {
            name: "sdz".into(),
            dir: disk,
        };
        assert_eq!(d.partition_of(), None);
        assert_eq!(d.limits(), l);
    }
}
