use super::*;
use iomark_model::mem::{Advice, HimenoGrid, HimenoLength, HimenoSpec, StreamSpec};
use iomark_model::units::Nanos;

fn spec(kernel: MemKernelSpec, threads: u32) -> MemJobSpec {
    MemJobSpec {
        kernel,
        threads,
        backing: Backing::Heap,
        advice: Advice::Normal,
        mem_limit: None,
    }
}

#[test]
fn limits_refuse_absurd_jobs_without_overflowing() {
    let small = MemKernelSpec::Stream(StreamSpec {
        array_len: 1000,
        ntimes: 2,
        nt_stores: false,
    });
    assert!(check_limits(&spec(small.clone(), 1), false).is_ok());
    let many = check_limits(&spec(small, threads::MAX_THREADS + 1), false);
    assert!(matches!(many, Err(MemError::TooManyThreads { .. })));
    let huge = MemKernelSpec::Himeno(HimenoSpec {
        grid: HimenoGrid {
            name: None,
            i: u64::MAX,
            j: u64::MAX,
            k: u64::MAX,
        },
        length: HimenoLength::Iterations(1),
    });
    let err = check_limits(&spec(huge, 1), false).unwrap_err().to_string();
    assert!(err.contains("use a smaller --grid"), "{err}");
}

fn himeno_xs(length: HimenoLength) -> MemJobSpec {
    let grid = crate::himeno::parse_grid("xs").unwrap();
    spec(MemKernelSpec::Himeno(HimenoSpec { grid, length }), 1)
}

fn completed(spec: &MemJobSpec) -> (KernelResult, Nanos) {
    match run_in_process(spec, &AtomicBool::new(false)).unwrap() {
        MemOutcome::Completed {
            result, execution, ..
        } => (result, execution),
        other => panic!("{other:?}"),
    }
}

fn himeno_of(r: &KernelResult) -> &iomark_model::mem::HimenoResult {
    match r {
        KernelResult::Himeno(h) => h,
        other => panic!("{other:?}"),
    }
}

/// A timed baseline hands its sweep count on; fixed work is kept.
#[test]
fn the_constrained_run_repeats_a_timed_baselines_sweeps() {
    let timed = himeno_xs(HimenoLength::Target(Nanos(50_000_000)));
    let (base, base_exec) = completed(&timed);
    let b = himeno_of(&base);
    assert_eq!(b.rehearsal_iterations, 3);
    let same = same_work(&timed, &base);
    let MemKernelSpec::Himeno(h) = &same.kernel else {
        panic!("{same:?}")
    };
    assert_eq!(h.length, HimenoLength::Iterations(b.iterations));
    assert_eq!(
        (same.threads, &same.backing),
        (timed.threads, &timed.backing)
    );
    let (run, exec) = completed(&same);
    let r = himeno_of(&run);
    assert_eq!((r.rehearsal_iterations, r.iterations), (0, b.iterations));
    // Both count initialisation and the timed sweeps, no rehearsal.
    for (h, e) in [(b, base_exec), (r, exec)] {
        assert_eq!(e.get(), h.init.get() + h.elapsed.get());
    }
    let fixed = himeno_xs(HimenoLength::Iterations(3));
    assert_eq!(same_work(&fixed, &base), fixed);
    let stream = spec(
        MemKernelSpec::Stream(StreamSpec {
            array_len: 1000,
            ntimes: 2,
            nt_stores: false,
        }),
        1,
    );
    assert_eq!(same_work(&stream, &base), stream);
}

#[test]
fn data_at_the_limit_is_called_in_core_only_when_the_limit_was_never_hit() {
    let job = MemJobSpec {
        mem_limit: Some(Bytes(64 << 20)),
        ..spec(
            MemKernelSpec::Stream(StreamSpec {
                array_len: (64 << 20) / 24,
                ntimes: 2,
                nt_stores: false,
            }),
            1,
        )
    };
    let host = MemHost::default();
    let usage = |hits| iomark_model::mem::CgroupUsage {
        version: "v1".into(),
        limit: Bytes(64 << 20),
        peak: Some(Bytes(64 << 20)),
        oom_kills: 0,
        limit_hits: Some(hits),
        major_faults: Some(hits),
    };
    let in_core = |w: &[Warning]| w.iter().any(|w| w.message.contains("not out of core"));
    assert!(
        in_core(&warnings(&job, &host, None)),
        "before the run: the sizes say so"
    );
    assert!(in_core(&warnings(&job, &host, Some(&usage(0)))));
    // 8339 hits at data = limit (the study's Fig. 5): out of core after all.
    assert!(!in_core(&warnings(&job, &host, Some(&usage(8339)))));
}
