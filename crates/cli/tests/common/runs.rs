//! Stored runs made up for the `results` tests: a one-job sequential read
//! whose figures and spread are known, and a way to store them.

use iomark_model::disk::{
    CpuUsage, DataPattern, DirectionResult, DiskJobResult, DiskJobSpec, DiskRun, DiskTarget,
    EngineKind, IntervalSample, LatencySummary, RwMode, TargetKind,
};
use iomark_model::{
    Bytes, BytesPerSec, Iops, Nanos, RunBody, RunDocument, RunStatus, SCHEMA_VERSION,
};

/// A one-job sequential read at `mb` MB/s over 4 s, its per-second samples
/// `mb * (1 ± wobble)`. With `lat_us`, its completions took that many µs on
/// average (samples `lat_us * (1 ± wobble)`); without, the job has no
/// latency summary and every sample's mean is 1 ms.
pub fn read_run(label: &str, mb: f64, wobble: f64, lat_us: Option<f64>) -> RunDocument {
    let bw = mb * 1e6;
    let secs = 4u64;
    let f = |s: u64| {
        if s.is_multiple_of(2) {
            1.0 - wobble
        } else {
            1.0 + wobble
        }
    };
    let samples: Vec<IntervalSample> = (0..secs)
        .map(|s| {
            let bytes = (bw * f(s)) as u64;
            IntervalSample {
                start: Nanos::from_secs(s),
                length: Nanos::from_secs(1),
                read_bytes: bytes,
                read_ios: bytes >> 20,
                write_bytes: 0,
                write_ios: 0,
                mean_lat_ns: lat_us.map_or(1e6, |l| l * 1e3 * f(s)),
                lat_p99: None,
            }
        })
        .collect();
    let total = (bw * secs as f64) as u64;
    let clat = lat_us.map_or_else(LatencySummary::default, |l| {
        let mean = l * 1e3;
        LatencySummary {
            count: total >> 20,
            min_ns: (mean / 2.0) as u64,
            max_ns: (mean * 3.0) as u64,
            mean_ns: mean,
            stddev_ns: mean / 10.0,
            percentiles: vec![],
            bins: vec![],
        }
    });
    RunDocument {
        schema_version: SCHEMA_VERSION,
        tool: "iomark".into(),
        tool_version: "0.1.0".into(),
        command_line: vec!["iomark".into(), "disk".into()],
        started_at_ms: 1_790_000_000_000,
        finished_at_ms: 1_790_000_004_000,
        status: RunStatus::Complete,
        labels: vec![label.into()],
        note: None,
        warnings: vec![],
        host: None,
        device: None,
        body: RunBody::Disk(DiskRun {
            rounds_so_far: Vec::new(),
            profile: "custom".into(),
            target: DiskTarget {
                given: format!("/mnt/{label}"),
                path: format!("/mnt/{label}/t"),
                kind: TargetKind::TestFile,
                size: Bytes(1 << 30),
                logical_block_size: 512,
                size_from_device: false,
            },
            jobs: vec![DiskJobResult {
                read: Some(DirectionResult {
                    io_bytes: Bytes(total),
                    ios: total >> 20,
                    runtime: Nanos::from_secs(secs),
                    bw: BytesPerSec(bw),
                    iops: Iops(bw / 1048576.0),
                    clat,
                }),
                samples,
                mean_depth: 8.0,
                ..DiskJobResult::example(DiskJobSpec {
                    name: "SEQ1M Q8T1".into(),
                    rw: RwMode::Read,
                    bs: Bytes(1 << 20),
                    iodepth: 8,
                    runtime: Some(Nanos::from_secs(secs)),
                    rwmix_read: 100,
                    ..DiskJobSpec::example()
                })
            }],
            profile_result: None,
            cgroup: None,
            probe: None,
            knees: vec![],
            cluster: None,
        }),
    }
}

/// Stores `docs` in the database `db` (a path or URL); their run ids.
pub fn store<const N: usize>(db: &str, docs: [RunDocument; N]) -> [String; N] {
    let mut store = iomark_store::open(Some(db)).unwrap();
    docs.map(|doc| store.insert_complete(&doc).unwrap().to_string())
}
