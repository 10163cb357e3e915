//! Checks of a finished run's figures against what the device can do, each
//! naming the likely cause when a figure looks served by a cache:
//!
//! * reads faster than the same test's writes by more than the device's
//!   class allows (a hard disk reads and writes at about one rate; flash
//!   writes slower, but not by an order of magnitude unless it is a stick
//!   or card);
//! * a CrystalDiskMark read test whose later passes ran clearly faster than
//!   its first (the cache filled during the first);
//! * a figure above the speed the device is rated at (`--rated`);
//! * a cache on the route that direct I/O does not get past (a loop device
//!   with direct I/O off), evidence with no figure to judge;
//! * figures that are not measurements: a job with no I/O, samples more
//!   than ten times apart ([`suspicious`]).
//!
//! A rate above the link's ceiling is checked with the device chain
//! ([`iomark_host::check_ceiling`]). Buffered jobs are left out: they
//! carry their own warning, and the page cache is what they measure.

use std::collections::BTreeMap;

pub(crate) mod suspicious;

use iomark_model::artefact::{RatedRate, RatedSpeed};
use iomark_model::device::{BlockLayer, DeviceReport, Transport};
use iomark_model::disk::{DirectionResult, DiskJobResult, RwMode};
use iomark_model::escape::escape_controls;
use iomark_model::figure::disk_job_test_name;
use iomark_model::profile::{ProfileResult, TestDir};
use iomark_model::units::{BytesPerSec, Iops};
use iomark_model::Bytes;
use iomark_model::{Warning, WarningKind};

/// How much faster a later pass must run than the first before it counts.
const WARMED_FACTOR: f64 = 1.5;
/// How far above its rated speed a figure may go before it is flagged:
/// makers round, and a good sample beats the sheet by a little.
const RATED_MARGIN: f64 = 1.05;

/// What a short measurement itself can add above a device's steady rate:
/// a start-up burst of this long at no limit (a drive's write cache taking
/// the first requests; a block throttle, cgroup's included, lets two of its
/// 100 ms slices through ahead of its rate when a pass starts from idle:
/// the slice rounded up, and the idle group's credit), spread over the
/// pass. A 1 s CrystalDiskMark `--quick` pass read 5-10% above a rig's
/// throttle, and a rating equal to the throttle was flagged as a cache
/// (issue 46); with one slice allowed, +20% beside two busy loops was
/// flagged again (loaded run 2 of de971a1).
const START_BURST: std::time::Duration = std::time::Duration::from_millis(200);

/// What a figure is allowed above its rating, in parts, each a fraction
/// of the rating: what a sheet rounds ([`RATED_MARGIN`]), a start-up
/// burst ([`START_BURST`] over the pass's length), and the run's own
/// spread (twice the standard error of the mean of its whole seconds,
/// where it has three or more: a device whose seconds vary reads above
/// its steady rate now and then, and a mean of few seconds with them).
#[derive(Debug, Clone, Copy)]
struct RatedMargin {
    burst: f64,
    spread: Option<(f64, usize)>,
    secs: f64,
}

impl RatedMargin {
    /// The margin of direction `dir` of `job`, in IOPS or in bytes.
    fn of(job: &DiskJobResult, d: &DirectionResult, dir: &str, iops: bool) -> RatedMargin {
        let secs = d.runtime.as_secs_f64();
        let burst = if secs > 0.0 {
            START_BURST.as_secs_f64() / secs
        } else {
            0.0
        };
        RatedMargin {
            burst,
            spread: seconds_spread(job, dir, iops),
            secs,
        }
    }

    /// The factor a figure may reach: 1 plus the parts.
    fn factor(&self) -> f64 {
        RATED_MARGIN + self.burst + self.spread.map_or(0.0, |(s, _)| s)
    }

    /// The parts in words.
    fn words(&self) -> String {
        let pct = |f: f64| format!("{:.0}%", f * 100.0);
        let mut parts = vec![
            format!("{} for a sheet's rounding", pct(RATED_MARGIN - 1.0)),
            format!(
                "{} for a start-up burst of {} ms over {:.1} s",
                pct(self.burst),
                START_BURST.as_millis(),
                self.secs
            ),
        ];
        if let Some((spread, n)) = self.spread {
            parts.push(format!(
                "{} for the spread of its {n} seconds (twice their mean's standard error)",
                pct(spread)
            ));
        }
        parts.join(", ")
    }
}

/// Twice the standard error of the mean of a job's whole seconds in
/// direction `dir` (IOPS or bytes), relative to that mean, and how many
/// seconds; none under three.
fn seconds_spread(job: &DiskJobResult, dir: &str, iops: bool) -> Option<(f64, usize)> {
    let rates: Vec<f64> = job
        .samples
        .iter()
        .filter(|s| s.length.as_secs_f64() >= 0.5)
        .map(|s| {
            let count = match (dir, iops) {
                ("read", false) => s.read_bytes,
                ("read", true) => s.read_ios,
                (_, false) => s.write_bytes,
                (_, true) => s.write_ios,
            };
            count as f64 / s.length.as_secs_f64()
        })
        .collect();
    let n = rates.len();
    if n < 3 {
        return None;
    }
    let mean = rates.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return None;
    }
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some((2.0 * var.sqrt() / (n as f64).sqrt() / mean, n))
}

/// How many times its writes a device of this kind may read, and the
/// kind in words; none when nothing is known of the device, or when no
/// ratio would mean a cache.
///
/// The transport comes first, the rotational flag after it and only for
/// the disks it describes (SATA, SCSI): loop devices, virtual disks, many
/// USB sticks and card readers report rotational=1, and a flash stick that
/// reads 25 times faster than it writes is a flash stick, not a cache.
fn read_over_write_allowed(report: &DeviceReport) -> Option<(f64, &'static str)> {
    let dev = report.device.as_ref()?;
    Some(match dev.transport {
        // RAM: decompressing is cheaper than compressing, and there is no
        // cache in front of it to find.
        Transport::Zram => return None,
        // Sticks and cards write at a tenth of their read rate and far
        // less: no ratio tells a cache from the flash itself.
        Transport::Usb | Transport::Mmc => return None,
        _ if dev.removable => return None,
        // A loop device is whatever holds its file: no class of its own.
        Transport::Loop => return None,
        Transport::Sata | Transport::Scsi if dev.queue.rotational == Some(true) => {
            (1.5, "a hard disk")
        }
        Transport::Nvme | Transport::Sata | Transport::Scsi => (4.0, "an SSD"),
        // A virtual or stacked device is what is beneath it; the host's
        // cache behind a virtual disk is the usual reason to exceed this.
        _ => (4.0, "a solid-state or virtual device"),
    })
}

/// The same test with the direction left out, so a read and a write of one
/// block size, depth, engine and region are paired.
fn pair_key(job: &DiskJobResult) -> Option<(String, bool)> {
    let (rw, read) = match job.spec.rw {
        RwMode::Read => (RwMode::Read, true),
        RwMode::Write => (RwMode::Read, false),
        RwMode::RandRead => (RwMode::RandRead, true),
        RwMode::RandWrite => (RwMode::RandRead, false),
        RwMode::ReadWrite | RwMode::RandRw => return None,
    };
    // The data pattern stays in the key: a read returns what its own
    // pattern's writes left.
    let mut spec = job.spec.clone();
    spec.rw = rw;
    Some((disk_job_test_name(&spec), read))
}

/// Caches on the route to the medium that direct I/O does not get past,
/// each evidence by itself, with no figure to judge (issue 46):
///
/// - a loop device with direct I/O off (`/sys/block/loopN/loop/dio` 0)
///   reads and writes its backing file through the host's page cache,
///   whatever the job asked, at any depth of the stack (a dm device over
///   such a loop device too): study 000's Galaxy Tab case read 6140 MB/s
///   from a 20 MiB/s medium this way, and no figure check fired without
///   a ceiling or a rating;
/// - a loop device whose backing file a FUSE daemon or a network file
///   system's server answers for, direct I/O or not;
/// - a file target on such a file system: `O_DIRECT` ends at this host's
///   client, and the daemon or the server reads and writes through a
///   cache of its own (the page cache of the file system under a FUSE
///   daemon, the server's memory);
/// - a block cache at any depth of the stack (bcache with a cache device
///   attached and a mode other than `none`, an LVM dm-cache or
///   dm-writecache volume), as the sysfs walk found it.
///
/// Only runs with a job that bypassed the page cache are flagged: a
/// buffered job says so already.
pub(crate) fn cache_on_route(report: &DeviceReport, jobs: &[DiskJobResult]) -> Vec<Warning> {
    if !jobs.iter().any(|j| j.page_cache_bypassed) {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(fs) = &report.filesystem {
        if let Some(server) = served_by_fs_type(&fs.fs_type) {
            out.push(Warning::new(
                WarningKind::CacheSuspected,
                format!(
                    "{} is on {} ({}): direct I/O ends at this host's client, and the {server} \
                     that answers for it has a cache of its own; the figures may be that \
                     cache's, not the medium's; test the device under it, or empty that cache \
                     before each run",
                    escape_controls(&report.path),
                    escape_controls(&fs.fs_type),
                    escape_controls(&fs.source)
                ),
            ));
        }
    }
    let mut layers: Vec<&BlockLayer> = report.device.iter().collect();
    while let Some(layer) = layers.pop() {
        layers.extend(&layer.lower);
        if let Some(cache) = layer.cache.as_ref().filter(|c| c.in_use()) {
            let mode = cache
                .mode
                .as_deref()
                .map(|m| format!(" in {} mode", escape_controls(m)))
                .unwrap_or_default();
            out.push(Warning::new(
                WarningKind::CacheSuspected,
                format!(
                    "{name} is a {kind} device{mode} ({evidence}): a cache device serves its \
                     reads and takes its writes in the medium's place, direct I/O or not, so \
                     the figures may be the cache's, not the medium's; test the device under \
                     it, or detach the cache",
                    name = escape_controls(&layer.name),
                    kind = escape_controls(&cache.kind),
                    evidence = escape_controls(&cache.evidence),
                ),
            ));
        }
        let Some(lb) = layer.loop_backing.as_ref() else {
            continue;
        };
        let name = escape_controls(&layer.name);
        let file = escape_controls(&lb.backing_file);
        if let Some(kind) = &lb.backing_served_by {
            let kind = escape_controls(kind);
            out.push(Warning::new(
                WarningKind::CacheSuspected,
                format!(
                    "{name}'s backing file {file} is on {kind}: the {kind} daemon or server \
                     that answers for it has a cache of its own, which direct I/O \
                     (dio = {}) does not get past; the figures may be that cache's, not the \
                     medium's; test the device under it",
                    u8::from(lb.direct_io)
                ),
            ));
        } else if !lb.direct_io {
            out.push(Warning::new(
                WarningKind::CacheSuspected,
                format!(
                    "{name} reads and writes its backing file {file} through the host's page \
                     cache (its direct I/O is off, /sys/block/{name}/loop/dio = 0): direct I/O \
                     stops at the loop device, and the figures may be the page cache's, not \
                     the medium's; losetup --direct-io=on /dev/{name}, or test the file or \
                     the device under it"
                ),
            ));
        }
    }
    out
}

/// What answers for a file system of type `fs_type` (`/proc/self/
/// mountinfo`'s name) when a daemon or a server does, with a cache of its
/// own: a FUSE daemon (`fuse.sshfs`, `fuseblk`, virtiofs), or a network
/// file system's server.
fn served_by_fs_type(fs_type: &str) -> Option<&'static str> {
    let base = fs_type.split('.').next().unwrap_or(fs_type);
    match base {
        "fuse" | "fuseblk" | "virtiofs" => Some("FUSE daemon"),
        "nfs" | "nfs4" | "cifs" | "smb3" | "smbfs" | "9p" | "ceph" | "glusterfs" | "afs" => {
            Some("file server")
        }
        _ => None,
    }
}

/// Whether the data of the run's buffered jobs fits in the page cache
/// that can hold it: the `--mem-limit` when there is one (the cgroup's
/// page cache counts against it), else the machine's memory. Buffered
/// jobs say "the page cache may be measured" already; this says whether
/// it can be, with the sizes (issue 46: an mmap sweep with and without a
/// limit carried the same sentence, and nothing said its 64 MiB fitted in
/// 23.5 GiB). None without a buffered job or a known capacity.
pub(crate) fn fits_in_memory(
    jobs: &[DiskJobResult],
    memory: Option<Bytes>,
    limit: Option<Bytes>,
) -> Option<Warning> {
    let region = jobs
        .iter()
        .filter(|j| !j.page_cache_bypassed)
        .map(|j| j.spec.size)
        .max()?;
    let (capacity, of) = match (limit, memory) {
        (Some(l), _) => (l, "the --mem-limit"),
        (None, Some(m)) if m.0 > 0 => (m, "the machine's memory"),
        _ => return None,
    };
    let message = if region <= capacity {
        format!(
            "buffered jobs: their data ({region}) fits in {of} ({capacity}), so once read or \
             written it is served from the page cache and the figures are memory's, not the \
             device's; for the device, use a region larger than {capacity}, a --mem-limit \
             below {region}, or direct I/O"
        )
    } else {
        format!(
            "buffered jobs: their data ({region}) is {:.1}x {of} ({capacity}): the page \
             cache holds at most {capacity} of it, and the rest is read from or written to \
             the device",
            region.0 as f64 / capacity.0 as f64
        )
    };
    Some(Warning::new(WarningKind::BufferedIo, message))
}

/// Reads above the same test's writes by more than `report`'s class
/// allows, per test, with the best of each direction's jobs.
pub(crate) fn reads_above_writes(report: &DeviceReport, jobs: &[DiskJobResult]) -> Vec<Warning> {
    let Some((allowed, class)) = read_over_write_allowed(report) else {
        return Vec::new();
    };
    // test -> (best read, best write)
    let mut best: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for job in jobs.iter().filter(|j| j.page_cache_bypassed) {
        let Some((key, read)) = pair_key(job) else {
            continue;
        };
        let e = best.entry(key).or_default();
        let dir = if read { &job.read } else { &job.write };
        let bw = dir.as_ref().map_or(0.0, |d| d.bw.0);
        let slot = if read { &mut e.0 } else { &mut e.1 };
        *slot = slot.max(bw);
    }
    best.into_iter()
        .filter(|(_, (r, w))| *w > 0.0 && r / w > allowed)
        .map(|(test, (r, w))| {
            Warning::new(
                WarningKind::CacheSuspected,
                format!(
                    "{test}: reads ran {:.1}x as fast as writes ({} against {}), more than {class} allows ({allowed}x): \
                     a cache (the drive's, or the host's behind a virtual disk) likely served the reads",
                    r / w,
                    BytesPerSec(r),
                    BytesPerSec(w)
                ),
            )
        })
        .collect()
}

/// CrystalDiskMark read tests whose later passes ran clearly faster than
/// the first: what the first pass read was cached for the others.
pub(crate) fn warmed_passes(
    result: Option<&ProfileResult>,
    jobs: &[DiskJobResult],
) -> Vec<Warning> {
    let Some(ProfileResult::Cdm(cdm)) = result else {
        return Vec::new();
    };
    cdm.tests
        .iter()
        .filter(|t| t.dir == TestDir::Read && t.pass_bw.len() >= 2)
        .filter(|t| jobs.get(t.first_job).is_some_and(|j| j.page_cache_bypassed))
        .filter_map(|t| {
            let first = t.pass_bw[0].0;
            let later = t.pass_bw[1..].iter().map(|b| b.0).fold(0.0, f64::max);
            (first > 0.0 && later / first >= WARMED_FACTOR).then(|| {
                Warning::new(
                    WarningKind::CacheSuspected,
                    format!(
                        "{} read: later passes ran {:.1}x as fast as the first ({} against {}): \
                         a cache kept what the first pass read; the first pass is the medium's rate",
                        t.row,
                        later / first,
                        BytesPerSec(later),
                        BytesPerSec(first)
                    ),
                )
            })
        })
        .collect()
}

/// Random reads that sped up as the job went: the medium delivers random
/// reads at one rate from the first second to the last, so a job whose
/// later seconds ran [`WARMED_FACTOR`] times its first read from a cache
/// that filled with the region (a hidden cache in front of a slow device,
/// as a "turbo" driver's). The first second is what the device delivered
/// cold. Buffered jobs are left out (the page cache is what they measure),
/// and so are jobs of fewer than three full seconds.
pub(crate) fn warmed_within_jobs(jobs: &[DiskJobResult]) -> Vec<Warning> {
    jobs.iter()
        .filter(|j| j.page_cache_bypassed && j.spec.rw == RwMode::RandRead)
        .filter_map(|j| {
            let full: Vec<f64> = suspicious::interval_rates(j, true, 0.9)
                .into_iter()
                .map(|r| r.0)
                .collect();
            if full.len() < 3 || full[0] <= 0.0 {
                return None;
            }
            let mut later = full[full.len() / 2..].to_vec();
            later.sort_by(f64::total_cmp);
            let later = later[later.len() / 2];
            (later / full[0] >= WARMED_FACTOR).then(|| {
                Warning::new(
                    WarningKind::CacheSuspected,
                    format!(
                        "{}: random reads sped up {:.1}x as the job went ({} in its first second, \
                         {} in its later ones): a cache filled with the region; the first \
                         second is the device's cold rate",
                        disk_job_test_name(&j.spec),
                        later / full[0],
                        BytesPerSec(full[0]),
                        BytesPerSec(later)
                    ),
                )
            })
        })
        .collect()
}

/// The test of a job for [`above_rated`] when each job is its own: its name.
pub(crate) fn named_by_job(job: &DiskJobResult) -> String {
    job.spec.name.clone()
}

/// Figures above the device's rating by more than their margin (what a
/// sheet rounds, a start-up burst, the run's own spread), each
/// test and rating once with its best job: a sequential rating judges the
/// sequential jobs, a random one the random jobs, in MB/s or in IOPS as it
/// was given. A random read of 900 IOPS from a device rated for 400 is a
/// cache in front of it, however slow 3.7 MB/s looks beside a 140 MB/s
/// sequential rating: how the USB study's "turbo" driver fooled its author.
/// `test_of` names a job's test (each job is its own by its name;
/// a PTS test's rounds of one cell are one test).
pub(crate) fn above_rated(
    rated: &RatedSpeed,
    jobs: &[DiskJobResult],
    test_of: &dyn Fn(&DiskJobResult) -> String,
) -> Vec<Warning> {
    let ratings = rated.ratings();
    // (test, rating index) -> the best figure in the rating's unit, the
    // margin it was allowed, and its job's name
    let mut best: Vec<(String, usize, f64, RatedMargin, &str)> = Vec::new();
    for job in jobs {
        let random = job.spec.rw.is_random();
        for (dir, d) in [("read", &job.read), ("write", &job.write)] {
            let Some(d) = d else { continue };
            for (i, r) in ratings.iter().enumerate() {
                if r.pattern.dir() != dir || r.pattern.random() != random {
                    continue;
                }
                let (figure, limit) = match r.rate {
                    RatedRate::Bandwidth(b) => (d.bw.0, b.0),
                    RatedRate::Iops(n) => (d.iops.0, n.0),
                };
                let iops = matches!(r.rate, RatedRate::Iops(_));
                let margin = RatedMargin::of(job, d, dir, iops);
                if figure <= limit * margin.factor() {
                    continue;
                }
                let test = test_of(job);
                let name = job.spec.name.as_str();
                match best.iter_mut().find(|b| b.0 == test && b.1 == i) {
                    Some(b) if figure > b.2 => (b.2, b.3, b.4) = (figure, margin, name),
                    Some(_) => {}
                    None => best.push((test, i, figure, margin, name)),
                }
            }
        }
    }
    best.into_iter()
        .map(|(test, i, figure, margin, job)| {
            // The job that showed it, where the test has several (a round).
            let name = if test == job {
                test
            } else {
                format!("{test} ({job})")
            };
            let r = ratings[i];
            let shown = match r.rate {
                RatedRate::Bandwidth(_) => BytesPerSec(figure).to_string(),
                RatedRate::Iops(_) => Iops(figure).to_string(),
            };
            let dir = r.pattern.dir();
            Warning::new(
                WarningKind::AboveRated,
                format!(
                    "{name}: {dir} {shown} is above the {} the device is rated for {} \
                     (--rated {}=...) by more than the {:.0}% a pass of this length can \
                     overshoot ({}): a cache or compression is being measured, not the \
                     medium",
                    r.rate,
                    r.pattern.key(),
                    r.pattern.key(),
                    (margin.factor() - 1.0) * 100.0,
                    margin.words()
                ),
            )
        })
        .collect()
}

/// The rates a run's table shows, named as there, for the checks against
/// the link: each job's per direction, except where the profile's figure is
/// not its jobs' (the artefacts probe counts a write's flush in its rate, so
/// a page-cache write job at 4242 MB/s is the table's 111 MB/s; checking
/// the job's rate made the warning disagree with the table).
pub(crate) fn shown_rates(
    result: Option<&ProfileResult>,
    jobs: &[DiskJobResult],
) -> Vec<(String, BytesPerSec)> {
    if let Some(ProfileResult::Artefacts(a)) = result {
        return a
            .patterns
            .iter()
            .flat_map(|p| {
                [
                    (
                        format!("artefacts {} write (with its flush)", p.data),
                        p.write,
                    ),
                    (format!("artefacts {} read", p.data), p.read),
                ]
            })
            .collect();
    }
    jobs.iter()
        .flat_map(|job| {
            let dirs = [("read", job.read.as_ref()), ("write", job.write.as_ref())];
            dirs.into_iter()
                .filter_map(move |(what, d)| Some((format!("{} {what}", job.spec.name), d?.bw)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use iomark_model::disk::{DataPattern, DirectionResult, DiskJobSpec, IntervalSample};
    use iomark_model::profile::{CdmResult, CdmTest};
    use iomark_model::units::{Bytes, Iops, Nanos};

    use super::*;

    fn job(name: &str, rw: RwMode, mbps: f64, direct: bool) -> DiskJobResult {
        let dir = DirectionResult {
            bw: BytesPerSec(mbps * 1e6),
            ..DirectionResult::default()
        };
        DiskJobResult {
            read: rw.reads().then(|| dir.clone()),
            write: rw.writes().then(|| dir.clone()),
            mean_depth: 8.0,
            page_cache_bypassed: direct,
            ..DiskJobResult::example(DiskJobSpec {
                name: name.into(),
                rw,
                bs: Bytes(1 << 20),
                iodepth: 8,
                direct,
                rwmix_read: 70,
                ..DiskJobSpec::example()
            })
        }
    }

    #[test]
    fn random_reads_that_speed_up_as_the_job_goes_are_a_filling_cache() {
        use iomark_model::disk::IntervalSample;
        let with = |per_second_mb: &[f64]| {
            let mut j = job("RND4K", RwMode::RandRead, 10.0, true);
            j.samples = per_second_mb
                .iter()
                .enumerate()
                .map(|(i, mb)| IntervalSample {
                    start: Nanos::from_secs(i as u64),
                    length: Nanos::from_secs(1),
                    read_bytes: (mb * 1e6) as u64,
                    ..IntervalSample::default()
                })
                .collect();
            j
        };
        // 400 IOPS cold, then a cache: 1.6 MB/s, then 3.5.
        let w = warmed_within_jobs(&[with(&[1.6, 3.4, 3.5, 3.6])]);
        assert_eq!(w.len(), 1);
        assert!(w[0].message.contains("sped up 2.2x"), "{}", w[0]);
        // A device at one rate, give or take: nothing.
        assert!(warmed_within_jobs(&[with(&[1.6, 1.7, 1.5, 1.8])]).is_empty());
        // Too short to tell.
        assert!(warmed_within_jobs(&[with(&[1.6, 3.4])]).is_empty());
        // Sequential reads and buffered jobs are not judged.
        let mut seq = with(&[1.6, 3.4, 3.5, 3.6]);
        seq.spec.rw = RwMode::Read;
        let mut buffered = with(&[1.6, 3.4, 3.5, 3.6]);
        buffered.page_cache_bypassed = false;
        assert!(warmed_within_jobs(&[seq, buffered]).is_empty());
    }

    fn device(transport: &str, rotational: bool) -> DeviceReport {
        serde_json::from_value(serde_json::json!({
            "path": "/dev/sdb", "target": "block_device",
            "device": {"name": "sdb", "devno": {"major": 8, "minor": 16}, "size": 0,
                "transport": transport, "sysfs_path": "/sys/block/sdb",
                "queue": {"rotational": rotational}}
        }))
        .unwrap()
    }

    #[test]
    fn a_loop_device_without_direct_io_anywhere_on_the_route_is_a_cache() {
        let stack = |dio: bool| -> DeviceReport {
            serde_json::from_value(serde_json::json!({
                "path": "/dev/dm-0", "target": "block_device",
                "device": {"name": "dm-0", "devno": {"major": 253, "minor": 0}, "size": 0,
                    "transport": "device_mapper", "sysfs_path": "/sys/block/dm-0", "queue": {},
                    "lower": [{"name": "loop7", "devno": {"major": 7, "minor": 7}, "size": 0,
                        "transport": "loop", "sysfs_path": "/sys/block/loop7", "queue": {},
                        "loop_backing": {"backing_file": "/mnt/tab/disk.img", "offset": 0,
                            "size_limit": 0, "direct_io": dio}}]}
            }))
            .unwrap()
        };
        let direct = [job("SEQ1M read", RwMode::Read, 6140.0, true)];
        let w = cache_on_route(&stack(false), &direct);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind, WarningKind::CacheSuspected);
        assert!(
            w[0].message
                .contains("loop7 reads and writes its backing file /mnt/tab/disk.img"),
            "{}",
            w[0]
        );
        assert!(
            w[0].message.contains("losetup --direct-io=on /dev/loop7"),
            "{}",
            w[0]
        );
        // Direct I/O on: no cache in the way. Buffered jobs only: they
        // carry their own warning.
        assert!(cache_on_route(&stack(true), &direct).is_empty());
        let buffered = [job("SEQ1M read", RwMode::Read, 6140.0, false)];
        assert!(cache_on_route(&stack(false), &buffered).is_empty());
    }

    #[test]
    fn a_block_cache_in_use_anywhere_on_the_route_is_a_cache_and_a_detached_one_is_not() {
        let stack = |state: &str, mode: &str| -> DeviceReport {
            serde_json::from_value(serde_json::json!({
                "path": "/mnt/data/f", "target": "file",
                "device": {"name": "dm-0", "devno": {"major": 253, "minor": 0}, "size": 0,
                    "transport": "device_mapper", "sysfs_path": "/sys/block/dm-0", "queue": {},
                    "lower": [{"name": "bcache0", "devno": {"major": 252, "minor": 0},
                        "size": 0, "transport": "unknown", "sysfs_path": "/sys/block/bcache0",
                        "queue": {},
                        "cache": {"kind": "bcache", "mode": mode, "state": state,
                            "evidence": format!("/sys/block/bcache0/bcache/cache_mode says \
                                {mode}, state says {state}")}}]}
            }))
            .unwrap()
        };
        let direct = [job("SEQ1M read", RwMode::Read, 2900.0, true)];
        let w = cache_on_route(&stack("dirty", "writeback"), &direct);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind, WarningKind::CacheSuspected);
        assert!(
            w[0].message.starts_with(
                "bcache0 is a bcache device in writeback mode (/sys/block/bcache0/bcache/\
                 cache_mode says writeback, state says dirty): a cache device serves"
            ),
            "{}",
            w[0]
        );
        assert!(cache_on_route(&stack("no cache", "writeback"), &direct).is_empty());
        assert!(cache_on_route(&stack("clean", "none"), &direct).is_empty());
    }

    #[test]
    fn buffered_data_is_said_to_fit_in_memory_or_in_the_limit_or_not() {
        let mib = |n: u64| Bytes(n << 20);
        let mut mapped = job("randread 4KiB", RwMode::RandRead, 900.0, false);
        mapped.spec.size = mib(64);
        let memory = Some(Bytes(23 << 30));
        let w = fits_in_memory(std::slice::from_ref(&mapped), memory, None).unwrap();
        assert_eq!(w.kind, WarningKind::BufferedIo);
        assert!(
            w.message.starts_with(
                "buffered jobs: their data (64 MiB) fits in the machine's memory (23 GiB)"
            ),
            "{w}"
        );
        let w = fits_in_memory(std::slice::from_ref(&mapped), memory, Some(mib(16))).unwrap();
        assert!(
            w.message
                .starts_with("buffered jobs: their data (64 MiB) is 4.0x the --mem-limit (16 MiB)"),
            "{w}"
        );
        // Direct jobs, or no capacity known: nothing to say.
        let direct = job("randread 4KiB", RwMode::RandRead, 900.0, true);
        assert!(fits_in_memory(&[direct], memory, None).is_none());
        assert!(fits_in_memory(&[mapped], None, None).is_none());
    }

    #[test]
    fn a_daemon_or_a_server_on_the_route_is_a_cache_whatever_direct_io_says() {
        let direct = [job("SEQ1M read", RwMode::Read, 900.0, true)];
        // A loop device over a file on FUSE, direct I/O on.
        let over_fuse: DeviceReport = serde_json::from_value(serde_json::json!({
            "path": "/dev/loop7", "target": "block_device",
            "device": {"name": "loop7", "devno": {"major": 7, "minor": 7}, "size": 0,
                "transport": "loop", "sysfs_path": "/sys/block/loop7", "queue": {},
                "loop_backing": {"backing_file": "/mnt/sshfs/disk.img", "offset": 0,
                    "size_limit": 0, "direct_io": true, "backing_served_by": "FUSE"}}
        }))
        .unwrap();
        let w = cache_on_route(&over_fuse, &direct);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind, WarningKind::CacheSuspected);
        assert!(
            w[0].message
                .starts_with("loop7's backing file /mnt/sshfs/disk.img is on FUSE"),
            "{}",
            w[0]
        );
        assert!(w[0].message.contains("(dio = 1)"), "{}", w[0]);
        // A file on NFS and one on a FUSE file system: named with the
        // mount's type and source. ext4 and tmpfs have no such cache.
        let file_on = |fs_type: &str| -> DeviceReport {
            serde_json::from_value(serde_json::json!({
                "path": "/mnt/x/f", "target": "file",
                "filesystem": {"mount_id": 40, "devno": {"major": 0, "minor": 50},
                    "mount_point": "/mnt/x", "fs_type": fs_type, "source": "server:/export",
                    "mount_options": "rw", "super_options": "rw"}
            }))
            .unwrap()
        };
        let w = cache_on_route(&file_on("nfs4"), &direct);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].message
                .starts_with("/mnt/x/f is on nfs4 (server:/export): direct I/O ends at this host's client, and the file server"),
            "{}",
            w[0]
        );
        let w = cache_on_route(&file_on("fuse.bindfs"), &direct);
        assert!(w[0].message.contains("the FUSE daemon"), "{}", w[0]);
        assert!(cache_on_route(&file_on("ext4"), &direct).is_empty());
        assert!(cache_on_route(&file_on("tmpfs"), &direct).is_empty());
        // Buffered jobs carry their own warning.
        let buffered = [job("SEQ1M read", RwMode::Read, 900.0, false)];
        assert!(cache_on_route(&file_on("nfs4"), &buffered).is_empty());
    }

    #[test]
    fn reads_far_above_writes_are_flagged_by_device_class() {
        let jobs = [
            job("SEQ1M read", RwMode::Read, 900.0, true),
            job("SEQ1M write", RwMode::Write, 180.0, true),
        ];
        // 5x: too much for a hard disk or an SSD, normal for a USB stick.
        let hdd = reads_above_writes(&device("sata", true), &jobs);
        assert_eq!(hdd.len(), 1);
        assert_eq!(hdd[0].kind, WarningKind::CacheSuspected);
        assert!(hdd[0].message.contains("5.0x"), "{}", hdd[0]);
        assert!(hdd[0].message.contains("a hard disk"), "{}", hdd[0]);
        assert_eq!(reads_above_writes(&device("nvme", false), &jobs).len(), 1);
        assert!(reads_above_writes(&device("usb", false), &jobs).is_empty());
        assert!(reads_above_writes(&device("zram", false), &jobs).is_empty());
        // Sticks, card readers and loop devices often say rotational=1:
        // the transport decides first, and 25x is normal flash.
        let flash = [
            job("SEQ1M read", RwMode::Read, 25.0, true),
            job("SEQ1M write", RwMode::Write, 1.0, true),
        ];
        for transport in ["usb", "mmc", "loop"] {
            assert!(
                reads_above_writes(&device(transport, true), &flash).is_empty(),
                "{transport}"
            );
        }
        // A virtual disk that says rotational is judged as one, not as a
        // hard disk.
        let virtio = reads_above_writes(&device("virtio", true), &jobs);
        assert!(virtio[0].message.contains("virtual"), "{}", virtio[0]);
        // Buffered jobs measure the page cache on purpose: not judged.
        let buffered = [
            job("SEQ1M read", RwMode::Read, 9000.0, false),
            job("SEQ1M write", RwMode::Write, 180.0, false),
        ];
        assert!(reads_above_writes(&device("sata", true), &buffered).is_empty());
        // Only the same test pairs: a random write is no sequential read's.
        let unpaired = [
            job("SEQ1M read", RwMode::Read, 900.0, true),
            job("RND write", RwMode::RandWrite, 18.0, true),
        ];
        assert!(reads_above_writes(&device("sata", true), &unpaired).is_empty());
    }

    fn cdm_read_test(passes: &[f64]) -> ProfileResult {
        ProfileResult::Cdm(CdmResult {
            profile: "cdm".into(),
            rows: vec!["SEQ1M Q8T1".into()],
            shows_iops: false,
            size: Bytes(1 << 30),
            data: DataPattern::Random,
            passes: passes.len() as u32,
            pass_time: Nanos::from_secs(5),
            interval: Nanos::from_secs(5),
            mix_read: None,
            quick: false,
            tests: vec![CdmTest {
                row: "SEQ1M Q8T1".into(),
                dir: TestDir::Read,
                bs: Bytes(1 << 20),
                queues: 8,
                threads: 1,
                pass_bw: passes.iter().map(|m| BytesPerSec(m * 1e6)).collect(),
                pass_lat_mean_ns: vec![0.0; passes.len()],
                bw: BytesPerSec(0.0),
                iops: Iops(0.0),
                lat_mean_ns: 0.0,
                first_job: 0,
            }],
        })
    }

    #[test]
    fn later_passes_much_faster_than_the_first_are_flagged() {
        let jobs = [job("SEQ1M Q8T1 read", RwMode::Read, 1.0, true)];
        let warmed = warmed_passes(Some(&cdm_read_test(&[100.0, 480.0, 490.0])), &jobs);
        assert_eq!(warmed.len(), 1);
        assert!(warmed[0].message.contains("4.9x"), "{}", warmed[0]);
        let steady = warmed_passes(Some(&cdm_read_test(&[100.0, 120.0, 110.0])), &jobs);
        assert!(steady.is_empty());
        assert!(warmed_passes(None, &jobs).is_empty());
    }

    #[test]
    fn random_reads_above_a_rating_in_iops_are_flagged_however_slow_in_mb() {
        let rated: RatedSpeed = "read=140MB/s,randread=400IOPS".parse().unwrap();
        // 900 IOPS of 4 KiB: 3.7 MB/s, far below the sequential rating,
        // but more than twice what the device is rated to do at random.
        let mut rnd = job("RND4K Q1T1 read", RwMode::RandRead, 3.7, true);
        rnd.read.as_mut().unwrap().iops = Iops(900.0);
        let seq = job("SEQ1M Q8T1 read", RwMode::Read, 120.0, true);
        let w = above_rated(&rated, &[rnd.clone(), seq], &named_by_job);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].message.contains("900 IOPS"), "{}", w[0]);
        assert!(w[0].message.contains("400 IOPS"), "{}", w[0]);
        assert!(w[0].message.contains("randread"), "{}", w[0]);
        // Within the margin of its rating: nothing.
        rnd.read.as_mut().unwrap().iops = Iops(410.0);
        assert!(above_rated(&rated, &[rnd], &named_by_job).is_empty());
    }

    #[test]
    fn a_short_pass_is_allowed_its_start_up_burst_above_the_rating() {
        // Issue 46: cdm3 --quick's 1 s passes read 5-10% above a throttle
        // that equalled the rating, and were called a cache.
        let rated: RatedSpeed = "read=41.94MB/s".parse().unwrap();
        let pass = |mbps: f64, secs: u64| {
            let mut j = job("Seq Q32T1 read", RwMode::Read, mbps, true);
            j.read.as_mut().unwrap().runtime = Nanos::from_secs(secs);
            j
        };
        // 1 s: 5% plus 200 ms of 1 s, 25%. 20% over is the pass's own
        // (a throttle's two slices from idle, loaded run 2 of de971a1).
        assert!(above_rated(&rated, &[pass(50.3, 1)], &named_by_job).is_empty());
        // 5 s: 5% plus 4%, 9%. 12% over is flagged.
        let w = above_rated(&rated, &[pass(47.0, 5)], &named_by_job);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].message.contains("more than the 9%"), "{}", w[0]);
        // Twice the rating through a hidden cache is flagged however short.
        let w = above_rated(&rated, &[pass(83.9, 1)], &named_by_job);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].message.contains("more than the 25%"), "{}", w[0]);
    }

    #[test]
    fn a_run_whose_seconds_vary_is_allowed_its_spread_above_the_rating() {
        let rated: RatedSpeed = "read=41.94MB/s".parse().unwrap();
        // Ten seconds averaging 46 MB/s, 9.7% over the rating: 5% for the
        // sheet and 2% for a 10 s pass's start-up burst do not cover it.
        let run = |wobble: f64| {
            let mut j = job("Seq Q32T1 read", RwMode::Read, 46.0, true);
            j.read.as_mut().unwrap().runtime = Nanos::from_secs(10);
            j.samples = (0..10)
                .map(|k| {
                    let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
                    IntervalSample {
                        start: Nanos::from_secs(k),
                        length: Nanos::from_secs(1),
                        read_bytes: (46e6 * (1.0 + sign * wobble)) as u64,
                        ..IntervalSample::default()
                    }
                })
                .collect();
            j
        };
        let w = above_rated(&rated, &[run(0.0)], &named_by_job);
        assert_eq!(w.len(), 1, "steady seconds: {w:?}");
        assert!(
            w[0].message.contains(
                "more than the 7% a pass of this length can overshoot (5% for a sheet's \
                 rounding, 2% for a start-up burst of 200 ms over 10.0 s, 0% for the spread \
                 of its 10 seconds"
            ),
            "{}",
            w[0]
        );
        // Seconds 15% either side: the mean of ten is known to about
        // +-10%, which covers 9.7%.
        assert!(above_rated(&rated, &[run(0.15)], &named_by_job).is_empty());
        // Twice the rating is flagged however much the seconds vary.
        let mut fast = run(0.15);
        fast.read.as_mut().unwrap().bw = BytesPerSec(83.9e6);
        assert_eq!(above_rated(&rated, &[fast], &named_by_job).len(), 1);
    }

    #[test]
    fn figures_above_the_rated_speed_are_flagged_once_per_test() {
        let rated: RatedSpeed = "read=550MB/s,write=520MB/s".parse().unwrap();
        let jobs = [
            job("SEQ1M Q8T1 read", RwMode::Read, 560.0, true),
            job("SEQ1M Q8T1 read", RwMode::Read, 812.0, true),
            job("SEQ1M Q8T1 read", RwMode::Read, 790.0, true),
            job("SEQ1M Q8T1 write", RwMode::Write, 530.0, true),
        ];
        let w = above_rated(&rated, &jobs, &named_by_job);
        // 560 and 530 are within 5% of the sheet; 812 is not.
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind, WarningKind::AboveRated);
        assert!(w[0].message.contains("812.00 MB/s"), "{}", w[0]);
        assert!(w[0].message.contains("550.00 MB/s"), "{}", w[0]);
        let read_only: RatedSpeed = "read=100MB/s".parse().unwrap();
        assert_eq!(
            above_rated(&read_only, &jobs, &named_by_job).len(),
            1,
            "writes are not rated"
        );
    }
}
