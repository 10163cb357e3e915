//! What a memory kernel measured: STREAM's four kernels, the stencil's
//! sweeps, Himeno's MFLOPS.

use serde::{Deserialize, Serialize};

use super::Validation;
use crate::units::{Bytes, BytesPerSec, Nanos};

/// The four STREAM kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamOp {
    /// c = a (2 words per element).
    Copy,
    /// b = q*c (2 words).
    Scale,
    /// c = a + b (3 words).
    Add,
    /// a = b + q*c (3 words).
    Triad,
}

impl StreamOp {
    /// The kernels in STREAM's order within a pass.
    pub const ALL: [StreamOp; 4] = [
        StreamOp::Copy,
        StreamOp::Scale,
        StreamOp::Add,
        StreamOp::Triad,
    ];

    /// STREAM's label.
    pub fn label(self) -> &'static str {
        match self {
            StreamOp::Copy => "Copy",
            StreamOp::Scale => "Scale",
            StreamOp::Add => "Add",
            StreamOp::Triad => "Triad",
        }
    }

    /// Array reads plus writes STREAM counts per element (write-allocate is
    /// not counted).
    pub fn words(self) -> u64 {
        match self {
            StreamOp::Copy | StreamOp::Scale => 2,
            StreamOp::Add | StreamOp::Triad => 3,
        }
    }
}

/// One STREAM kernel's figures over the counted passes (all but the first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamKernelResult {
    /// Which kernel.
    pub op: StreamOp,
    /// Bytes STREAM counts for one pass: words x 8 x array length.
    pub bytes_per_pass: Bytes,
    /// Bytes per pass over the minimum time (STREAM's "Best Rate").
    pub best_rate: BytesPerSec,
    /// Mean time of the counted passes.
    pub avg: Nanos,
    /// Minimum time.
    pub min: Nanos,
    /// Maximum time.
    pub max: Nanos,
}

/// STREAM's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamResult {
    /// Bytes of one array.
    pub array_bytes: Bytes,
    /// The first-touch initialisation (a=1, b=2, c=0): not in the rates,
    /// part of the execution time.
    pub init: Nanos,
    /// How Copy is done: `memcpy` (slice `copy_from_slice`), as gcc's STREAM does.
    pub copy_method: String,
    /// How Scale, Add and Triad stored their results: `regular`, or
    /// `non-temporal (...)` naming the instruction (empty in runs stored
    /// before this was recorded, which used regular stores).
    #[serde(default)]
    pub stores: String,
    /// Copy, Scale, Add, Triad.
    pub kernels: Vec<StreamKernelResult>,
    /// STREAM's `checkSTREAMresults`.
    pub validation: Validation,
}

/// The stencil's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StencilResult {
    /// Bytes of both arrays.
    pub data_bytes: Bytes,
    /// The first-touch initialisation: not in MFLOPS, part of the execution
    /// time.
    pub init: Nanos,
    /// The first sweep (warm-up), reported on its own.
    pub first_sweep: Nanos,
    /// The fastest sweep after the first (the first when there is only one).
    pub best_sweep: Nanos,
    /// The mean sweep after the first (the first when there is only one).
    pub mean_sweep: Nanos,
    /// Flops per interior point: 2k²-1 (k² multiplies, k²-1 adds).
    pub flops_per_point: u64,
    /// Interior points updated per sweep.
    pub interior_points: u64,
    /// Flops per sweep over the best sweep time, in 10^6 per second.
    pub mflops: f64,
    /// 16 B per interior point (one read of src, one write of dst) over the
    /// best sweep; halo re-reads and write-allocate not counted.
    pub effective_rate: BytesPerSec,
    /// Sum of the final interior values in row order: equal across thread
    /// counts and backings for the same configuration.
    pub checksum: f64,
    /// The affine field came through every sweep unchanged, bit for bit.
    pub validation: Validation,
}

/// Himeno's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HimenoResult {
    /// Bytes of the 14 float arrays.
    pub data_bytes: Bytes,
    /// The first-touch initialisation: not in MFLOPS, part of the execution
    /// time.
    pub init: Nanos,
    /// Rehearsal sweeps before the timed run (3 with a time target, else 0);
    /// in neither MFLOPS nor the execution time.
    pub rehearsal_iterations: u32,
    /// Timed sweeps (Himeno's `nn`).
    pub iterations: u32,
    /// Time of the timed sweeps.
    pub elapsed: Nanos,
    /// Himeno's formula: 34 x (I-3)(J-3)(K-3) x nn / seconds / 10^6.
    pub mflops: f64,
    /// Sum of squared residuals of the last sweep, summed in f64.
    pub gosa: f64,
    /// The published value for this grid and fixed iteration count, if known.
    pub gosa_reference: Option<f64>,
    /// gosa against the reference (relative tolerance 1e-3), or why unchecked.
    pub validation: Validation,
}

/// A kernel's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kernel", rename_all = "snake_case")]
pub enum KernelResult {
    /// STREAM.
    Stream(StreamResult),
    /// The 2D stencil.
    Stencil(StencilResult),
    /// Himeno.
    Himeno(HimenoResult),
}

impl KernelResult {
    /// Whether the kernel's own check passed.
    pub fn validation(&self) -> &Validation {
        match self {
            KernelResult::Stream(r) => &r.validation,
            KernelResult::Stencil(r) => &r.validation,
            KernelResult::Himeno(r) => &r.validation,
        }
    }
}
