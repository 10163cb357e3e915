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

use crate::disk::{DirectionResult, DiskJobResult, DiskRun, IntervalSample};
use crate::mem::{Backing, KernelResult, MemOutcome, MemRun};
use crate::net::{NetDirection, NetProtocol, NetRun};
use crate::profile::{CdmResult, ProfileResult, TestDir};
use crate::run::RunBody;

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

/// The name of a disk job's test from its shape: `randread 4K Q32T1`.
pub fn disk_test_name(job: &DiskJobResult) -> String {
    let s = &job.spec;
    format!(
        "{} {} Q{}T{}",
        s.rw,
        s.bs.short_label(),
        s.iodepth,
        s.numjobs
    )
}

/// Figures of a disk run: per job and direction, bandwidth, IOPS, mean and
/// p99 completion latency. Bandwidth and IOPS carry the spread of the
/// per-interval samples.
///
/// A CrystalDiskMark profile runs every test as several passes (one job
/// each); its figures are CrystalDiskMark's own (the best pass) with the
/// spread over the passes, one test per row and direction.
pub fn disk_figures(run: &DiskRun) -> Vec<Figure> {
    // Every profile is named, so a new one is flagged here until it says
    // what its figures are.
    match &run.profile_result {
        Some(ProfileResult::Cdm(cdm)) => return cdm_figures(cdm),
        Some(
            ProfileResult::Iometer(_)
            | ProfileResult::Gnome(_)
            | ProfileResult::Macbench(_)
            | ProfileResult::Sweep(_),
        )
        | None => {}
    }
    let mut out = Vec::new();
    let mut seen: HashMap<String, u32> = HashMap::new();
    for job in &run.jobs {
        let base = disk_test_name(job);
        let n = seen.entry(base.clone()).or_insert(0);
        *n += 1;
        // Two jobs of the same shape in one run (a sweep over sizes) stay apart.
        let test = if *n == 1 {
            base
        } else {
            format!("{base} #{n}")
        };
        let single = job.read.is_some() != job.write.is_some();
        let dirs = [("read", &job.read, true), ("write", &job.write, false)];
        for (name, dir, is_read) in dirs {
            let Some(d) = dir else { continue };
            direction_figures(&mut out, &test, name, d, &job.samples, is_read, single);
        }
    }
    out
}

/// Figures of a CrystalDiskMark run: per test the best pass's bandwidth,
/// IOPS and the lowest mean latency, each with the spread over the passes.
pub fn cdm_figures(cdm: &CdmResult) -> Vec<Figure> {
    let mut out = Vec::new();
    for t in &cdm.tests {
        // CDM 8 rows are SEQ*/RND*; CDM 3.0's are "Seq", "512K", "4K", "4K QD32".
        let random = !(t.row.starts_with("SEQ") || t.row == "Seq");
        let rw = match (t.dir, random) {
            (TestDir::Read, false) => "read",
            (TestDir::Read, true) => "randread",
            (TestDir::Write, false) => "write",
            (TestDir::Write, true) => "randwrite",
            (TestDir::Mix, false) => "readwrite",
            (TestDir::Mix, true) => "randrw",
        };
        let test = format!("{rw} {} Q{}T{}", t.bs.short_label(), t.queues, t.threads);
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

/// The name of a memory job's test: `stream T2 heap`, `himeno T1 mmap limit 1G`.
pub fn mem_test_name(run: &MemRun) -> String {
    let s = &run.spec;
    let backing = match s.backing {
        Backing::Heap => "heap",
        Backing::Mmap { .. } => "mmap",
    };
    let mut name = format!("{} T{} {backing}", s.kernel.name(), s.threads);
    if let Some(limit) = s.mem_limit {
        name += &format!(" limit {}", limit.short_label());
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
        assert_eq!(figs[0].test, "read 1M Q8T1");
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
        assert_eq!(figs[8].test, "randrw 1M Q8T1 #2");
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
        let mut body = run(vec![job(RwMode::RandRead, true, false); 3]);
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
        assert_eq!(figs[0].test, "randread 4K Q32T1");
        assert_eq!(figs[0].metric, "read bw");
        assert_eq!(figs[0].value, 410e6);
        assert_eq!(figs[0].spread, Some((390e6, 410e6)));
        assert_eq!(figs[1].spread, Some((390e6 / 4096.0, 410e6 / 4096.0)));
        assert_eq!(figs[2].value, 310e3);
        assert_eq!(figs[2].spread, Some((310e3, 330e3)));
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
