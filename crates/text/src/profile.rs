//! Text output of the classic profiles, in the layout of the tool each one
//! imitates: CrystalDiskMark's grid, IOmeter's rows per depth, GNOME Disks'
//! summary, MacBench's KB/s table, the sweep's MiB/s per size.

use std::fmt::Write;

use iomark_model::disk::{DiskRun, RwMode};
use iomark_model::profile::{
    cdm_title, ArtefactsResult, CdmResult, CdmTest, GnomeResult, IometerResult, MacbenchResult,
    ProfileResult, SweepResult, TestDir, CDM_HIGH_SPREAD, SWEEP_SEQ_BS,
};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};
use iomark_model::{RunBody, RunDocument, RunStatus, WarningKind};

/// The text of a profile run; falls back to the generic job view for a
/// run without a profile result.
pub fn profile_run(doc: &RunDocument, verbose: bool) -> String {
    let RunBody::Disk(run) = &doc.body else {
        return String::new();
    };
    let Some(result) = &run.profile_result else {
        return crate::disk::disk_run(doc, verbose);
    };
    // A custom run with --verify, or a job file with verify=: the jobs as
    // any custom job, then their check.
    if let (ProfileResult::Verify(r), "custom" | "fio-job") = (result, run.profile.as_str()) {
        let mut out = crate::disk::disk_run(doc, verbose);
        crate::verify::write_check(&mut out, r);
        return iomark_model::escape::escape_controls_keep_lines(&out).into_owned();
    }
    let mut out = String::new();
    // The CDM grid's spread column shows what the per-test high-spread
    // warnings say, and its header what --quick's does (they stay stored
    // with the run).
    let shown: &[WarningKind] = match result {
        ProfileResult::Cdm(_) => &[WarningKind::HighSpread, WarningKind::Shortened],
        _ => &[],
    };
    match result {
        ProfileResult::Cdm(r) => cdm(&mut out, run, r, verbose),
        ProfileResult::Iometer(r) => iometer(&mut out, run, r),
        ProfileResult::Gnome(r) => gnome(&mut out, run, r, verbose),
        ProfileResult::Macbench(r) => macbench(&mut out, run, r),
        ProfileResult::Sweep(r) => sweep(&mut out, run, r),
        ProfileResult::Artefacts(r) => artefacts(&mut out, run, r),
        ProfileResult::Sustained(r) => {
            let (header, body) = crate::sustained::sustained(run, r);
            out.push_str(&header);
            crate::disk::target_line(&mut out, run);
            out.push_str(&body);
        }
        ProfileResult::Verify(r) => crate::verify::verify(&mut out, run, r),
        ProfileResult::Pts(r) => crate::pts::pts(&mut out, run, r),
    }
    if verbose {
        crate::device_seen::section(&mut out, run);
    }
    footer(&mut out, doc, run, shown, verbose);
    // Names and messages come from the run and may hold control characters.
    iomark_model::escape::escape_controls_keep_lines(&out).into_owned()
}

/// The warnings (but those of a kind the tables already show), a line per
/// kind unless `verbose`, and the status.
fn footer(
    out: &mut String,
    doc: &RunDocument,
    run: &DiskRun,
    shown: &[WarningKind],
    verbose: bool,
) {
    let warnings = crate::run_warnings::lines(doc, run, shown, verbose);
    if !warnings.is_empty() {
        let _ = writeln!(out, "\nwarnings:");
        for w in warnings {
            let _ = writeln!(out, "  - {w}");
        }
    }
    if doc.status != RunStatus::Complete {
        let _ = writeln!(
            out,
            "status: {} (the tests that finished are shown and kept)",
            doc.status.as_str()
        );
    }
}

fn seconds(n: Nanos) -> String {
    let s = n.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// A test file size as CrystalDiskMark's header writes it: `1 GiB`, `1000 MB`.
fn test_size(b: Bytes) -> String {
    let v = b.get();
    if v.is_multiple_of(Bytes::MIB) {
        b.to_string()
    } else {
        format!("{} MB", (v as f64 / 1e6).round())
    }
}

fn find<'a>(r: &'a CdmResult, row: &str, dir: TestDir) -> Option<&'a CdmTest> {
    r.tests.iter().find(|t| t.row == row && t.dir == dir)
}

fn cell(t: Option<&CdmTest>, f: impl Fn(&CdmTest) -> String) -> String {
    t.map_or_else(|| "-".to_string(), f)
}

/// Width of the spread column: `12.3% !`.
const SPREAD_W: usize = 7;

/// The spread of a test's passes as a fraction of the highest; `None` for
/// a single pass.
fn spread_of(t: &CdmTest) -> Option<f64> {
    let (lo, hi) = t.bw_spread()?;
    (t.pass_bw.len() > 1).then(|| {
        if hi.0 > 0.0 {
            (hi.0 - lo.0) / hi.0
        } else {
            0.0
        }
    })
}

/// The spread column's cell: `0.8%`, `12.0% !` over [`CDM_HIGH_SPREAD`], `-`
/// without passes to compare, blank for a test that did not run.
fn spread_cell(t: Option<&CdmTest>) -> String {
    let Some(t) = t else {
        return String::new();
    };
    match spread_of(t) {
        None => "-".into(),
        Some(s) if s > CDM_HIGH_SPREAD => format!("{:.1}% !", s * 100.0),
        Some(s) => format!("{:.1}%", s * 100.0),
    }
}

fn cdm(out: &mut String, run: &DiskRun, r: &CdmResult, verbose: bool) {
    let title = cdm_title(&r.profile).unwrap_or("CrystalDiskMark");
    let _ = writeln!(out, "{title} (iomark disk --profile {})", r.profile);
    let mix = r
        .mix_read
        .map_or(String::new(), |m| format!(", mix R{m}/W{}", 100 - m));
    let _ = writeln!(
        out,
        "Test: {}, data {}, {} passes of {}, interval {}{mix}{}",
        test_size(r.size),
        r.data,
        r.passes,
        seconds(r.pass_time),
        seconds(r.interval),
        if r.quick {
            " (--quick: a first look, not a figure to compare with CrystalDiskMark)"
        } else {
            ""
        }
    );
    crate::disk::target_line(out, run);
    let mut dirs = vec![TestDir::Read, TestDir::Write];
    if r.mix_read.is_some() {
        dirs.push(TestDir::Mix);
    }
    let width = r.rows.iter().map(|l| l.len()).max().unwrap_or(0).max(11);
    let name = |d: TestDir| match d {
        TestDir::Read => "Read",
        TestDir::Write => "Write",
        TestDir::Mix => "Mix",
    };
    // A grid of rows by figure and direction; each figure has its unit, its
    // column width and how a test shows it, and the MB/s figure the spread
    // of its passes beside it.
    type Figure<'f> = (&'f str, usize, &'f dyn Fn(&CdmTest) -> String);
    let with_spread = r.passes > 1;
    let grid = |out: &mut String, figures: &[Figure], spread: bool| {
        let _ = write!(out, "\n{:width$}", "");
        for &(unit, w, _) in figures {
            for &d in &dirs {
                let _ = write!(out, " {:>w$}", format!("{} [{unit}]", name(d)));
                if spread {
                    let _ = write!(out, " {:<SPREAD_W$}", "spread");
                }
            }
        }
        let end = out.trim_end_matches(' ').len();
        out.truncate(end);
        let _ = writeln!(out);
        for row in &r.rows {
            let _ = write!(out, "{row:width$}");
            for &(_, w, show) in figures {
                for &d in &dirs {
                    let t = find(r, row, d);
                    let v = cell(t, show);
                    let _ = write!(out, " {v:>w$}");
                    if spread {
                        let _ = write!(out, " {:<SPREAD_W$}", spread_cell(t));
                    }
                }
            }
            // The last spread cell pads to its width; the line ends without.
            let end = out.trim_end_matches(' ').len();
            out.truncate(end);
            let _ = writeln!(out);
        }
    };
    grid(
        out,
        &[("MB/s", 14, &|t| format!("{:.2}", t.bw.mb_per_sec()))],
        with_spread,
    );
    if with_spread {
        let steady = r
            .tests
            .iter()
            .all(|t| spread_of(t).is_none_or(|s| s <= CDM_HIGH_SPREAD));
        let _ = writeln!(
            out,
            "spread: highest pass minus lowest, in % of the highest"
        );
        if !steady {
            let _ = writeln!(
                out,
                "!: over {:.0}%, the device was not steady (raise --pass-time or --interval, \
                 or check for background load)",
                CDM_HIGH_SPREAD * 100.0
            );
        }
    }
    if r.shows_iops {
        grid(
            out,
            &[
                ("IOPS", 14, &|t| format!("{:.2}", t.iops.0)),
                ("µs", 12, &|t| format!("{:.2}", t.lat_mean_ns / 1e3)),
            ],
            false,
        );
    }
    if verbose {
        let _ = writeln!(
            out,
            "\nPasses (MB/s; the maximum is reported, latency is the minimum mean):"
        );
        for t in &r.tests {
            let passes: Vec<String> = t
                .pass_bw
                .iter()
                .map(|b| format!("{:.2}", b.mb_per_sec()))
                .collect();
            let spread = t.bw_spread().map_or(String::new(), |(lo, hi)| {
                format!(
                    ", spread {:.1}%",
                    if hi.0 > 0.0 {
                        100.0 * (hi.0 - lo.0) / hi.0
                    } else {
                        0.0
                    }
                )
            });
            let _ = writeln!(
                out,
                "  {:width$} {:5} {}{spread}, latency {:.1} µs",
                t.row,
                t.dir.as_str(),
                passes.join(" "),
                t.lat_mean_ns / 1e3
            );
        }
    }
}

fn iometer(out: &mut String, run: &DiskRun, r: &IometerResult) {
    let engine = run
        .jobs
        .first()
        .map_or("io_uring".to_string(), |j| j.spec.engine.to_string());
    let _ = writeln!(
        out,
        "IOmeter queue-depth sweep: ramp {}, {} per point, engine {engine}",
        seconds(r.ramp),
        seconds(r.runtime)
    );
    crate::disk::target_line(out, run);
    let mut patterns: Vec<&str> = Vec::new();
    for p in &r.points {
        if !patterns.contains(&p.pattern.as_str()) {
            patterns.push(&p.pattern);
        }
    }
    for pat in patterns {
        let _ = writeln!(out, "\n{pat}");
        let _ = writeln!(
            out,
            "{:>5} {:>10} {:>10} {:>10} {:>10} {:>7} {:>6}",
            "QD", "MB/s", "IOPS", "mean lat", "p99 lat", "CPU", "depth"
        );
        for p in r.points.iter().filter(|p| p.pattern == pat) {
            let _ = writeln!(
                out,
                "{:>5} {:>10.2} {:>10.0} {:>10} {:>10} {:>6.1}% {:>6.1}",
                p.depth,
                p.bw.mb_per_sec(),
                p.iops.0,
                Nanos(p.lat_mean_ns.round() as u64).to_string(),
                Nanos(p.lat_p99_ns).to_string(),
                p.cpu_pct,
                p.achieved_depth
            );
        }
        for k in run.knees.iter().filter(|k| k.series == pat) {
            let _ = writeln!(out, "{}", crate::knee::knee_sentence(k));
        }
    }
}

fn gnome(out: &mut String, run: &DiskRun, r: &GnomeResult, verbose: bool) {
    let _ = writeln!(out, "GNOME Disks benchmark");
    crate::disk::target_line(out, run);
    let mb = |b: BytesPerSec| format!("{:.1} MB/s", b.mb_per_sec());
    let _ = writeln!(
        out,
        "\nSample size:          {} ({:.1} MB)",
        r.sample_size,
        r.sample_size.get() as f64 / 1e6
    );
    let _ = writeln!(
        out,
        "Average read rate:    {} ({} samples)",
        r.avg_read.map_or("-".into(), mb),
        r.transfer.len()
    );
    let write = if r.write {
        format!(
            "{} ({} samples)",
            r.avg_write.map_or("-".into(), mb),
            r.transfer.iter().filter(|s| s.write.is_some()).count()
        )
    } else {
        "- (not measured: add --write)".into()
    };
    let _ = writeln!(out, "Average write rate:   {write}");
    let _ = writeln!(
        out,
        "Average access time:  {} ({} samples)",
        r.avg_access
            .map_or("-".into(), |t| format!("{:.2} msec", t.get() as f64 / 1e6)),
        r.access.len()
    );
    if verbose {
        let _ = writeln!(out, "\nTransfer rate by position:");
        let _ = writeln!(
            out,
            "{:>10} {:>12} {:>12}",
            "position", "read MB/s", "write MB/s"
        );
        for s in &r.transfer {
            let _ = writeln!(
                out,
                "{:>9.1}% {:>12.1} {:>12}",
                s.position_pct,
                s.read.mb_per_sec(),
                s.write
                    .map_or("-".into(), |w| format!("{:.1}", w.mb_per_sec()))
            );
        }
        let _ = writeln!(out, "\nAccess time by seek distance:");
        let _ = writeln!(out, "{:>10} {:>10}", "distance", "time ms");
        for s in r.access.iter().filter(|s| s.distance_pct.is_some()) {
            let _ = writeln!(
                out,
                "{:>9.1}% {:>10.3}",
                s.distance_pct.unwrap_or(0.0),
                s.time.get() as f64 / 1e6
            );
        }
    }
}

fn macbench(out: &mut String, run: &DiskRun, r: &MacbenchResult) {
    let _ = writeln!(
        out,
        "MacBench 5.0 disk test: 1024 KiB transfers at QD1, {} per test",
        seconds(r.runtime)
    );
    crate::disk::target_line(out, run);
    let _ = writeln!(out, "\n{:18} {:>12}", "Test", "KB/s");
    for t in &r.tests {
        let _ = writeln!(out, "{:18} {:>12.0}", t.name, t.bw.kb_per_sec());
    }
}

fn artefacts(out: &mut String, run: &DiskRun, r: &ArtefactsResult) {
    let how = run.jobs.first().map_or_else(String::new, |j| {
        let s = &j.spec;
        let direct = if s.direct { "direct" } else { "buffered" };
        format!(", {} QD{}, {}, {direct}", s.bs, s.depth_run(), s.engine)
    });
    let _ = writeln!(
        out,
        "Artefacts probe: {} written and read back per pattern{how}, best of {} round{}",
        r.region,
        r.rounds,
        if r.rounds == 1 { "" } else { "s" }
    );
    crate::disk::target_line(out, run);
    let _ = writeln!(
        out,
        "\n{:16} {:>12} {:>12} {:>10} {:>10}",
        "Data", "Write MB/s", "Read MB/s", "Write x", "Read x"
    );
    let verdict = r.verdict.as_ref();
    for p in &r.patterns {
        let factor = verdict.and_then(|v| v.factor(p.data));
        let x = |f: Option<f64>| f.map_or("-".into(), |f| format!("{f:.2}"));
        let _ = writeln!(
            out,
            "{:16} {:>12.2} {:>12.2} {:>10} {:>10}",
            p.data.to_string(),
            p.write.mb_per_sec(),
            p.read.mb_per_sec(),
            x(factor.map(|f| f.write)),
            x(factor.map(|f| f.read)),
        );
    }
    if let Some(v) = verdict {
        let _ = writeln!(out, "\nVerdict: {}", v.summary());
    }
}

fn sweep(out: &mut String, run: &DiskRun, r: &SweepResult) {
    let _ = writeln!(
        out,
        "Block-size sweep: {} per point, QD1, MiB/s",
        seconds(r.runtime)
    );
    crate::disk::target_line(out, run);
    for engine in &r.engines {
        let pts: Vec<_> = r.points.iter().filter(|p| p.engine == *engine).collect();
        if pts.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{engine}");
        let _ = writeln!(
            out,
            "{:>8} {:>12} {:>12}",
            "size", "rand read", "rand write"
        );
        let get = |rw: RwMode, bs: Bytes| {
            pts.iter()
                .find(|p| p.rw == rw && p.bs == bs)
                .map_or("-".into(), |p| format!("{:.2}", p.bw.mib_per_sec()))
        };
        let mut sizes: Vec<Bytes> = Vec::new();
        for p in pts.iter().filter(|p| p.rw.is_random()) {
            if !sizes.contains(&p.bs) {
                sizes.push(p.bs);
            }
        }
        for bs in sizes {
            let _ = writeln!(
                out,
                "{:>8} {:>12} {:>12}",
                bs.short_label(),
                get(RwMode::RandRead, bs),
                get(RwMode::RandWrite, bs)
            );
        }
        let seq = Bytes(SWEEP_SEQ_BS);
        if pts.iter().any(|p| !p.rw.is_random()) {
            let _ = writeln!(out, "{:>8} {:>12} {:>12}", "", "seq read", "seq write");
            let _ = writeln!(
                out,
                "{:>8} {:>12} {:>12}",
                seq.short_label(),
                get(RwMode::Read, seq),
                get(RwMode::Write, seq)
            );
        }
    }
}

#[cfg(test)]
#[path = "profile_tests.rs"]
pub(crate) mod tests;
