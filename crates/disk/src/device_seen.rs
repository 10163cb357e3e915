//! What the device saw against what the job did: the deltas of the block
//! device's own counters over the measured time ([`DeviceIo`]) compared
//! with the job's I/O count and bytes.
//!
//! Two doubts come out of it (docs/devices.md, "What the device saw"):
//!
//! - **The request size changed** (direct I/O only): the device's mean
//!   request is well below the block size (a queue limit split each I/O,
//!   named when one is below it) or well above it with merges counted (the
//!   block layer joined neighbours). Buffered I/O changes sizes by design
//!   (readahead, writeback), so its figures are shown and not judged.
//! - **Foreign I/O** (direct I/O only): the device moved clearly more bytes
//!   than the job did. The job's own account misses at most the I/Os in
//!   flight at either edge of the measured time, so those are allowed for
//!   in full; above that, a floor and a share of the job's bytes absorb a
//!   file system's own writes (ext4's journal commits, an extent
//!   conversion, the results store's checkpoint), which are kilobytes to a
//!   few megabytes. On a file, a job that writes makes the file system
//!   write its metadata too, as much as several times the data (btrfs
//!   copies a 16 KiB leaf for a 4 KiB random write), so extra writes there
//!   are the job's and only extra reads are judged.

use iomark_model::blockio::{DeviceIo, SplitBy};
use iomark_model::disk::{DirectionResult, DiskJobResult};
use iomark_model::units::Bytes;
use iomark_model::{Warning, WarningKind};

/// Fewer I/Os than this in a direction say nothing about request sizes.
const MIN_IOS: u64 = 16;

/// Foreign bytes below this are never reported: a file system's journal
/// commits and metadata during a job stay far under it.
const FOREIGN_FLOOR: Bytes = Bytes(4 << 20);

/// Foreign bytes below this share of the job's own are never reported.
const FOREIGN_SHARE: f64 = 0.10;

/// A mean request at most this share of the block size counts as split
/// (a request cut in two is at most half).
const SPLIT_AT: f64 = 0.75;

/// A mean request at least this multiple of the block size, with merges
/// counted, counts as merged.
const MERGED_AT: f64 = 1.5;

/// The job's own I/O, as its result counted it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OwnIo {
    /// Bytes per I/O asked for.
    bs: Bytes,
    /// Whether the page cache was bypassed.
    direct: bool,
    /// Whether the target is a file on a file system (not the device
    /// itself), whose own writes follow the job's.
    on_file: bool,
    /// I/Os in flight at once over all threads: what the job's own count
    /// can miss at each edge of the measured time.
    in_flight: u64,
    /// Reads: I/Os and bytes; none when the job did not read.
    read: Option<(u64, Bytes)>,
    /// Writes: I/Os and bytes; none when the job did not write.
    write: Option<(u64, Bytes)>,
}

impl OwnIo {
    /// The I/O of a finished job that ran at `depth` per thread on a file
    /// (`on_file`) or on the device itself.
    pub(crate) fn of(job: &DiskJobResult, depth: u32, on_file: bool) -> OwnIo {
        let dir = |d: &Option<DirectionResult>| d.as_ref().map(|d| (d.ios, d.io_bytes));
        OwnIo {
            bs: job.spec.bs,
            direct: job.page_cache_bypassed,
            on_file,
            in_flight: u64::from(depth.max(1)) * u64::from(job.spec.numjobs.max(1)),
            read: dir(&job.read),
            write: dir(&job.write),
        }
    }

    /// Bytes the job's count may miss in a direction it did: the I/Os in
    /// flight at the start and at the end of the measured time.
    fn slack(&self, did: bool) -> u64 {
        if did {
            2 * self.in_flight * self.bs.get()
        } else {
            0
        }
    }
}

/// A share of the measured time stalled at or above which the figure is
/// doubted.
const STALLED_SHARE: f64 = 0.10;

/// The doubts `seen` raises about a job that did `own`.
pub(crate) fn check(own: &OwnIo, seen: &DeviceIo) -> Vec<Warning> {
    let mut warnings: Vec<Warning> = stall(seen).into_iter().collect();
    if !own.direct {
        return warnings;
    }
    let foreign = Foreign::of(own, seen);
    if let Some(w) = foreign.warning(own, seen) {
        warnings.push(w);
    }
    for (what, mine, dev, extra) in [
        ("reads", own.read, &seen.read, foreign.read),
        ("writes", own.write, &seen.write, foreign.write),
    ] {
        let Some((ios, bytes)) = mine else { continue };
        // Another's requests in the mean would make it nobody's size.
        let mixed = extra as f64 > FOREIGN_SHARE * bytes.get() as f64;
        if ios < MIN_IOS || mixed {
            continue;
        }
        if let Some(w) = request_size(what, own.bs, dev, seen) {
            warnings.push(w);
        }
    }
    warnings
}

/// The device's bytes beyond the job's own and its slack, per direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Foreign {
    read: u64,
    write: u64,
    requests: u64,
}

impl Foreign {
    fn of(own: &OwnIo, seen: &DeviceIo) -> Foreign {
        let beyond = |mine: Option<(u64, Bytes)>, dev: u64| {
            let (_, bytes) = mine.unwrap_or((0, Bytes(0)));
            dev.saturating_sub(bytes.get() + own.slack(mine.is_some()))
        };
        let ios = own.read.map_or(0, |r| r.0) + own.write.map_or(0, |w| w.0);
        Foreign {
            read: beyond(own.read, seen.read.bytes.get()),
            write: beyond(own.write, seen.write.bytes.get()),
            requests: (seen.read.requests + seen.write.requests)
                .saturating_sub(ios + 2 * own.in_flight),
        }
    }

    fn warning(&self, own: &OwnIo, seen: &DeviceIo) -> Option<Warning> {
        let mine = own.read.map_or(0, |r| r.1.get()) + own.write.map_or(0, |w| w.1.get());
        // A file system's metadata follows a job's writes to a file.
        let judged_write = if own.on_file && own.write.is_some() {
            0
        } else {
            self.write
        };
        let total = self.read + judged_write;
        let bar = FOREIGN_FLOOR
            .get()
            .max((FOREIGN_SHARE * mine as f64) as u64);
        if total <= bar {
            return None;
        }
        let warning = Warning::new(
            WarningKind::ForeignIo,
            format!(
                "other I/O reached {} during the job: {} read and {} written beyond the job's \
                 own {} (device: {} read, {} written; about {} requests not the job's): the \
                 figures are not the device's alone; stop the other I/O (iotop -o shows \
                 who; an earlier buffered job's writeback counts too) or test an idle device",
                device_name(seen),
                Bytes(self.read),
                Bytes(self.write),
                Bytes(mine),
                seen.read.bytes,
                seen.write.bytes,
                self.requests
            ),
        );
        // Against the job's own bytes; a job that moved none has no measure.
        Some(match mine {
            0 => warning,
            _ => warning.with_strength(total as f64 / mine as f64),
        })
    }
}

/// A warning when the device held requests and completed none for
/// [`STALLED_SHARE`] of the measured time or more.
fn stall(seen: &DeviceIo) -> Option<Warning> {
    let wall = seen.wall.as_secs_f64();
    let stalled = seen.stalled.as_secs_f64();
    if wall <= 0.0 || stalled < STALLED_SHARE * wall {
        return None;
    }
    Some(Warning::new(
        WarningKind::DeviceStalled,
        format!(
            "{} held requests for {stalled:.1} s of the {wall:.1} s measured without completing \
             one: the figure counts a stall (the device's, its driver's, or a host too busy to \
             run them), not only the device's steady rate; run again, and if it recurs look \
             at the device (dmesg, smartctl)",
            device_name(seen),
        ),
    ))
}

/// `loop3`, or `sda1 (on sda)` for a partition.
fn device_name(seen: &DeviceIo) -> String {
    match &seen.partition_of {
        Some(disk) => format!("{} (on {disk})", seen.name),
        None => seen.name.clone(),
    }
}

/// A warning when the device's mean request in one direction is far from
/// the block size asked for.
fn request_size(
    what: &str,
    bs: Bytes,
    dev: &iomark_model::blockio::DeviceDirection,
    seen: &DeviceIo,
) -> Option<Warning> {
    let mean = dev.mean_request()?;
    let ratio = mean.get() as f64 / bs.get() as f64;
    let name = device_name(seen);
    // The counts are in `device_io`; the message stays the same over the
    // passes of a test, so it is said once.
    let shown = Bytes((mean.get() + 512) / 1024 * 1024);
    let observed =
        format!("{what} reached {name} as {shown} requests on average, not the {bs} asked for");
    if ratio <= SPLIT_AT {
        let why = match seen.limits.splitting(bs) {
            Some(limit) => {
                let tunable = match (limit.by, &seen.limits.max_hw_request) {
                    (SplitBy::MaxSectors, Some(hw)) if *hw > limit.bytes => format!(
                        ", or raise it (up to max_hw_sectors_kb, {hw}) in /sys/block/{}/queue",
                        seen.partition_of.as_deref().unwrap_or(&seen.name)
                    ),
                    _ => String::new(),
                };
                format!(
                    "the block layer split each I/O at {}, so the device was measured at \
                     that request size (a job with --bs {} measures the same){tunable}",
                    seen.limits.describe(&limit),
                    limit.bytes.short_label().to_lowercase()
                )
            }
            None => format!(
                "no queue limit of {name} is below {bs}: the file's layout on disk (its \
                 extents) or a layer under the device split them"
            ),
        };
        return Some(
            Warning::new(
                WarningKind::RequestSizeChanged,
                format!("{observed}: {why}"),
            )
            .with_strength(1.0 / ratio),
        );
    }
    if ratio >= MERGED_AT && dev.merges > 0 {
        let scheduler = seen.limits.scheduler.as_deref().unwrap_or("no scheduler");
        return Some(
            Warning::new(
                WarningKind::RequestSizeChanged,
                format!(
                    "{observed}: the block layer merged adjacent I/Os into larger requests \
                 ({:.1} merged per request; scheduler {scheduler}), so the device was \
                 measured at the larger size, as sequential I/O at depth often is",
                    dev.merges as f64 / dev.requests as f64
                ),
            )
            .with_strength(ratio),
        );
    }
    None
}

#[cfg(test)]
#[path = "device_seen_tests.rs"]
mod tests;
