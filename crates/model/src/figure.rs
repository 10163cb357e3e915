//! Figures: the flat, comparable numbers a run boils down to.
//!
//! A run document is deep (jobs, directions, samples, percentiles). To list
//! and compare runs quickly, and to line up an imported fio run with one of
//! iomark's own, every body flattens into [`Figure`]s keyed by `test` and
//! `metric`. The store keeps them as rows next to the full document.
//!
//! Disk tests are named from the job's shape, not its label, so the same
//! work lines up whoever ran it: `read 1M Q8T1` is fio's `rw=read bs=1M
//! iodepth=8 numjobs=1` as much as CrystalDiskMark's `SEQ1M Q8T1` read.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::device::{BlockLayer, DeviceReport};
use crate::disk::{DirectionResult, DiskJobResult, DiskJobSpec, DiskRun, IntervalSample, RwMode};
use crate::mem::{Advice, Backing, KernelResult, MemJobSpec, MemKernelSpec, MemOutcome, MemRun};
use crate::net::{NetDirection, NetInterface, NetProtocol, NetRun};
use crate::profile::{CdmResult, GnomeResult, ProfileResult, TestDir};
use crate::run::{RunBody, RunDocument};
use crate::units::Bytes;

/// The unit a figure's value is in. Values are always in base units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FigureUnit {
    /// Bytes per second.
    #[serde(rename = "B/s")]
    BytesPerSec,
    /// Bits per second (network links are rated in bits).
    #[serde(rename = "bit/s")]
    BitsPerSec,
    /// Operations per second.
    #[serde(rename = "IOPS")]
    Iops,
    /// Nanoseconds.
    #[serde(rename = "ns")]
    Nanos,
    /// A percentage.
    #[serde(rename = "%")]
    Percent,
    /// A plain count.
    #[serde(rename = "count")]
    Count,
    /// Millions of floating-point operations per second.
    #[serde(rename = "MFLOPS")]
    Mflops,
}

impl FigureUnit {
    /// Every unit.
    pub const ALL: [FigureUnit; 7] = [
        FigureUnit::BytesPerSec,
        FigureUnit::BitsPerSec,
        FigureUnit::Iops,
        FigureUnit::Nanos,
        FigureUnit::Percent,
        FigureUnit::Count,
        FigureUnit::Mflops,
    ];

    /// The name used in the store and in exports.
    pub fn as_str(self) -> &'static str {
        match self {
            FigureUnit::BytesPerSec => "B/s",
            FigureUnit::BitsPerSec => "bit/s",
            FigureUnit::Iops => "IOPS",
            FigureUnit::Nanos => "ns",
            FigureUnit::Percent => "%",
            FigureUnit::Count => "count",
            FigureUnit::Mflops => "MFLOPS",
        }
    }

    /// The unit with this stored name.
    pub fn from_name(s: &str) -> Option<FigureUnit> {
        FigureUnit::ALL.into_iter().find(|u| u.as_str() == s)
    }

    /// Whether a larger value is better (throughput) or worse (latency, loss).
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            FigureUnit::BytesPerSec
                | FigureUnit::BitsPerSec
                | FigureUnit::Iops
                | FigureUnit::Mflops
        )
    }

    /// A value in this unit for a person: `612.35 MB/s`, `94.1 µs`.
    pub fn format(self, v: f64) -> String {
        match self {
            FigureUnit::BytesPerSec => format!("{:.2} MB/s", v / 1e6),
            FigureUnit::BitsPerSec => {
                if v >= 1e9 {
                    format!("{:.2} Gbit/s", v / 1e9)
                } else {
                    format!("{:.2} Mbit/s", v / 1e6)
                }
            }
            FigureUnit::Iops => {
                if v >= 100.0 {
                    format!("{v:.0} IOPS")
                } else {
                    format!("{v:.2} IOPS")
                }
            }
            FigureUnit::Nanos => {
                if v < 1e3 {
                    format!("{v:.0} ns")
                } else if v < 1e6 {
                    format!("{:.1} µs", v / 1e3)
                } else if v < 1e9 {
                    format!("{:.2} ms", v / 1e6)
                } else {
                    format!("{:.2} s", v / 1e9)
                }
            }
            FigureUnit::Percent => format!("{v:.2} %"),
            FigureUnit::Count => format!("{v:.0}"),
            FigureUnit::Mflops => format!("{v:.1} MFLOPS"),
        }
    }
}

impl fmt::Display for FigureUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One comparable number of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What was run, named by its shape: `read 1M Q8T1`, `tcp 1 stream`.
    pub test: String,
    /// What was measured: `read bw`, `read lat p99`.
    pub metric: String,
    /// The unit of `value` and `spread`.
    pub unit: FigureUnit,
    /// The figure, in base units.
    pub value: f64,
    /// The lowest and highest value over the passes or intervals the figure
    /// summarises, when there were at least two.
    pub spread: Option<(f64, f64)>,
}

impl Figure {
    /// `value` formatted for a person in its unit.
    pub fn display_value(&self) -> String {
        self.unit.format(self.value)
    }
}

impl RunBody {
    /// Every figure of the run, in a stable order.
    pub fn figures(&self) -> Vec<Figure> {
        match self {
            RunBody::Disk(run) => disk_figures(run),
            RunBody::Mem(run) => mem_figures(run),
            RunBody::Net(run) => net_figures(run),
        }
    }
}

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

/// The queue depth per thread a job actually ran at: a synchronous engine
/// (psync, mmap) keeps one I/O in flight whatever `iodepth` asked for (the
/// job then carries a `sync_engine_depth` warning).
pub fn depth_run(spec: &DiskJobSpec) -> u32 {
    if spec.engine.is_synchronous() {
        1
    } else {
        spec.iodepth.max(1)
    }
}

/// The name of a disk job's test: everything that changes its result.
/// `randread 4KiB QD1 T1, psync, direct, random data, 1GiB`: pattern (with
/// the read share of a mix, `randrw 70/30`), block size, the depth actually
/// run, threads, engine (and submit batch when above 1), direct or
/// buffered, data pattern and the region size (when known).
pub fn disk_job_test_name(s: &DiskJobSpec) -> String {
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
        depth_run(s),
        s.numjobs,
        s.engine,
        if s.direct { "direct" } else { "buffered" },
        s.data,
    );
    // An imported job may not say its region.
    if s.size.get() > 0 {
        name += &format!(", {}", size_label(s.size));
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
struct Namer(HashMap<String, u32>);

impl Namer {
    fn name(&mut self, base: String) -> String {
        let n = self.0.entry(base.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base
        } else {
            format!("{base} #{n}")
        }
    }
}

/// `read`, `write` or `mix`: the prefix of a single-figure test's metrics.
fn rw_dir(rw: RwMode) -> (&'static str, Option<bool>) {
    match rw {
        RwMode::Read | RwMode::RandRead => ("read", Some(true)),
        RwMode::Write | RwMode::RandWrite => ("write", Some(false)),
        RwMode::ReadWrite | RwMode::RandRw => ("mix", None),
    }
}

/// The lowest and highest per-interval bandwidth of a job, one direction
/// (`Some(true)` reads) or both.
fn sample_bw_spread(job: Option<&DiskJobResult>, read: Option<bool>) -> Option<(f64, f64)> {
    let job = job?;
    let vals: Vec<f64> = job
        .samples
        .iter()
        .filter(|s| s.length.get() > 0)
        .map(|s| {
            let b = match read {
                Some(true) => s.read_bytes,
                Some(false) => s.write_bytes,
                None => s.read_bytes + s.write_bytes,
            };
            b as f64 / s.length.as_secs_f64()
        })
        .collect();
    min_max(&vals)
}

/// Figures of a disk run, as its profile reports them, each test named by
/// everything that changes its result ([`disk_job_test_name`]):
///
/// - a custom job: per direction bandwidth, IOPS, mean and p99 completion
///   latency, bandwidth and IOPS with the spread of the per-interval samples;
/// - CrystalDiskMark (`cdm*`, `cdm3`): per test the best pass, spread over
///   the passes ([`cdm_figures`]);
/// - IOmeter: per pattern and depth bandwidth, IOPS, latency, the depth
///   reached and CPU;
/// - the sweep: per engine and block size the bandwidth;
/// - MacBench: per test the bandwidth (MacBench's KB/s is `value / 1000`);
/// - GNOME Disks: the average read and write rates and access time, the
///   transfer-rate series by position and the access-time series' spread
///   ([`gnome_figures`]).
pub fn disk_figures(run: &DiskRun) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut namer = Namer::default();
    // Every profile is named, so a new one is flagged here until it says
    // what its figures are.
    match &run.profile_result {
        Some(ProfileResult::Cdm(cdm)) => return cdm_run_figures(cdm, &run.jobs),
        Some(ProfileResult::Gnome(g)) => return gnome_figures(g, run.target.size),
        Some(ProfileResult::Iometer(io)) => {
            for p in &io.points {
                let job = run.jobs.get(p.job);
                let test = namer.name(match job {
                    Some(j) => disk_test_name(j),
                    None => format!("{} {} QD{}", p.rw, size_label(p.bs), p.depth),
                });
                let (dir, _) = rw_dir(p.rw);
                let iops_spread = job.and_then(|j| {
                    let v: Vec<f64> = j.samples.iter().map(|s| s.iops().0).collect();
                    min_max(&v)
                });
                let mut figs = TestFigures::new(&mut out, &test, dir);
                let spread = sample_bw_spread(job, rw_dir(p.rw).1);
                figs.push("bw", FigureUnit::BytesPerSec, p.bw.0, spread);
                figs.push("iops", FigureUnit::Iops, p.iops.0, iops_spread);
                if p.lat_mean_ns > 0.0 {
                    figs.push("lat mean", FigureUnit::Nanos, p.lat_mean_ns, None);
                }
                if p.lat_p99_ns > 0 {
                    figs.push("lat p99", FigureUnit::Nanos, p.lat_p99_ns as f64, None);
                }
                let mut figs = TestFigures::new(&mut out, &test, "");
                figs.push("depth reached", FigureUnit::Count, p.achieved_depth, None);
                figs.push("cpu", FigureUnit::Percent, p.cpu_pct, None);
            }
            return out;
        }
        Some(ProfileResult::Sweep(sw)) => {
            for p in &sw.points {
                let job = run.jobs.get(p.job);
                let test = namer.name(match job {
                    Some(j) => disk_test_name(j),
                    None => format!("{} {}, {}", p.rw, size_label(p.bs), p.engine),
                });
                let (dir, read) = rw_dir(p.rw);
                let spread = sample_bw_spread(job, read);
                TestFigures::new(&mut out, &test, dir).push(
                    "bw",
                    FigureUnit::BytesPerSec,
                    p.bw.0,
                    spread,
                );
            }
            return out;
        }
        Some(ProfileResult::Macbench(mb)) => {
            for t in &mb.tests {
                let job = run.jobs.get(t.job);
                let test = namer.name(match job {
                    Some(j) => format!("{}: {}", t.name, disk_test_name(j)),
                    None => t.name.clone(),
                });
                let (dir, read) = job.map_or(("", None), |j| rw_dir(j.spec.rw));
                let spread = sample_bw_spread(job, read);
                TestFigures::new(&mut out, &test, dir).push(
                    "bw",
                    FigureUnit::BytesPerSec,
                    t.bw.0,
                    spread,
                );
            }
            return out;
        }
        None => {}
    }
    for job in &run.jobs {
        let test = namer.name(disk_test_name(job));
        let single = job.read.is_some() != job.write.is_some();
        let dirs = [("read", &job.read, true), ("write", &job.write, false)];
        for (name, dir, is_read) in dirs {
            let Some(d) = dir else { continue };
            direction_figures(&mut out, &test, name, d, &job.samples, is_read, single);
        }
    }
    out
}

/// Figures of a CrystalDiskMark result without its jobs: tests named from
/// the result's own settings (engine and direct I/O unknown).
pub fn cdm_figures(cdm: &CdmResult) -> Vec<Figure> {
    cdm_run_figures(cdm, &[])
}

/// Figures of a CrystalDiskMark run: per test the best pass's bandwidth,
/// IOPS and the lowest mean latency, each with the spread over the passes.
/// A test is named from its first pass's job ([`disk_job_test_name`]), so
/// the test size (CDM 3.0 at 100 MiB or 1000 MiB), engine and data pattern
/// are part of it; without the job, from the result's settings.
fn cdm_run_figures(cdm: &CdmResult, jobs: &[DiskJobResult]) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut namer = Namer::default();
    for t in &cdm.tests {
        let test = namer.name(match jobs.get(t.first_job) {
            Some(j) => disk_test_name(j),
            None => {
                // CDM 8 rows are SEQ*/RND*; CDM 3.0's are "Seq", "512K", "4K", "4K QD32".
                let random = !(t.row.starts_with("SEQ") || t.row == "Seq");
                let rw = match (t.dir, random) {
                    (TestDir::Read, false) => "read".to_string(),
                    (TestDir::Read, true) => "randread".to_string(),
                    (TestDir::Write, false) => "write".to_string(),
                    (TestDir::Write, true) => "randwrite".to_string(),
                    (TestDir::Mix, r) => {
                        let m = cdm.mix_read.unwrap_or(70);
                        let rw = if r { "randrw" } else { "readwrite" };
                        format!("{rw} {m}/{}", 100u8.saturating_sub(m))
                    }
                };
                format!(
                    "{rw} {} QD{} T{}, {} data, {}",
                    size_label(t.bs),
                    t.queues,
                    t.threads,
                    cdm.data,
                    size_label(cdm.size)
                )
            }
        });
        let dir = t.dir.as_str();
        let bws: Vec<f64> = t.pass_bw.iter().map(|b| b.0).collect();
        let bw_spread = min_max(&bws);
        let bs = t.bs.get().max(1) as f64;
        let iops_spread = bw_spread.map(|(lo, hi)| (lo / bs, hi / bs));
        let mut figs = TestFigures::new(&mut out, &test, dir);
        figs.push("bw", FigureUnit::BytesPerSec, t.bw.0, bw_spread);
        figs.push("iops", FigureUnit::Iops, t.iops.0, iops_spread);
        if t.lat_mean_ns > 0.0 {
            let lat_spread = min_max(&t.pass_lat_mean_ns);
            figs.push("lat mean", FigureUnit::Nanos, t.lat_mean_ns, lat_spread);
        }
    }
    out
}

/// Figures of a GNOME Disks run, as GNOME Disks shows them. The test
/// carries the sampling (count and size of the samples) and the target's
/// size, which sets where the samples fall:
///
/// - `GNOME transfer rate, 100 x 10MiB samples of 1GiB`: `read bw` and
///   `write bw` (the averages, spread over the samples), then the series,
///   `read bw at 12.5%` per sample position;
/// - `GNOME access time, 1000 samples of 1GiB`: `access mean` (spread over
///   the samples) and `access median`.
pub fn gnome_figures(g: &GnomeResult, target_size: Bytes) -> Vec<Figure> {
    let mut out = Vec::new();
    let of = if target_size.get() > 0 {
        format!(" of {}", size_label(target_size))
    } else {
        String::new()
    };
    let test = format!(
        "GNOME transfer rate, {} x {} samples{of}",
        g.samples_requested,
        size_label(g.sample_size)
    );
    let reads: Vec<f64> = g.transfer.iter().map(|s| s.read.0).collect();
    let writes: Vec<f64> = g
        .transfer
        .iter()
        .filter_map(|s| s.write.map(|w| w.0))
        .collect();
    let mut figs = TestFigures::new(&mut out, &test, "");
    if let Some(r) = g.avg_read {
        figs.push("read bw", FigureUnit::BytesPerSec, r.0, min_max(&reads));
    }
    if let Some(w) = g.avg_write {
        figs.push("write bw", FigureUnit::BytesPerSec, w.0, min_max(&writes));
    }
    for s in &g.transfer {
        let at = format!("at {:.1}%", s.position_pct);
        figs.push(
            &format!("read bw {at}"),
            FigureUnit::BytesPerSec,
            s.read.0,
            None,
        );
        if let Some(w) = s.write {
            figs.push(
                &format!("write bw {at}"),
                FigureUnit::BytesPerSec,
                w.0,
                None,
            );
        }
    }
    let test = format!(
        "GNOME access time, {} samples{of}",
        g.access_samples_requested
    );
    let mut times: Vec<f64> = g.access.iter().map(|a| a.time.get() as f64).collect();
    let mut figs = TestFigures::new(&mut out, &test, "");
    if let Some(a) = g.avg_access {
        figs.push(
            "access mean",
            FigureUnit::Nanos,
            a.get() as f64,
            min_max(&times),
        );
    }
    if !times.is_empty() {
        times.sort_by(f64::total_cmp);
        let n = times.len();
        let median = if n % 2 == 1 {
            times[n / 2]
        } else {
            (times[n / 2 - 1] + times[n / 2]) / 2.0
        };
        figs.push("access median", FigureUnit::Nanos, median, None);
    }
    out
}

fn direction_figures(
    out: &mut Vec<Figure>,
    test: &str,
    dir: &str,
    d: &DirectionResult,
    samples: &[IntervalSample],
    is_read: bool,
    single_direction: bool,
) {
    let per_sample = |f: &dyn Fn(&IntervalSample) -> f64| -> Option<(f64, f64)> {
        let vals: Vec<f64> = samples
            .iter()
            .filter(|s| s.length.get() > 0)
            .map(f)
            .collect();
        min_max(&vals)
    };
    let secs = |s: &IntervalSample| s.length.as_secs_f64();
    let bw_spread = per_sample(&|s| {
        let b = if is_read { s.read_bytes } else { s.write_bytes };
        b as f64 / secs(s)
    });
    let iops_spread = per_sample(&|s| {
        let n = if is_read { s.read_ios } else { s.write_ios };
        n as f64 / secs(s)
    });
    // Interval latencies mix both directions, so they only describe a
    // single-direction job.
    let lat_spread = if single_direction {
        per_sample(&|s| s.mean_lat_ns)
    } else {
        None
    };
    let mut figs = TestFigures::new(out, test, dir);
    figs.push("bw", FigureUnit::BytesPerSec, d.bw.0, bw_spread);
    figs.push("iops", FigureUnit::Iops, d.iops.0, iops_spread);
    if d.clat.count > 0 {
        figs.push("lat mean", FigureUnit::Nanos, d.clat.mean_ns, lat_spread);
        if let Some(p99) = d.clat.percentile(99.0) {
            figs.push("lat p99", FigureUnit::Nanos, p99 as f64, None);
        }
    }
}

/// An element count for a test name: `10M`, `1500k`, `12345`.
fn count_label(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// The name of a memory job's test: everything that changes its result.
/// `STREAM, 10M elements, heap, 2 threads`,
/// `stencil 15x15, 4096x4096 grid, mmap, 1 thread, advice random, limit 256MiB`,
/// `Himeno M (257x257x513), heap, 2 threads`.
pub fn mem_test_name(run: &MemRun) -> String {
    mem_spec_test_name(&run.spec)
}

/// The name of a memory job's test from its spec ([`mem_test_name`]).
pub fn mem_spec_test_name(s: &MemJobSpec) -> String {
    let kernel = match &s.kernel {
        MemKernelSpec::Stream(k) => format!("STREAM, {} elements", count_label(k.array_len)),
        MemKernelSpec::Stencil(k) => format!("stencil {m}x{m}, {n}x{n} grid", m = k.mask, n = k.n),
        MemKernelSpec::Himeno(k) => format!("Himeno {}", k.grid),
    };
    let backing = match s.backing {
        Backing::Heap => "heap",
        Backing::Mmap { .. } => "mmap",
    };
    let threads = if s.threads == 1 { "thread" } else { "threads" };
    let mut name = format!("{kernel}, {backing}, {} {threads}", s.threads);
    if s.advice != Advice::Normal {
        name += &format!(", advice {}", s.advice.as_str());
    }
    if let Some(limit) = s.mem_limit {
        name += &format!(", limit {}", size_label(limit));
    }
    name
}

/// Figures of a memory run: STREAM's best rate per kernel (spread over the
/// passes), the stencil's and Himeno's MFLOPS, and the execution time.
/// A run the OOM killer ended has none.
pub fn mem_figures(run: &MemRun) -> Vec<Figure> {
    let test = mem_test_name(run);
    let MemOutcome::Completed {
        result, execution, ..
    } = &run.outcome
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut figs = TestFigures::new(&mut out, &test, "");
    match result {
        KernelResult::Stream(r) => {
            for k in &r.kernels {
                let bytes = k.bytes_per_pass.get() as f64;
                let rate = |t: crate::units::Nanos| bytes / t.as_secs_f64();
                let spread =
                    (k.min.get() > 0 && k.max.get() > 0).then(|| (rate(k.max), rate(k.min)));
                let metric = format!("{} rate", k.op.label());
                figs.push(&metric, FigureUnit::BytesPerSec, k.best_rate.0, spread);
            }
        }
        KernelResult::Stencil(r) => {
            figs.push("mflops", FigureUnit::Mflops, r.mflops, None);
            let rate = r.effective_rate.0;
            figs.push("effective rate", FigureUnit::BytesPerSec, rate, None);
        }
        KernelResult::Himeno(r) => {
            figs.push("mflops", FigureUnit::Mflops, r.mflops, None);
        }
    }
    figs.push("execution", FigureUnit::Nanos, execution.get() as f64, None);
    out
}

/// The name of a network test: `tcp P4`, `udp P1 reverse`, `tcp P2 bidir`.
pub fn net_test_name(run: &NetRun) -> String {
    let s = &run.spec;
    let proto = match s.protocol {
        NetProtocol::Tcp => "tcp",
        NetProtocol::Udp => "udp",
    };
    let mode = if s.bidirectional {
        " bidir"
    } else if s.reverse {
        " reverse"
    } else {
        ""
    };
    format!("{proto} P{}{mode}", s.parallel)
}

/// Figures of a network run, per direction: goodput in bits per second
/// (spread over the per-interval samples), TCP retransmits, UDP loss and
/// jitter.
pub fn net_figures(run: &NetRun) -> Vec<Figure> {
    let test = net_test_name(run);
    let mut out = Vec::new();
    for (dir, name) in [
        (NetDirection::Upload, "upload"),
        (NetDirection::Download, "download"),
    ] {
        let Some(goodput) = run.goodput(dir) else {
            continue;
        };
        let rates: Vec<f64> = run
            .intervals
            .iter()
            .filter(|i| i.direction == dir && !i.omitted && i.end > i.start)
            .map(|i| {
                let secs = (i.end.get() - i.start.get()) as f64 / 1e9;
                i.bytes.get() as f64 * 8.0 / secs
            })
            .collect();
        let mut figs = TestFigures::new(&mut out, &test, name);
        let spread = min_max(&rates);
        figs.push("goodput", FigureUnit::BitsPerSec, goodput.0 * 8.0, spread);
        let streams = || run.streams.iter().filter(|s| s.direction == dir);
        let retrans: Vec<u64> = streams().filter_map(|s| s.retransmits).collect();
        if !retrans.is_empty() {
            let total = retrans.iter().sum::<u64>() as f64;
            figs.push("retransmits", FigureUnit::Count, total, None);
        }
        let packets: u64 = streams().filter_map(|s| s.packets).sum();
        let lost: Vec<u64> = streams().filter_map(|s| s.lost_packets).collect();
        if packets > 0 && !lost.is_empty() {
            let lost: u64 = lost.iter().sum();
            let loss = lost as f64 * 100.0 / packets as f64;
            figs.push("loss", FigureUnit::Percent, loss, None);
        }
        let jitter: Vec<f64> = streams()
            .filter_map(|s| s.jitter.map(|j| j.get() as f64))
            .collect();
        if !jitter.is_empty() {
            let mean = jitter.iter().sum::<f64>() / jitter.len() as f64;
            figs.push("jitter", FigureUnit::Nanos, mean, None);
        }
    }
    out
}

/// What a run measured through, for a comparison's column header: the
/// device, its link and driver (`Samsung T7, USB 3.2 10 Gb/s, uas`;
/// `Samsung 980, PCIe 8 GT/s x4, nvme`), or a network run's interface
/// (`eth0, r8152, 2500 Mb/s`). `None` when the run stored neither.
pub fn device_link(doc: &RunDocument) -> Option<String> {
    if let RunBody::Net(n) = &doc.body {
        return n.interface.as_ref().map(interface_text);
    }
    doc.device.as_ref().and_then(device_report_text)
}

fn interface_text(i: &NetInterface) -> String {
    let mut parts = vec![i.name.clone()];
    parts.extend(i.driver.clone());
    parts.extend(i.speed_mbit.map(|m| format!("{m} Mb/s")));
    parts.join(", ")
}

/// A link rate in Mb/s as USB names them: `480 Mb/s`, `10 Gb/s`.
fn mbps_text(mbps: f64) -> String {
    if mbps >= 1000.0 {
        format!("{} Gb/s", trim_num(mbps / 1000.0))
    } else {
        format!("{} Mb/s", trim_num(mbps))
    }
}

/// A number without trailing zeros: `10`, `2.5`, `3.2`.
fn trim_num(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

fn device_report_text(r: &DeviceReport) -> Option<String> {
    let Some(top) = r.device.as_ref() else {
        return r.filesystem.as_ref().map(|f| f.source.clone());
    };
    // Down a stack (a partition's disk, a loop device's backing disk) to the
    // layer that knows its hardware.
    let mut layer: &BlockLayer = top;
    for _ in 0..4 {
        let known = layer.usb.is_some()
            || layer.sata.is_some()
            || !layer.pcie.is_empty()
            || layer.identity.model.is_some();
        match layer.lower.first() {
            Some(lower) if !known => layer = lower,
            _ => break,
        }
    }
    let mut parts: Vec<String> = Vec::new();
    let id = &layer.identity;
    let usb_name = layer.usb.as_ref().and_then(|u| {
        let p = u.product.as_deref()?.trim();
        Some(match u.manufacturer.as_deref().map(str::trim) {
            Some(m) if !m.is_empty() && !p.starts_with(m) => format!("{m} {p}"),
            _ => p.to_string(),
        })
    });
    let model = id.model.as_deref().map(str::trim).filter(|m| !m.is_empty());
    let name = match (id.vendor.as_deref().map(str::trim), model) {
        (Some(v), Some(m)) if !v.is_empty() && v != "ATA" && !m.starts_with(v) => {
            Some(format!("{v} {m}"))
        }
        (_, Some(m)) => Some(m.to_string()),
        _ => usb_name,
    };
    parts.push(name.unwrap_or_else(|| layer.name.clone()));
    if let Some(u) = &layer.usb {
        let mut link = String::from("USB");
        if let Some(v) = u
            .version
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            let v = v.trim_start_matches('0');
            let v = match v.split_once('.') {
                Some((major, minor)) => {
                    let minor = minor.trim_end_matches('0');
                    format!("{major}.{}", if minor.is_empty() { "0" } else { minor })
                }
                None => v.to_string(),
            };
            link += &format!(" {v}");
        }
        if let Some(m) = u.speed_mbps {
            link += &format!(" {}", mbps_text(m));
        }
        parts.push(link);
        parts.extend(u.driver.clone());
    } else if let Some(s) = &layer.sata {
        parts.push(match s.speed_gbps {
            Some(g) => format!("SATA {} Gb/s", trim_num(g)),
            None => "SATA".into(),
        });
    } else if let Some(p) = layer.pcie.first() {
        parts.push(format!("PCIe {} GT/s x{}", trim_num(p.speed_gts), p.width));
        parts.extend(p.driver.clone());
    } else {
        parts.push(layer.transport.as_str().to_string());
    }
    Some(parts.join(", "))
}

/// Where the figures of one test go, each metric named `{prefix} {metric}`
/// (just `metric` with an empty prefix).
struct TestFigures<'a> {
    out: &'a mut Vec<Figure>,
    test: &'a str,
    prefix: &'a str,
}

impl<'a> TestFigures<'a> {
    fn new(out: &'a mut Vec<Figure>, test: &'a str, prefix: &'a str) -> Self {
        TestFigures { out, test, prefix }
    }

    fn push(&mut self, metric: &str, unit: FigureUnit, value: f64, spread: Option<(f64, f64)>) {
        let metric = if self.prefix.is_empty() {
            metric.to_string()
        } else {
            format!("{} {metric}", self.prefix)
        };
        self.out.push(Figure {
            test: self.test.to_string(),
            metric,
            unit,
            value,
            spread,
        });
    }
}

/// The lowest and highest of at least two values.
pub fn min_max(vals: &[f64]) -> Option<(f64, f64)> {
    if vals.len() < 2 {
        return None;
    }
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::*;
    use crate::units::{Bytes, BytesPerSec, Iops, Nanos};

    fn job(rw: RwMode, read: bool, write: bool) -> DiskJobResult {
        let dir = |bw: f64| DirectionResult {
            io_bytes: Bytes(1000),
            ios: 10,
            runtime: Nanos::from_secs(2),
            bw: BytesPerSec(bw),
            iops: Iops(5.0),
            clat: LatencySummary {
                count: 10,
                min_ns: 1,
                max_ns: 9,
                mean_ns: 4.0,
                stddev_ns: 1.0,
                percentiles: vec![Percentile {
                    percent: 99.0,
                    ns: 8,
                }],
            },
        };
        let sample = |rb: u64| IntervalSample {
            start: Nanos(0),
            length: Nanos::from_secs(1),
            read_bytes: rb,
            read_ios: rb / 100,
            write_bytes: 0,
            write_ios: 0,
            mean_lat_ns: rb as f64,
        };
        DiskJobResult {
            spec: DiskJobSpec {
                name: "x".into(),
                rw,
                bs: Bytes(1 << 20),
                iodepth: 8,
                iodepth_batch: 1,
                numjobs: 1,
                size: Bytes(1 << 30),
                runtime: None,
                ramp: Nanos(0),
                engine: EngineKind::Psync,
                direct: true,
                data: DataPattern::Random,
                rwmix_read: 50,
                seed: 1,
            },
            read: read.then(|| dir(500.0)),
            write: write.then(|| dir(300.0)),
            samples: vec![sample(400), sample(600)],
            cpu: CpuUsage::default(),
            iodepth_level: Default::default(),
            mean_depth: 1.0,
            page_cache_bypassed: true,
            interrupted: false,
            warnings: vec![],
        }
    }

    fn run(jobs: Vec<DiskJobResult>) -> RunBody {
        RunBody::Disk(DiskRun {
            profile: "custom".into(),
            target: DiskTarget {
                given: "/tmp".into(),
                path: "/tmp/x".into(),
                kind: TargetKind::TestFile,
                size: Bytes(0),
                logical_block_size: 512,
            },
            jobs,
            profile_result: None,
            cgroup: None,
        })
    }

    #[test]
    fn disk_jobs_flatten_per_direction_with_sample_spread() {
        let figs = run(vec![job(RwMode::Read, true, false)]).figures();
        let names: Vec<_> = figs.iter().map(|f| f.metric.as_str()).collect();
        assert_eq!(
            names,
            ["read bw", "read iops", "read lat mean", "read lat p99"]
        );
        // psync runs at depth 1 whatever --iodepth (8 here) asked.
        assert_eq!(
            figs[0].test,
            "read 1MiB QD1 T1, psync, direct, random data, 1GiB"
        );
        assert_eq!(figs[0].value, 500.0);
        assert_eq!(figs[0].spread, Some((400.0, 600.0)));
        assert_eq!(figs[1].spread, Some((4.0, 6.0)));
        assert_eq!(figs[2].spread, Some((400.0, 600.0)));
        assert_eq!(figs[3].value, 8.0);
    }

    #[test]
    fn mixed_jobs_have_no_latency_spread_and_repeated_shapes_stay_apart() {
        let figs = run(vec![
            job(RwMode::RandRw, true, true),
            job(RwMode::RandRw, true, true),
        ])
        .figures();
        assert_eq!(figs.len(), 16);
        assert!(figs
            .iter()
            .filter(|f| f.metric.contains("lat mean"))
            .all(|f| f.spread.is_none()));
        assert_eq!(
            figs[8].test,
            "randrw 50/50 1MiB QD1 T1, psync, direct, random data, 1GiB #2"
        );
    }

    #[test]
    fn cdm_runs_report_the_best_pass_with_the_pass_spread() {
        use crate::profile::{CdmResult, CdmTest, ProfileResult, TestDir};
        let test = CdmTest {
            row: "RND4K Q32T1".into(),
            dir: TestDir::Read,
            bs: Bytes(4096),
            queues: 32,
            threads: 1,
            pass_bw: vec![BytesPerSec(400e6), BytesPerSec(410e6), BytesPerSec(390e6)],
            pass_lat_mean_ns: vec![320e3, 310e3, 330e3],
            bw: BytesPerSec(410e6),
            iops: Iops(410e6 / 4096.0),
            lat_mean_ns: 310e3,
            first_job: 0,
        };
        let mut j = job(RwMode::RandRead, true, false);
        j.spec.bs = Bytes(4096);
        j.spec.iodepth = 32;
        j.spec.engine = EngineKind::IoUring;
        let mut body = run(vec![j; 3]);
        if let RunBody::Disk(d) = &mut body {
            d.profile_result = Some(ProfileResult::Cdm(CdmResult {
                profile: "cdm".into(),
                rows: vec!["RND4K Q32T1".into()],
                shows_iops: true,
                size: Bytes(1 << 30),
                data: DataPattern::Random,
                passes: 3,
                pass_time: Nanos::from_secs(5),
                interval: Nanos(0),
                mix_read: None,
                quick: false,
                tests: vec![test],
            }));
        }
        let figs = body.figures();
        assert_eq!(figs.len(), 3, "one test, not one per pass: {figs:?}");
        assert_eq!(
            figs[0].test,
            "randread 4KiB QD32 T1, io_uring, direct, random data, 1GiB"
        );
        assert_eq!(figs[0].metric, "read bw");
        assert_eq!(figs[0].value, 410e6);
        assert_eq!(figs[0].spread, Some((390e6, 410e6)));
        assert_eq!(figs[1].spread, Some((390e6 / 4096.0, 410e6 / 4096.0)));
        assert_eq!(figs[2].value, 310e3);
        assert_eq!(figs[2].spread, Some((310e3, 330e3)));
    }

    fn cdm3(size: Bytes) -> RunBody {
        use crate::profile::{CdmResult, CdmTest, ProfileResult, TestDir};
        let mut j = job(RwMode::Read, true, false);
        j.spec.size = size;
        j.spec.iodepth = 1;
        j.spec.engine = EngineKind::IoUring;
        let mut body = run(vec![j]);
        if let RunBody::Disk(d) = &mut body {
            d.profile_result = Some(ProfileResult::Cdm(CdmResult {
                profile: "cdm3".into(),
                rows: vec!["Seq".into()],
                shows_iops: false,
                size,
                data: DataPattern::Random,
                passes: 1,
                pass_time: Nanos::from_secs(5),
                interval: Nanos(0),
                mix_read: None,
                quick: false,
                tests: vec![CdmTest {
                    row: "Seq".into(),
                    dir: TestDir::Read,
                    bs: Bytes(1 << 20),
                    queues: 1,
                    threads: 1,
                    pass_bw: vec![BytesPerSec(100e6)],
                    pass_lat_mean_ns: vec![],
                    bw: BytesPerSec(100e6),
                    iops: Iops(100.0),
                    lat_mean_ns: 0.0,
                    first_job: 0,
                }],
            }));
        }
        body
    }

    fn tests_of(body: &RunBody) -> Vec<String> {
        let mut t: Vec<String> = body.figures().into_iter().map(|f| f.test).collect();
        t.dedup();
        t
    }

    #[test]
    fn cdm3_at_100mib_and_1gib_are_different_tests() {
        let small = tests_of(&cdm3(Bytes(100 << 20)));
        let big = tests_of(&cdm3(Bytes(1 << 30)));
        assert_eq!(
            small,
            ["read 1MiB QD1 T1, io_uring, direct, random data, 100MiB"]
        );
        assert_eq!(
            big,
            ["read 1MiB QD1 T1, io_uring, direct, random data, 1GiB"]
        );
        // Without its jobs the result's own settings still name the size.
        if let RunBody::Disk(DiskRun {
            profile_result: Some(crate::profile::ProfileResult::Cdm(c)),
            ..
        }) = cdm3(Bytes(100 << 20))
        {
            assert_eq!(
                cdm_figures(&c)[0].test,
                "read 1MiB QD1 T1, random data, 100MiB"
            );
        }
    }

    #[test]
    fn the_depth_in_a_name_is_the_depth_run_and_engines_stay_apart() {
        let mut sync = job(RwMode::RandRead, true, false);
        sync.spec.bs = Bytes(4096);
        sync.spec.iodepth = 32;
        assert_eq!(
            disk_test_name(&sync),
            "randread 4KiB QD1 T1, psync, direct, random data, 1GiB"
        );
        let mut uring = sync.clone();
        uring.spec.engine = EngineKind::IoUring;
        assert!(disk_test_name(&uring).starts_with("randread 4KiB QD32 T1, io_uring,"));
        let mut mapped = sync.clone();
        mapped.spec.engine = EngineKind::MmapAsync;
        mapped.spec.direct = false;
        mapped.spec.data = DataPattern::Zeros;
        assert_eq!(
            disk_test_name(&mapped),
            "randread 4KiB QD1 T1, mmap-async, buffered, zeros data, 1GiB"
        );
    }

    #[test]
    fn every_profile_yields_named_figures() {
        use crate::profile::*;
        let with = |pr: ProfileResult, jobs: Vec<DiskJobResult>| {
            let mut b = run(jobs);
            if let RunBody::Disk(d) = &mut b {
                d.profile_result = Some(pr);
                d.target.size = Bytes(1 << 30);
            }
            b.figures()
        };
        // GNOME Disks: no jobs, its own averages and series.
        let gnome = with(
            ProfileResult::Gnome(GnomeResult {
                sample_size: Bytes(10 << 20),
                samples_requested: 2,
                access_samples_requested: 3,
                write: true,
                avg_read: Some(BytesPerSec(200e6)),
                avg_write: Some(BytesPerSec(100e6)),
                avg_access: Some(Nanos(2_000_000)),
                transfer: vec![
                    GnomeTransferSample {
                        offset: 0,
                        position_pct: 0.0,
                        read: BytesPerSec(190e6),
                        write: Some(BytesPerSec(90e6)),
                    },
                    GnomeTransferSample {
                        offset: 1,
                        position_pct: 50.0,
                        read: BytesPerSec(210e6),
                        write: Some(BytesPerSec(110e6)),
                    },
                ],
                access: [1_000_000, 2_000_000, 3_000_000]
                    .into_iter()
                    .map(|t| GnomeAccessSample {
                        offset: 0,
                        time: Nanos(t),
                        distance_pct: None,
                    })
                    .collect(),
            }),
            vec![],
        );
        let names: Vec<_> = gnome
            .iter()
            .map(|f| format!("{} | {}", f.test, f.metric))
            .collect();
        let t = "GNOME transfer rate, 2 x 10MiB samples of 1GiB";
        let a = "GNOME access time, 3 samples of 1GiB";
        assert_eq!(
            names,
            [
                format!("{t} | read bw"),
                format!("{t} | write bw"),
                format!("{t} | read bw at 0.0%"),
                format!("{t} | write bw at 0.0%"),
                format!("{t} | read bw at 50.0%"),
                format!("{t} | write bw at 50.0%"),
                format!("{a} | access mean"),
                format!("{a} | access median"),
            ]
        );
        assert_eq!(gnome[0].spread, Some((190e6, 210e6)));
        assert_eq!(gnome[6].spread, Some((1e6, 3e6)));
        assert_eq!(gnome[7].value, 2e6);

        // MacBench: per test its bandwidth.
        let mb = with(
            ProfileResult::Macbench(MacbenchResult {
                runtime: Nanos::from_secs(1),
                tests: vec![MacbenchTest {
                    name: "Sequential read".into(),
                    bw: BytesPerSec(5e6),
                    job: 0,
                }],
            }),
            vec![job(RwMode::Read, true, false)],
        );
        assert_eq!(mb.len(), 1);
        assert!(mb[0].test.starts_with("Sequential read: read 1MiB QD1 T1"));
        assert_eq!((mb[0].metric.as_str(), mb[0].value), ("read bw", 5e6));

        // IOmeter: per pattern and depth.
        let mut deep = job(RwMode::RandRead, true, false);
        deep.spec.engine = EngineKind::IoUring;
        let mut shallow = deep.clone();
        shallow.spec.iodepth = 1;
        let point = |depth, job| IometerPoint {
            pattern: "1 MiB random read".into(),
            rw: RwMode::RandRead,
            bs: Bytes(1 << 20),
            depth,
            achieved_depth: depth as f64,
            bw: BytesPerSec(1e6),
            iops: Iops(1.0),
            lat_mean_ns: 5.0,
            lat_p99_ns: 9,
            cpu_pct: 3.0,
            job,
        };
        let io = with(
            ProfileResult::Iometer(IometerResult {
                depths: vec![1, 8],
                ramp: Nanos(0),
                runtime: Nanos::from_secs(1),
                points: vec![point(1, 0), point(8, 1)],
            }),
            vec![shallow, deep],
        );
        let tests: Vec<_> = io.iter().map(|f| f.test.as_str()).collect();
        assert!(tests[0].starts_with("randread 1MiB QD1 T1, io_uring"));
        assert!(tests
            .last()
            .unwrap()
            .starts_with("randread 1MiB QD8 T1, io_uring"));
        let metrics: Vec<_> = io.iter().take(6).map(|f| f.metric.as_str()).collect();
        assert_eq!(
            metrics,
            [
                "read bw",
                "read iops",
                "read lat mean",
                "read lat p99",
                "depth reached",
                "cpu"
            ]
        );

        // The sweep: per engine and block size, the engines apart.
        let engines = [
            EngineKind::Psync,
            EngineKind::MmapSync,
            EngineKind::MmapAsync,
        ];
        let jobs: Vec<_> = engines
            .iter()
            .map(|e| {
                let mut j = job(RwMode::RandRead, true, false);
                j.spec.engine = *e;
                j.spec.iodepth = 1;
                j
            })
            .collect();
        let sweep = with(
            ProfileResult::Sweep(SweepResult {
                engines: engines.to_vec(),
                runtime: Nanos::from_secs(1),
                points: engines
                    .iter()
                    .enumerate()
                    .map(|(i, e)| SweepPoint {
                        engine: *e,
                        rw: RwMode::RandRead,
                        bs: Bytes(1 << 20),
                        bw: BytesPerSec(1e6),
                        job: i,
                    })
                    .collect(),
            }),
            jobs,
        );
        let tests: Vec<_> = sweep.iter().map(|f| f.test.as_str()).collect();
        assert_eq!(
            tests,
            [
                "randread 1MiB QD1 T1, psync, direct, random data, 1GiB",
                "randread 1MiB QD1 T1, mmap-sync, direct, random data, 1GiB",
                "randread 1MiB QD1 T1, mmap-async, direct, random data, 1GiB",
            ]
        );
        assert!(sweep.iter().all(|f| f.metric == "read bw"));
    }

    #[test]
    fn memory_tests_name_kernel_size_backing_and_threads() {
        use crate::mem::*;
        let spec = |kernel, backing| MemJobSpec {
            kernel,
            threads: 2,
            backing,
            advice: Advice::Normal,
            mem_limit: None,
        };
        let stencil = |mask| {
            MemKernelSpec::Stencil(StencilSpec {
                n: 4096,
                mask,
                sweeps: 10,
            })
        };
        let s3 = mem_spec_test_name(&spec(stencil(3), Backing::Heap));
        let s15 = mem_spec_test_name(&spec(stencil(15), Backing::Heap));
        assert_eq!(s3, "stencil 3x3, 4096x4096 grid, heap, 2 threads");
        assert_ne!(s3, s15);
        let mapped = Backing::Mmap {
            path: "/ssd/f".into(),
        };
        let mut m = spec(stencil(3), mapped);
        m.mem_limit = Some(Bytes(256 << 20));
        m.advice = Advice::Random;
        assert_eq!(
            mem_spec_test_name(&m),
            "stencil 3x3, 4096x4096 grid, mmap, 2 threads, advice random, limit 256MiB"
        );
        let stream = |n| {
            MemKernelSpec::Stream(StreamSpec {
                array_len: n,
                ntimes: 10,
            })
        };
        assert_eq!(
            mem_spec_test_name(&spec(stream(1_000_000), Backing::Heap)),
            "STREAM, 1M elements, heap, 2 threads"
        );
        assert_ne!(
            mem_spec_test_name(&spec(stream(1_000_000), Backing::Heap)),
            mem_spec_test_name(&spec(stream(3_000_000), Backing::Heap))
        );
        let himeno = |i| {
            MemKernelSpec::Himeno(HimenoSpec {
                grid: HimenoGrid {
                    name: None,
                    i,
                    j: 33,
                    k: 65,
                },
                length: HimenoLength::Iterations(3),
            })
        };
        assert_ne!(
            mem_spec_test_name(&spec(himeno(33), Backing::Heap)),
            mem_spec_test_name(&spec(himeno(65), Backing::Heap))
        );
    }

    #[test]
    fn device_link_names_device_link_and_driver() {
        use crate::device::*;
        let report: DeviceReport = serde_json::from_str(
            r#"{"path": "/mnt/t7", "target": "directory", "device": {
                "name": "sdb1", "devno": {"major": 8, "minor": 17}, "size": 0,
                "transport": "usb", "sysfs_path": "/sys/block/sdb/sdb1",
                "lower": [{"name": "sdb", "devno": {"major": 8, "minor": 16}, "size": 0,
                  "transport": "usb", "sysfs_path": "/sys/block/sdb",
                  "identity": {"vendor": "Samsung", "model": "T7"},
                  "usb": {"device": "2-1", "speed_mbps": 10000.0, "version": "3.20", "driver": "uas"}}]}}"#,
        )
        .unwrap();
        assert_eq!(
            device_report_text(&report).unwrap(),
            "Samsung T7, USB 3.2 10 Gb/s, uas"
        );
        assert_eq!(
            interface_text(&NetInterface {
                name: "eth0".into(),
                driver: Some("r8152".into()),
                speed_mbit: Some(2500),
            }),
            "eth0, r8152, 2500 Mb/s"
        );
    }

    #[test]
    fn units_round_trip_and_format() {
        for u in FigureUnit::ALL {
            assert_eq!(FigureUnit::from_name(u.as_str()), Some(u));
        }
        assert_eq!(FigureUnit::BytesPerSec.format(612_345_678.0), "612.35 MB/s");
        assert_eq!(FigureUnit::Nanos.format(94_100.0), "94.1 µs");
    }
}
