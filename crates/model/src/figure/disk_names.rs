//! Disk test names: a job named by everything that changes its result
//! and the user chose, made unique within a run.

use super::*;

/// A size for a test name, exact and 1024-based: `4KiB`, `1MiB`, `100MiB`,
/// `1GiB`; `1000000B` when it is no whole number of KiB.
pub fn size_label(b: Bytes) -> String {
    let b = b.get();
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (u, name) in UNITS {
        if b >= u && b.is_multiple_of(u) {
            return format!("{}{name}", b / u);
        }
    }
    format!("{b}B")
}

/// The name of a disk job's test: everything that changes its result.
/// `randread 4KiB QD1 T1, psync, direct, random data, 1GiB`: pattern (with
/// the read share of a mix, `randrw 70/30`), block size, the depth actually
/// run, threads, engine (and submit batch when above 1), direct or
/// buffered, data pattern and the region size (when known). A run's
/// figures name their tests with [`disk_job_test_name_on`], which leaves
/// out a size that is the device's own.
pub fn disk_job_test_name(s: &DiskJobSpec) -> String {
    job_test_name(s, (s.size.get() > 0).then_some(s.size))
}

/// The name of a disk job's test as a run on `target` stores it: as
/// [`disk_job_test_name`], but without the region when it is the whole
/// existing file or device ([`DiskTarget::size_from_device`]): a size the
/// user did not choose is a fact of the device, not of the test.
pub fn disk_job_test_name_on(s: &DiskJobSpec, target: &DiskTarget) -> String {
    let region = if target.size_from_device {
        None
    } else {
        (s.size.get() > 0).then_some(s.size)
    };
    job_test_name(s, region)
}

fn job_test_name(s: &DiskJobSpec, region: Option<Bytes>) -> String {
    let mix = if matches!(s.rw, RwMode::ReadWrite | RwMode::RandRw) {
        format!(" {}/{}", s.rwmix_read, 100u8.saturating_sub(s.rwmix_read))
    } else {
        String::new()
    };
    let batch = if s.iodepth_batch > 1 && !s.engine.is_synchronous() {
        format!(" batch {}", s.iodepth_batch)
    } else {
        String::new()
    };
    let mut name = format!(
        "{}{mix} {} QD{} T{}, {}{batch}, {}, {} data",
        s.rw,
        size_label(s.bs),
        s.depth_run(),
        s.numjobs,
        s.engine,
        if s.direct { "direct" } else { "buffered" },
        s.data,
    );
    // An imported job may not say its region.
    if let Some(r) = region {
        name += &format!(", {}", size_label(r));
    }
    name
}

/// The name of a disk job's test, from its spec ([`disk_job_test_name`]).
pub fn disk_test_name(job: &DiskJobResult) -> String {
    disk_job_test_name(&job.spec)
}

/// Test names made unique within a run: a second test of the same name
/// (an IOmeter sweep of a synchronous engine runs every depth at 1) becomes
/// `... #2`.
#[derive(Default)]
pub(super) struct Namer(HashMap<String, u32>);

impl Namer {
    pub(super) fn name(&mut self, base: String) -> String {
        let n = self.0.entry(base.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base
        } else {
            format!("{base} #{n}")
        }
    }
}
