//! The Himeno benchmark (RIKEN, v3.0, "xpa" C version): Jacobi iterations of
//! a 19-point pressure Poisson stencil on 14 float arrays of I x J x K points.
//!
//! - Layout as the original: index ((n·I + i)·J + j)·K + k, k innermost; each
//!   component (a0..a3, b0..b2, c0..c2) is its own array, with 64-bit indices
//!   so the paper's XXL (1025x1025x2049, 2.15e9 points per array) works.
//! - Parallel as the usual OpenMP port: whole i-planes in one contiguous
//!   block per thread, for the sweep and for the copy of wrk2 into p.
//! - gosa, the sum of squared residuals of the last sweep, is summed in f64:
//!   the original's float sum is badly rounded from size M up and stuck at a
//!   power of two at L. It is checked against the f64 reference values of the
//!   research notes with a relative tolerance of 1e-3 when the iteration count
//!   is fixed and the grid and count have a reference.
//! - MFLOPS = 34 x (I-3)(J-3)(K-3) x nn / seconds / 10^6, the original's
//!   convention, although (I-2)(J-2)(K-2) points are updated.
//! - With a time target: 3 timed rehearsal sweeps, then nn = target / (t/3)
//!   sweeps continuing from that state, as the original does.
//! - The execution time (what `--relative` compares) is initialisation plus
//!   the nn timed sweeps; the rehearsal is left out, so a run of
//!   `Iterations(nn)` does the same counted work as a timed run that chose nn.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iomark_model::mem::{HimenoGrid, HimenoLength, HimenoResult, HimenoSpec, Validation};
use iomark_model::units::{Bytes, Nanos};

use crate::observe::{MemObserver, Pass, Quiet};
use crate::region::Region;
use crate::{split, threads, MemError};

/// Relaxation factor.
const OMEGA: f32 = 0.8;

/// Floats per grid point: p, a0..a3, b0..b2, c0..c2, bnd, wrk1, wrk2.
const ARRAYS: usize = iomark_model::mem::HIMENO_ARRAYS;

/// Relative tolerance on gosa (covers FMA contraction and thread splits).
pub const GOSA_TOLERANCE: f64 = 1e-3;

/// The named grids: xpa extents, plus the paper's XXL from the odd series.
pub const GRIDS: [(&str, u64, u64, u64); 6] = [
    ("xs", 32, 32, 64),
    ("s", 64, 64, 128),
    ("m", 128, 128, 256),
    ("l", 256, 256, 512),
    ("xl", 512, 512, 1024),
    ("xxl", 1025, 1025, 2049),
];

/// gosa summed in f64 after a fixed number of sweeps from a fresh grid
/// (research notes, section 2.8; S at 64 sweeps is LLVM's test-suite case).
const REFERENCES: [((u64, u64, u64), u32, f64); 7] = [
    ((32, 32, 64), 3, 6.229796e-03),
    ((64, 64, 128), 3, 3.296794e-03),
    ((64, 64, 128), 64, 2.394869e-03),
    ((128, 128, 256), 3, 1.693459e-03),
    ((128, 128, 256), 64, 1.455115e-03),
    ((256, 256, 512), 3, 8.606862e-04),
    ((512, 512, 1024), 3, 4.383945e-04),
];

/// The reference gosa for a grid and fixed sweep count, if published.
pub fn reference(grid: &HimenoGrid, iterations: u32) -> Option<f64> {
    REFERENCES
        .iter()
        .find(|(g, nn, _)| *g == (grid.i, grid.j, grid.k) && *nn == iterations)
        .map(|r| r.2)
}

/// Parse `xs|s|m|l|xl|xxl` or `IxJxK` (each extent at least 4).
pub fn parse_grid(s: &str) -> Result<HimenoGrid, String> {
    let lower = s.trim().to_ascii_lowercase();
    if let Some(&(name, i, j, k)) = GRIDS.iter().find(|g| g.0 == lower) {
        return Ok(HimenoGrid {
            name: Some(name.to_string()),
            i,
            j,
            k,
        });
    }
    let dims: Vec<u64> = lower
        .split('x')
        .map(|d| d.parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            format!("bad grid {s:?}: use xs, s, m, l, xl, xxl or IxJxK such as 65x65x129")
        })?;
    match dims[..] {
        [i, j, k] if i >= 4 && j >= 4 && k >= 4 => Ok(HimenoGrid {
            name: None,
            i,
            j,
            k,
        }),
        [_, _, _] => Err(format!("bad grid {s:?}: each extent must be at least 4")),
        _ => Err(format!(
            "bad grid {s:?}: use xs, s, m, l, xl, xxl or IxJxK such as 65x65x129"
        )),
    }
}

/// Byte sizes of the 14 arrays.
pub fn sizes(spec: &HimenoSpec) -> Vec<usize> {
    spec.array_sizes()
}

/// Floating-point operations per sweep, Himeno's convention.
pub fn flops_per_sweep(g: &HimenoGrid) -> f64 {
    34.0 * (g.i - 3) as f64 * (g.j - 3) as f64 * (g.k - 3) as f64
}

/// Grid extents.
#[derive(Clone, Copy)]
struct Dims {
    i: usize,
    j: usize,
    k: usize,
}

/// The read-only inputs of a sweep.
struct Coeffs<'a> {
    a: [&'a [f32]; 4],
    b: [&'a [f32]; 3],
    c: [&'a [f32]; 3],
    bnd: &'a [f32],
    wrk1: &'a [f32],
}

/// Run Himeno on the region's 14 arrays (made from [`sizes`]). Returns the
/// figures and the execution time: initialisation plus the `nn` timed
/// sweeps, without the rehearsal (a calibration a fixed count skips, so two
/// runs of the same `nn` did the same counted work); `None` when `stop` was
/// raised (checked before each sweep), or an error when a thread cannot be
/// started.
pub fn run(
    spec: &HimenoSpec,
    threads: usize,
    region: &mut Region,
    stop: &AtomicBool,
) -> Result<Option<(HimenoResult, Nanos)>, MemError> {
    run_observed(spec, threads, region, stop, &mut Quiet)
}

/// [`run`], telling `obs` of each timed Jacobi sweep (not the rehearsal's).
pub fn run_observed(
    spec: &HimenoSpec,
    threads: usize,
    region: &mut Region,
    stop: &AtomicBool,
    obs: &mut dyn MemObserver,
) -> Result<Option<(HimenoResult, Nanos)>, MemError> {
    let g = &spec.grid;
    let d = Dims {
        i: g.i as usize,
        j: g.j as usize,
        k: g.k as usize,
    };
    let mut arrays = region.arrays::<f32>();
    let t = Instant::now();
    init(&mut arrays, d, threads)?;
    let init_time = Nanos::from_duration(t.elapsed());

    let (p, rest) = arrays.split_first_mut().expect("14 arrays");
    let (wrk2, rest) = rest.split_last_mut().expect("14 arrays");
    let [a0, a1, a2, a3, b0, b1, b2, c0, c1, c2, bnd, wrk1] = rest else {
        unreachable!("himeno::sizes makes 14 arrays")
    };
    let co = Coeffs {
        a: [a0, a1, a2, a3],
        b: [b0, b1, b2],
        c: [c0, c1, c2],
        bnd,
        wrk1,
    };

    let (rehearsal, nn) = match spec.length {
        HimenoLength::Iterations(nn) => (0, nn),
        HimenoLength::Target(target) => {
            let t = Instant::now();
            if jacobi(3, p, wrk2, &co, d, threads, stop, &mut |_, _| {})?.is_none() {
                return Ok(None);
            }
            let per = t.elapsed().as_secs_f64() / 3.0;
            let nn = (target.as_secs_f64() / per.max(1e-9)) as u32;
            (3, nn.max(1))
        }
    };
    let t = Instant::now();
    let flops = flops_per_sweep(g);
    let mut timed = |index: u32, took: std::time::Duration| {
        obs.pass(&Pass {
            index,
            counted: true,
            bytes: None,
            seconds: took.as_secs_f64(),
            flops: Some(flops),
        });
    };
    let Some(gosa) = jacobi(nn, p, wrk2, &co, d, threads, stop, &mut timed)? else {
        return Ok(None);
    };
    let elapsed = Nanos::from_duration(t.elapsed());
    let execution = Nanos(init_time.get().saturating_add(elapsed.get()));

    let mflops = flops_per_sweep(g) * nn as f64 / elapsed.as_secs_f64().max(1e-12) / 1e6;
    let gosa_reference = match spec.length {
        HimenoLength::Iterations(nn) => reference(g, nn),
        HimenoLength::Target(_) => None,
    };
    let validation = validate(gosa, gosa_reference, &spec.length);
    let result = HimenoResult {
        data_bytes: Bytes(g.points() * 4 * ARRAYS as u64),
        init: init_time,
        rehearsal_iterations: rehearsal,
        iterations: nn,
        elapsed,
        mflops,
        gosa,
        gosa_reference,
        validation,
    };
    Ok(Some((result, execution)))
}

fn validate(gosa: f64, reference: Option<f64>, length: &HimenoLength) -> Validation {
    if !gosa.is_finite() {
        return Validation::failed(format!("gosa is {gosa}"));
    }
    match (reference, length) {
        (Some(want), _) => {
            let rel = (gosa - want).abs() / want;
            if rel <= GOSA_TOLERANCE {
                Validation::passed(format!(
                    "gosa {gosa:.6e} matches the reference {want:.6e} (relative error {rel:.1e} <= {GOSA_TOLERANCE:.0e})"
                ))
            } else {
                Validation::failed(format!(
                    "gosa {gosa:.6e} differs from the reference {want:.6e} by {rel:.1e} (tolerance {GOSA_TOLERANCE:.0e})"
                ))
            }
        }
        (None, HimenoLength::Iterations(nn)) => Validation::unchecked(format!(
            "no reference gosa for this grid at {nn} iterations (references: xs/s/m/l/xl at 3, s and m at 64)"
        )),
        (None, HimenoLength::Target(_)) => Validation::unchecked(
            "the iteration count depends on machine speed, so gosa has no reference (use --iterations 64 with --grid s to check)",
        ),
    }
}

/// Initial values, each thread writing the i-planes it will work on.
fn init(arrays: &mut [&mut [f32]], d: Dims, threads: usize) -> Result<(), MemError> {
    let plane = d.j * d.k;
    let ranges = split::ranges(d.i, threads);
    let denom = ((d.i - 1) * (d.i - 1)) as f32;
    // Per array, per thread: that thread's planes.
    let mut per_thread: Vec<Vec<&mut [f32]>> = (0..ranges.len()).map(|_| Vec::new()).collect();
    for arr in arrays.iter_mut() {
        for (t, piece) in split::split_mut(&mut arr[..], &ranges, plane)
            .into_iter()
            .enumerate()
        {
            per_thread[t].push(piece);
        }
    }
    // Array order: p, a0..a3, b0..b2, c0..c2, bnd, wrk1, wrk2.
    const FILL: [f32; ARRAYS] = [
        f32::NAN,
        1.0,
        1.0,
        1.0,
        1.0 / 6.0,
        0.0,
        0.0,
        0.0,
        1.0,
        1.0,
        1.0,
        1.0,
        0.0,
        0.0,
    ];
    let total = ranges.len();
    let tasks: Vec<_> = per_thread
        .into_iter()
        .zip(ranges.iter().cloned())
        .map(|(pieces, planes)| {
            move || {
                for (n, piece) in pieces.into_iter().enumerate() {
                    if n == 0 {
                        for (pi, i) in planes.clone().enumerate() {
                            let v = (i * i) as f32 / denom;
                            piece[pi * plane..(pi + 1) * plane].fill(v);
                        }
                    } else {
                        piece.fill(FILL[n]);
                    }
                }
            }
        })
        .collect();
    debug_assert_eq!(tasks.len(), total);
    std::thread::scope(|s| threads::spawn_together(s, tasks))
}

/// `nn` sweeps, `swept` told of each (its number from 1 and its time);
/// returns gosa of the last one, or `None` when stopped.
#[allow(clippy::too_many_arguments)]
fn jacobi(
    nn: u32,
    p: &mut [f32],
    wrk2: &mut [f32],
    co: &Coeffs,
    d: Dims,
    threads: usize,
    stop: &AtomicBool,
    swept: &mut dyn FnMut(u32, std::time::Duration),
) -> Result<Option<f64>, MemError> {
    let plane = d.j * d.k;
    let ranges: Vec<_> = split::ranges(d.i - 2, threads)
        .into_iter()
        .map(|r| r.start + 1..r.end + 1)
        .collect();
    let total = ranges.len();
    let mut gosa = 0.0;
    for index in 1..=nn {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let started = Instant::now();
        // Sweep: read p everywhere, write this thread's planes of wrk2.
        let blocks = split::split_mut(wrk2, &ranges, plane);
        let p_read: &[f32] = p;
        gosa = if threads <= 1 {
            blocks
                .into_iter()
                .zip(ranges.iter().cloned())
                .map(|(w, r)| sweep_planes(p_read, w, co, d, r))
                .sum()
        } else {
            std::thread::scope(|s| {
                let mut parts = blocks.into_iter().zip(ranges.iter().cloned());
                let first = parts.next().expect("at least one thread");
                let handles = parts
                    .enumerate()
                    .map(|(index, (w, r))| {
                        threads::spawn(s, index + 1, total, move || {
                            sweep_planes(p_read, w, co, d, r)
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let mut sum = sweep_planes(p_read, first.0, co, d, first.1);
                for h in handles {
                    sum += h.join().expect("sweep thread panicked");
                }
                Ok::<_, MemError>(sum)
            })?
        };
        // Copy the interior of wrk2 into p, plane by plane, same split.
        let p_blocks = split::split_mut(p, &ranges, plane);
        let w_blocks = split::split_mut(wrk2, &ranges, plane);
        let copy = |pb: &mut [f32], wb: &mut [f32]| {
            for (pp, ww) in pb.chunks_exact_mut(plane).zip(wb.chunks_exact(plane)) {
                for j in 1..d.j - 1 {
                    let row = j * d.k + 1..j * d.k + d.k - 1;
                    pp[row.clone()].copy_from_slice(&ww[row]);
                }
            }
        };
        if threads <= 1 {
            for (pb, wb) in p_blocks.into_iter().zip(w_blocks) {
                copy(pb, wb);
            }
        } else {
            std::thread::scope(|s| {
                let mut parts = p_blocks.into_iter().zip(w_blocks);
                let first = parts.next().expect("at least one thread");
                for (index, (pb, wb)) in parts.enumerate() {
                    threads::spawn(s, index + 1, total, move || copy(pb, wb))?;
                }
                copy(first.0, first.1);
                Ok::<_, MemError>(())
            })?;
        }
        swept(index, started.elapsed());
    }
    Ok(Some(gosa))
}

/// The Jacobi update of planes `planes` (global i indices) into `w2`, which
/// holds exactly those planes. Returns their share of gosa.
fn sweep_planes(
    p: &[f32],
    w2: &mut [f32],
    co: &Coeffs,
    d: Dims,
    planes: std::ops::Range<usize>,
) -> f64 {
    let (jd, kd) = (d.j, d.k);
    let m = kd - 2;
    let mut ss_row = vec![0.0f32; m];
    let mut gosa = 0.0f64;
    let lo = planes.start;
    for i in planes {
        for j in 1..jd - 1 {
            let at = |ii: usize, jj: usize| (ii * jd + jj) * kd;
            let c = at(i, j);
            // Row starts for the 9 (i, j) neighbours; k offsets by slicing.
            let row = |base: usize, dk: usize| &p[base + dk..base + dk + m];
            let (ip, im, jp, jm) = (at(i + 1, j), at(i - 1, j), at(i, j + 1), at(i, j - 1));
            let (ipjp, ipjm) = (at(i + 1, j + 1), at(i + 1, j - 1));
            let (imjp, imjm) = (at(i - 1, j + 1), at(i - 1, j - 1));
            // Offsets dk: 0 is k-1, 1 is k, 2 is k+1.
            let p_c = row(c, 1);
            let p_ck1 = row(c, 2);
            let p_ck0 = row(c, 0);
            let p_ip = row(ip, 1);
            let p_jp = row(jp, 1);
            let p_im = row(im, 1);
            let p_jm = row(jm, 1);
            let p_ipjp = row(ipjp, 1);
            let p_ipjm = row(ipjm, 1);
            let p_imjp = row(imjp, 1);
            let p_imjm = row(imjm, 1);
            let p_jpk1 = row(jp, 2);
            let p_jmk1 = row(jm, 2);
            let p_jpk0 = row(jp, 0);
            let p_jmk0 = row(jm, 0);
            let p_ipk1 = row(ip, 2);
            let p_imk1 = row(im, 2);
            let p_ipk0 = row(ip, 0);
            let p_imk0 = row(im, 0);
            fn pt(a: &[f32], at: usize, m: usize) -> &[f32] {
                &a[at..at + m]
            }
            let pt = |a| pt(a, c + 1, m);
            let (a0, a1, a2, a3) = (pt(co.a[0]), pt(co.a[1]), pt(co.a[2]), pt(co.a[3]));
            let (b0, b1, b2) = (pt(co.b[0]), pt(co.b[1]), pt(co.b[2]));
            let (c0, c1, c2) = (pt(co.c[0]), pt(co.c[1]), pt(co.c[2]));
            let (bnd, wrk1) = (pt(co.bnd), pt(co.wrk1));
            let out_at = (i - lo) * jd * kd + j * kd + 1;
            let out = &mut w2[out_at..out_at + m];
            let ss_row = &mut ss_row[..m];
            for x in 0..m {
                let s0 = a0[x] * p_ip[x]
                    + a1[x] * p_jp[x]
                    + a2[x] * p_ck1[x]
                    + b0[x] * (p_ipjp[x] - p_ipjm[x] - p_imjp[x] + p_imjm[x])
                    + b1[x] * (p_jpk1[x] - p_jmk1[x] - p_jpk0[x] + p_jmk0[x])
                    + b2[x] * (p_ipk1[x] - p_imk1[x] - p_ipk0[x] + p_imk0[x])
                    + c0[x] * p_im[x]
                    + c1[x] * p_jm[x]
                    + c2[x] * p_ck0[x]
                    + wrk1[x];
                let ss = (s0 * a3[x] - p_c[x]) * bnd[x];
                ss_row[x] = ss * ss;
                out[x] = p_c[x] + OMEGA * ss;
            }
            // Eight independent f64 partial sums vectorise; a single running
            // sum would serialise on the add latency.
            let mut lanes = [0.0f64; 8];
            let mut chunks = ss_row.chunks_exact(8);
            for ch in &mut chunks {
                for (l, &v) in lanes.iter_mut().zip(ch) {
                    *l += v as f64;
                }
            }
            for &v in chunks.remainder() {
                lanes[0] += v as f64;
            }
            gosa += lanes.iter().sum::<f64>();
        }
    }
    gosa
}

#[cfg(test)]
#[path = "himeno_tests.rs"]
mod tests;
