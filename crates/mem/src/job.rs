//! Running one memory job: in this process, or in a child process placed in
//! a memory cgroup when there is a limit, plus the `--relative` baseline.
//!
//! The limited case, step by step:
//! 1. the parent creates the cgroup with the limit ([`MemCgroup`]);
//! 2. it starts the child command it was given (the same binary, re-executed
//!    into a hidden subcommand that calls [`serve_child`]) with the job as
//!    JSON in [`CHILD_JOB_ENV`] and the group's `cgroup.procs` in
//!    [`CHILD_CGROUP_ENV`];
//! 3. the child moves itself into the group before it allocates, runs the
//!    kernel and writes `Result<MemOutcome, String>` as JSON to stdout;
//! 4. the parent reads it; a child dead of SIGKILL while the group's
//!    `oom_kill` counter rose is reported as [`MemOutcome::OomKilled`];
//! 5. the group and any backing file are removed whatever happened.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use iomark_model::mem::{
    Backing, KernelResult, MemBaseline, MemHost, MemJobSpec, MemKernelSpec, MemOutcome, MemRun,
};
use iomark_model::units::Bytes;
use iomark_model::{Warning, WarningKind};

use crate::cgroup::{self, MemCgroup};
use crate::region::Region;
use crate::{himeno, stencil, stream, sys, MemError};

/// Environment variable carrying the job (JSON) to the limited child.
pub const CHILD_JOB_ENV: &str = "IOMARK_MEM_CHILD_JOB";
/// Environment variable naming the `cgroup.procs` file the child joins.
pub const CHILD_CGROUP_ENV: &str = "IOMARK_MEM_CGROUP_PROCS";

/// What a heap run killed by the memory cgroup's OOM killer reports.
pub const OOM_NO_SWAP: &str =
    "killed by the out-of-memory killer: data larger than the memory limit and no swap";
const OOM_WITH_SWAP: &str =
    "killed by the out-of-memory killer: data larger than the memory limit plus the free swap";

/// Byte sizes of the arrays a kernel needs.
pub fn array_sizes(kernel: &MemKernelSpec) -> Vec<usize> {
    match kernel {
        MemKernelSpec::Stream(s) => stream::sizes(s),
        MemKernelSpec::Stencil(s) => stencil::sizes(s),
        MemKernelSpec::Himeno(s) => himeno::sizes(s),
    }
}

/// Total bytes of a kernel's arrays.
pub fn data_bytes(kernel: &MemKernelSpec) -> Bytes {
    Bytes(array_sizes(kernel).iter().map(|&s| s as u64).sum())
}

/// Run the kernel here, without a limit. The backing file, if any, is
/// created and removed inside. `stop` (raised by a signal handler) ends the
/// run between passes or sweeps with [`MemOutcome::Interrupted`].
pub fn run_in_process(spec: &MemJobSpec, stop: &AtomicBool) -> Result<MemOutcome, MemError> {
    let threads = spec.threads.max(1) as usize;
    let mut region = Region::new(&spec.backing, spec.advice, &array_sizes(&spec.kernel))?;
    let done =
        match &spec.kernel {
            MemKernelSpec::Stream(s) => stream::run(s, threads, &mut region, stop)
                .map(|(r, e)| (KernelResult::Stream(r), e)),
            MemKernelSpec::Stencil(s) => stencil::run(s, threads, &mut region, stop)
                .map(|(r, e)| (KernelResult::Stencil(r), e)),
            MemKernelSpec::Himeno(s) => himeno::run(s, threads, &mut region, stop)
                .map(|(r, e)| (KernelResult::Himeno(r), e)),
        };
    let Some((result, execution)) = done else {
        return Ok(MemOutcome::Interrupted);
    };
    let msync = region.sync()?;
    Ok(MemOutcome::Completed {
        result,
        execution,
        msync,
    })
}

/// The child's side: join the cgroup, run, print the outcome as JSON on
/// stdout. Errors are printed the same way, so the parent can tell a failed
/// run from a killed one.
pub fn serve_child(stop: &AtomicBool) -> Result<(), MemError> {
    let job = std::env::var(CHILD_JOB_ENV).map_err(|_| {
        MemError::BadSpec(format!(
            "{CHILD_JOB_ENV} is not set: this subcommand is internal to iomark"
        ))
    })?;
    let spec: MemJobSpec = serde_json::from_str(&job)
        .map_err(|e| MemError::BadSpec(format!("{CHILD_JOB_ENV}: {e}")))?;
    let outcome = (|| {
        if let Some(procs) = std::env::var_os(CHILD_CGROUP_ENV) {
            cgroup::join(&PathBuf::from(procs))?;
        }
        run_in_process(&spec, stop)
    })()
    .map_err(|e| e.to_string());
    let text = serde_json::to_string(&outcome).expect("outcomes serialise");
    println!("{text}");
    Ok(())
}

/// Removes the backing file a killed child could not remove.
struct Leftover(Option<PathBuf>);

impl Drop for Leftover {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Run the job in `child` (a command that ends up in [`serve_child`]) inside
/// a memory cgroup of `limit` bytes.
pub fn run_limited(
    spec: &MemJobSpec,
    limit: Bytes,
    host: &MemHost,
    mut child: Command,
) -> Result<(MemOutcome, iomark_model::mem::CgroupUsage), MemError> {
    let _leftover = Leftover(match &spec.backing {
        Backing::Mmap { path } => Some(PathBuf::from(path)),
        Backing::Heap => None,
    });
    let group = MemCgroup::create(limit)?;
    let job = serde_json::to_string(spec).expect("specs serialise");
    let output = child
        .env(CHILD_JOB_ENV, job)
        .env(CHILD_CGROUP_ENV, group.procs_path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|source| MemError::Child {
            what: "start",
            source,
        })?;
    let usage = group.usage();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if let Some(line) = stdout.lines().rev().find(|l| l.starts_with('{')) {
        if let Ok(reported) = serde_json::from_str::<Result<MemOutcome, String>>(line) {
            return reported.map(|o| (o, usage)).map_err(MemError::InChild);
        }
    }
    use std::os::unix::process::ExitStatusExt;
    if output.status.signal() == Some(9) && usage.oom_kills > 0 {
        let message = if host.swap.total.get() == 0 {
            OOM_NO_SWAP
        } else {
            OOM_WITH_SWAP
        };
        return Ok((
            MemOutcome::OomKilled {
                message: message.to_string(),
            },
            usage,
        ));
    }
    let err = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = err.lines().rev().take(3).collect();
    Err(MemError::ChildFailed {
        status: output.status.to_string(),
        stderr: if tail.is_empty() {
            String::new()
        } else {
            format!(
                ": {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            )
        },
    })
}

/// Warnings that follow from the job and the machine alone.
pub fn warnings(spec: &MemJobSpec, host: &MemHost) -> Vec<Warning> {
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
        if data <= limit {
            out.push(Warning::new(
                WarningKind::Other,
                format!(
                    "the data ({data}) fits within the memory limit ({limit}), so the run is not out of core; lower --mem-limit"
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

/// Run a job completely: the optional all-in-memory baseline (`relative`),
/// then the job itself, in a limited child when it has a limit.
/// `child` builds the command that re-executes the binary into
/// [`serve_child`].
/// `stop` is the Ctrl-C flag (see [`run_in_process`]).
pub fn run(
    spec: &MemJobSpec,
    relative: bool,
    stop: &AtomicBool,
    child: impl FnOnce() -> Command,
) -> Result<MemRun, MemError> {
    if spec.mem_limit.is_some() {
        cgroup::available()?;
    }
    let host = sys::host();
    let warnings = warnings(spec, &host);
    let baseline = if relative {
        let all_in_memory = MemJobSpec {
            backing: Backing::Heap,
            mem_limit: None,
            ..spec.clone()
        };
        match run_in_process(&all_in_memory, stop)? {
            MemOutcome::Completed {
                result, execution, ..
            } => Some((result, execution)),
            MemOutcome::Interrupted | MemOutcome::OomKilled { .. } => None,
        }
    } else {
        None
    };
    let (outcome, cgroup) = match spec.mem_limit {
        _ if stop.load(std::sync::atomic::Ordering::Relaxed) => (MemOutcome::Interrupted, None),
        Some(limit) => {
            let (o, u) = run_limited(spec, limit, &host, child())?;
            (o, Some(Box::new(u)))
        }
        None => (run_in_process(spec, stop)?, None),
    };
    let baseline = baseline.map(|(result, execution)| {
        let relative_time = match &outcome {
            MemOutcome::Completed { execution: e, .. } if execution.get() > 0 => {
                Some(e.get() as f64 / execution.get() as f64)
            }
            _ => None,
        };
        Box::new(MemBaseline {
            result,
            execution,
            relative_time,
        })
    });
    Ok(MemRun {
        spec: spec.clone(),
        host,
        outcome,
        cgroup,
        baseline,
        warnings,
    })
}
