//! Realistic run documents for the store's tests and its bench binary: a
//! CrystalDiskMark-shaped disk run (eight single-direction jobs with
//! per-second samples and fio's percentiles). Shared by `#[path]` so it is
//! not part of the library's API.

#![allow(dead_code)]

use iomark_model::disk::{
    CpuUsage, DirectionResult, DiskJobResult, DiskJobSpec, DiskRun, DiskTarget, IntervalSample,
    LatencySummary, Percentile, RwMode, TargetKind,
};
use iomark_model::{
    Bytes, BytesPerSec, Iops, Nanos, RunBody, RunDocument, RunStatus, Warning, WarningKind,
    SCHEMA_VERSION,
};

/// The CDM tests: (rw, block size, queue depth).
const TESTS: [(RwMode, u64, u32); 8] = [
    (RwMode::Read, 1 << 20, 8),
    (RwMode::Write, 1 << 20, 8),
    (RwMode::Read, 1 << 20, 1),
    (RwMode::Write, 1 << 20, 1),
    (RwMode::RandRead, 4096, 32),
    (RwMode::RandWrite, 4096, 32),
    (RwMode::RandRead, 4096, 1),
    (RwMode::RandWrite, 4096, 1),
];

/// A tiny deterministic generator, so runs differ but tests repeat.
fn jitter(seed: u64, i: u64) -> f64 {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(i.wrapping_mul(1442695040888963407));
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    0.9 + (x % 2001) as f64 / 10_000.0 // 0.9 .. 1.1
}

/// One finished job of test `t` (an index into the CDM tests) at roughly
/// `speed` bytes per second.
pub fn job(t: usize, speed: f64, seed: u64) -> DiskJobResult {
    let (rw, bs, qd) = TESTS[t % TESTS.len()];
    let secs = 5u64;
    let mut samples = Vec::new();
    let mut total = 0u64;
    for s in 0..secs {
        let bytes = (speed * jitter(seed, t as u64 * 100 + s)) as u64 / bs * bs;
        total += bytes;
        let (rb, wb) = if rw.reads() { (bytes, 0) } else { (0, bytes) };
        samples.push(IntervalSample {
            start: Nanos::from_secs(s),
            length: Nanos::from_secs(1),
            read_bytes: rb,
            read_ios: rb / bs,
            write_bytes: wb,
            write_ios: wb / bs,
            mean_lat_ns: 1e9 * bs as f64 / speed * f64::from(qd),
            lat_p99: None,
        });
    }
    let runtime = Nanos::from_secs(secs);
    let ios = total / bs;
    let mean = 1e9 * bs as f64 / speed * f64::from(qd);
    let dir = DirectionResult {
        io_bytes: Bytes(total),
        ios,
        runtime,
        bw: BytesPerSec::over(Bytes(total), runtime),
        iops: Iops::over(ios, runtime),
        clat: LatencySummary {
            count: ios,
            min_ns: (mean * 0.3) as u64,
            max_ns: (mean * 9.0) as u64,
            mean_ns: mean,
            stddev_ns: mean * 0.4,
            percentiles: [50.0, 90.0, 99.0, 99.9]
                .iter()
                .map(|&p| Percentile {
                    percent: p,
                    ns: (mean * (1.0 + (p - 50.0) / 20.0)) as u64,
                })
                .collect(),
            bins: Vec::new(),
        },
    };
    DiskJobResult {
        read: rw.reads().then(|| dir.clone()),
        write: rw.writes().then_some(dir),
        samples,
        cpu: CpuUsage {
            user_pct: 1.5,
            system_pct: 12.0,
        },
        iodepth_level: [("1".to_string(), 0.1), ("32".to_string(), 99.9)]
            .into_iter()
            .collect(),
        mean_depth: f64::from(qd),
        warnings: if t == 0 && seed.is_multiple_of(3) {
            vec![Warning::new(
                WarningKind::AboveLinkCeiling,
                "read 612 MB/s is above the USB 2.0 ceiling of about 40 MB/s: the page cache or compression is being measured",
            )]
        } else {
            Vec::new()
        },
        ..DiskJobResult::example(DiskJobSpec {
            name: format!(
                "{}{} Q{}T1 {}",
                if rw.is_random() { "RND" } else { "SEQ" },
                Bytes(bs).short_label(),
                qd,
                if rw.reads() { "read" } else { "write" }
            ),
            rw,
            bs: Bytes(bs),
            iodepth: qd,
            runtime: Some(runtime),
            rwmix_read: 100,
            seed,
            ..DiskJobSpec::example()
        })
    }
}

/// A run document with `jobs` of the CDM jobs done, labelled by `seed`.
pub fn run(seed: u64, jobs: usize) -> RunDocument {
    let (label, device, speed) = match seed % 3 {
        0 => ("usb2", "/media/usb2stick", 38e6),
        1 => ("usb3", "/media/t7", 420e6),
        _ => ("nvme", "/mnt/nvme", 2.9e9),
    };
    let started = 1_790_000_000_000 + seed * 60_000;
    RunDocument {
        schema_version: SCHEMA_VERSION,
        tool: "iomark".into(),
        tool_version: "0.1.0".into(),
        command_line: vec![
            "iomark".into(),
            "disk".into(),
            device.into(),
            "--label".into(),
            label.into(),
        ],
        started_at_ms: started,
        finished_at_ms: started + 45_000,
        status: RunStatus::Complete,
        labels: vec![label.into(), format!("batch{}", seed % 10)],
        note: seed
            .is_multiple_of(7)
            .then(|| format!("note for run {seed}")),
        warnings: Vec::new(),
        host: None,
        device: None,
        body: RunBody::Disk(DiskRun {
            rounds_so_far: Vec::new(),
            profile: "cdm".into(),
            target: DiskTarget {
                given: device.into(),
                path: format!("{device}/iomark-test.tmp"),
                kind: TargetKind::TestFile,
                size: Bytes(1 << 30),
                logical_block_size: 512,
                size_from_device: false,
            },
            jobs: (0..jobs).map(|t| job(t, speed, seed)).collect(),
            profile_result: None,
            cgroup: None,
            probe: None,
            knees: vec![],
            cluster: None,
        }),
    }
}

/// A complete CDM run (all eight jobs).
pub fn full_run(seed: u64) -> RunDocument {
    run(seed, TESTS.len())
}
