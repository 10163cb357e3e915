use super::*;

fn psync() -> JobSettings {
    JobSettings {
        engine: Some(EngineKind::Psync.into()),
        ..JobSettings::default()
    }
}

#[test]
fn defaults_are_fios_where_fio_has_one() {
    let job = psync().build().unwrap();
    assert_eq!(job.spec.rw, RwMode::RandRead);
    assert_eq!(job.spec.bs, Bytes(4096));
    assert_eq!(
        (job.spec.iodepth, job.spec.iodepth_batch),
        (32, DiskJobSpec::ADAPTIVE_BATCH)
    );
    assert_eq!(job.spec.runtime, Some(DEFAULT_RUNTIME));
    assert_eq!(job.direct, DirectMode::Auto);
}

#[test]
fn each_bad_setting_names_its_fix() {
    let cases: Vec<(JobSettings, &str)> = vec![
        (
            JobSettings {
                bs: Some(Bytes(0)),
                ..psync()
            },
            "--bs must be larger than 0",
        ),
        (
            JobSettings {
                size: Some(Bytes(0)),
                ..psync()
            },
            "--size must be larger than 0",
        ),
        (
            JobSettings {
                iodepth: Some(IodepthList(vec![8])),
                iodepth_batch: Some(16),
                ..psync()
            },
            "1 to --iodepth (8)",
        ),
        (
            JobSettings {
                engine: Some(EngineKind::MmapSync.into()),
                direct: Some(true),
                ..psync()
            },
            "page cache",
        ),
        (
            JobSettings {
                rwmix_read: Some(101),
                ..psync()
            },
            "0 to 100",
        ),
    ];
    for (settings, needle) in cases {
        let err = settings.build().unwrap_err().to_string();
        assert!(err.contains(needle), "{settings:?}: {err}");
    }
}

#[test]
fn mapped_engines_run_buffered_and_runtime_zero_is_one_pass() {
    let job = JobSettings {
        engine: Some(EngineKind::MmapAsync.into()),
        runtime: Some(Nanos(0)),
        ..psync()
    }
    .build()
    .unwrap();
    assert_eq!(job.direct, DirectMode::Buffered);
    assert!(!job.spec.direct);
    assert_eq!(job.spec.runtime, None);
}

#[test]
fn iodepth_takes_one_depth_or_a_sweep() {
    let split = |s: &str| s.parse::<IodepthList>().map(|l| l.split());
    assert_eq!(split("8"), Ok((Some(8), vec![])));
    // Zero passes here; the job's check names the fix.
    assert_eq!(split("0"), Ok((Some(0), vec![])));
    assert_eq!(split("1,2,4,8"), Ok((Some(8), vec![1, 2, 4, 8])));
    assert_eq!(split("8,1"), Ok((Some(8), vec![8, 1])));
    assert_eq!(split("1..8"), Ok((Some(8), vec![1, 2, 4, 8])));
    let err = split("1,x").unwrap_err();
    assert!(err.starts_with("--iodepth '1,x': give a list"), "{err}");
}
