//! A k x k weighted-average 2D stencil (k = 3 or 15) on two f64 arrays,
//! `src` and `dst` swapped after every sweep; the interior rows of `dst` are
//! split into one contiguous block per thread, `src` is shared read-only.
//!
//! The mask is the separable tent w(u,v) = (r+1-|u|)(r+1-|v|)/(r+1)^4
//! (1-2-1 x 1-2-1 / 16 for k = 3), used as a full k² table: no separable or
//! sliding-sum shortcut, since the point of 15x15 is k² multiply-adds per
//! point. For k = 3 and 15 every weight is dyadic, so an affine field
//! f(i,j) = 1 + 2i + 3j maps to itself exactly; that is the run's check.
//!
//! Each point is summed in a fixed order (u outer, v inner, from 0.0). The
//! kernel keeps that order but walks a whole row segment per weight, so the
//! loop vectorises across columns and the result is bit-identical to the
//! naive triple loop, for any thread count and backing.
//!
//! Flops are counted as 2k²-1 per interior point (k² multiplies, k²-1 adds);
//! the Parallel Research Kernels count 2·points+1 instead.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iomark_model::mem::{StencilResult, StencilSpec, Validation};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};

use crate::observe::{MemObserver, Pass, Quiet};
use crate::region::Region;
use crate::{split, threads, MemError};

/// Columns processed per block, so a block of the output row stays in L1
/// while all k² weights pass over it.
const BLOCK: usize = 512;

/// Byte sizes of the two arrays.
pub fn sizes(spec: &StencilSpec) -> Vec<usize> {
    spec.array_sizes()
}

/// The k x k tent weights, row-major.
pub fn weights(k: usize) -> Vec<f64> {
    let r = (k - 1) / 2;
    let denom = ((r + 1) as f64).powi(4);
    let mut w = Vec::with_capacity(k * k);
    for u in 0..k {
        for v in 0..k {
            let wu = (r + 1) as f64 - (u as f64 - r as f64).abs();
            let wv = (r + 1) as f64 - (v as f64 - r as f64).abs();
            w.push(wu * wv / denom);
        }
    }
    w
}

/// The affine field the run starts from and must end with.
fn affine(i: usize, j: usize) -> f64 {
    1.0 + 2.0 * i as f64 + 3.0 * j as f64
}

/// Run the stencil on the region's two arrays (made from [`sizes`]).
/// Returns the figures and the execution time (initialisation and all
/// sweeps, the warm-up one too), `None` when `stop`
/// was raised (checked before each sweep), or an error when a thread cannot
/// be started.
pub fn run(
    spec: &StencilSpec,
    threads: usize,
    region: &mut Region,
    stop: &AtomicBool,
) -> Result<Option<(StencilResult, Nanos)>, MemError> {
    run_observed(spec, threads, region, stop, &mut Quiet)
}

/// [`run`], telling `obs` of each sweep as it is timed.
pub fn run_observed(
    spec: &StencilSpec,
    threads: usize,
    region: &mut Region,
    stop: &AtomicBool,
    obs: &mut dyn MemObserver,
) -> Result<Option<(StencilResult, Nanos)>, MemError> {
    let n = spec.n as usize;
    let k = spec.mask as usize;
    let r = (k - 1) / 2;
    let w = weights(k);
    let mut arrays = region.arrays::<f64>();
    let [x, y] = &mut arrays[..] else {
        unreachable!("stencil::sizes makes two arrays")
    };

    let start = Instant::now();
    init(&mut x[..], &mut y[..], n, threads, affine)?;
    let init_time = Nanos::from_duration(start.elapsed());

    let mut times = Vec::with_capacity(spec.sweeps as usize);
    for s in 0..spec.sweeps {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let t = Instant::now();
        if s % 2 == 0 {
            sweep(&x[..], &mut y[..], n, k, &w, threads)?;
        } else {
            sweep(&y[..], &mut x[..], n, k, &w, threads)?;
        }
        let took = t.elapsed();
        times.push(took.as_nanos() as u64);
        let interior = ((n - 2 * r) * (n - 2 * r)) as u64;
        obs.pass(&Pass {
            index: s + 1,
            // The first sweep warms up, unless it is the only one.
            counted: s > 0 || spec.sweeps == 1,
            bytes: Some(16 * interior),
            seconds: took.as_secs_f64(),
            flops: Some(((2 * k * k - 1) as u64 * interior) as f64),
        });
    }
    let execution = Nanos::from_duration(start.elapsed());
    let last: &[f64] = if spec.sweeps % 2 == 1 { &y[..] } else { &x[..] };

    let interior = (n - 2 * r) as u64 * (n - 2 * r) as u64;
    let counted = if times.len() > 1 {
        &times[1..]
    } else {
        &times[..]
    };
    let best = counted.iter().copied().min().unwrap_or(0);
    let mean = counted.iter().sum::<u64>() / counted.len().max(1) as u64;
    let flops_per_point = 2 * (k * k) as u64 - 1;
    let mflops = if best == 0 {
        0.0
    } else {
        (flops_per_point * interior) as f64 / (best as f64 * 1e-9) / 1e6
    };
    let result = StencilResult {
        data_bytes: Bytes((n * n * 16) as u64),
        init: init_time,
        first_sweep: Nanos(times.first().copied().unwrap_or(0)),
        best_sweep: Nanos(best),
        mean_sweep: Nanos(mean),
        flops_per_point,
        interior_points: interior,
        mflops,
        effective_rate: BytesPerSec::over(Bytes(16 * interior), Nanos(best)),
        checksum: checksum(last, n, r),
        validation: check_affine(last, n, spec.sweeps),
    };
    Ok(Some((result, execution)))
}

/// Fill both arrays with `f`, each thread writing the rows it will own.
fn init(
    x: &mut [f64],
    y: &mut [f64],
    n: usize,
    threads: usize,
    f: fn(usize, usize) -> f64,
) -> Result<(), MemError> {
    let ranges = split::ranges(n, threads);
    let total = ranges.len();
    let xs = split::split_mut(x, &ranges, n);
    let ys = split::split_mut(y, &ranges, n);
    let tasks: Vec<_> = xs
        .into_iter()
        .zip(ys)
        .zip(ranges.iter().cloned())
        .map(|((xb, yb), rows)| {
            move || {
                for (ri, i) in rows.enumerate() {
                    let xr = &mut xb[ri * n..(ri + 1) * n];
                    let yr = &mut yb[ri * n..(ri + 1) * n];
                    for (j, (xv, yv)) in xr.iter_mut().zip(yr.iter_mut()).enumerate() {
                        let v = f(i, j);
                        *xv = v;
                        *yv = v;
                    }
                }
            }
        })
        .collect();
    debug_assert_eq!(tasks.len(), total);
    std::thread::scope(|s| threads::spawn_together(s, tasks))
}

/// One sweep: `dst` interior = mask applied to `src`. The boundary frame of
/// width r is never written (Dirichlet). Fails only when a thread cannot be
/// started; the threads already started finish their rows first.
pub fn sweep(
    src: &[f64],
    dst: &mut [f64],
    n: usize,
    k: usize,
    w: &[f64],
    threads: usize,
) -> Result<(), MemError> {
    let r = (k - 1) / 2;
    let rows = r..n - r;
    let ranges: Vec<_> = split::ranges(rows.len(), threads)
        .into_iter()
        .map(|q| q.start + r..q.end + r)
        .collect();
    let blocks = split::split_mut(dst, &ranges, n);
    if threads <= 1 {
        for (block, rows) in blocks.into_iter().zip(ranges) {
            sweep_rows(src, block, rows, n, k, w);
        }
        return Ok(());
    }
    let total = ranges.len();
    std::thread::scope(|s| {
        let mut parts = blocks.into_iter().zip(ranges);
        let first = parts.next();
        for (index, (block, rows)) in parts.enumerate() {
            threads::spawn(s, index + 1, total, move || {
                sweep_rows(src, block, rows, n, k, w)
            })?;
        }
        if let Some((block, rows)) = first {
            sweep_rows(src, block, rows, n, k, w);
        }
        Ok(())
    })
}

fn sweep_rows(
    src: &[f64],
    block: &mut [f64],
    rows: std::ops::Range<usize>,
    n: usize,
    k: usize,
    w: &[f64],
) {
    let r = (k - 1) / 2;
    let width = n - 2 * r;
    for (ri, i) in rows.enumerate() {
        let out_row = &mut block[ri * n + r..ri * n + r + width];
        for (bi, out) in out_row.chunks_mut(BLOCK).enumerate() {
            let j0 = bi * BLOCK;
            let len = out.len();
            out.fill(0.0);
            for u in 0..k {
                // Column j0 of the output row reads src columns j0..j0+k-1.
                let srow = &src[(i + u - r) * n + j0..];
                for v in 0..k {
                    let wv = w[u * k + v];
                    let s = &srow[v..v + len];
                    for (o, &x) in out.iter_mut().zip(s) {
                        *o += wv * x;
                    }
                }
            }
        }
    }
}

/// Sum of interior values in row order, serially.
fn checksum(a: &[f64], n: usize, r: usize) -> f64 {
    let mut sum = 0.0;
    for i in r..n - r {
        sum += a[i * n + r..i * n + n - r].iter().sum::<f64>();
    }
    sum
}

fn check_affine(a: &[f64], n: usize, sweeps: u32) -> Validation {
    let mut bad = 0u64;
    let mut first = None;
    for i in 0..n {
        for j in 0..n {
            let want = affine(i, j);
            let got = a[i * n + j];
            if got.to_bits() != want.to_bits() {
                bad += 1;
                first.get_or_insert((i, j, got, want));
            }
        }
    }
    match first {
        None => Validation::passed(format!(
            "affine field unchanged bit for bit after {sweeps} sweeps"
        )),
        Some((i, j, got, want)) => Validation::failed(format!(
            "{bad} points differ from the affine field, first at ({i},{j}): {got:e} instead of {want:e}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_test_support::{assert_validates, run_on_heap};

    fn pattern(i: usize, j: usize) -> f64 {
        ((37 * i + 101 * j) % 257) as f64 / 256.0
    }

    /// The definition, written as plainly as possible.
    fn naive(src: &[f64], dst: &mut [f64], n: usize, k: usize, w: &[f64]) {
        let r = (k - 1) / 2;
        for i in r..n - r {
            for j in r..n - r {
                let mut acc = 0.0;
                for u in 0..k {
                    for v in 0..k {
                        acc += w[u * k + v] * src[(i + u - r) * n + (j + v - r)];
                    }
                }
                dst[i * n + j] = acc;
            }
        }
    }

    #[test]
    fn weights_sum_to_one_exactly() {
        for k in [3, 15] {
            assert_eq!(weights(k).iter().sum::<f64>(), 1.0);
        }
        assert_eq!(weights(3)[4], 4.0 / 16.0);
    }

    #[test]
    fn parallel_sweeps_equal_the_naive_serial_version_bit_for_bit() {
        // 3x3 on a grid wider than BLOCK + 2r exercises the column blocking;
        // 15x15 stays small because the naive loop is slow in debug builds.
        for (k, n) in [(3, 600), (15, 120)] {
            let w = weights(k);
            let (mut x, mut y) = (vec![0.0; n * n], vec![0.0; n * n]);
            init(&mut x, &mut y, n, 1, pattern).unwrap();
            let (mut nx, mut ny) = (x.clone(), y.clone());
            for s in 0..3 {
                if s % 2 == 0 {
                    sweep(&x, &mut y, n, k, &w, 3).unwrap();
                    naive(&nx, &mut ny, n, k, &w);
                } else {
                    sweep(&y, &mut x, n, k, &w, 3).unwrap();
                    naive(&ny, &mut nx, n, k, &w);
                }
            }
            assert!(
                y.iter().zip(&ny).all(|(a, b)| a.to_bits() == b.to_bits()),
                "k={k}"
            );
            assert!(
                x.iter().zip(&nx).all(|(a, b)| a.to_bits() == b.to_bits()),
                "k={k}"
            );
        }
    }

    #[test]
    fn affine_run_validates_and_checksum_ignores_threads() {
        let spec = StencilSpec {
            n: 300,
            mask: 15,
            sweeps: 3,
        };
        let mut sums = Vec::new();
        for threads in [1, 2] {
            let (r, _) = run_on_heap(&spec, threads, sizes, run);
            assert_validates(&r.validation);
            assert_eq!(r.flops_per_point, 449);
            sums.push(r.checksum);
        }
        assert_eq!(sums[0].to_bits(), sums[1].to_bits());
    }

    #[test]
    fn a_wrong_field_fails_the_check() {
        let n = 8;
        let mut a: Vec<f64> = (0..n * n).map(|p| affine(p / n, p % n)).collect();
        a[9] += 1.0;
        assert!(check_affine(&a, n, 1).is_failed());
    }
}
