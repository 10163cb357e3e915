//! What a block device saw during a job: the deltas of its own counters
//! (`/sys/block/DEV/stat`, the kernel's `Documentation/block/stat.rst`)
//! over the measured time, and the queue limits that shape its requests.
//! iostat's figures (`r/s`, `rareq-sz`, `r_await`, `aqu-sz`, `%util`)
//! are derived from these; iomark's own I/O count is compared with them
//! to tell split, merged and foreign requests apart.

use serde::{Deserialize, Serialize};

use crate::units::{Bytes, Nanos};

fn is_zero(n: &Nanos) -> bool {
    n.get() == 0
}

/// The device's counters over one job (or several, added).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIo {
    /// The kernel name whose counters these are, e.g. `sda1`, `loop3`.
    pub name: String,
    /// The whole disk when `name` is a partition (its queue limits are
    /// the disk's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_of: Option<String>,
    /// Wall time between the two readings.
    pub wall: Nanos,
    /// Reads the device completed.
    pub read: DeviceDirection,
    /// Writes the device completed.
    pub write: DeviceDirection,
    /// Time with at least one request in flight (`io_ticks`).
    pub busy: Nanos,
    /// Requests' time from the block layer taking them to their
    /// completion, summed over requests (`time_in_queue`).
    pub in_queue: Nanos,
    /// Time in which the device held requests and completed none, in
    /// stretches far longer than its mean request took: a stall (the
    /// device's, its driver's, or a host that did not run its driver).
    /// Seen by looks ten times a second, so a lower bound.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stalled: Nanos,
    /// The queue limits at the end of the job.
    #[serde(default)]
    pub limits: QueueLimits,
}

/// One direction of a device's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeviceDirection {
    /// Requests completed.
    pub requests: u64,
    /// Requests merged into a neighbour before they were sent, so never
    /// sent on their own.
    pub merges: u64,
    /// Bytes moved (the kernel counts 512-byte sectors).
    pub bytes: Bytes,
    /// Summed time of the requests, from issue to completion.
    pub time: Nanos,
}

/// The limits of a device's request queue that cut an I/O into several
/// requests (`/sys/block/DEV/queue/`), and its scheduler.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueLimits {
    /// `max_sectors_kb`: the largest request the block layer builds (a
    /// tunable, at most `max_hw_sectors_kb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_request: Option<Bytes>,
    /// `max_hw_sectors_kb`: the largest request the driver accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_hw_request: Option<Bytes>,
    /// `max_segments`: scatter-gather entries per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_segments: Option<u32>,
    /// `max_segment_size`: bytes per scatter-gather entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_segment_size: Option<Bytes>,
    /// The machine's memory page: a segment covers one page when the I/O
    /// buffer's pages are not contiguous in physical memory, as an
    /// ordinary allocation's are not, so `max_segments` pages is what one
    /// request can carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_page: Option<Bytes>,
    /// The active scheduler (`none`, `mq-deadline`, ...); none for
    /// bio-based drivers, which have no scheduler file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
}

/// Which queue limit cuts a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitBy {
    /// `max_sectors_kb`, a tunable.
    MaxSectors,
    /// `max_hw_sectors_kb`, the driver's.
    MaxHwSectors,
    /// `max_segments` entries of `max_segment_size` bytes.
    Segments,
    /// `max_segments` entries of one memory page each.
    SegmentPages,
}

/// A limit of [`QueueLimits`] below a request size: the one that splits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitLimit {
    /// Which limit.
    pub by: SplitBy,
    /// What it comes to in bytes.
    pub bytes: Bytes,
}

impl QueueLimits {
    /// The smallest limit below `request`, if any is: what splits a
    /// request of that size.
    pub fn splitting(&self, request: Bytes) -> Option<SplitLimit> {
        let segments = |size: Option<Bytes>| match (self.max_segments, size) {
            (Some(n), Some(s)) => Some(Bytes(u64::from(n) * s.get())),
            _ => None,
        };
        [
            (SplitBy::MaxSectors, self.max_request),
            (SplitBy::MaxHwSectors, self.max_hw_request),
            (SplitBy::Segments, segments(self.max_segment_size)),
            (SplitBy::SegmentPages, segments(self.memory_page)),
        ]
        .into_iter()
        .filter_map(|(by, b)| b.map(|bytes| SplitLimit { by, bytes }))
        .filter(|l| l.bytes < request && l.bytes.get() > 0)
        .min_by_key(|l| l.bytes)
    }

    /// The limit in the words of sysfs, with its figures:
    /// `max_sectors_kb (128 KiB)`, `max_segments (128) x a 4 KiB memory
    /// page each (512 KiB)`.
    pub fn describe(&self, limit: &SplitLimit) -> String {
        let n = self.max_segments.unwrap_or(0);
        match limit.by {
            SplitBy::MaxSectors => format!("max_sectors_kb ({})", limit.bytes),
            SplitBy::MaxHwSectors => format!("max_hw_sectors_kb ({})", limit.bytes),
            SplitBy::Segments => format!(
                "max_segments ({n}) x max_segment_size ({}) = {}",
                self.max_segment_size.unwrap_or_default(),
                limit.bytes
            ),
            SplitBy::SegmentPages => format!(
                "max_segments ({n}) x a {} memory page each = {} (the I/O buffer's pages \
                 are not contiguous in physical memory, so each is a segment)",
                self.memory_page.unwrap_or_default(),
                limit.bytes
            ),
        }
    }
}

impl DeviceDirection {
    /// Mean bytes per request (iostat's `rareq-sz`); none without requests.
    pub fn mean_request(&self) -> Option<Bytes> {
        (self.requests > 0).then(|| Bytes(self.bytes.get() / self.requests))
    }

    /// Mean time per request (iostat's `r_await`); none without requests.
    pub fn mean_time(&self) -> Option<Nanos> {
        (self.requests > 0).then(|| Nanos(self.time.get() / self.requests))
    }

    fn add(&mut self, o: &DeviceDirection) {
        self.requests += o.requests;
        self.merges += o.merges;
        self.bytes = Bytes(self.bytes.get() + o.bytes.get());
        self.time = Nanos(self.time.get() + o.time.get());
    }
}

impl DeviceIo {
    /// Share of the wall time with a request in flight, percent (iostat's
    /// `%util`).
    pub fn utilization_pct(&self) -> f64 {
        let wall = self.wall.as_secs_f64();
        if wall <= 0.0 {
            return 0.0;
        }
        (100.0 * self.busy.as_secs_f64() / wall).min(100.0)
    }

    /// Mean requests in the queue (iostat's `aqu-sz`).
    pub fn queue_size(&self) -> f64 {
        let wall = self.wall.as_secs_f64();
        if wall <= 0.0 {
            return 0.0;
        }
        self.in_queue.as_secs_f64() / wall
    }

    /// Both counters added: what the device saw over two jobs (the passes
    /// of one test). The name, parent and limits stay this one's.
    pub fn add(&mut self, o: &DeviceIo) {
        self.wall = Nanos(self.wall.get() + o.wall.get());
        self.read.add(&o.read);
        self.write.add(&o.write);
        self.busy = Nanos(self.busy.get() + o.busy.get());
        self.in_queue = Nanos(self.in_queue.get() + o.in_queue.get());
        self.stalled = Nanos(self.stalled.get() + o.stalled.get());
    }

    /// The mean time a request took on the device, from issue to
    /// completion; none without requests.
    pub fn mean_request_time(&self) -> Option<std::time::Duration> {
        let requests = self.read.requests + self.write.requests;
        let time = self.read.time.get() + self.write.time.get();
        (requests > 0).then(|| std::time::Duration::from_nanos(time / requests))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_limit_below_the_request_splits_it() {
        let l = QueueLimits {
            max_request: Some(Bytes(128 << 10)),
            max_hw_request: Some(Bytes(32 << 20)),
            max_segments: Some(128),
            max_segment_size: Some(Bytes(65_536)),
            memory_page: Some(Bytes(4096)),
            scheduler: Some("none".into()),
        };
        let s = l.splitting(Bytes(1 << 20)).unwrap();
        assert_eq!((s.by, s.bytes), (SplitBy::MaxSectors, Bytes(128 << 10)));
        assert_eq!(l.describe(&s), "max_sectors_kb (128 KiB)");
        assert_eq!(l.splitting(Bytes(128 << 10)), None);
        let narrow = QueueLimits {
            max_segments: Some(16),
            ..l.clone()
        };
        let s = narrow.splitting(Bytes(1 << 20)).unwrap();
        assert_eq!(s.by, SplitBy::SegmentPages);
        assert_eq!(s.bytes, Bytes(64 << 10));
        // A loop device's defaults: 1280 KiB requests, but 128 pages.
        let looped = QueueLimits {
            max_request: Some(Bytes(1280 << 10)),
            max_hw_request: Some(Bytes(1280 << 10)),
            ..l.clone()
        };
        let s = looped.splitting(Bytes(1 << 20)).unwrap();
        assert_eq!(s.by, SplitBy::SegmentPages);
        assert!(looped
            .describe(&s)
            .starts_with("max_segments (128) x a 4 KiB memory page each = 512 KiB"));
        assert_eq!(s.bytes, Bytes(512 << 10));
        let wide = QueueLimits {
            max_segment_size: Some(Bytes(4096)),
            memory_page: None,
            ..narrow
        };
        let s = wide.splitting(Bytes(1 << 20)).unwrap();
        assert_eq!(s.by, SplitBy::Segments);
        assert_eq!(
            wide.describe(&s),
            "max_segments (16) x max_segment_size (4 KiB) = 64 KiB"
        );
        assert_eq!(QueueLimits::default().splitting(Bytes(1 << 20)), None);
    }

    #[test]
    fn derived_figures_and_sums() {
        let mut d = DeviceIo {
            name: "loop3".into(),
            partition_of: None,
            wall: Nanos::from_secs(1),
            read: DeviceDirection {
                requests: 8,
                merges: 0,
                bytes: Bytes(1 << 20),
                time: Nanos(8_000_000),
            },
            write: DeviceDirection::default(),
            busy: Nanos(500_000_000),
            in_queue: Nanos(2_000_000_000),
            stalled: Nanos(0),
            limits: QueueLimits::default(),
        };
        assert_eq!(d.read.mean_request(), Some(Bytes(128 << 10)));
        assert_eq!(d.read.mean_time(), Some(Nanos(1_000_000)));
        assert_eq!(d.write.mean_request(), None);
        assert!((d.utilization_pct() - 50.0).abs() < 1e-9);
        assert!((d.queue_size() - 2.0).abs() < 1e-9);
        let again = d.clone();
        d.add(&again);
        assert_eq!(d.read.requests, 16);
        assert_eq!(d.read.mean_request(), Some(Bytes(128 << 10)));
        assert!((d.utilization_pct() - 50.0).abs() < 1e-9);
        // An old document without limits still reads.
        let old = r#"{"name":"sda1","wall":1,"read":{"requests":0,"merges":0,"bytes":0,"time":0},
            "write":{"requests":0,"merges":0,"bytes":0,"time":0},"busy":0,"in_queue":0}"#;
        let back: DeviceIo = serde_json::from_str(old).unwrap();
        assert_eq!(back.limits, QueueLimits::default());
    }
}
