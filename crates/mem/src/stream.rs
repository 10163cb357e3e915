//! STREAM (McCalpin, `stream.c` v5.10) in Rust: Copy, Scale, Add and Triad
//! on three f64 arrays. Results from it are "based on a variant of the STREAM
//! benchmark", as STREAM's run rules ask of modified code.
//!
//! Faithful to the original where it matters for the figures:
//! - a = 1, b = 2, c = 0 written in parallel with the kernels' static split
//!   (first touch), then one pass of a = 2a (STREAM's timing probe);
//! - each kernel timed on its own, bracketed by barriers, NTIMES passes, the
//!   first not counted; best rate = counted bytes / minimum time, MB = 10^6 B;
//! - counted bytes are 2 or 3 words x 8 B x N, write-allocate not counted;
//! - `checkSTREAMresults`: replay the scalar history, average absolute error
//!   per array relative to the expected value must stay under 1e-13.
//!
//! Copy uses `copy_from_slice`, i.e. `memcpy`, as gcc -O3 makes of STREAM's
//! Copy loop (glibc's memcpy switches to non-temporal stores by itself for
//! copies this large). Scale, Add and Triad are plain zipped slice loops
//! that vectorise, or, with non-temporal stores ([`StreamSpec::nt_stores`],
//! what STREAM builds with icc's or gcc's streaming-store options do), the
//! same arithmetic written with `std::arch` streaming stores: the result
//! goes to memory without first reading its cache line (no
//! write-allocate), so the memory bus carries 3 words per Triad element
//! instead of 4. The arithmetic is the same, in the same order (no fused
//! multiply-add), so the check holds bit for bit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iomark_model::mem::{StreamKernelResult, StreamOp, StreamResult, StreamSpec, Validation};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};

use crate::region::Region;
use crate::threads::{self, Barrier, OffOnPanic};
use crate::{split, MemError};

/// STREAM's scalar.
const Q: f64 = 3.0;

/// STREAM's epsilon for 8-byte types.
const EPSILON: f64 = 1e-13;

/// Byte sizes of the three arrays.
pub fn sizes(spec: &StreamSpec) -> Vec<usize> {
    spec.array_sizes()
}

/// Run STREAM on the region's three arrays (made from [`sizes`]). Returns
/// the figures and the execution time: from the start of the initialisation
/// to the end of the last pass (the timing probe and every pass, the
/// uncounted first one too), `None` when `stop` was raised (checked before each pass, and while a thread waits for the
/// others), or an error when a thread cannot be started.
pub fn run(
    spec: &StreamSpec,
    threads: usize,
    region: &mut Region,
    stop: &AtomicBool,
) -> Result<Option<(StreamResult, Nanos)>, MemError> {
    run_in_step(spec, threads, region, stop, &mut || {})
}

/// [`run`], calling `step` on the calling thread before the initialisation
/// and before each kernel of each pass, outside the timed part, while the
/// other threads wait: processes that run STREAM together (MPI ranks) keep
/// in step with a barrier there.
pub fn run_in_step(
    spec: &StreamSpec,
    threads: usize,
    region: &mut Region,
    stop: &AtomicBool,
    step: &mut dyn FnMut(),
) -> Result<Option<(StreamResult, Nanos)>, MemError> {
    let n = spec.array_len as usize;
    let ntimes = spec.ntimes.max(2) as usize;
    let mut arrays = region.arrays::<f64>();
    let [a, b, c] = &mut arrays[..] else {
        unreachable!("stream::sizes makes three arrays")
    };
    let ranges = split::ranges(n, threads);
    let threads = ranges.len();
    let (a, b, c) = (
        split::split_mut(a, &ranges, 1),
        split::split_mut(b, &ranges, 1),
        split::split_mut(c, &ranges, 1),
    );
    let stores = Stores::choose(spec.nt_stores);
    let barrier = Barrier::new(threads);
    let sync = Sync {
        barrier: &barrier,
        stop,
        quit: &AtomicBool::new(false),
    };
    let timing = std::thread::scope(|s| {
        let mut parts = a.into_iter().zip(b).zip(c).map(|((a, b), c)| (a, b, c));
        let first = parts.next().expect("at least one thread");
        for (index, (a, b, c)) in parts.enumerate() {
            if let Err(e) = threads::spawn(s, index + 1, threads, move || {
                worker(a, b, c, sync, ntimes, stores, None)
            }) {
                // The threads already started leave at the barrier and
                // the scope joins them.
                barrier.call_off();
                return Err(e);
            }
        }
        let (a, b, c) = first;
        Ok(worker(a, b, c, sync, ntimes, stores, Some(step)))
    })?;
    let Some(timing) = timing else {
        return Ok(None);
    };

    let kernels = StreamOp::ALL
        .iter()
        .enumerate()
        .map(|(k, &op)| {
            let counted: Vec<u64> = timing.passes[1..].iter().map(|p| p[k]).collect();
            let min = counted.iter().copied().min().unwrap_or(0);
            let max = counted.iter().copied().max().unwrap_or(0);
            let avg = counted.iter().sum::<u64>() / counted.len().max(1) as u64;
            let bytes = Bytes(op.words() * 8 * n as u64);
            StreamKernelResult {
                op,
                bytes_per_pass: bytes,
                best_rate: BytesPerSec::over(bytes, Nanos(min)),
                avg: Nanos(avg),
                min: Nanos(min),
                max: Nanos(max),
            }
        })
        .collect();
    let validation = check(&arrays, ntimes);
    let result = StreamResult {
        array_bytes: Bytes(n as u64 * 8),
        init: timing.init,
        copy_method: "memcpy (copy_from_slice)".into(),
        stores: stores.describe().into(),
        kernels,
        validation,
    };
    Ok(Some((result, timing.execution)))
}

/// What the threads share to stay in step.
#[derive(Clone, Copy)]
struct Sync<'a> {
    barrier: &'a Barrier,
    /// Raised by the signal handler.
    stop: &'a AtomicBool,
    /// The leader's reading of `stop`, so every thread leaves at the same pass.
    quit: &'a AtomicBool,
}

struct Timing {
    init: Nanos,
    /// Initialisation, timing probe and all passes.
    execution: Nanos,
    /// Per pass, nanoseconds of Copy, Scale, Add, Triad.
    passes: Vec<[u64; 4]>,
}

/// One thread's share: its own block of each array, for every phase. Every
/// thread runs the same barrier sequence; the first thread's clock readings
/// between barriers are the timings (as STREAM times around each parallel
/// region from the master thread). The first thread (the leader) holds
/// `step`, called before each phase while the others wait.
fn worker(
    a: &mut [f64],
    b: &mut [f64],
    c: &mut [f64],
    sync: Sync,
    ntimes: usize,
    stores: Stores,
    mut step: Option<&mut dyn FnMut()>,
) -> Option<Timing> {
    let leader = step.is_some();
    let barrier = sync.barrier;
    let _off = OffOnPanic(barrier);
    let wait = || barrier.wait(sync.stop).ok();
    let mut step = move || {
        if let Some(f) = step.as_mut() {
            f();
        }
    };
    step();
    wait()?;
    let started = Instant::now();
    a.fill(1.0);
    b.fill(2.0);
    c.fill(0.0);
    wait()?;
    let init = Nanos::from_duration(started.elapsed());

    // STREAM's timer probe pass: it changes `a`, so the check replays it.
    a.iter_mut().for_each(|x| *x *= 2.0);

    let mut passes = Vec::with_capacity(ntimes);
    wait()?;
    for _ in 0..ntimes {
        if leader {
            sync.quit
                .store(sync.stop.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        wait()?;
        if sync.quit.load(Ordering::Relaxed) {
            return None;
        }
        let mut times = [0u64; 4];
        for (k, op) in StreamOp::ALL.into_iter().enumerate() {
            step();
            wait()?;
            let t = Instant::now();
            match op {
                StreamOp::Copy => copy(a, c),
                StreamOp::Scale => stores.scale(b, c),
                StreamOp::Add => stores.add(c, a, b),
                StreamOp::Triad => stores.triad(a, b, c),
            }
            wait()?;
            times[k] = t.elapsed().as_nanos() as u64;
        }
        passes.push(times);
    }
    Some(Timing {
        init,
        execution: Nanos::from_duration(started.elapsed()),
        passes,
    })
}

/// c = a
fn copy(a: &[f64], c: &mut [f64]) {
    c.copy_from_slice(a);
}

/// b = q c
fn scale(b: &mut [f64], c: &[f64]) {
    for (b, c) in b.iter_mut().zip(c) {
        *b = Q * c;
    }
}

/// c = a + b
fn add(c: &mut [f64], a: &[f64], b: &[f64]) {
    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
        *c = a + b;
    }
}

/// a = b + q c
fn triad(a: &mut [f64], b: &[f64], c: &[f64]) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + Q * c;
    }
}

/// How Scale, Add and Triad store their results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stores {
    /// Ordinary stores, as the compiler vectorises them.
    Regular,
    /// SSE2 streaming stores, 2 lanes (`_mm_stream_pd`).
    #[cfg(target_arch = "x86_64")]
    Sse2,
    /// AVX streaming stores, 4 lanes (`_mm256_stream_pd`).
    #[cfg(target_arch = "x86_64")]
    Avx,
}

impl Stores {
    /// Non-temporal stores when asked for and the CPU has them (AVX
    /// preferred, SSE2 is in every x86-64), ordinary ones otherwise.
    fn choose(nt: bool) -> Self {
        #[cfg(target_arch = "x86_64")]
        if nt {
            if std::arch::is_x86_feature_detected!("avx") {
                return Stores::Avx;
            }
            if std::arch::is_x86_feature_detected!("sse2") {
                return Stores::Sse2;
            }
        }
        let _ = nt;
        Stores::Regular
    }

    /// What the output and the stored run say was used.
    fn describe(self) -> &'static str {
        match self {
            Stores::Regular => "regular",
            #[cfg(target_arch = "x86_64")]
            Stores::Sse2 => "non-temporal (SSE2 _mm_stream_pd)",
            #[cfg(target_arch = "x86_64")]
            Stores::Avx => "non-temporal (AVX _mm256_stream_pd)",
        }
    }

    fn scale(self, b: &mut [f64], c: &[f64]) {
        match self {
            Stores::Regular => scale(b, c),
            // SAFETY: `choose` picked these only where the CPU has the
            // feature the function is compiled for.
            #[cfg(target_arch = "x86_64")]
            Stores::Sse2 => unsafe { nt_sse2::scale(b, c) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: picked by `choose` only where the CPU has AVX.
            Stores::Avx => unsafe { nt_avx::scale(b, c) },
        }
    }

    fn add(self, c: &mut [f64], a: &[f64], b: &[f64]) {
        match self {
            Stores::Regular => add(c, a, b),
            // SAFETY: as in `scale`.
            #[cfg(target_arch = "x86_64")]
            Stores::Sse2 => unsafe { nt_sse2::add(c, a, b) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: picked by `choose` only where the CPU has AVX.
            Stores::Avx => unsafe { nt_avx::add(c, a, b) },
        }
    }

    fn triad(self, a: &mut [f64], b: &[f64], c: &[f64]) {
        match self {
            Stores::Regular => triad(a, b, c),
            // SAFETY: as in `scale`.
            #[cfg(target_arch = "x86_64")]
            Stores::Sse2 => unsafe { nt_sse2::triad(a, b, c) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: picked by `choose` only where the CPU has AVX.
            Stores::Avx => unsafe { nt_avx::triad(a, b, c) },
        }
    }
}

/// Elements before `dst` reaches an `align`-byte boundary, at most `n`:
/// streaming stores need an aligned address, and a thread's block of an
/// array starts wherever the split put it.
#[cfg(target_arch = "x86_64")]
fn head_len(dst: *const f64, align: usize, n: usize) -> usize {
    let off = dst as usize % align;
    let head = if off == 0 { 0 } else { (align - off) / 8 };
    head.min(n)
}

/// Scale, Add and Triad with streaming stores, for one vector width. Each
/// does its unaligned head and its tail with ordinary stores and the
/// aligned middle with streaming ones, then fences: streaming stores are
/// weakly ordered, and the barrier after the kernel must not let the next
/// kernel (on another thread) read before they reach memory.
///
/// The functions are `unsafe` only for their target feature: callers
/// must have checked the CPU has it. Every pointer access stays within
/// `i + LANES <= n`, `n` the shortest slice's length, and the stored-to
/// address is aligned to the vector by `head_len`.
#[cfg(target_arch = "x86_64")]
macro_rules! nt_kernels {
    ($module:ident, $feature:literal, $lanes:expr, $set1:ident, $loadu:ident, $stream:ident,
     $add:ident, $mul:ident) => {
        mod $module {
            use std::arch::x86_64::*;

            use super::{head_len, Q};

            const LANES: usize = $lanes;

            #[target_feature(enable = $feature)]
            pub(super) unsafe fn scale(b: &mut [f64], c: &[f64]) {
                let n = b.len().min(c.len());
                let head = head_len(b.as_ptr(), 8 * LANES, n);
                super::scale(&mut b[..head], &c[..head]);
                let q = $set1(Q);
                let mut i = head;
                while i + LANES <= n {
                    // SAFETY: i + LANES <= n, and b + i is aligned (see above).
                    unsafe {
                        let v = $mul(q, $loadu(c.as_ptr().add(i)));
                        $stream(b.as_mut_ptr().add(i), v);
                    }
                    i += LANES;
                }
                super::scale(&mut b[i..n], &c[i..n]);
                _mm_sfence();
            }

            #[target_feature(enable = $feature)]
            pub(super) unsafe fn add(c: &mut [f64], a: &[f64], b: &[f64]) {
                let n = c.len().min(a.len()).min(b.len());
                let head = head_len(c.as_ptr(), 8 * LANES, n);
                super::add(&mut c[..head], &a[..head], &b[..head]);
                let mut i = head;
                while i + LANES <= n {
                    // SAFETY: i + LANES <= n, and c + i is aligned.
                    unsafe {
                        let v = $add($loadu(a.as_ptr().add(i)), $loadu(b.as_ptr().add(i)));
                        $stream(c.as_mut_ptr().add(i), v);
                    }
                    i += LANES;
                }
                super::add(&mut c[i..n], &a[i..n], &b[i..n]);
                _mm_sfence();
            }

            #[target_feature(enable = $feature)]
            pub(super) unsafe fn triad(a: &mut [f64], b: &[f64], c: &[f64]) {
                let n = a.len().min(b.len()).min(c.len());
                let head = head_len(a.as_ptr(), 8 * LANES, n);
                super::triad(&mut a[..head], &b[..head], &c[..head]);
                let q = $set1(Q);
                let mut i = head;
                while i + LANES <= n {
                    // SAFETY: i + LANES <= n, and a + i is aligned.
                    unsafe {
                        let v = $add(
                            $loadu(b.as_ptr().add(i)),
                            $mul(q, $loadu(c.as_ptr().add(i))),
                        );
                        $stream(a.as_mut_ptr().add(i), v);
                    }
                    i += LANES;
                }
                super::triad(&mut a[i..n], &b[i..n], &c[i..n]);
                _mm_sfence();
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
nt_kernels!(
    nt_sse2,
    "sse2",
    2,
    _mm_set1_pd,
    _mm_loadu_pd,
    _mm_stream_pd,
    _mm_add_pd,
    _mm_mul_pd
);
#[cfg(target_arch = "x86_64")]
nt_kernels!(
    nt_avx,
    "avx",
    4,
    _mm256_set1_pd,
    _mm256_loadu_pd,
    _mm256_stream_pd,
    _mm256_add_pd,
    _mm256_mul_pd
);

/// The values every element must hold after `ntimes` passes.
pub fn expected(ntimes: usize) -> [f64; 3] {
    let (mut a, mut b, mut c) = (1.0f64, 2.0f64, 0.0f64);
    a *= 2.0;
    for _ in 0..ntimes {
        c = a;
        b = Q * c;
        c = a + b;
        a = b + Q * c;
    }
    [a, b, c]
}

/// STREAM's `checkSTREAMresults`.
fn check(arrays: &[&mut [f64]], ntimes: usize) -> Validation {
    let want = expected(ntimes);
    let mut failures = Vec::new();
    for ((name, arr), want) in ["a", "b", "c"].iter().zip(arrays).zip(want) {
        let n = arr.len().max(1) as f64;
        let mut sum_err = 0.0f64;
        let mut bad = 0u64;
        for &x in arr.iter() {
            let e = (x - want).abs();
            sum_err += e;
            if e / want.abs() > EPSILON {
                bad += 1;
            }
        }
        let rel = (sum_err / n) / want.abs();
        if rel > EPSILON || !rel.is_finite() {
            failures.push(format!(
                "array {name}: expected {want:e}, average absolute error {:e}, relative {rel:e}, {bad} elements off",
                sum_err / n
            ));
        }
    }
    if failures.is_empty() {
        Validation::passed(format!(
            "Solution Validates: avg error less than {EPSILON:e} on all three arrays"
        ))
    } else {
        Validation::failed(format!("Failed Validation: {}", failures.join("; ")))
    }
}

/// What the kernels' tests share (STREAM's here, the stencil's too): a
/// kernel run to its end on heap arrays, and its check asserted.
#[cfg(test)]
pub(crate) mod test_support {
    use std::sync::atomic::AtomicBool;

    use iomark_model::mem::{Advice, Backing, CheckOutcome, Validation};
    use iomark_model::units::Nanos;

    use crate::region::Region;
    use crate::MemError;

    /// A kernel's `run`: its spec, the thread count, the region, the stop
    /// flag; its figures and wall time unless stopped.
    type Run<S, R> =
        fn(&S, usize, &mut Region, &AtomicBool) -> Result<Option<(R, Nanos)>, MemError>;

    /// The kernel's `run` on heap arrays of its `sizes`, never stopped:
    /// its figures and wall time.
    pub(crate) fn run_on_heap<S, R>(
        spec: &S,
        threads: usize,
        sizes: fn(&S) -> Vec<usize>,
        run: Run<S, R>,
    ) -> (R, Nanos) {
        let mut region = Region::new(&Backing::Heap, Advice::Normal, &sizes(spec)).unwrap();
        run(spec, threads, &mut region, &AtomicBool::new(false))
            .unwrap()
            .unwrap()
    }

    /// The run's own check passed; its detail says why not.
    pub(crate) fn assert_validates(v: &Validation) {
        assert_eq!(v.outcome, CheckOutcome::Passed, "{}", v.detail);
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{assert_validates, run_on_heap};
    use super::*;

    #[test]
    fn expected_values_match_stream_c() {
        let [a, b, c] = expected(10);
        assert_eq!(a, 1.15330078125e12);
        assert_eq!(b, 2.3066015625e11);
        assert_eq!(c, 3.07546875e11);
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
}
