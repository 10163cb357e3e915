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
