//! iomark's fio JSON (`--output-format json+`) read back by the store's fio
//! importer: the same job, the same figures. Here rather than in the text
//! crate, which renders without the store.

use iomark_model::disk::DataPattern;
use iomark_model::RunBody;
use iomark_stats::example::mixed_randrw_run;
use iomark_text::fio_json;

#[test]
fn iomarks_importer_reads_it_back() {
    let d = mixed_randrw_run();
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

#[test]
fn a_jobs_steady_state_is_read_back() {
    use iomark_model::steady::{SteadyStateOutcome, SteadyStateSpec};
    use iomark_model::units::Nanos;
    let mut d = mixed_randrw_run();
    let RunBody::Disk(run) = &mut d.body else {
        panic!("a disk run");
    };
    let spec = SteadyStateSpec {
        criterion: "bw:10%".parse().unwrap(),
        window: Nanos::from_secs(3),
        ramp: Nanos::from_secs(2),
    };
    run.jobs[0].spec.steady_state = Some(spec);
    run.jobs[0].steady_state = Some(SteadyStateOutcome {
        spec,
        attained: true,
        attained_at: Some(Nanos::from_secs(7)),
        criterion: Some(4.25),
        max_deviation: 850_000.0,
        slope: -12_000.0,
        iops: vec![5000.0, 5100.0, 4900.0],
        bw: vec![20e6, 20.4e6, 19.6e6],
        lat_ns: vec![200_000.0, 196_000.0, 204_000.0],
    });
    let text = serde_json::to_string_pretty(&fio_json(&d, false).unwrap()).unwrap();
    let back = iomark_store::import::import_str(&text).unwrap();
    let RunBody::Disk(b) = &back.body else {
        panic!("disk runs");
    };
    let ss = b.jobs[0]
        .steady_state
        .as_ref()
        .expect("steadystate read back");
    assert_eq!(ss.spec, spec);
    assert_eq!(b.jobs[0].spec.steady_state, Some(spec));
    assert!(ss.attained);
    // fio's block says neither when it was met nor (for a bw criterion)
    // the latencies.
    assert_eq!(ss.attained_at, None);
    assert_eq!(ss.criterion, Some(4.25));
    assert_eq!((ss.max_deviation, ss.slope), (850_000.0, -12_000.0));
    assert_eq!(ss.iops, [5000.0, 5100.0, 4900.0]);
    assert_eq!(ss.bw, [20e6, 20.4e6, 19.6e6]);
}
