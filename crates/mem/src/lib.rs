//! Memory and out-of-core kernels: STREAM, a k x k 2D stencil and the Himeno
//! benchmark, with their arrays on the heap or in a file mapped `MAP_SHARED`,
//! optionally run inside a memory cgroup so the data outgrows the memory.
//!
//! This crate owns the kernels, where their data lives ([`region`]) and the
//! parent/child protocol that runs a kernel under a limit ([`job`]), in a
//! memory cgroup of [`iomark_host::cgroup`]. It knows nothing of the command
//! line, the store or the report: [`settings`] checks what a front end was
//! given and turns it into a job; the rest takes an
//! [`iomark_model::mem::MemJobSpec`] and returns an
//! [`iomark_model::mem::MemRun`].
//!
//! Why a child process for limits: a heap working set larger than a memory
//! cgroup's limit without swap is SIGKILLed by the kernel's OOM killer. Only a
//! parent outside the group can see that happen, read the group's `oom_kill`
//! counter and report it as a result instead of dying with it.
//!
//! ```no_run
//! use iomark_model::mem::{Advice, Backing, MemJobSpec, MemKernelSpec, StreamSpec};
//! let spec = MemJobSpec {
//!     kernel: MemKernelSpec::Stream(StreamSpec { array_len: 10_000_000, ntimes: 10, nt_stores: true }),
//!     threads: 2,
//!     backing: Backing::Heap,
//!     advice: Advice::Normal,
//!     mem_limit: None,
//! };
//! let stop = std::sync::atomic::AtomicBool::new(false);
//! let outcome = iomark_mem::job::run_in_process(&spec, &stop).unwrap();
//! println!("{:?}", outcome);
//! ```
#![deny(missing_docs)]

mod error;
pub mod himeno;
pub mod job;
pub mod json_stream;
#[cfg(test)]
mod kernel_test_support;
pub mod live;
pub mod observe;
pub mod region;
pub mod relative;
pub mod settings;
mod split;
pub mod stencil;
pub mod stream;
pub mod swap;
pub mod sweep;
pub mod sys;
pub mod threads;

pub use error::MemError;
