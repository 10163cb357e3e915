//! Running one memory job: in this process, or in a child process placed in
//! a memory cgroup when there is a limit, plus the `--relative` baseline.
//!
//! The limited case, step by step:
//! 1. the parent creates the cgroup with the limit ([`iomark_host::cgroup::MemCgroup`]);
//! 2. it starts the child command it was given (the same binary, re-executed
//!    into a hidden subcommand that calls [`serve_child`]) with the job as
//!    JSON in [`CHILD_JOB_ENV`] and the group's `cgroup.procs` in
//!    [`CHILD_CGROUP_ENV`];
//! 3. the child moves itself into the group before it allocates, runs the
//!    kernel, writes each pass as a JSON line to stdout as it ends, and
//!    last `Result<MemOutcome, String>` as a JSON line (the lines are
//!    [`ChildLine`]s);
//! 4. the parent reads the lines as they come and tells its observer of
//!    each pass on the thread that runs the job; a child dead of SIGKILL
//!    while the group's `oom_kill` counter rose is reported as
//!    [`MemOutcome::OomKilled`], the passes it sent before kept;
//! 5. the group and any backing file are removed whatever happened.

use std::sync::atomic::AtomicBool;

use iomark_model::mem::{
    Backing, HimenoLength, HimenoSpec, KernelResult, MemHost, MemJobSpec, MemKernelSpec, MemOutcome,
};
use iomark_model::units::Bytes;
use iomark_model::{Warning, WarningKind};

use crate::observe::{MemObserver, Quiet};
use crate::region::{Region, ARRAY_PAD};
use crate::{himeno, stencil, stream, sys, threads, MemError};

mod limited;
mod protocol;

pub use limited::{run_limited, serve_child};
pub use protocol::ChildLine;

/// Environment variable carrying the job (JSON) to the limited child.
pub const CHILD_JOB_ENV: &str = "IOMARK_MEM_CHILD_JOB";
/// Environment variable naming the `cgroup.procs` file the child joins.
pub const CHILD_CGROUP_ENV: &str = "IOMARK_MEM_CGROUP_PROCS";
/// Environment variable carrying the parent's pid, so that the child can
/// tell whether its parent died before it asked to die with it.
pub const CHILD_PARENT_ENV: &str = "IOMARK_MEM_PARENT";

/// What a heap run killed by the memory cgroup's OOM killer reports.
pub const OOM_NO_SWAP: &str =
    "killed by the out-of-memory killer: data larger than the memory limit and no swap";

/// Byte sizes of the arrays a kernel needs.
pub fn array_sizes(kernel: &MemKernelSpec) -> Vec<usize> {
    kernel.array_sizes()
}

/// Total bytes of a kernel's arrays.
pub fn data_bytes(kernel: &MemKernelSpec) -> Bytes {
    kernel.data_bytes()
}

/// Bytes of a kernel's arrays with their alignment padding, computed so that
/// no size can overflow (a `--size` of 10^18 elements is a number, not an
/// allocation).
fn data_bytes_wide(kernel: &MemKernelSpec) -> u128 {
    let product = |factors: &[u64]| {
        factors
            .iter()
            .fold(1u128, |p, &f| p.saturating_mul(u128::from(f)))
    };
    let (arrays, bytes_each): (u128, u128) = match kernel {
        MemKernelSpec::Stream(s) => (3, product(&[s.array_len, 8])),
        MemKernelSpec::Stencil(s) => (2, product(&[s.n, s.n, 8])),
        MemKernelSpec::Himeno(s) => (14, product(&[s.grid.i, s.grid.j, s.grid.k, 4])),
    };
    let padding = 4096 + arrays * ARRAY_PAD as u128;
    arrays.saturating_mul(bytes_each.saturating_add(padding))
}

/// The most one job maps: half of x86-64's 128 TiB of user address space.
const MAX_MAPPING: u128 = 64 << 40;

fn bytes_text(b: u128) -> String {
    match u64::try_from(b) {
        Ok(b) => Bytes(b).to_string(),
        Err(_) if b == u128::MAX => "more bytes than can be counted".into(),
        Err(_) => format!("{b} B"),
    }
}

/// Refuse, before anything is allocated, a job this machine cannot run: more
/// threads than [`threads::max_threads`], arrays beyond what one mapping can
/// hold, or heap arrays (the job's, or the `relative` baseline's) larger
/// than the memory available (`MemAvailable` plus free swap).
pub fn check_limits(spec: &MemJobSpec, relative: bool) -> Result<(), MemError> {
    let (need, flag) = check_shape(spec)?;
    let on_heap = spec.backing == Backing::Heap || relative;
    if let (true, Some(avail)) = (on_heap, sys::mem_available()) {
        let swap = sys::host().swap;
        let swap_free = swap.total.get().saturating_sub(swap.used.get());
        let available = u128::from(avail.get()) + u128::from(swap_free);
        if need > available {
            let hint = if spec.backing == Backing::Heap {
                " or --backing mmap:DIR"
            } else {
                " or drop --relative, whose baseline runs on the heap"
            };
            return Err(MemError::TooBig {
                need: bytes_text(need),
                available: bytes_text(available),
                what: format!("MemAvailable {avail} + free swap {}", Bytes(swap_free)),
                flag,
                hint,
            });
        }
    }
    Ok(())
}

/// The bounds that need no look at the machine's memory: threads, and the
/// size of one mapping. Returns the bytes needed and the size flag.
fn check_shape(spec: &MemJobSpec) -> Result<(u128, &'static str), MemError> {
    let max = threads::max_threads();
    if spec.threads > max {
        return Err(MemError::TooManyThreads {
            asked: spec.threads,
            max,
            per_cpu: threads::THREADS_PER_CPU,
            cap: threads::MAX_THREADS,
        });
    }
    let flag = match &spec.kernel {
        MemKernelSpec::Stream(_) => "--size",
        MemKernelSpec::Stencil(_) => "--n",
        MemKernelSpec::Himeno(_) => "--grid",
    };
    let need = data_bytes_wide(&spec.kernel);
    if need > MAX_MAPPING {
        return Err(MemError::TooBig {
            need: bytes_text(need),
            available: bytes_text(MAX_MAPPING),
            what: "the most iomark maps for one job".into(),
            flag,
            hint: "",
        });
    }
    Ok((need, flag))
}

/// Run the kernel here, without a limit. The backing file, if any, is
/// created and removed inside. `stop` (raised by a signal handler) ends the
/// run between passes or sweeps with [`MemOutcome::Interrupted`].
pub fn run_in_process(spec: &MemJobSpec, stop: &AtomicBool) -> Result<MemOutcome, MemError> {
    run_kernel(spec, stop, &mut || {}, &mut Quiet)
}

/// [`run_in_process`], telling `obs` of each pass as it is measured.
pub fn run_observed(
    spec: &MemJobSpec,
    stop: &AtomicBool,
    obs: &mut dyn MemObserver,
) -> Result<MemOutcome, MemError> {
    run_kernel(spec, stop, &mut || {}, obs)
}

/// [`run_in_process`], with `step` called on this thread before each phase
/// of STREAM ([`stream::run_in_step`]; the other kernels call it once,
/// before they start): processes running the kernel together (MPI ranks)
/// keep in step there.
pub fn run_in_step(
    spec: &MemJobSpec,
    stop: &AtomicBool,
    step: &mut dyn FnMut(),
) -> Result<MemOutcome, MemError> {
    run_kernel(spec, stop, step, &mut Quiet)
}

/// [`run_in_step`] with `obs` told of each pass.
fn run_kernel(
    spec: &MemJobSpec,
    stop: &AtomicBool,
    step: &mut dyn FnMut(),
    obs: &mut dyn MemObserver,
) -> Result<MemOutcome, MemError> {
    // The memory check is the caller's: in a limited child the cgroup, not
    // the machine, bounds what the arrays may use.
    check_shape(spec)?;
    let threads = spec.threads.max(1) as usize;
    let mut region = Region::new(&spec.backing, spec.advice, &array_sizes(&spec.kernel))?;
    let done = match &spec.kernel {
        MemKernelSpec::Stream(s) => stream::run_with(s, threads, &mut region, stop, step, obs)
            .map(|o| o.map(|(r, e)| (KernelResult::Stream(r), e))),
        MemKernelSpec::Stencil(s) => {
            step();
            stencil::run_observed(s, threads, &mut region, stop, obs)
                .map(|o| o.map(|(r, e)| (KernelResult::Stencil(r), e)))
        }
        MemKernelSpec::Himeno(s) => {
            step();
            himeno::run_observed(s, threads, &mut region, stop, obs)
                .map(|o| o.map(|(r, e)| (KernelResult::Himeno(r), e)))
        }
    };
    // A file that shrank explains any other failure and voids any result.
    region.shrank()?;
    let Some((result, execution)) = done? else {
        return Ok(MemOutcome::Interrupted);
    };
    let msync = region.sync()?;
    region.shrank()?;
    Ok(MemOutcome::Completed {
        result,
        execution,
        msync,
    })
}

/// Warnings that follow from the job, the machine and, for a run under a
/// limit, its group's record (`usage`, none before or without one).
pub fn warnings(
    spec: &MemJobSpec,
    host: &MemHost,
    usage: Option<&iomark_model::mem::CgroupUsage>,
) -> Vec<Warning> {
    let mut out = Vec::new();
    if let (MemKernelSpec::Stream(s), Some(llc)) = (&spec.kernel, host.llc) {
        let array = s.array_len * 8;
        if array < 4 * llc.get() {
            out.push(Warning::new(
                WarningKind::ArrayFitsInCache,
                format!(
                    "each array ({}) is under 4 x the last-level cache ({llc}), so caches inflate the rates; use --size {} or more",
                    Bytes(array),
                    (4 * llc.get()).div_ceil(8)
                ),
            ));
        }
    }
    if let Some(limit) = spec.mem_limit {
        let data = data_bytes(&spec.kernel);
        // Data at the limit can still press on it (the process's own pages
        // come on top): the group's record decides, and a limit that was
        // hit is out of core whatever the sizes say.
        let limit_was_hit = usage.and_then(|u| u.limit_hits).is_some_and(|h| h > 0);
        if data <= limit && !limit_was_hit {
            out.push(Warning::new(
                WarningKind::Other,
                format!(
                    "the data ({data}) fits within the memory limit ({limit}), so the run is not out of core; lower --mem-limit"
                ),
            ));
        } else if matches!(spec.backing, Backing::Mmap { warm: true, .. }) {
            out.push(Warning::new(
                WarningKind::Other,
                format!(
                    "--warm read the file ({data}) before measuring, but it is larger than the memory limit ({limit}), so most of it was evicted again; warm runs show the file-fits-in-memory case at data under the limit"
                ),
            ));
        } else if spec.backing == Backing::Heap && host.swap.total.get() > 0 {
            out.push(Warning::new(
                WarningKind::Other,
                format!(
                    "heap data beyond the limit goes to swap ({}), which is what this run measures",
                    host.swap.devices.join(", ")
                ),
            ));
        }
    }
    out
}

/// The job the constrained run does after the all-in-memory baseline
/// produced `baseline`: the same work. Himeno with a time target repeats
/// the baseline's timed sweeps exactly (`HimenoLength::Iterations`), so the
/// two execution times count the same sweeps; every other job already has a
/// fixed amount of work and runs as given.
pub fn same_work(spec: &MemJobSpec, baseline: &KernelResult) -> MemJobSpec {
    match (&spec.kernel, baseline) {
        (MemKernelSpec::Himeno(h), KernelResult::Himeno(r))
            if matches!(h.length, HimenoLength::Target(_)) =>
        {
            MemJobSpec {
                kernel: MemKernelSpec::Himeno(HimenoSpec {
                    grid: h.grid.clone(),
                    length: HimenoLength::Iterations(r.iterations),
                }),
                ..spec.clone()
            }
        }
        _ => spec.clone(),
    }
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
