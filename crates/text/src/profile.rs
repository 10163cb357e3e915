//! Text output of the classic profiles, in the layout of the tool each one
//! imitates: CrystalDiskMark's grid, IOmeter's rows per depth, GNOME Disks'
//! summary, MacBench's KB/s table, the sweep's MiB/s per size.

use std::fmt::Write;

use iomark_model::disk::{DiskRun, RwMode, TargetKind};
use iomark_model::profile::{
    CdmResult, CdmTest, GnomeResult, IometerResult, MacbenchResult, ProfileResult, SweepResult,
    TestDir,
};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};
use iomark_model::{RunBody, RunDocument, RunStatus};

/// The text of a profile run; falls back to the generic job view for a
/// run without a profile result.
pub fn profile_run(doc: &RunDocument, verbose: bool) -> String {
    let RunBody::Disk(run) = &doc.body else {
        return String::new();
    };
    let Some(result) = &run.profile_result else {
        return crate::disk::disk_run(doc);
    };
    let mut out = String::new();
    match result {
        ProfileResult::Cdm(r) => cdm(&mut out, run, r, verbose),
        ProfileResult::Iometer(r) => iometer(&mut out, run, r),
        ProfileResult::Gnome(r) => gnome(&mut out, run, r, verbose),
        ProfileResult::Macbench(r) => macbench(&mut out, run, r),
        ProfileResult::Sweep(r) => sweep(&mut out, run, r),
    }
    footer(&mut out, doc, run);
    // Names and messages come from the run and may hold control characters.
    crate::escape::escape_controls_keep_lines(&out).into_owned()
}

fn target_line(out: &mut String, run: &DiskRun) {
    let t = &run.target;
    let kind = match t.kind {
        TargetKind::TestFile => "test file, removed",
        TargetKind::File => "file",
        TargetKind::BlockDevice => "block device",
    };
    let _ = writeln!(out, "Target: {} ({kind}, {})", t.path, t.size);
    if let Some(line) = crate::disk::memory_limit_line(run) {
        let _ = writeln!(out, "{line}");
    }
}

fn footer(out: &mut String, doc: &RunDocument, run: &DiskRun) {
    let mut warnings: Vec<String> = Vec::new();
    for w in doc
        .warnings
        .iter()
        .chain(run.jobs.iter().flat_map(|j| &j.warnings))
    {
        // Every pass of a test repeats its job's warnings; say each once.
        if !warnings.contains(&w.message) {
            warnings.push(w.message.clone());
        }
    }
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

fn cdm(out: &mut String, run: &DiskRun, r: &CdmResult, verbose: bool) {
    let title = iomark_disk::profiles::cdm::definition(
        r.profile
            .parse()
            .unwrap_or(iomark_disk::profiles::ProfileName::Cdm),
    )
    .map_or("CrystalDiskMark", |d| d.title);
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
        if r.quick { " (quick)" } else { "" }
    );
    target_line(out, run);
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
    let _ = write!(out, "\n{:width$}", "");
    for &d in &dirs {
        let _ = write!(out, " {:>14}", format!("{} [MB/s]", name(d)));
    }
    let _ = writeln!(out);
    for row in &r.rows {
        let _ = write!(out, "{row:width$}");
        for &d in &dirs {
            let v = cell(find(r, row, d), |t| format!("{:.2}", t.bw.mb_per_sec()));
            let _ = write!(out, " {v:>14}");
        }
        let _ = writeln!(out);
    }
    if r.shows_iops {
        let _ = write!(out, "\n{:width$}", "");
        for &d in &dirs {
            let _ = write!(out, " {:>14}", format!("{} [IOPS]", name(d)));
        }
        for &d in &dirs {
            let _ = write!(out, " {:>12}", format!("{} [µs]", name(d)));
        }
        let _ = writeln!(out);
        for row in &r.rows {
            let _ = write!(out, "{row:width$}");
            for &d in &dirs {
                let v = cell(find(r, row, d), |t| format!("{:.2}", t.iops.0));
                let _ = write!(out, " {v:>14}");
            }
            for &d in &dirs {
                let v = cell(find(r, row, d), |t| format!("{:.2}", t.lat_mean_ns / 1e3));
                let _ = write!(out, " {v:>12}");
            }
            let _ = writeln!(out);
        }
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
    target_line(out, run);
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
    }
}

fn gnome(out: &mut String, run: &DiskRun, r: &GnomeResult, verbose: bool) {
    let _ = writeln!(out, "GNOME Disks benchmark");
    target_line(out, run);
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
    target_line(out, run);
    let _ = writeln!(out, "\n{:18} {:>12}", "Test", "KB/s");
    for t in &r.tests {
        let _ = writeln!(out, "{:18} {:>12.0}", t.name, t.bw.kb_per_sec());
    }
}

fn sweep(out: &mut String, run: &DiskRun, r: &SweepResult) {
    let _ = writeln!(
        out,
        "Block-size sweep: {} per point, QD1, MiB/s",
        seconds(r.runtime)
    );
    target_line(out, run);
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
        let seq = Bytes(iomark_disk::profiles::sweep::SEQ_BS);
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
mod tests {
    use super::*;
    use iomark_model::disk::{DataPattern, DiskTarget, EngineKind};
    use iomark_model::profile::*;
    use iomark_model::units::Iops;
    use iomark_model::{Warning, WarningKind, SCHEMA_VERSION};

    fn doc(result: ProfileResult, status: RunStatus, warnings: Vec<Warning>) -> RunDocument {
        RunDocument {
            schema_version: SCHEMA_VERSION,
            tool: "iomark".into(),
            tool_version: "0.1.0".into(),
            command_line: vec![],
            started_at_ms: 0,
            finished_at_ms: 0,
            status,
            labels: vec![],
            note: None,
            warnings,
            host: None,
            device: None,
            body: RunBody::Disk(DiskRun {
                profile: "x".into(),
                target: DiskTarget {
                    given: "/var/tmp".into(),
                    path: "/var/tmp/iomark-0000000000000001.tmp".into(),
                    kind: TargetKind::TestFile,
                    size: Bytes(1 << 30),
                    logical_block_size: 512,
                },
                jobs: vec![],
                profile_result: Some(result),
                cgroup: None,
            }),
        }
    }

    fn test(row: &str, dir: TestDir, bs: u64, q: u32, mbs: &[f64], lat_us: f64) -> CdmTest {
        let pass_bw: Vec<BytesPerSec> = mbs.iter().map(|m| BytesPerSec(m * 1e6)).collect();
        let best = mbs.iter().cloned().fold(0.0, f64::max) * 1e6;
        CdmTest {
            row: row.into(),
            dir,
            bs: Bytes(bs),
            queues: q,
            threads: 1,
            pass_bw,
            pass_lat_mean_ns: vec![lat_us * 1e3; mbs.len()],
            bw: BytesPerSec(best),
            iops: Iops(best / bs as f64),
            lat_mean_ns: lat_us * 1e3,
            first_job: 0,
        }
    }

    fn cdm_result(profile: &str, rows: &[&str], shows_iops: bool) -> CdmResult {
        CdmResult {
            profile: profile.into(),
            rows: rows.iter().map(|r| r.to_string()).collect(),
            shows_iops,
            size: Bytes(1 << 30),
            data: DataPattern::Random,
            passes: 5,
            pass_time: Nanos::from_secs(5),
            interval: Nanos::from_secs(5),
            mix_read: None,
            quick: false,
            tests: vec![],
        }
    }

    #[test]
    fn cdm_grid() {
        let mut r = cdm_result(
            "cdm",
            &["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"],
            false,
        );
        let m = 1 << 20;
        r.tests = vec![
            test(
                "SEQ1M Q8T1",
                TestDir::Read,
                m,
                8,
                &[3512.3, 3540.71, 3533.0],
                2300.0,
            ),
            test(
                "SEQ1M Q8T1",
                TestDir::Write,
                m,
                8,
                &[2901.5, 2950.25],
                2800.0,
            ),
            test("SEQ1M Q1T1", TestDir::Read, m, 1, &[1801.0], 580.0),
            test("SEQ1M Q1T1", TestDir::Write, m, 1, &[1650.5], 630.0),
            test("RND4K Q32T1", TestDir::Read, 4096, 32, &[612.4], 210.0),
            test("RND4K Q32T1", TestDir::Write, 4096, 32, &[455.1], 280.0),
            test("RND4K Q1T1", TestDir::Read, 4096, 1, &[52.08], 78.1),
            test("RND4K Q1T1", TestDir::Write, 4096, 1, &[131.77], 30.5),
        ];
        let d = doc(ProfileResult::Cdm(r), RunStatus::Complete, vec![]);
        insta::assert_snapshot!(profile_run(&d, true));
    }

    #[test]
    fn cdm_peak_interrupted_with_mix_and_iops() {
        let mut r = cdm_result("cdm-peak", &["SEQ1M Q8T1", "RND4K Q32T1"], true);
        r.mix_read = Some(70);
        r.quick = true;
        r.passes = 2;
        r.pass_time = Nanos::from_secs(1);
        r.interval = Nanos(0);
        r.tests = vec![
            test(
                "SEQ1M Q8T1",
                TestDir::Read,
                1 << 20,
                8,
                &[31.2, 31.45],
                260_000.0,
            ),
            test(
                "SEQ1M Q8T1",
                TestDir::Write,
                1 << 20,
                8,
                &[90.0, 95.0],
                88_000.0,
            ),
        ];
        let warnings = vec![Warning::new(
            WarningKind::Shortened,
            "--quick: 2 passes of 1 s with 0 ns intervals instead of 5 passes of 5 s with 5 s",
        )];
        let d = doc(ProfileResult::Cdm(r), RunStatus::Interrupted, warnings);
        insta::assert_snapshot!(profile_run(&d, false));
    }

    #[test]
    fn cdm3_header_uses_megabytes() {
        let mut r = cdm_result("cdm3", &["Seq", "512K", "4K", "4K QD32"], true);
        r.size = Bytes(1_000_001_536);
        r.pass_time = Nanos::from_secs(6);
        r.tests = vec![test("Seq", TestDir::Read, 1 << 20, 1, &[120.0], 8000.0)];
        let d = doc(ProfileResult::Cdm(r), RunStatus::Complete, vec![]);
        insta::assert_snapshot!(profile_run(&d, false));
    }

    #[test]
    fn iometer_table() {
        let point = |pattern: &str, rw, bs: u64, depth: u32, mbs: f64| IometerPoint {
            pattern: pattern.into(),
            rw,
            bs: Bytes(bs),
            depth,
            achieved_depth: f64::from(depth),
            bw: BytesPerSec(mbs * 1e6),
            iops: Iops(mbs * 1e6 / bs as f64),
            lat_mean_ns: 1e9 * bs as f64 * f64::from(depth) / (mbs * 1e6),
            lat_p99_ns: (2e9 * bs as f64 * f64::from(depth) / (mbs * 1e6)) as u64,
            cpu_pct: 3.25,
            job: 0,
        };
        let mut points = Vec::new();
        for (i, d) in [1u32, 2, 4, 8].into_iter().enumerate() {
            points.push(point(
                "2 MiB sequential read",
                RwMode::Read,
                2 << 20,
                d,
                200.0 + 50.0 * i as f64,
            ));
        }
        for d in [1u32, 2, 4, 8] {
            points.push(point(
                "4 KiB random read",
                RwMode::RandRead,
                4096,
                d,
                10.0 * f64::from(d),
            ));
        }
        let r = IometerResult {
            depths: vec![1, 2, 4, 8],
            ramp: Nanos::from_secs(2),
            runtime: Nanos::from_secs(10),
            points,
        };
        let d = doc(ProfileResult::Iometer(r), RunStatus::Complete, vec![]);
        insta::assert_snapshot!(profile_run(&d, false));
    }

    #[test]
    fn gnome_summary_and_series() {
        let size = 1u64 << 30;
        let transfer = (0..4)
            .map(|n| GnomeTransferSample {
                offset: n * size / 4,
                position_pct: 25.0 * n as f64,
                read: BytesPerSec(31.4e6 + n as f64 * 1e5),
                write: None,
            })
            .collect();
        let access = [(0u64, 150_000u64), (size / 2, 180_000), (size / 4, 160_000)]
            .iter()
            .enumerate()
            .map(|(i, &(offset, t))| GnomeAccessSample {
                offset,
                time: Nanos(t),
                distance_pct: match i {
                    0 => None,
                    1 => Some(50.0),
                    _ => Some(25.0),
                },
            })
            .collect();
        let r = GnomeResult {
            sample_size: Bytes(10 << 20),
            samples_requested: 4,
            access_samples_requested: 3,
            write: false,
            avg_read: Some(BytesPerSec(31.55e6)),
            avg_write: None,
            avg_access: Some(Nanos(163_333)),
            transfer,
            access,
        };
        let d = doc(ProfileResult::Gnome(r), RunStatus::Complete, vec![]);
        insta::assert_snapshot!(profile_run(&d, true));
    }

    #[test]
    fn control_characters_in_names_and_warnings_are_escaped() {
        let m = MacbenchResult {
            runtime: Nanos::from_secs(10),
            tests: vec![MacbenchTest {
                name: "Seq\x1b]0;title\x07".into(),
                bw: BytesPerSec(30e6),
                job: 0,
            }],
        };
        let mut d = doc(
            ProfileResult::Macbench(m),
            RunStatus::Complete,
            vec![Warning::new(WarningKind::Other, "w\u{9b}2J\x7f")],
        );
        let set = |d: &mut RunDocument, profile: bool| {
            if let RunBody::Disk(run) = &mut d.body {
                run.target.path = "/mnt/\x1b[31mred".into();
                if !profile {
                    run.profile_result = None;
                }
            }
        };
        set(&mut d, true);
        let text = profile_run(&d, false);
        // The generic view too, for a run without a profile result.
        set(&mut d, false);
        let generic = profile_run(&d, false);
        for t in [text, generic] {
            assert!(
                !t.chars()
                    .any(|c| c != '\n' && (c.is_control() || ('\u{80}'..='\u{9f}').contains(&c))),
                "{t:?}"
            );
            assert!(t.contains("/mnt/\\x1b[31mred"), "{t}");
            assert!(t.contains("w\\x9b2J\\x7f"), "{t}");
        }
    }

    #[test]
    fn macbench_and_sweep_tables() {
        let tests = [
            "Sequential read",
            "Random read",
            "Sequential write",
            "Random write",
        ]
        .iter()
        .enumerate()
        .map(|(i, n)| MacbenchTest {
            name: n.to_string(),
            bw: BytesPerSec(30e6 - 5e6 * i as f64),
            job: i,
        })
        .collect();
        let m = MacbenchResult {
            runtime: Nanos::from_secs(10),
            tests,
        };
        let mut points = Vec::new();
        for e in [EngineKind::Psync, EngineKind::MmapSync] {
            for bs in [4096u64, 8192] {
                for rw in [RwMode::RandRead, RwMode::RandWrite] {
                    points.push(SweepPoint {
                        engine: e,
                        rw,
                        bs: Bytes(bs),
                        bw: BytesPerSec(bs as f64 * 1000.0),
                        job: 0,
                    });
                }
            }
            for rw in [RwMode::Read, RwMode::Write] {
                points.push(SweepPoint {
                    engine: e,
                    rw,
                    bs: Bytes(1 << 20),
                    bw: BytesPerSec(500.0 * 1048576.0),
                    job: 0,
                });
            }
        }
        let s = SweepResult {
            engines: vec![EngineKind::Psync, EngineKind::MmapSync],
            runtime: Nanos::from_secs(5),
            points,
        };
        let text = format!(
            "{}\n{}",
            profile_run(
                &doc(ProfileResult::Macbench(m), RunStatus::Complete, vec![]),
                false
            ),
            profile_run(
                &doc(ProfileResult::Sweep(s), RunStatus::Complete, vec![]),
                false
            )
        );
        insta::assert_snapshot!(text);
    }
}
