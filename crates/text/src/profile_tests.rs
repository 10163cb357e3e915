//! The profile views against fixed runs of each profile, checked against
//! the snapshots in `snapshots/` (named `iomark_text__profile__tests__*`,
//! since this file is the `tests` module of `profile.rs`).

use super::*;
use iomark_model::disk::{DataPattern, DiskTarget, EngineKind, TargetKind};
use iomark_model::profile::*;
use iomark_model::units::Iops;
use iomark_model::{Warning, WarningKind, SCHEMA_VERSION};

/// A disk run of one profile (used by the comparison tests too).
pub(crate) fn doc(result: ProfileResult, status: RunStatus, warnings: Vec<Warning>) -> RunDocument {
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
            rounds_so_far: Vec::new(),
            profile: "x".into(),
            target: DiskTarget {
                given: "/var/tmp".into(),
                path: "/var/tmp/iomark-0000000000000001.tmp".into(),
                kind: TargetKind::TestFile,
                size: Bytes(1 << 30),
                logical_block_size: 512,
                size_from_device: false,
            },
            jobs: vec![],
            profile_result: Some(result),
            cgroup: None,
            probe: None,
            knees: vec![],
            cluster: None,
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
        test("RND4K Q1T1", TestDir::Read, 4096, 1, &[45.0, 52.08], 78.1),
        test("RND4K Q1T1", TestDir::Write, 4096, 1, &[131.77], 30.5),
    ];
    // The grid's spread column says what this warning says: it stays with
    // the run but is not printed as a line of its own.
    let spread = Warning::new(
        WarningKind::HighSpread,
        "RND4K Q1T1 read: passes ranged 45.00 to 52.08 MB/s; the maximum is reported",
    );
    let d = doc(ProfileResult::Cdm(r), RunStatus::Complete, vec![spread]);
    let text = profile_run(&d, true);
    assert!(!text.contains("passes ranged"), "{text}");
    assert!(text.contains("13.6% !"), "{text}");
    insta::assert_snapshot!(text);
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
