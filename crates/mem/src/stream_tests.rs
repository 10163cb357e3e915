use super::kernels::{triad, Stores};
use super::*;
use crate::kernel_test_support::{assert_validates, run_on_heap};

#[test]
fn expected_values_match_stream_c() {
    let [a, b, c] = expected(10);
    assert_eq!(a, 1.15330078125e12);
    assert_eq!(b, 2.3066015625e11);
    assert_eq!(c, 3.07546875e11);
}

#[test]
fn the_most_passes_are_the_last_whose_values_are_finite() {
    let last = MAX_PASSES as usize;
    assert!(expected(last).iter().all(|v| v.is_finite()));
    assert!(expected(last + 1).iter().any(|v| v.is_infinite()));
}

#[test]
fn small_run_validates_with_uneven_thread_split() {
    let spec = StreamSpec {
        array_len: 10_001,
        ntimes: 3,
        nt_stores: false,
    };
    let (r, exec) = run_on_heap(&spec, 3, sizes, run);
    assert_validates(&r.validation);
    assert_eq!(r.stores, "regular");
    assert_eq!(r.kernels.len(), 4);
    assert!(r.kernels.iter().all(|k| k.min <= k.avg && k.avg <= k.max));
    // The execution time holds the initialisation and every pass.
    let counted: u64 = r.kernels.iter().map(|k| k.min.get() * 2).sum();
    assert!(exec.get() >= r.init.get() + counted, "{exec:?} {r:?}");
}

#[test]
fn non_temporal_stores_validate_and_say_so() {
    // Odd lengths and thread counts: every thread's block starts
    // unaligned somewhere, so heads and tails are exercised.
    for threads in [1, 3] {
        let spec = StreamSpec {
            array_len: 10_007,
            ntimes: 3,
            nt_stores: true,
        };
        let (r, _) = run_on_heap(&spec, threads, sizes, run);
        assert_validates(&r.validation);
        #[cfg(target_arch = "x86_64")]
        assert!(r.stores.starts_with("non-temporal"), "{}", r.stores);
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn every_store_kind_computes_the_same_values() {
    let n = 1003;
    let b: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 + 1.0).collect();
    let c: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 3.0).collect();
    let mut want = vec![0.0; n];
    triad(&mut want, &b, &c);
    let mut kinds = vec![Stores::Sse2];
    if std::arch::is_x86_feature_detected!("avx") {
        kinds.push(Stores::Avx);
    }
    for kind in kinds {
        // From offsets 0..4, so the aligned middle starts at each lane.
        for skip in 0..4 {
            let mut a = vec![0.0; n];
            kind.triad(&mut a[skip..], &b[skip..], &c[skip..]);
            assert_eq!(a[skip..], want[skip..], "{kind:?} from {skip}");
            let mut s = vec![0.0; n];
            kind.scale(&mut s[skip..], &c[skip..]);
            assert!(s[skip..].iter().zip(&c[skip..]).all(|(s, c)| *s == Q * c));
            let mut d = vec![0.0; n];
            kind.add(&mut d[skip..], &b[skip..], &c[skip..]);
            assert!(d[skip..]
                .iter()
                .zip(b[skip..].iter().zip(&c[skip..]))
                .all(|(d, (b, c))| *d == b + c));
        }
    }
}
