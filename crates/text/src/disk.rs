//! A custom disk job as text, fio-like: one block per job.

use std::fmt::Write;

use iomark_model::disk::{DirectionResult, DiskJobResult, DiskRun, TargetKind};
use iomark_model::mem::CgroupUsage;
use iomark_model::steady::{Limit, Measure, SteadyStateOutcome};
use iomark_model::units::Nanos;
use iomark_model::{RunBody, RunDocument};

/// What `--mem-limit` held the run to and how often the limit bit.
pub fn memory_limit_line(run: &DiskRun) -> Option<String> {
    let cg = run.cgroup.as_ref()?;
    Some(format!("memory limit: {}", limit_record(cg)))
}

/// `256 MiB (cgroup v1); peak ..., limit hit ... times, ... major faults`.
pub fn limit_record(cg: &CgroupUsage) -> String {
    format!(
        "{} (cgroup {}); {}",
        cg.limit,
        iomark_model::escape::escape_controls(&cg.version),
        cgroup_usage(cg)
    )
}

/// A memory cgroup's record: `peak P, limit hit N times, M major faults`
/// (`n/a` where the kernel does not offer a figure).
pub fn cgroup_usage(cg: &CgroupUsage) -> String {
    format!(
        "peak {}, limit hit {} times, {} major faults",
        or_na(cg.peak),
        or_na(cg.limit_hits),
        or_na(cg.major_faults),
    )
}

fn or_na<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "n/a".to_string(), |v| v.to_string())
}

/// The text summary of a disk run, with any control character in its
/// names and messages escaped; every warning message when `verbose`, else
/// a line per kind.
pub fn disk_run(doc: &RunDocument, verbose: bool) -> String {
    iomark_model::escape::escape_controls_keep_lines(&disk_run_raw(doc, verbose)).into_owned()
}

fn disk_run_raw(doc: &RunDocument, verbose: bool) -> String {
    let mut out = String::new();
    let RunBody::Disk(run) = &doc.body else {
        return out;
    };
    let t = &run.target;
    let kind = match t.kind {
        TargetKind::TestFile => "test file, removed",
        TargetKind::File => "file",
        TargetKind::BlockDevice => "block device",
    };
    let _ = writeln!(
        out,
        "target: {} ({kind}, {}, logical block {} B)",
        iomark_model::escape::escape_controls(&t.path),
        t.size,
        t.logical_block_size
    );
    if let Some(line) = memory_limit_line(run) {
        let _ = writeln!(out, "{line}");
    }
    for job in &run.jobs {
        job_block(&mut out, job);
    }
    crate::knee::depth_sweep(&mut out, run);
    let warnings = crate::run_warnings::lines(doc, run, &[], verbose);
    if !warnings.is_empty() {
        let _ = writeln!(out, "warnings:");
        for w in warnings {
            let _ = writeln!(out, "  - {w}");
        }
    }
    if doc.status != iomark_model::RunStatus::Complete {
        let _ = writeln!(
            out,
            "status: {} (figures cover what ran)",
            doc.status.as_str()
        );
    }
    out
}

/// `--repeat N`: the figures above are the median run's; each direction's
/// spread over the N runs, as hyperfine shows a command's.
fn repeats(out: &mut String, job: &DiskJobResult) {
    let n = job.repeats.len();
    if n < 2 {
        return;
    }
    let _ = writeln!(
        out,
        "  {n} runs, the median shown; over the {n} (min - max):"
    );
    for (name, is_read) in [("read", true), ("write", false)] {
        let runs: Vec<_> = job
            .repeats
            .iter()
            .filter_map(|r| if is_read { r.read } else { r.write })
            .collect();
        if runs.is_empty() {
            continue;
        }
        let range = |v: Vec<f64>| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        };
        let (bw_lo, bw_hi) = range(runs.iter().map(|r| r.bw.0).collect());
        let (io_lo, io_hi) = range(runs.iter().map(|r| r.iops.0).collect());
        let (lat_lo, lat_hi) = range(runs.iter().map(|r| r.lat_mean_ns).collect());
        let p99: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.lat_p99)
            .map(|p| p.0 as f64)
            .collect();
        let p99 = if p99.is_empty() {
            String::new()
        } else {
            let (lo, hi) = range(p99);
            format!(", p99 {} - {}", Nanos(lo as u64), Nanos(hi as u64))
        };
        let _ = writeln!(
            out,
            "    {name}: bw {:.2} - {:.2} MB/s, IOPS {io_lo:.0} - {io_hi:.0}, lat mean {} - {}{p99}",
            bw_lo / 1e6,
            bw_hi / 1e6,
            Nanos(lat_lo.round() as u64),
            Nanos(lat_hi.round() as u64),
        );
    }
}

fn job_block(out: &mut String, job: &DiskJobResult) {
    let s = &job.spec;
    let _ = writeln!(
        out,
        "{}: rw={} bs={} iodepth={} numjobs={} engine={} {} data={} runtime={}",
        s.name,
        s.rw,
        s.bs,
        s.iodepth,
        s.numjobs,
        s.engine,
        if job.page_cache_bypassed {
            "direct"
        } else {
            "buffered"
        },
        s.data,
        s.runtime.map_or("one pass".into(), |r| r.to_string()),
    );
    if let Some(r) = &job.read {
        direction(out, "read", r);
    }
    if let Some(w) = &job.write {
        direction(out, "write", w);
    }
    repeats(out, job);
    if let Some(ss) = &job.steady_state {
        steady_state(out, ss);
    }
    let _ = writeln!(
        out,
        "  cpu: usr={:.1}%, sys={:.1}% (of one CPU)",
        job.cpu.user_pct, job.cpu.system_pct
    );
    if let Some(h) = &job.host_cpu {
        let _ = writeln!(out, "  machine cpu: {h}");
    }
    let mut levels: Vec<(&String, &f64)> = job
        .iodepth_level
        .iter()
        .filter(|(_, pct)| **pct > 0.0)
        .collect();
    levels.sort_by_key(|(k, _)| k.trim_start_matches(">=").parse::<u32>().unwrap_or(0));
    let levels: Vec<String> = levels
        .iter()
        .map(|(k, pct)| format!("{k}={pct:.1}%"))
        .collect();
    let _ = writeln!(
        out,
        "  depth: mean {:.1} in flight per thread; levels {}",
        job.mean_depth,
        levels.join(" ")
    );
    let _ = writeln!(
        out,
        "  page cache: {}",
        if job.page_cache_bypassed {
            "bypassed (O_DIRECT)"
        } else {
            "used (buffered I/O)"
        }
    );
    // fio's "Disk stats", per job.
    if let Some(seen) = &job.device_io {
        let _ = writeln!(out, "  device {}", crate::device_seen::device_line(seen));
    }
    if !job.samples.is_empty() {
        let mbs: Vec<f64> = job.samples.iter().map(|s| s.bw().mb_per_sec()).collect();
        let min = mbs.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = mbs.iter().cloned().fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "  per second: {} samples, {:.1} to {:.1} MB/s",
            mbs.len(),
            min,
            max
        );
    }
}

/// fio's `steadystate` line: whether the criterion was met, when, and
/// the last window's means and criterion.
fn steady_state(out: &mut String, ss: &SteadyStateOutcome) {
    let when = match (ss.attained, ss.attained_at) {
        (true, Some(at)) => format!("reached at {at}"),
        (true, None) => "reached".into(),
        (false, _) => "not reached".into(),
    };
    let spec = ss.spec;
    let _ = writeln!(
        out,
        "  steady state ({}, {} window): {when}",
        spec.criterion, spec.window
    );
    let mean = |v: &[f64]| v.iter().sum::<f64>() / (v.len().max(1) as f64);
    let unit = match spec.criterion.limit {
        Limit::Percent(_) => "%",
        Limit::Absolute(_) => "",
    };
    let judged = match (ss.criterion, spec.criterion.measure) {
        (Some(c), Measure::Deviation) => format!("largest deviation {c:.3}{unit}"),
        (Some(c), Measure::Slope) => format!("slope {c:.3}{unit}"),
        (None, _) => format!("the window never filled ({} samples)", ss.iops.len()),
    };
    let _ = writeln!(
        out,
        "    last window: {:.1} MB/s, {:.0} IOPS; {judged}",
        mean(&ss.bw) / 1e6,
        mean(&ss.iops)
    );
}

fn direction(out: &mut String, name: &str, d: &DirectionResult) {
    let _ = writeln!(
        out,
        "  {name}: {:.2} MB/s ({:.2} MiB/s), {:.0} IOPS, {} in {}",
        d.bw.mb_per_sec(),
        d.bw.mib_per_sec(),
        d.iops.0,
        d.io_bytes,
        d.runtime
    );
    let c = &d.clat;
    let _ = writeln!(
        out,
        "    clat: min={} mean={} max={} stddev={}",
        Nanos(c.min_ns),
        Nanos(c.mean_ns as u64),
        Nanos(c.max_ns),
        Nanos(c.stddev_ns as u64)
    );
    let pick = [50.0, 90.0, 99.0, 99.9, 99.99];
    let ps: Vec<String> = pick
        .iter()
        .filter_map(|&p| c.percentile(p).map(|ns| format!("p{p}={}", Nanos(ns))))
        .collect();
    let _ = writeln!(out, "    clat percentiles: {}", ps.join(", "));
}

/// The target line of a profile's text (and the memory limit and the
/// artefacts probe under it): shared by every profile's layout.
pub(crate) fn target_line(out: &mut String, run: &DiskRun) {
    let t = &run.target;
    let kind = match t.kind {
        TargetKind::TestFile => "test file, removed",
        TargetKind::File => "file",
        TargetKind::BlockDevice => "block device",
    };
    // A path is one line: its own newlines are shown escaped too.
    let path = iomark_model::escape::escape_controls(&t.path);
    let _ = writeln!(out, "Target: {path} ({kind}, {})", t.size);
    if let Some(line) = memory_limit_line(run) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(p) = &run.probe {
        let _ = writeln!(out, "Artefacts probe: {}", p.summary());
    }
}
