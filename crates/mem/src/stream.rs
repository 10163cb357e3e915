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

use crate::observe::{MemObserver, Pass, Quiet};
use crate::region::Region;
use crate::threads::{self, Barrier, OffOnPanic};
use crate::{split, MemError};

mod kernels;
use kernels::{copy, Stores};

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
    run_with(spec, threads, region, stop, step, &mut Quiet)
}

/// [`run_in_step`], telling `obs` of each pass once its four kernels are
/// timed (on the calling thread, between passes, while the others wait).
pub fn run_with(
    spec: &StreamSpec,
    threads: usize,
    region: &mut Region,
    stop: &AtomicBool,
    step: &mut dyn FnMut(),
    obs: &mut dyn MemObserver,
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
                worker(a, b, c, sync, ntimes, stores, None, None)
            }) {
                // The threads already started leave at the barrier and
                // the scope joins them.
                barrier.call_off();
                return Err(e);
            }
        }
        let (a, b, c) = first;
        let bytes: u64 = StreamOp::ALL
            .iter()
            .map(|op| op.words() * 8 * n as u64)
            .sum();
        let mut timed = |pass: usize, times: &[u64; 4]| {
            obs.pass(&Pass {
                index: pass as u32 + 1,
                // STREAM's first pass is not counted.
                counted: pass > 0,
                bytes: Some(bytes),
                seconds: times.iter().sum::<u64>() as f64 / 1e9,
                flops: None,
            });
        };
        Ok(worker(
            a,
            b,
            c,
            sync,
            ntimes,
            stores,
            Some(step),
            Some(&mut timed),
        ))
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

/// A pass's number (from 0) and its four kernels' times in ns, as the
/// leader hands them on.
type Timed<'a> = &'a mut dyn FnMut(usize, &[u64; 4]);

/// One thread's share: its own block of each array, for every phase. Every
/// thread runs the same barrier sequence; the first thread's clock readings
/// between barriers are the timings (as STREAM times around each parallel
/// region from the master thread). The first thread (the leader) holds
/// `step`, called before each phase while the others wait, and `timed`,
/// told of each pass's times once the pass ends.
#[allow(clippy::too_many_arguments)]
fn worker(
    a: &mut [f64],
    b: &mut [f64],
    c: &mut [f64],
    sync: Sync,
    ntimes: usize,
    stores: Stores,
    mut step: Option<&mut dyn FnMut()>,
    mut timed: Option<Timed<'_>>,
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
        if let Some(f) = timed.as_mut() {
            f(passes.len(), &times);
        }
        passes.push(times);
    }
    Some(Timing {
        init,
        execution: Nanos::from_duration(started.elapsed()),
        passes,
    })
}

/// The most passes a run can validate: every pass multiplies `a` by 15
/// (b = 3a, c = 4a, then a = b + 3c), and after this many `a` is the last
/// power that fits a double (2 * 15^261 is about 3e307); one more and the
/// arrays hold infinities. STREAM's own C has the same ceiling; its
/// default is 10 passes.
pub const MAX_PASSES: u32 = 261;

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

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
