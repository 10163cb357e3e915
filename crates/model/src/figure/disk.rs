//! Disk figures and test names: a job named by everything that changes its
//! result, and the figures of each profile as that profile reports them.

use super::classic::cdm_run_figures;
pub use super::classic::{cdm_figures, gnome_figures};
use super::disk_names::Namer;
pub use super::disk_names::{
    disk_job_test_name, disk_job_test_name_on, disk_test_name, size_label,
};
use super::*;

/// `read`, `write` or `mix`: the prefix of a single-figure test's metrics.
pub(super) fn rw_dir(rw: RwMode) -> (&'static str, Option<bool>) {
    match rw {
        RwMode::Read | RwMode::RandRead => ("read", Some(true)),
        RwMode::Write | RwMode::RandWrite => ("write", Some(false)),
        RwMode::ReadWrite | RwMode::RandRw => ("mix", None),
    }
}

/// The spread of a job's per-interval bandwidth, one direction
/// (`Some(true)` reads) or both.
pub(super) fn sample_bw_spread(job: Option<&DiskJobResult>, read: Option<bool>) -> Spread {
    let Some(job) = job else {
        return Spread::default();
    };
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
    Spread::of(&vals)
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
    // A custom run with --verify: the job's figures and the check's.
    if let (Some(ProfileResult::Verify(v)), "custom") = (&run.profile_result, run.profile.as_str())
    {
        let mut out = job_figures(run);
        out.extend(verify_figures(v));
        return out;
    }
    let mut out = Vec::new();
    let mut namer = Namer::default();
    // Every profile is named, so a new one is flagged here until it says
    // what its figures are.
    match &run.profile_result {
        Some(ProfileResult::Cdm(cdm)) => return cdm_run_figures(cdm, &run.jobs, Some(&run.target)),
        Some(ProfileResult::Gnome(g)) => return gnome_figures(g, run.target.chosen_size()),
        Some(ProfileResult::Artefacts(a)) => return artefacts_figures(a, run.jobs.first()),
        Some(ProfileResult::Sustained(s)) => {
            return super::sustained::sustained_figures(s, run.jobs.first())
        }
        Some(ProfileResult::Verify(v)) => return verify_figures(v),
        Some(ProfileResult::Pts(p)) => return super::pts::pts_figures(p),
        Some(ProfileResult::Iometer(io)) => {
            for p in &io.points {
                let job = run.jobs.get(p.job);
                let test = namer.name(match job {
                    Some(j) => disk_job_test_name_on(&j.spec, &run.target),
                    None => format!("{} {} QD{}", p.rw, size_label(p.bs), p.depth),
                });
                let (dir, _) = rw_dir(p.rw);
                let iops_spread = job.map_or_else(Spread::default, |j| {
                    let v: Vec<f64> = j.samples.iter().map(|s| s.iops().0).collect();
                    Spread::of(&v)
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
            knee_figures(&mut out, run, &io.depths);
            return out;
        }
        Some(ProfileResult::Sweep(sw)) => {
            for (p, test) in sw.points.iter().zip(sweep_names(run, sw)) {
                let job = run.jobs.get(p.job);
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
                    Some(j) => format!(
                        "{}: {}",
                        t.name,
                        disk_job_test_name_on(&j.spec, &run.target)
                    ),
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
    job_figures(run)
}

/// Each job's figures by direction, as a custom run reports them.
fn job_figures(run: &DiskRun) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut namer = Namer::default();
    for job in &run.jobs {
        let test = namer.name(disk_job_test_name_on(&job.spec, &run.target));
        let single = job.read.is_some() != job.write.is_some();
        let dirs = [("read", &job.read, true), ("write", &job.write, false)];
        for (name, dir, is_read) in dirs {
            let Some(d) = dir else { continue };
            if job.repeats.len() >= 2 {
                repeat_figures(&mut out, &test, name, d, &job.repeats, is_read);
            } else {
                direction_figures(&mut out, &test, name, d, &job.samples, is_read, single);
            }
        }
        let mut figs = TestFigures::new(&mut out, &test, "");
        cpu_figures(&mut figs, Some(job.cpu), job.host_cpu.as_ref());
    }
    let depths: Vec<u32> = run.jobs.iter().map(|j| j.spec.iodepth).collect();
    knee_figures(&mut out, run, &depths);
    out
}

/// The `knee depth` of each depth sweep in the run ([`DiskRun::knees`]),
/// one test per sweep: `depth sweep 1,2,4,8: 4 KiB random read, io_uring,
/// direct` (the engine and direct flag of the run's first job; a custom
/// sweep's series names its own). Its cause stays in the run's `knees`.
fn knee_figures(out: &mut Vec<Figure>, run: &DiskRun, depths: &[u32]) {
    let list: Vec<String> = depths.iter().map(u32::to_string).collect();
    let how = match (&run.profile_result, run.jobs.first()) {
        (Some(_), Some(j)) => format!(
            ", {}, {}",
            j.spec.engine,
            if j.spec.direct { "direct" } else { "buffered" }
        ),
        _ => String::new(),
    };
    for k in &run.knees {
        let test = format!("depth sweep {}: {}{how}", list.join(","), k.series);
        TestFigures::new(out, &test, "").push(
            "knee depth",
            FigureUnit::Count,
            f64::from(k.depth),
            None,
        );
    }
}

/// Figures of the verify profile, one test named by what ran (`verify`,
/// `verify probe`, `verify write phase`): the size checked and the usable
/// size (bytes), the bad blocks of each kind (counts) and the mean write
/// and read rates over the surface.
pub fn verify_figures(v: &crate::verify::VerifyResult) -> Vec<Figure> {
    let mut out = Vec::new();
    let test = if v.quick {
        "verify probe".to_string()
    } else if v.phase == crate::verify::VerifyPhase::Both {
        "verify".to_string()
    } else {
        format!("verify {} phase", v.phase)
    };
    let mut figs = TestFigures::new(&mut out, &test, "");
    figs.push("claimed", FigureUnit::Bytes, v.claimed.get() as f64, None);
    if let Some(u) = v.usable {
        figs.push("usable", FigureUnit::Bytes, u.get() as f64, None);
    }
    if v.phase.reads() {
        let count = FigureUnit::Count;
        figs.push("corrupted blocks", count, v.bad.corrupted as f64, None);
        figs.push("lost blocks", count, v.bad.lost as f64, None);
        figs.push("wrapped blocks", count, v.bad.wrapped as f64, None);
        figs.push(
            "bad ranges",
            count,
            (v.ranges.len() as u64 + v.more_ranges) as f64,
            None,
        );
    }
    let spread = |s: &[crate::verify::SurfaceRate]| {
        let v: Vec<f64> = s.iter().map(|r| r.bw.0).collect();
        min_max(&v)
    };
    if let Some(bw) = v.write_bw {
        TestFigures::new(&mut out, &test, "write").push(
            "bw",
            FigureUnit::BytesPerSec,
            bw.0,
            spread(&v.write_series),
        );
    }
    if let Some(bw) = v.read_bw {
        TestFigures::new(&mut out, &test, "read").push(
            "bw",
            FigureUnit::BytesPerSec,
            bw.0,
            spread(&v.read_series),
        );
    }
    out
}

/// Figures of the artefacts probe, one test: each pattern's write and read
/// rate, and each pattern's rates against random data's in percent. The
/// test is named by the block size, depth, engine, direct or buffered (from
/// its first job) and the region.
pub fn artefacts_figures(a: &ArtefactsResult, first: Option<&DiskJobResult>) -> Vec<Figure> {
    let mut out = Vec::new();
    let how = first.map_or_else(String::new, |j| {
        let s = &j.spec;
        format!(
            " {} QD{} T{}, {}, {},",
            size_label(s.bs),
            s.depth_run(),
            s.numjobs,
            s.engine,
            if s.direct { "direct" } else { "buffered" }
        )
    });
    let test = format!("artefacts probe{how} {}", size_label(a.region));
    let mut figs = TestFigures::new(&mut out, &test, "");
    for p in &a.patterns {
        let bw = FigureUnit::BytesPerSec;
        figs.push(&format!("{} write bw", p.data), bw, p.write.0, None);
        figs.push(&format!("{} read bw", p.data), bw, p.read.0, None);
    }
    for f in a.verdict.iter().flat_map(|v| &v.factors) {
        let pct = FigureUnit::Percent;
        figs.push(
            &format!("{} write vs random", f.data),
            pct,
            f.write * 100.0,
            None,
        );
        figs.push(
            &format!("{} read vs random", f.data),
            pct,
            f.read * 100.0,
            None,
        );
    }
    out
}

/// The figures of one direction of a job run several times (`--repeat`):
/// the median run's, each spread over the runs, as hyperfine spreads a
/// command's runs. The runs' spread, not one run's intervals, is what
/// another run of the same test may land in.
fn repeat_figures(
    out: &mut Vec<Figure>,
    test: &str,
    dir: &str,
    d: &DirectionResult,
    repeats: &[crate::disk::RepeatFigures],
    is_read: bool,
) {
    let runs: Vec<&crate::disk::DirectionFigures> = repeats
        .iter()
        .filter_map(|r| {
            if is_read {
                r.read.as_ref()
            } else {
                r.write.as_ref()
            }
        })
        .collect();
    let over = |f: &dyn Fn(&crate::disk::DirectionFigures) -> Option<f64>| {
        let v: Vec<f64> = runs.iter().filter_map(|r| f(r)).collect();
        Spread::of(&v)
    };
    let mut figs = TestFigures::new(out, test, dir);
    figs.push(
        "bw",
        FigureUnit::BytesPerSec,
        d.bw.0,
        over(&|r| Some(r.bw.0)),
    );
    figs.push(
        "iops",
        FigureUnit::Iops,
        d.iops.0,
        over(&|r| Some(r.iops.0)),
    );
    if d.clat.count > 0 {
        let mean = over(&|r| Some(r.lat_mean_ns));
        figs.push("lat mean", FigureUnit::Nanos, d.clat.mean_ns, mean);
        if let Some(p99) = d.clat.percentile(99.0) {
            let spread = over(&|r| r.lat_p99.map(|p| p.0 as f64));
            figs.push("lat p99", FigureUnit::Nanos, p99 as f64, spread);
        }
    }
}

pub(super) fn direction_figures(
    out: &mut Vec<Figure>,
    test: &str,
    dir: &str,
    d: &DirectionResult,
    samples: &[IntervalSample],
    is_read: bool,
    single_direction: bool,
) {
    let per_sample = |f: &dyn Fn(&IntervalSample) -> f64| -> Spread {
        let vals: Vec<f64> = samples
            .iter()
            .filter(|s| s.length.get() > 0)
            .map(f)
            .collect();
        Spread::of(&vals)
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
        Spread::default()
    };
    // A percentile of the whole job has no spread of its own: the
    // intervals' percentiles give it one, so two identical runs' p99s are
    // within noise instead of a regression.
    let p99_spread = if single_direction {
        let p99s: Vec<f64> = samples
            .iter()
            .filter_map(|s| s.lat_p99)
            .map(|p| p.0 as f64)
            .collect();
        Spread::of(&p99s)
    } else {
        Spread::default()
    };
    let mut figs = TestFigures::new(out, test, dir);
    figs.push("bw", FigureUnit::BytesPerSec, d.bw.0, bw_spread);
    figs.push("iops", FigureUnit::Iops, d.iops.0, iops_spread);
    if d.clat.count > 0 {
        figs.push("lat mean", FigureUnit::Nanos, d.clat.mean_ns, lat_spread);
        if let Some(p99) = d.clat.percentile(99.0) {
            // The job's p99 need not lie between its intervals' (their
            // coarse buckets, a short last interval): widen to take it in.
            let spread = p99_spread.including(p99 as f64);
            figs.push("lat p99", FigureUnit::Nanos, p99 as f64, spread);
        }
    }
}

/// The test name of each point of a sweep, in order, as its figures are
/// named: from the point's job; without the job, its mode, size and engine.
fn sweep_names(run: &DiskRun, sw: &crate::profile::SweepResult) -> Vec<String> {
    let mut namer = Namer::default();
    sw.points
        .iter()
        .map(|p| {
            namer.name(match run.jobs.get(p.job) {
                Some(j) => disk_job_test_name_on(&j.spec, &run.target),
                None => format!("{} {}, {}", p.rw, size_label(p.bs), p.engine),
            })
        })
        .collect()
}

/// Per test of a profile whose tests line up across runs (CrystalDiskMark's
/// tests, the sweep's points), its test name as its figures are named, in
/// the result's order: what a chart of one run against another pairs on,
/// so it pairs as `results compare` does. Empty for other profiles.
pub fn profile_test_names(run: &DiskRun) -> Vec<String> {
    match &run.profile_result {
        Some(ProfileResult::Cdm(cdm)) => {
            super::classic::cdm_names(cdm, &run.jobs, Some(&run.target))
        }
        Some(ProfileResult::Sweep(sw)) => sweep_names(run, sw),
        _ => Vec::new(),
    }
}
