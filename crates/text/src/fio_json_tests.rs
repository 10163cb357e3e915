use super::*;
use iomark_model::units::Bytes;

/// A 2 s randrw job of 4 KiB I/Os: 3000 reads and 1000 writes (the
/// fixture the store's import test reads back too).
fn doc() -> RunDocument {
    iomark_stats::example::mixed_randrw_run()
}

#[test]
fn figures_are_in_fios_units_and_places() {
    let v = fio_json(&doc(), false).unwrap();
    assert!(v["fio version"].as_str().unwrap().starts_with("iomark-"));
    assert_eq!(v["timestamp"], 1_700_000_003);
    let j = &v["jobs"][0];
    assert_eq!(j["jobname"], "mixed");
    assert_eq!(j["elapsed"], 3, "2 s measured + 0.5 s ramp, rounded up");
    let r = &j["read"];
    assert_eq!(r["io_bytes"], 3000 * 4096);
    assert_eq!(r["bw_bytes"], 3000 * 4096 / 2);
    assert_eq!(r["bw"], 3000 * 4096 / 2 / 1024, "KiB/s");
    assert_eq!(r["iops"], 1500.0);
    assert_eq!(r["runtime"], 2000, "ms");
    assert_eq!(r["total_ios"], 3000);
    assert_eq!(r["clat_ns"]["N"], 3000);
    assert_eq!(r["lat_ns"]["N"], 3000);
    assert_eq!(r["slat_ns"]["N"], 0);
    let pct = r["clat_ns"]["percentile"].as_object().unwrap();
    assert_eq!(pct.len(), 17);
    assert!(pct.contains_key("99.000000") && pct.contains_key("99.990000"));
    assert!(r["clat_ns"].get("bins").is_none(), "bins are json+'s");
    assert_eq!(r["bw_mean"], 1500.0 * 4096.0 / 1024.0);
    assert_eq!(r["bw_samples"], 2);
    assert_eq!(j["write"]["total_ios"], 1000);
    assert_eq!(j["trim"]["total_ios"], 0);
    assert_eq!(j["iodepth_level"]["8"], 100.0);
    assert_eq!(j["sys_cpu"], 12.5);
    let o = &j["job options"];
    for (k, want) in [
        ("rw", "randrw"),
        ("bs", "4096"),
        ("iodepth", "8"),
        ("numjobs", "2"),
        ("ioengine", "io_uring"),
        ("direct", "1"),
        ("runtime", "2"),
        ("ramp_time", "500ms"),
        ("rwmixread", "75"),
        ("buffer_compress_percentage", "50"),
        ("filename", "/dev/loop7"),
    ] {
        assert_eq!(o[k], want, "{k}");
    }
    let lat_us: f64 = j["latency_us"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!(
        (lat_us - 100.0).abs() < 1e-6,
        "every I/O is in µs: {lat_us}"
    );
}

#[test]
fn json_plus_adds_bins_that_count_every_io() {
    let v = fio_json(&doc(), true).unwrap();
    for (dir, n) in [("read", 3000u64), ("write", 1000)] {
        let bins = v["jobs"][0][dir]["clat_ns"]["bins"].as_object().unwrap();
        let total: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
        assert_eq!(total, n, "{dir}");
        assert!(bins.keys().all(|k| k.parse::<u64>().is_ok()));
    }
    assert!(v["jobs"][0]["trim"]["clat_ns"].get("bins").is_none());
}

#[test]
fn disk_util_is_the_devices_counters_over_the_jobs_in_fios_units() {
    use iomark_model::blockio::{DeviceDirection, DeviceIo, QueueLimits};
    let mut d = doc();
    assert_eq!(fio_json(&d, false).unwrap()["disk_util"], json!([]));
    let RunBody::Disk(run) = &mut d.body else {
        unreachable!()
    };
    let seen = DeviceIo {
        name: "loop7".into(),
        partition_of: None,
        wall: Nanos::from_secs(2),
        read: DeviceDirection {
            requests: 3000,
            merges: 4,
            bytes: Bytes(3000 * 4096),
            time: Nanos(1_500_000_000),
        },
        write: DeviceDirection {
            requests: 1000,
            merges: 0,
            bytes: Bytes(1000 * 4096),
            time: Nanos(900_000_000),
        },
        busy: Nanos(1_000_000_000),
        in_queue: Nanos(2_400_000_000),
        stalled: Nanos(0),
        limits: QueueLimits::default(),
    };
    run.jobs[0].device_io = Some(seen);
    let second = run.jobs[0].clone();
    run.jobs.push(second);
    let u = &fio_json(&d, false).unwrap()["disk_util"];
    assert_eq!(
        *u,
        json!([{
            "name": "loop7", "read_ios": 6000, "write_ios": 2000, "read_merges": 8,
            "write_merges": 0, "read_ticks": 3000, "write_ticks": 1800, "in_queue": 4800,
            "util": 50.0
        }])
    );
}

#[test]
fn a_stall_the_device_saw_is_an_iomark_key_of_its_job() {
    use iomark_model::blockio::{DeviceDirection, DeviceIo, QueueLimits};
    let mut d = doc();
    let RunBody::Disk(run) = &mut d.body else {
        unreachable!()
    };
    let mut seen = DeviceIo {
        name: "loop7".into(),
        partition_of: None,
        wall: Nanos::from_secs(3),
        read: DeviceDirection::default(),
        write: DeviceDirection::default(),
        busy: Nanos(0),
        in_queue: Nanos(0),
        stalled: Nanos(0),
        limits: QueueLimits::default(),
    };
    run.jobs[0].device_io = Some(seen.clone());
    let mut stalled = run.jobs[0].clone();
    seen.stalled = Nanos(812_400_000);
    stalled.device_io = Some(seen);
    run.jobs.push(stalled);
    let jobs = &fio_json(&d, false).unwrap()["jobs"];
    assert!(jobs[0].get("iomark_device_stalled_ms").is_none());
    assert_eq!(jobs[1]["iomark_device_stalled_ms"], json!(812));
}
