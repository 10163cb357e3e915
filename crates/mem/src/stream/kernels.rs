//! STREAM's four kernels, and how Scale, Add and Triad store their
//! results: ordinary stores the compiler vectorises, or `std::arch`
//! streaming (non-temporal) stores where asked for and the CPU has them.
//! The `unsafe` of the streaming stores is confined here.

use super::Q;

/// c = a
pub(super) fn copy(a: &[f64], c: &mut [f64]) {
    c.copy_from_slice(a);
}

/// b = q c
pub(super) fn scale(b: &mut [f64], c: &[f64]) {
    for (b, c) in b.iter_mut().zip(c) {
        *b = Q * c;
    }
}

/// c = a + b
pub(super) fn add(c: &mut [f64], a: &[f64], b: &[f64]) {
    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
        *c = a + b;
    }
}

/// a = b + q c
pub(super) fn triad(a: &mut [f64], b: &[f64], c: &[f64]) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + Q * c;
    }
}

/// How Scale, Add and Triad store their results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stores {
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
    pub(super) fn choose(nt: bool) -> Self {
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
    pub(super) fn describe(self) -> &'static str {
        match self {
            Stores::Regular => "regular",
            #[cfg(target_arch = "x86_64")]
            Stores::Sse2 => "non-temporal (SSE2 _mm_stream_pd)",
            #[cfg(target_arch = "x86_64")]
            Stores::Avx => "non-temporal (AVX _mm256_stream_pd)",
        }
    }

    pub(super) fn scale(self, b: &mut [f64], c: &[f64]) {
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

    pub(super) fn add(self, c: &mut [f64], a: &[f64], b: &[f64]) {
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

    pub(super) fn triad(self, a: &mut [f64], b: &[f64], c: &[f64]) {
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
