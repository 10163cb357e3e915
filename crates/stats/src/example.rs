//! Example runs whose latencies went through a real [`LatencyHistogram`],
//! for the tests of the crates that export or import them (fio JSON out of
//! the text crate, read back by the store's importer): one fixture, not a
//! copy in each. Hidden from the API docs; not for production use.

use iomark_model::disk::{
    CpuUsage, DataPattern, DirectionResult, DiskJobResult, DiskJobSpec, DiskRun, DiskTarget,
    EngineKind, IntervalSample, RwMode, TargetKind,
};
use iomark_model::units::{Bytes, BytesPerSec, Iops, Nanos};
use iomark_model::{RunBody, RunDocument};

use crate::histogram::LatencyHistogram;

/// A 2 s randrw run of 4 KiB I/Os on `/dev/loop7` by two threads at depth
/// 8 (75% reads, half-compressible data, seed 9, 0.5 s ramp): 3000 reads
/// (completion latencies 20 µs and up) and 1000 writes (40 µs and up), two
/// one-second samples, 12.5% system CPU.
pub fn mixed_randrw_run() -> RunDocument {
    let job = DiskJobResult {
        read: Some(direction(3000, 20_000)),
        write: Some(direction(1000, 40_000)),
        samples: vec![sample(0), sample(1)],
        cpu: CpuUsage {
            user_pct: 3.0,
            system_pct: 12.5,
        },
        iodepth_level: [("8".to_string(), 100.0)].into_iter().collect(),
        mean_depth: 8.0,
        ..DiskJobResult::example(DiskJobSpec {
            name: "mixed".into(),
            rw: RwMode::RandRw,
            iodepth: 8,
            numjobs: 2,
            size: Bytes(64 << 20),
            runtime: Some(Nanos::from_secs(2)),
            ramp: Nanos(500_000_000),
            engine: EngineKind::IoUring,
            data: DataPattern::Compressible(50),
            rwmix_read: 75,
            seed: 9,
            ..DiskJobSpec::example()
        })
    };
    let body = RunBody::Disk(DiskRun {
        rounds_so_far: Vec::new(),
        profile: "fio-job".into(),
        target: DiskTarget {
            given: "/dev/loop7".into(),
            path: "/dev/loop7".into(),
            kind: TargetKind::BlockDevice,
            size: Bytes(64 << 20),
            logical_block_size: 512,
            size_from_device: false,
        },
        jobs: vec![job],
        profile_result: None,
        cgroup: None,
        probe: None,
        knees: vec![],
        cluster: None,
    });
    RunDocument {
        started_at_ms: 1_700_000_000_000,
        finished_at_ms: 1_700_000_003_000,
        ..RunDocument::iomark(vec!["iomark".into()], body)
    }
}

/// `ios` 4 KiB I/Os over 2 s, their latencies spread from `base` ns up.
fn direction(ios: u64, base: u64) -> DirectionResult {
    let mut h = LatencyHistogram::new();
    for i in 0..ios {
        h.record(base + (i % 97) * 1000);
    }
    DirectionResult {
        io_bytes: Bytes(ios * 4096),
        ios,
        runtime: Nanos::from_secs(2),
        bw: BytesPerSec(ios as f64 * 4096.0 / 2.0),
        iops: Iops(ios as f64 / 2.0),
        clat: h.summary(),
    }
}

/// One second from `start` s: 1500 reads and 500 writes of 4 KiB.
fn sample(start: u64) -> IntervalSample {
    IntervalSample {
        start: Nanos::from_secs(start),
        length: Nanos::from_secs(1),
        read_bytes: 1500 * 4096,
        read_ios: 1500,
        write_bytes: 500 * 4096,
        write_ios: 500,
        mean_lat_ns: 50_000.0,
        lat_p99: None,
    }
}
