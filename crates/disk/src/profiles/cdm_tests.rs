use super::*;

fn labels(p: ProfileName) -> Vec<String> {
    definition(p)
        .unwrap()
        .rows
        .iter()
        .map(CdmRow::label)
        .collect()
}

#[test]
fn rows_match_profiles_md() {
    assert_eq!(
        labels(ProfileName::Cdm),
        ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]
    );
    assert_eq!(
        labels(ProfileName::CdmNvme),
        ["SEQ1M Q8T1", "SEQ128K Q32T1", "RND4K Q32T16", "RND4K Q1T1"]
    );
    assert_eq!(labels(ProfileName::CdmPeak), ["SEQ1M Q8T1", "RND4K Q32T1"]);
    assert_eq!(labels(ProfileName::CdmReal), ["SEQ1M Q1T1", "RND4K Q1T1"]);
    assert_eq!(labels(ProfileName::Cdm3), ["Seq", "512K", "4K", "4K QD32"]);
    assert!(definition(ProfileName::Gnome).is_none());
}

#[test]
fn shapes_match_profiles_md() {
    let nvme = definition(ProfileName::CdmNvme).unwrap();
    let r = nvme.rows[2];
    assert_eq!((r.seq, r.bs, r.queues, r.threads), (false, 4096, 32, 16));
    let v3 = definition(ProfileName::Cdm3).unwrap();
    let shapes: Vec<_> = v3.rows.iter().map(|r| (r.seq, r.bs, r.queues)).collect();
    assert_eq!(
        shapes,
        [
            (true, 1 << 20, 1),
            (false, 512 << 10, 1),
            (false, 4096, 1),
            (false, 4096, 32)
        ]
    );
    assert_eq!(v3.rows[0].rw(TestDir::Read), RwMode::Read);
    assert_eq!(v3.rows[1].rw(TestDir::Write), RwMode::RandWrite);
    assert_eq!(v3.rows[3].rw(TestDir::Mix), RwMode::RandRw);
}

#[test]
fn defaults_match_profiles_md() {
    for p in [
        ProfileName::Cdm,
        ProfileName::CdmNvme,
        ProfileName::CdmPeak,
        ProfileName::CdmReal,
    ] {
        let d = definition(p).unwrap();
        assert_eq!(d.passes, 5);
        assert_eq!(d.pass_time, Nanos::from_secs(5));
        assert_eq!(d.interval, Nanos::from_secs(5));
        assert_eq!(d.size, Bytes(1 << 30));
        assert!(!d.sync_qd1);
        assert_eq!(
            d.shows_iops,
            matches!(p, ProfileName::CdmPeak | ProfileName::CdmReal)
        );
    }
    let v3 = definition(ProfileName::Cdm3).unwrap();
    assert_eq!(v3.pass_time, Nanos::from_secs(6));
    assert_eq!(v3.size, Bytes(1_000_000_000));
    let quick = CdmOptions::defaults(&v3, true);
    assert!(quick.quick && quick.pass_time < v3.pass_time && quick.passes < v3.passes);
}

fn job_with(bw_mb: f64, lat_us: f64) -> iomark_model::disk::DiskJobResult {
    use iomark_model::disk::*;
    let runtime = Nanos::from_secs(1);
    let bytes = (bw_mb * 1e6) as u64;
    DiskJobResult {
        read: Some(DirectionResult {
            io_bytes: Bytes(bytes),
            ios: 10,
            runtime,
            bw: BytesPerSec::over(Bytes(bytes), runtime),
            iops: Iops(10.0),
            clat: LatencySummary {
                count: 10,
                mean_ns: lat_us * 1e3,
                ..Default::default()
            },
        }),
        ..DiskJobResult::example(DiskJobSpec {
            name: "t".into(),
            rw: RwMode::Read,
            bs: Bytes(1 << 20),
            runtime: Some(runtime),
            rwmix_read: 70,
            ..DiskJobSpec::example()
        })
    }
}

#[test]
fn the_statistic_is_the_maximum_and_the_minimum_latency() {
    let row = definition(ProfileName::Cdm).unwrap().rows[1];
    let passes = [
        job_with(100.0, 900.0),
        job_with(120.0, 950.0),
        job_with(110.0, 800.0),
    ];
    let t = summarise(&row, TestDir::Read, &passes, 3);
    assert!((t.bw.mb_per_sec() - 120.0).abs() < 1e-6);
    assert!((t.lat_mean_ns - 800_000.0).abs() < 1e-6);
    assert!((t.iops.0 - 120e6 / 1048576.0).abs() < 1e-6);
    let (lo, hi) = t.bw_spread().unwrap();
    assert!((lo.mb_per_sec() - 100.0).abs() < 1e-6 && (hi.mb_per_sec() - 120.0).abs() < 1e-6);
    assert_eq!((t.first_job, t.pass_bw.len()), (3, 3));
}
