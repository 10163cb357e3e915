//! What the kernels' tests share (STREAM's and the stencil's): a
//! kernel run to its end on heap arrays, and its check asserted.

use std::sync::atomic::AtomicBool;

use iomark_model::mem::{Advice, Backing, CheckOutcome, Validation};
use iomark_model::units::Nanos;

use crate::region::Region;
use crate::MemError;

/// A kernel's `run`: its spec, the thread count, the region, the stop
/// flag; its figures and wall time unless stopped.
type Run<S, R> = fn(&S, usize, &mut Region, &AtomicBool) -> Result<Option<(R, Nanos)>, MemError>;

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
