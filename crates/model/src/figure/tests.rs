//! Tests of the figures and their test names.

use super::device::{device_report_text, interface_text};
use super::*;
use crate::disk::*;
use crate::units::{Bytes, BytesPerSec, Iops, Nanos};

fn job(rw: RwMode, read: bool, write: bool) -> DiskJobResult {
    let dir = |bw: f64| DirectionResult {
        io_bytes: Bytes(1000),
        ios: 10,
        runtime: Nanos::from_secs(2),
        bw: BytesPerSec(bw),
        iops: Iops(5.0),
        clat: LatencySummary {
            count: 10,
            min_ns: 1,
            max_ns: 9,
            mean_ns: 4.0,
            stddev_ns: 1.0,
            percentiles: vec![Percentile {
                percent: 99.0,
                ns: 8,
            }],
            bins: Vec::new(),
        },
    };
    let sample = |rb: u64| IntervalSample {
        start: Nanos(0),
        length: Nanos::from_secs(1),
        read_bytes: rb,
        read_ios: rb / 100,
        write_bytes: 0,
        write_ios: 0,
        mean_lat_ns: rb as f64,
        lat_p99: None,
    };
    DiskJobResult {
        read: read.then(|| dir(500.0)),
        write: write.then(|| dir(300.0)),
        samples: vec![sample(400), sample(600)],
        ..DiskJobResult::example(DiskJobSpec {
            name: "x".into(),
            rw,
            bs: Bytes(1 << 20),
            iodepth: 8,
            runtime: None,
            engine: EngineKind::Psync,
            ..DiskJobSpec::example()
        })
    }
}

fn run(jobs: Vec<DiskJobResult>) -> RunBody {
    RunBody::Disk(DiskRun {
        rounds_so_far: Vec::new(),
        profile: "custom".into(),
        target: DiskTarget {
            given: "/tmp".into(),
            path: "/tmp/x".into(),
            kind: TargetKind::TestFile,
            size: Bytes(0),
            logical_block_size: 512,
            size_from_device: false,
        },
        jobs,
        profile_result: None,
        cgroup: None,
        probe: None,
        knees: vec![],
        cluster: None,
    })
}

#[test]
fn disk_jobs_flatten_per_direction_with_sample_spread() {
    let figs = run(vec![job(RwMode::Read, true, false)]).figures();
    let names: Vec<_> = figs.iter().map(|f| f.metric.as_str()).collect();
    assert_eq!(
        names,
        [
            "read bw",
            "read iops",
            "read lat mean",
            "read lat p99",
            "cpu process %",
            "cpu process user %",
            "cpu process system %"
        ]
    );
    // psync runs at depth 1 whatever --iodepth (8 here) asked.
    assert_eq!(
        figs[0].test,
        "read 1MiB QD1 T1, psync, direct, random data, 1GiB"
    );
    assert_eq!(figs[0].value, 500.0);
    assert_eq!(figs[0].spread, Some((400.0, 600.0)));
    assert_eq!(figs[1].spread, Some((4.0, 6.0)));
    assert_eq!(figs[2].spread, Some((400.0, 600.0)));
    assert_eq!(figs[3].value, 8.0);
}

#[test]
fn a_jobs_cpu_is_the_process_share_of_one_cpu_and_the_machines_parts() {
    let mut j = job(RwMode::Read, true, false);
    j.cpu = CpuUsage {
        user_pct: 150.0,
        system_pct: 1016.0,
    };
    j.host_cpu = Some(crate::cpu::HostCpu {
        cpus: 16,
        user_pct: 9.0,
        system_pct: 64.0,
        iowait_pct: 20.0,
        softirq_pct: 5.0,
        steal_pct: 0.0,
        idle_pct: 2.0,
    });
    let figs = run(vec![j]).figures();
    let get = |m: &str| {
        figs.iter()
            .find(|f| f.metric == m)
            .map(|f| (f.value, f.unit))
            .unwrap_or_else(|| panic!("no {m}"))
    };
    assert_eq!(get("cpu process %"), (1166.0, FigureUnit::Percent));
    assert_eq!(get("cpu process system %").0, 1016.0);
    assert_eq!(get("cpu host system %").0, 64.0);
    assert_eq!(get("cpu host iowait %").0, 20.0);
    assert_eq!(get("cpu host idle %").0, 2.0);
    assert_eq!(FigureUnit::Percent.direction(), Direction::Unknown);
}

#[test]
fn mixed_jobs_have_no_latency_spread_and_repeated_shapes_stay_apart() {
    let figs = run(vec![
        job(RwMode::RandRw, true, true),
        job(RwMode::RandRw, true, true),
    ])
    .figures();
    assert_eq!(figs.len(), 22, "8 per direction and 3 of CPU, per job");
    assert!(figs
        .iter()
        .filter(|f| f.metric.contains("lat mean"))
        .all(|f| f.spread.is_none()));
    assert_eq!(
        figs[11].test,
        "randrw 50/50 1MiB QD1 T1, psync, direct, random data, 1GiB #2"
    );
}

#[test]
fn cdm_runs_report_the_best_pass_with_the_pass_spread() {
    use crate::profile::{CdmResult, CdmTest, ProfileResult, TestDir};
    let test = CdmTest {
        row: "RND4K Q32T1".into(),
        dir: TestDir::Read,
        bs: Bytes(4096),
        queues: 32,
        threads: 1,
        pass_bw: vec![BytesPerSec(400e6), BytesPerSec(410e6), BytesPerSec(390e6)],
        pass_lat_mean_ns: vec![320e3, 310e3, 330e3],
        bw: BytesPerSec(410e6),
        iops: Iops(410e6 / 4096.0),
        lat_mean_ns: 310e3,
        first_job: 0,
    };
    let mut j = job(RwMode::RandRead, true, false);
    j.spec.bs = Bytes(4096);
    j.spec.iodepth = 32;
    j.spec.engine = EngineKind::IoUring;
    let mut body = run(vec![j; 3]);
    if let RunBody::Disk(d) = &mut body {
        d.profile_result = Some(ProfileResult::Cdm(CdmResult {
            profile: "cdm".into(),
            rows: vec!["RND4K Q32T1".into()],
            shows_iops: true,
            size: Bytes(1 << 30),
            data: DataPattern::Random,
            passes: 3,
            pass_time: Nanos::from_secs(5),
            interval: Nanos(0),
            mix_read: None,
            quick: false,
            tests: vec![test],
        }));
    }
    let figs = body.figures();
    assert_eq!(figs.len(), 3, "one test, not one per pass: {figs:?}");
    assert_eq!(
        figs[0].test,
        "randread 4KiB QD32 T1, io_uring, direct, random data, 1GiB"
    );
    assert_eq!(figs[0].metric, "read bw");
    assert_eq!(figs[0].value, 410e6);
    assert_eq!(figs[0].spread, Some((390e6, 410e6)));
    assert_eq!(figs[1].spread, Some((390e6 / 4096.0, 410e6 / 4096.0)));
    assert_eq!(figs[2].value, 310e3);
    assert_eq!(figs[2].spread, Some((310e3, 330e3)));
}

fn cdm3(size: Bytes) -> RunBody {
    use crate::profile::{CdmResult, CdmTest, ProfileResult, TestDir};
    let mut j = job(RwMode::Read, true, false);
    j.spec.size = size;
    j.spec.iodepth = 1;
    j.spec.engine = EngineKind::IoUring;
    let mut body = run(vec![j]);
    if let RunBody::Disk(d) = &mut body {
        d.profile_result = Some(ProfileResult::Cdm(CdmResult {
            profile: "cdm3".into(),
            rows: vec!["Seq".into()],
            shows_iops: false,
            size,
            data: DataPattern::Random,
            passes: 1,
            pass_time: Nanos::from_secs(5),
            interval: Nanos(0),
            mix_read: None,
            quick: false,
            tests: vec![CdmTest {
                row: "Seq".into(),
                dir: TestDir::Read,
                bs: Bytes(1 << 20),
                queues: 1,
                threads: 1,
                pass_bw: vec![BytesPerSec(100e6)],
                pass_lat_mean_ns: vec![],
                bw: BytesPerSec(100e6),
                iops: Iops(100.0),
                lat_mean_ns: 0.0,
                first_job: 0,
            }],
        }));
    }
    body
}

fn tests_of(body: &RunBody) -> Vec<String> {
    let mut t: Vec<String> = body.figures().into_iter().map(|f| f.test).collect();
    t.dedup();
    t
}

#[test]
fn cdm3_at_100mib_and_1gib_are_different_tests() {
    let small = tests_of(&cdm3(Bytes(100 << 20)));
    let big = tests_of(&cdm3(Bytes(1 << 30)));
    assert_eq!(
        small,
        ["read 1MiB QD1 T1, io_uring, direct, random data, 100MiB"]
    );
    assert_eq!(
        big,
        ["read 1MiB QD1 T1, io_uring, direct, random data, 1GiB"]
    );
    // Without its jobs the result's own settings still name the size.
    if let RunBody::Disk(DiskRun {
        profile_result: Some(crate::profile::ProfileResult::Cdm(c)),
        ..
    }) = cdm3(Bytes(100 << 20))
    {
        assert_eq!(
            cdm_figures(&c)[0].test,
            "read 1MiB QD1 T1, random data, 100MiB"
        );
    }
}

#[test]
fn the_depth_in_a_name_is_the_depth_run_and_engines_stay_apart() {
    let mut sync = job(RwMode::RandRead, true, false);
    sync.spec.bs = Bytes(4096);
    sync.spec.iodepth = 32;
    assert_eq!(
        disk_test_name(&sync),
        "randread 4KiB QD1 T1, psync, direct, random data, 1GiB"
    );
    let mut uring = sync.clone();
    uring.spec.engine = EngineKind::IoUring;
    assert!(disk_test_name(&uring).starts_with("randread 4KiB QD32 T1, io_uring,"));
    let mut mapped = sync.clone();
    mapped.spec.engine = EngineKind::MmapAsync;
    mapped.spec.direct = false;
    mapped.spec.data = DataPattern::Zeros;
    assert_eq!(
        disk_test_name(&mapped),
        "randread 4KiB QD1 T1, mmap-async, buffered, zeros data, 1GiB"
    );
}

#[test]
fn every_profile_yields_named_figures() {
    use crate::profile::*;
    let with = |pr: ProfileResult, jobs: Vec<DiskJobResult>| {
        let mut b = run(jobs);
        if let RunBody::Disk(d) = &mut b {
            d.profile_result = Some(pr);
            d.target.size = Bytes(1 << 30);
        }
        b.figures()
    };
    // GNOME Disks: no jobs, its own averages and series.
    let gnome = with(
        ProfileResult::Gnome(GnomeResult {
            sample_size: Bytes(10 << 20),
            samples_requested: 2,
            access_samples_requested: 3,
            write: true,
            avg_read: Some(BytesPerSec(200e6)),
            avg_write: Some(BytesPerSec(100e6)),
            avg_access: Some(Nanos(2_000_000)),
            transfer: vec![
                GnomeTransferSample {
                    offset: 0,
                    position_pct: 0.0,
                    read: BytesPerSec(190e6),
                    write: Some(BytesPerSec(90e6)),
                },
                GnomeTransferSample {
                    offset: 1,
                    position_pct: 50.0,
                    read: BytesPerSec(210e6),
                    write: Some(BytesPerSec(110e6)),
                },
            ],
            access: [1_000_000, 2_000_000, 3_000_000]
                .into_iter()
                .map(|t| GnomeAccessSample {
                    offset: 0,
                    time: Nanos(t),
                    distance_pct: None,
                })
                .collect(),
        }),
        vec![],
    );
    let names: Vec<_> = gnome
        .iter()
        .map(|f| format!("{} | {}", f.test, f.metric))
        .collect();
    let t = "GNOME transfer rate, 2 x 10MiB samples of 1GiB";
    let a = "GNOME access time, 3 samples of 1GiB";
    assert_eq!(
        names,
        [
            format!("{t} | read bw"),
            format!("{t} | write bw"),
            format!("{t} | read bw at 0.0%"),
            format!("{t} | write bw at 0.0%"),
            format!("{t} | read bw at 50.0%"),
            format!("{t} | write bw at 50.0%"),
            format!("{a} | access mean"),
            format!("{a} | access median"),
        ]
    );
    assert_eq!(gnome[0].spread, Some((190e6, 210e6)));
    assert_eq!(gnome[6].spread, Some((1e6, 3e6)));
    assert_eq!(gnome[7].value, 2e6);

    // MacBench: per test its bandwidth.
    let mb = with(
        ProfileResult::Macbench(MacbenchResult {
            runtime: Nanos::from_secs(1),
            tests: vec![MacbenchTest {
                name: "Sequential read".into(),
                bw: BytesPerSec(5e6),
                job: 0,
            }],
        }),
        vec![job(RwMode::Read, true, false)],
    );
    assert_eq!(mb.len(), 1);
    assert!(mb[0].test.starts_with("Sequential read: read 1MiB QD1 T1"));
    assert_eq!((mb[0].metric.as_str(), mb[0].value), ("read bw", 5e6));

    // IOmeter: per pattern and depth.
    let mut deep = job(RwMode::RandRead, true, false);
    deep.spec.engine = EngineKind::IoUring;
    let mut shallow = deep.clone();
    shallow.spec.iodepth = 1;
    let point = |depth, job| IometerPoint {
        pattern: "1 MiB random read".into(),
        rw: RwMode::RandRead,
        bs: Bytes(1 << 20),
        depth,
        achieved_depth: depth as f64,
        bw: BytesPerSec(1e6),
        iops: Iops(1.0),
        lat_mean_ns: 5.0,
        lat_p99_ns: 9,
        cpu_pct: 3.0,
        job,
    };
    let io = with(
        ProfileResult::Iometer(IometerResult {
            depths: vec![1, 8],
            ramp: Nanos(0),
            runtime: Nanos::from_secs(1),
            points: vec![point(1, 0), point(8, 1)],
        }),
        vec![shallow, deep],
    );
    let tests: Vec<_> = io.iter().map(|f| f.test.as_str()).collect();
    assert!(tests[0].starts_with("randread 1MiB QD1 T1, io_uring"));
    assert!(tests
        .last()
        .unwrap()
        .starts_with("randread 1MiB QD8 T1, io_uring"));
    let metrics: Vec<_> = io.iter().take(6).map(|f| f.metric.as_str()).collect();
    assert_eq!(
        metrics,
        [
            "read bw",
            "read iops",
            "read lat mean",
            "read lat p99",
            "depth reached",
            "cpu"
        ]
    );

    // The sweep: per engine and block size, the engines apart.
    let engines = [
        EngineKind::Psync,
        EngineKind::MmapSync,
        EngineKind::MmapAsync,
    ];
    let jobs: Vec<_> = engines
        .iter()
        .map(|e| {
            let mut j = job(RwMode::RandRead, true, false);
            j.spec.engine = *e;
            j.spec.iodepth = 1;
            j
        })
        .collect();
    let sweep = with(
        ProfileResult::Sweep(SweepResult {
            engines: engines.to_vec(),
            runtime: Nanos::from_secs(1),
            points: engines
                .iter()
                .enumerate()
                .map(|(i, e)| SweepPoint {
                    engine: *e,
                    rw: RwMode::RandRead,
                    bs: Bytes(1 << 20),
                    bw: BytesPerSec(1e6),
                    job: i,
                })
                .collect(),
        }),
        jobs,
    );
    let tests: Vec<_> = sweep.iter().map(|f| f.test.as_str()).collect();
    assert_eq!(
        tests,
        [
            "randread 1MiB QD1 T1, psync, direct, random data, 1GiB",
            "randread 1MiB QD1 T1, mmap-sync, direct, random data, 1GiB",
            "randread 1MiB QD1 T1, mmap-async, direct, random data, 1GiB",
        ]
    );
    assert!(sweep.iter().all(|f| f.metric == "read bw"));

    // The artefacts probe: each pattern's rates, and its rates against
    // random data's in percent, under one test named by how it ran.
    let rates = [("random", 100e6), ("zeros", 380e6)].map(|(d, w)| crate::artefact::PatternRates {
        data: d.parse().unwrap(),
        write: BytesPerSec(w),
        read: BytesPerSec(2.0 * w),
    });
    let region = Bytes(64 << 20);
    let mut probe_job = job(RwMode::Write, false, true);
    probe_job.spec.bs = Bytes(1 << 20);
    probe_job.spec.iodepth = 8;
    probe_job.spec.engine = EngineKind::IoUring;
    let probe = with(
        ProfileResult::Artefacts(ArtefactsResult {
            region,
            rounds: 3,
            quick: false,
            verdict: crate::artefact::ProbeVerdict::judge(&rates, region),
            patterns: rates.to_vec(),
        }),
        vec![probe_job],
    );
    let test = "artefacts probe 1MiB QD8 T1, io_uring, direct, 64MiB";
    assert!(probe.iter().all(|f| f.test == test), "{probe:?}");
    let metric = |m: &str| {
        probe
            .iter()
            .find(|f| f.metric == m)
            .map(|f| (f.unit, f.value))
    };
    assert_eq!(
        metric("zeros write bw"),
        Some((FigureUnit::BytesPerSec, 380e6))
    );
    assert_eq!(
        metric("random read bw"),
        Some((FigureUnit::BytesPerSec, 200e6))
    );
    assert_eq!(
        metric("zeros write vs random"),
        Some((FigureUnit::Percent, 380.0))
    );
    assert_eq!(
        metric("zeros read vs random"),
        Some((FigureUnit::Percent, 380.0))
    );
}

#[test]
fn memory_tests_name_kernel_size_backing_and_threads() {
    use super::mem::mem_point_test_name;
    use crate::mem::*;
    let spec = |kernel, backing| MemJobSpec {
        kernel,
        threads: 2,
        backing,
        advice: Advice::Normal,
        mem_limit: None,
    };
    let stencil = |mask| {
        MemKernelSpec::Stencil(StencilSpec {
            n: 4096,
            mask,
            sweeps: 10,
        })
    };
    let s3 = mem_spec_test_name(&spec(stencil(3), Backing::Heap));
    let s15 = mem_spec_test_name(&spec(stencil(15), Backing::Heap));
    assert_eq!(s3, "stencil 3x3, 4096x4096 grid, heap, 2 threads");
    assert_ne!(s3, s15);
    let mapped = Backing::Mmap {
        path: "/ssd/f".into(),
        warm: false,
    };
    let mut m = spec(stencil(3), mapped);
    m.mem_limit = Some(Bytes(256 << 20));
    m.advice = Advice::Random;
    assert_eq!(
        mem_spec_test_name(&m),
        "stencil 3x3, 4096x4096 grid, mmap, 2 threads, advice random, limit 256MiB"
    );
    // A warm file mapping is another test; a swap device is named only
    // where a sweep holds several.
    m.backing = Backing::Mmap {
        path: "/ssd/f".into(),
        warm: true,
    };
    assert!(mem_spec_test_name(&m).contains(", mmap warm, "));
    let swap_on = |d: &str| Backing::Swap {
        path: format!("/dev/{d}"),
        device: Some(d.into()),
    };
    let point = |b: Backing| MemSweepPoint {
        x: 1.0,
        data: Bytes(1),
        run: MemRun {
            spec: spec(stencil(3), b),
            host: MemHost::default(),
            outcome: MemOutcome::Interrupted,
            cgroup: None,
            baseline: None,
            warnings: Vec::new(),
            sweep: None,
            cpu: None,
            cluster: None,
        },
    };
    let sweep = |backings: Vec<Backing>| MemSweep {
        axis: SweepAxis::Ratio,
        points: backings.iter().cloned().map(point).collect(),
        backings,
    };
    let one = sweep(vec![Backing::Heap, swap_on("zram0")]);
    assert!(mem_point_test_name(&one, &one.points[1]).contains(", swap, "));
    let two = sweep(vec![swap_on("zram0"), swap_on("loop3")]);
    let names: Vec<String> = two
        .points
        .iter()
        .map(|p| mem_point_test_name(&two, p))
        .collect();
    assert!(names[0].contains(", swap on zram0, "), "{names:?}");
    assert!(names[1].contains(", swap on loop3, "), "{names:?}");
    assert_eq!(two.column_of(&two.points[1].run.spec.backing), 1);
    let stream = |n| {
        MemKernelSpec::Stream(StreamSpec {
            array_len: n,
            ntimes: 10,
            nt_stores: false,
        })
    };
    assert_eq!(
        mem_spec_test_name(&spec(stream(1_000_000), Backing::Heap)),
        "STREAM, 1M elements, heap, 2 threads"
    );
    assert_ne!(
        mem_spec_test_name(&spec(stream(1_000_000), Backing::Heap)),
        mem_spec_test_name(&spec(stream(3_000_000), Backing::Heap))
    );
    let himeno = |i| {
        MemKernelSpec::Himeno(HimenoSpec {
            grid: HimenoGrid {
                name: None,
                i,
                j: 33,
                k: 65,
            },
            length: HimenoLength::Iterations(3),
        })
    };
    assert_ne!(
        mem_spec_test_name(&spec(himeno(33), Backing::Heap)),
        mem_spec_test_name(&spec(himeno(65), Backing::Heap))
    );
}

#[test]
fn device_link_names_device_link_and_driver() {
    use crate::device::*;
    let report: DeviceReport = serde_json::from_str(
        r#"{"path": "/mnt/t7", "target": "directory", "device": {
            "name": "sdb1", "devno": {"major": 8, "minor": 17}, "size": 0,
            "transport": "usb", "sysfs_path": "/sys/block/sdb/sdb1",
            "lower": [{"name": "sdb", "devno": {"major": 8, "minor": 16}, "size": 0,
              "transport": "usb", "sysfs_path": "/sys/block/sdb",
              "identity": {"vendor": "Samsung", "model": "T7"},
              "usb": {"device": "2-1", "speed_mbps": 10000.0, "version": "3.20", "driver": "uas"}}]}}"#,
    )
    .unwrap();
    assert_eq!(
        device_report_text(&report).unwrap(),
        "Samsung T7, USB 3.2 10 Gb/s, uas"
    );
    assert_eq!(
        interface_text(&NetInterface {
            name: "eth0".into(),
            driver: Some("r8152".into()),
            speed_mbit: Some(2500),
        }),
        "eth0, r8152, 2500 Mb/s"
    );
}

#[test]
fn units_round_trip_and_format() {
    for u in FigureUnit::ALL {
        assert_eq!(FigureUnit::from_name(u.as_str()), Some(u));
    }
    assert_eq!(FigureUnit::BytesPerSec.format(612_345_678.0), "612.35 MB/s");
    assert_eq!(FigureUnit::Nanos.format(94_100.0), "94.1 µs");
}

#[test]
fn rates_are_better_higher_times_lower_and_counts_unjudged() {
    use Direction::*;
    let expect = |u: FigureUnit| match u {
        FigureUnit::BytesPerSec
        | FigureUnit::BitsPerSec
        | FigureUnit::Iops
        | FigureUnit::Mflops => HigherIsBetter,
        FigureUnit::Nanos | FigureUnit::Ratio => LowerIsBetter,
        FigureUnit::Percent | FigureUnit::Count | FigureUnit::Bytes => Unknown,
    };
    for u in FigureUnit::ALL {
        assert_eq!(u.direction(), expect(u), "{u}");
    }
    // The names scripts read are serde's.
    for d in [HigherIsBetter, LowerIsBetter, Unknown] {
        assert_eq!(
            serde_json::to_value(d).unwrap(),
            serde_json::Value::from(d.as_str())
        );
    }
    let lat = Figure {
        test: "t".into(),
        metric: "read lat mean".into(),
        unit: FigureUnit::Nanos,
        value: 1.0,
        spread: None,
        noise: None,
        sampled: None,
    };
    assert_eq!(lat.direction(), LowerIsBetter);
}

#[test]
fn each_depth_sweep_stores_its_knee_depth() {
    use crate::knee::{Knee, KneeCause, KneeShape};
    let mut shallow = job(RwMode::RandRead, true, false);
    shallow.spec.iodepth = 1;
    let mut deep = shallow.clone();
    deep.spec.iodepth = 8;
    let mut body = run(vec![shallow, deep]);
    let RunBody::Disk(r) = &mut body else {
        unreachable!()
    };
    r.knees.push(Knee {
        series: "randread 4KiB T1, psync, direct".into(),
        shape: KneeShape::FlatFromStart,
        depth: 1,
        gain_threshold_pct: 10.0,
        cause: Some(KneeCause::DepthBound),
        evidence: None,
    });
    let figs = body.figures();
    let knee = figs.last().unwrap();
    assert_eq!(
        knee.test,
        "depth sweep 1,8: randread 4KiB T1, psync, direct"
    );
    assert_eq!(
        (knee.metric.as_str(), knee.unit, knee.value),
        ("knee depth", FigureUnit::Count, 1.0)
    );
}

#[test]
fn a_custom_run_with_verify_keeps_its_job_figures_and_adds_the_checks() {
    use crate::profile::ProfileResult;
    use crate::verify::{BadCounts, VerifyPhase, VerifyResult};
    let mut body = run(vec![job(RwMode::RandWrite, false, true)]);
    if let RunBody::Disk(d) = &mut body {
        d.profile_result = Some(ProfileResult::Verify(VerifyResult {
            quick: false,
            phase: VerifyPhase::Both,
            claimed: Bytes(1 << 30),
            block: Bytes(4096),
            group: Bytes(4096),
            seed: 7,
            engine: EngineKind::IoUring,
            direct: true,
            write_bw: None,
            read_bw: Some(BytesPerSec(900e6)),
            write_series: vec![],
            read_series: vec![],
            checked_blocks: 100,
            bad: BadCounts {
                corrupted: 0,
                lost: 3,
                wrapped: 0,
            },
            ranges: vec![],
            more_ranges: 0,
            usable: None,
            partial: false,
        }));
    }
    let figs = body.figures();
    let of = |test: &str| -> Vec<(String, f64)> {
        figs.iter()
            .filter(|f| f.test == test)
            .map(|f| (f.metric.clone(), f.value))
            .collect()
    };
    assert!(figs[0].metric.starts_with("write"), "{figs:?}");
    let check = of("verify");
    assert!(check.contains(&("lost blocks".into(), 3.0)), "{check:?}");
    assert!(
        check.contains(&("corrupted blocks".into(), 0.0)),
        "{check:?}"
    );
    assert!(check.contains(&("read bw".into(), 900e6)), "{check:?}");
    assert!(!check.iter().any(|(m, _)| m == "usable"), "{check:?}");
}

#[test]
fn a_device_s_own_size_is_not_part_of_a_test_name_but_a_chosen_size_is() {
    use crate::profile::*;
    // The same GNOME, MacBench and custom tests on whole devices of 64 and
    // 96 MiB, then on regions the user chose (`--size`).
    let names = |size: u64, from_device: bool| {
        let mut all = Vec::new();
        let gnome = ProfileResult::Gnome(GnomeResult {
            sample_size: Bytes(1 << 20),
            samples_requested: 4,
            access_samples_requested: 5,
            write: false,
            avg_read: Some(BytesPerSec(30e6)),
            avg_write: None,
            avg_access: Some(Nanos(1_000_000)),
            transfer: vec![],
            access: vec![],
        });
        let macbench = ProfileResult::Macbench(MacbenchResult {
            runtime: Nanos::from_secs(1),
            tests: vec![MacbenchTest {
                name: "Sequential read".into(),
                bw: BytesPerSec(5e6),
                job: 0,
            }],
        });
        for pr in [Some(gnome), Some(macbench), None] {
            let mut j = job(RwMode::Read, true, false);
            j.spec.size = Bytes(size);
            let mut b = run(vec![j]);
            if let RunBody::Disk(d) = &mut b {
                d.profile_result = pr;
                d.target.kind = TargetKind::BlockDevice;
                d.target.size = Bytes(size);
                d.target.size_from_device = from_device;
            }
            all.extend(b.figures().into_iter().map(|f| f.test));
        }
        all.dedup();
        all
    };
    let small = names(64 << 20, true);
    assert_eq!(small, names(96 << 20, true));
    assert_eq!(small[0], "GNOME transfer rate, 4 x 1MiB samples");
    assert_eq!(small[1], "GNOME access time, 5 samples");
    assert!(small
        .iter()
        .all(|t| !t.contains("MiB,") && !t.ends_with("64MiB")));
    let chosen = names(64 << 20, false);
    assert_ne!(chosen, names(96 << 20, false));
    assert_eq!(chosen[0], "GNOME transfer rate, 4 x 1MiB samples of 64MiB");
    assert!(chosen[2].starts_with("Sequential read: ") && chosen[2].ends_with(", 64MiB"));
    assert!(chosen[3].ends_with(", 64MiB"), "{chosen:?}");
}

#[test]
fn a_runs_own_test_names_map_onto_its_figures_tests() {
    let mut body = cdm3(Bytes(16 << 20));
    if let RunBody::Disk(d) = &mut body {
        d.jobs[0].spec.name = "Seq read".into();
        // A second pass of the same test: named once.
        let again = d.jobs[0].clone();
        d.jobs.push(again);
    }
    let tests = tests_of(&body);
    assert_eq!(
        own_test_names(&body),
        vec![(tests[0].clone(), "Seq read".to_string())]
    );
    // A job named by its test's name has no other name.
    if let RunBody::Disk(d) = &mut body {
        for j in &mut d.jobs {
            j.spec.name = tests[0].clone();
        }
    }
    assert!(own_test_names(&body).is_empty());
}

fn pts_latency_result() -> crate::pts::PtsResult {
    use crate::pts::*;
    let cell = |lat_us: f64| PtsCell {
        read_pct: 0,
        bs: Bytes(4096),
        iops: 1e6 / lat_us,
        bw: BytesPerSec(4096.0 * 1e6 / lat_us),
        lat_mean_ns: lat_us * 1e3,
        lat_p99999_ns: lat_us * 1e3 * 20.0,
        lat_max_ns: lat_us * 1e3 * 30.0,
        job: Some(0),
    };
    let rounds: Vec<PtsRound> = [90.0, 100.0, 101.0, 99.0, 100.0, 102.0]
        .into_iter()
        .enumerate()
        .map(|(i, us)| PtsRound {
            round: i as u32 + 1,
            cells: vec![cell(us)],
            tracking: us * 1e3,
        })
        .collect();
    PtsResult {
        test: PtsTest::Latency,
        mixes: vec![0],
        block_sizes: vec![Bytes(4096)],
        threads: 1,
        depth: 1,
        cell_time: Nanos::from_secs(60),
        max_rounds: 25,
        range: Bytes(1 << 30),
        on_device: true,
        purge: Purge::Discarded { secure: false },
        preconditioning: Preconditioning {
            asked: Bytes(2 << 30),
            written: Bytes(2 << 30),
            took: Nanos::from_secs(20),
        },
        window: Some(PtsWindowFigures {
            first_round: 2,
            last_round: 6,
            average: 100_400.0,
            data_excursion: 3_000.0,
            slope: 300.0,
            intercept: 99_800.0,
            slope_excursion: 1_200.0,
            steady: true,
        }),
        table: vec![PtsCell {
            job: None,
            ..cell(100.4)
        }],
        rounds,
    }
}

#[test]
fn the_pts_latency_tests_figures_are_its_three_latencies_and_its_rounds() {
    let r = pts_latency_result();
    assert_eq!(r.tracking_label(), "us (4 KiB, 0/100)");
    let figs = super::pts::pts_figures(&r);
    let find = |test: &str, metric: &str| {
        figs.iter()
            .find(|f| f.test == test && f.metric == metric)
            .unwrap_or_else(|| panic!("no {test} / {metric} in {figs:?}"))
    };
    let test = "PTS LAT 4KiB 0/100 QD1 T1";
    let mean = find(test, "write lat mean");
    assert!((mean.value - 100_400.0).abs() < 1e-6, "{mean:?}");
    // The spread is the window's rounds (2-6), not round 1's 90 us.
    assert_eq!(mean.spread, Some((99_000.0, 102_000.0)), "{mean:?}");
    assert_eq!(find(test, "write lat 99.999").value, 100.4e3 * 20.0);
    assert_eq!(find(test, "write lat max").value, 100.4e3 * 30.0);
    assert_eq!(find("PTS LAT", "rounds").value, 6.0);
    // No bandwidth figure: that is the throughput test's.
    assert!(figs.iter().all(|f| !f.metric.ends_with(" bw")), "{figs:?}");
}

#[test]
fn a_pts_iops_result_stored_before_the_other_tests_reads_as_the_iops_test() {
    let mut r = pts_latency_result();
    r.test = crate::pts::PtsTest::Iops;
    let mut v = serde_json::to_value(crate::profile::ProfileResult::Pts(r.clone())).unwrap();
    assert_eq!(v["family"], "pts");
    // As the first IOPS results were written: another family name, no
    // `test`, no five nines or maximum in the cells.
    v["family"] = "pts_iops".into();
    v.as_object_mut().unwrap().remove("test");
    for c in v["table"].as_array_mut().unwrap() {
        c.as_object_mut().unwrap().remove("lat_p99999_ns");
        c.as_object_mut().unwrap().remove("lat_max_ns");
    }
    let back: crate::profile::ProfileResult = serde_json::from_value(v).unwrap();
    let crate::profile::ProfileResult::Pts(back) = back else {
        panic!("{back:?}")
    };
    assert_eq!(back.test, crate::pts::PtsTest::Iops);
    assert_eq!(back.table[0].lat_max_ns, 0.0);
}
