//! iomark's fio JSON (`--output-format json+`) read back by the store's fio
//! importer: the same job, the same figures. Here rather than in the text
//! crate, which renders without the store.

use iomark_model::disk::{
    CpuUsage, DataPattern, DirectionResult, DiskJobResult, DiskJobSpec, DiskRun, DiskTarget,
    EngineKind, IntervalSample, RwMode, TargetKind,
};
use iomark_model::units::{Bytes, BytesPerSec, Iops, Nanos};
use iomark_model::{RunBody, RunDocument};
use iomark_stats::histogram::LatencyHistogram;
use iomark_text::fio_json;

/// A 2 s randrw job of 4 KiB I/Os: 3000 reads and 1000 writes.
fn doc() -> RunDocument {
    let dir = |ios: u64, base: u64| {
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
    };
    let sample = |start: u64| IntervalSample {
        start: Nanos::from_secs(start),
        length: Nanos::from_secs(1),
        read_bytes: 1500 * 4096,
        read_ios: 1500,
        write_bytes: 500 * 4096,
        write_ios: 500,
        mean_lat_ns: 50_000.0,
        lat_p99: None,
    };
    let job = DiskJobResult {
        spec: DiskJobSpec {
            name: "mixed".into(),
            rw: RwMode::RandRw,
            bs: Bytes(4096),
            iodepth: 8,
            iodepth_batch: 1,
            numjobs: 2,
            size: Bytes(64 << 20),
            runtime: Some(Nanos::from_secs(2)),
            ramp: Nanos(500_000_000),
            engine: EngineKind::IoUring,
            direct: true,
            data: DataPattern::Compressible(50),
            rwmix_read: 75,
            seed: 9,
        },
        read: Some(dir(3000, 20_000)),
        write: Some(dir(1000, 40_000)),
        samples: vec![sample(0), sample(1)],
        cpu: CpuUsage {
            user_pct: 3.0,
            system_pct: 12.5,
        },
        host_cpu: None,
        iodepth_level: [("8".to_string(), 100.0)].into_iter().collect(),
        mean_depth: 8.0,
        queue: None,
        submission: None,
        device_io: None,
        page_cache_bypassed: true,
        interrupted: false,
        warnings: Vec::new(),
        repeats: Vec::new(),
    };
    let body = RunBody::Disk(DiskRun {
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

#[test]
fn iomarks_importer_reads_it_back() {
    let d = doc();
    let text = serde_json::to_string_pretty(&fio_json(&d, true).unwrap()).unwrap();
    let back = iomark_store::import::import_str(&text).unwrap();
    let (RunBody::Disk(a), RunBody::Disk(b)) = (&d.body, &back.body) else {
        panic!("disk runs");
    };
    let (a, b) = (&a.jobs[0], &b.jobs[0]);
    assert_eq!(b.spec.rw, a.spec.rw);
    assert_eq!(b.spec.bs, a.spec.bs);
    assert_eq!((b.spec.iodepth, b.spec.numjobs), (8, 2));
    assert_eq!(b.spec.engine, a.spec.engine);
    assert!(b.spec.direct);
    assert_eq!(b.spec.runtime, a.spec.runtime);
    assert_eq!(b.spec.ramp, a.spec.ramp);
    assert_eq!(b.spec.rwmix_read, 75);
    assert_eq!(b.spec.seed, 9);
    assert_eq!(b.spec.data, DataPattern::Compressible(50));
    for (x, y) in [(&a.read, &b.read), (&a.write, &b.write)] {
        let (x, y) = (x.as_ref().unwrap(), y.as_ref().unwrap());
        assert_eq!(
            (y.ios, y.io_bytes, y.runtime),
            (x.ios, x.io_bytes, x.runtime)
        );
        assert!((y.bw.0 - x.bw.0).abs() <= 1.0);
        assert_eq!(y.iops, x.iops);
        assert_eq!(y.clat.percentiles, x.clat.percentiles);
        assert_eq!(y.clat.count, x.clat.count);
    }
    assert_eq!(back.finished_at_ms, d.finished_at_ms);
}
