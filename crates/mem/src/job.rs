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
    Backing, HimenoLength, HimenoSpec, KernelResult, MemBaseline, MemHost, MemJobSpec,
    MemKernelSpec, MemOutcome, MemRun, MemSweep, MemSweepPoint, SweepAxis,
};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{Warning, WarningKind};

use crate::region::{Region, ARRAY_PAD};
use crate::swap::{SwapArea, SwapTarget};
use crate::{himeno, stencil, stream, sys, threads, MemError};
use iomark_host::cgroup::{self, MemCgroup};

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
const OOM_WITH_SWAP: &str =
    "killed by the out-of-memory killer: data larger than the memory limit plus the free swap";

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
    run_in_step(spec, stop, &mut || {})
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
    // The memory check is the caller's: in a limited child the cgroup, not
    // the machine, bounds what the arrays may use.
    check_shape(spec)?;
    let threads = spec.threads.max(1) as usize;
    let mut region = Region::new(&spec.backing, spec.advice, &array_sizes(&spec.kernel))?;
    let done = match &spec.kernel {
        MemKernelSpec::Stream(s) => stream::run_in_step(s, threads, &mut region, stop, step)
            .map(|o| o.map(|(r, e)| (KernelResult::Stream(r), e))),
        MemKernelSpec::Stencil(s) => {
            step();
            stencil::run(s, threads, &mut region, stop)
                .map(|o| o.map(|(r, e)| (KernelResult::Stencil(r), e)))
        }
        MemKernelSpec::Himeno(s) => {
            step();
            himeno::run(s, threads, &mut region, stop)
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

/// The child's side: join the cgroup, run, print the outcome as JSON on
/// stdout. Errors are printed the same way, so the parent can tell a failed
/// run from a killed one.
pub fn serve_child(stop: &AtomicBool) -> Result<(), MemError> {
    die_with_parent()?;
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

/// The child is killed when its parent dies, however it dies (kill -9
/// included): a child left running would hold its memory group, its
/// backing file and a CPU to the end of its job. A parent that died before
/// the request is seen through `getppid` no longer being it.
fn die_with_parent() -> Result<(), MemError> {
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(|e| MemError::BadSpec(format!("cannot ask to die with the parent: {e}")))?;
    let parent = std::env::var(CHILD_PARENT_ENV)
        .ok()
        .and_then(|p| p.parse::<i32>().ok());
    let now = rustix::process::getppid().map(|p| p.as_raw_nonzero().get());
    if parent.is_some() && parent != now {
        return Err(MemError::BadSpec(
            "the parent iomark is gone: nothing to run for".into(),
        ));
    }
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
/// a memory cgroup of `limit` bytes, allowed `swap` bytes of swap beyond it
/// when given (a swap backing's area). `stop` raised here (SIGTERM or SIGHUP
/// reach only this process) is passed on to the child as SIGINT, so it
/// stops as it would on Ctrl-C.
pub fn run_limited(
    spec: &MemJobSpec,
    limit: Bytes,
    host: &MemHost,
    swap: Option<Bytes>,
    mut child: Command,
    stop: &AtomicBool,
) -> Result<(MemOutcome, iomark_model::mem::CgroupUsage), MemError> {
    let _leftover = Leftover(match &spec.backing {
        Backing::Mmap { path } => Some(PathBuf::from(path)),
        Backing::Heap | Backing::Swap { .. } => None,
    });
    let group = MemCgroup::create(limit)?;
    if let Some(swap) = swap {
        group.allow_swap(swap)?;
    }
    let job = serde_json::to_string(spec).expect("specs serialise");
    let started = child
        .env(CHILD_JOB_ENV, job)
        .env(CHILD_CGROUP_ENV, group.procs_path())
        .env(CHILD_PARENT_ENV, std::process::id().to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|source| MemError::Child {
            what: "start",
            source,
        })?;
    let output = watch_child(started, stop)?;
    let usage = group.usage();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if let Some(line) = stdout.lines().rev().find(|l| l.starts_with('{')) {
        if let Ok(reported) = serde_json::from_str::<Result<MemOutcome, String>>(line) {
            return reported.map(|o| (o, usage)).map_err(MemError::InChild);
        }
    }
    use std::os::unix::process::ExitStatusExt;
    // A stop passed on before the child installed its handlers ends it.
    if output.status.signal() == Some(libc_sigint())
        && stop.load(std::sync::atomic::Ordering::Relaxed)
    {
        return Ok((MemOutcome::Interrupted, usage));
    }
    if output.status.signal() == Some(9) && usage.oom_kills > 0 {
        let message = if host.swap.total.get() == 0 && swap.is_none() {
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

fn libc_sigint() -> i32 {
    rustix::process::Signal::INT.as_raw()
}

/// Wait for the limited child, reading its output, and pass `stop` on to
/// it. Never returns before the child has ended.
fn watch_child(
    mut proc: std::process::Child,
    stop: &AtomicBool,
) -> Result<std::process::Output, MemError> {
    enum Pipe {
        Out(std::process::ChildStdout),
        Err(std::process::ChildStderr),
    }
    fn drain(pipe: Option<Pipe>) -> Vec<u8> {
        use std::io::Read;
        let mut buf = Vec::new();
        let _ = match pipe {
            Some(Pipe::Out(mut p)) => p.read_to_end(&mut buf),
            Some(Pipe::Err(mut p)) => p.read_to_end(&mut buf),
            None => Ok(0),
        };
        buf
    }
    let (out, err) = (proc.stdout.take(), proc.stderr.take());
    let pid = rustix::process::Pid::from_raw(proc.id() as i32);
    std::thread::scope(|s| {
        // The pipes are read while the child runs, so a chatty child never
        // blocks on a full pipe.
        let reader = |pipe, name: &str| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn_scoped(s, move || drain(pipe))
                .map_err(|source| MemError::Child {
                    what: "start a thread to read its output",
                    source,
                })
        };
        let readers = reader(out.map(Pipe::Out), "iomark-child-out")
            .and_then(|o| reader(err.map(Pipe::Err), "iomark-child-err").map(|e| (o, e)));
        let (out, err) = match readers {
            Ok(r) => r,
            Err(e) => {
                // Ending the child closes its pipes, which ends any reader.
                let _ = proc.kill();
                let _ = proc.wait();
                return Err(e);
            }
        };
        let mut passed_on = false;
        let status = loop {
            match proc.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(source) => {
                    let _ = proc.kill();
                    let _ = proc.wait();
                    return Err(MemError::Child {
                        what: "wait",
                        source,
                    });
                }
            }
            if !passed_on && stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(pid) = pid {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
                }
                passed_on = true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        Ok(std::process::Output {
            status,
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        })
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

/// Run a job completely: the optional all-in-memory baseline (`relative`),
/// then the job itself, in a limited child when it has a limit. After a
/// baseline the job does the baseline's work ([`same_work`]), and the
/// relative time is the ratio of the two execution times (initialisation
/// plus the counted work; see [`MemOutcome::Completed`]).
/// `swap` is where a `--backing swap:PATH` area goes (checked by
/// [`crate::settings`]); it is set up for the run only.
/// `child` builds the command that re-executes the binary into
/// [`serve_child`].
/// `stop` is the Ctrl-C flag (see [`run_in_process`]).
pub fn run(
    spec: &MemJobSpec,
    relative: bool,
    swap: Option<&SwapTarget>,
    stop: &AtomicBool,
    child: impl FnOnce() -> Command,
) -> Result<MemRun, MemError> {
    check_limits(spec, relative)?;
    if spec.mem_limit.is_some() {
        cgroup::available()?;
    }
    let host = sys::host();
    let baseline = if relative {
        baseline_of(spec, stop)?
    } else {
        None
    };
    let area = match (swap, &spec.backing) {
        (Some(target), Backing::Swap { .. }) => Some(SwapArea::create(
            target,
            swap_size(std::iter::once(&spec.kernel)),
        )?),
        _ => None,
    };
    let run = run_point(spec, baseline, &host, area.as_ref(), stop, child)?;
    if let Some(area) = area {
        area.remove()?;
    }
    Ok(run)
}

/// The all-in-memory run (heap, no limit) of `spec`'s kernel: its result
/// and execution time, `None` when it was stopped.
fn baseline_of(
    spec: &MemJobSpec,
    stop: &AtomicBool,
) -> Result<Option<(KernelResult, Nanos)>, MemError> {
    let all_in_memory = MemJobSpec {
        backing: Backing::Heap,
        mem_limit: None,
        ..spec.clone()
    };
    Ok(match run_in_process(&all_in_memory, stop)? {
        MemOutcome::Completed {
            result, execution, ..
        } => Some((result, execution)),
        _ => None,
    })
}

/// A swap area large enough for the largest of `kernels`' data, plus room
/// for the process itself.
fn swap_size<'a>(kernels: impl Iterator<Item = &'a MemKernelSpec>) -> Bytes {
    let most = kernels.map(|k| data_bytes(k).get()).max().unwrap_or(0);
    Bytes(most + 64 * Bytes::MIB)
}

/// Run `spec` (after its baseline, if any) where its limit says, with the
/// swap `area` of a swap backing active.
fn run_point(
    spec: &MemJobSpec,
    baseline: Option<(KernelResult, Nanos)>,
    host: &MemHost,
    area: Option<&SwapArea>,
    stop: &AtomicBool,
    child: impl FnOnce() -> Command,
) -> Result<MemRun, MemError> {
    let mut warnings = warnings(spec, host);
    let constrained = match &baseline {
        Some((result, _)) => same_work(spec, result),
        None => spec.clone(),
    };
    // The limited run is a child: its CPU counts once it is reaped.
    let sampler = iomark_host::CpuSampler::start_with_children();
    let quota = iomark_host::machine::CpuQuotaWatch::start();
    let wall = std::time::Instant::now();
    let (outcome, cgroup) = match constrained.mem_limit {
        _ if stop.load(std::sync::atomic::Ordering::Relaxed) => (MemOutcome::Interrupted, None),
        Some(limit) => {
            let swap = area.map(SwapArea::size);
            let (o, u) = run_limited(&constrained, limit, host, swap, child(), stop)?;
            (o, Some(Box::new(u)))
        }
        None => (run_in_process(&constrained, stop)?, None),
    };
    let record = sampler.read();
    warnings.extend(iomark_host::machine::machine_warnings(
        "the kernel's run",
        wall.elapsed(),
        record.process,
        record.host.as_ref(),
        quota.as_ref().and_then(|q| q.throttled()).as_ref(),
    ));
    let cpu = Some(record);
    let baseline = baseline.map(|(result, execution)| {
        Box::new(MemBaseline {
            relative_time: relative_time(&outcome, execution),
            result,
            execution,
        })
    });
    Ok(MemRun {
        spec: spec.clone(),
        host: host.clone(),
        outcome,
        cgroup,
        baseline,
        warnings,
        sweep: None,
        cpu,
        cluster: None,
    })
}

/// A checked sweep: the kernel at each x value, crossed with the backings.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    /// What x counts.
    pub axis: SweepAxis,
    /// Each x value and the kernel sized for it.
    pub points: Vec<(f64, MemKernelSpec)>,
    /// The backings, in the order given.
    pub backings: Vec<Backing>,
}

/// Run a sweep: the all-in-memory baseline of every size first, then each
/// backing over all sizes (a swap backing's area is active for its column
/// only), each point under the job's limit in its own memory cgroup. A
/// point the OOM killer ends is kept as killed. `template` gives threads,
/// advice and limit; its kernel and backing are the first point's.
pub fn run_sweep(
    template: &MemJobSpec,
    sweep: &SweepSpec,
    swap: Option<&SwapTarget>,
    stop: &AtomicBool,
    child: impl Fn() -> Command,
) -> Result<MemRun, MemError> {
    let at = |kernel: &MemKernelSpec, backing: &Backing| MemJobSpec {
        kernel: kernel.clone(),
        backing: backing.clone(),
        ..template.clone()
    };
    for (_, kernel) in &sweep.points {
        check_limits(&at(kernel, &Backing::Heap), true)?;
    }
    if template.mem_limit.is_some() {
        cgroup::available()?;
    }
    let host = sys::host();
    let mut baselines = Vec::with_capacity(sweep.points.len());
    for (_, kernel) in &sweep.points {
        baselines.push(baseline_of(&at(kernel, &Backing::Heap), stop)?);
    }
    let mut columns = Vec::with_capacity(sweep.backings.len());
    for backing in &sweep.backings {
        let area = match (swap, backing) {
            (Some(target), Backing::Swap { .. }) if !stopped(stop) => Some(SwapArea::create(
                target,
                swap_size(sweep.points.iter().map(|(_, k)| k)),
            )?),
            _ => None,
        };
        let mut column = Vec::with_capacity(sweep.points.len());
        for ((x, kernel), baseline) in sweep.points.iter().zip(&baselines) {
            let spec = at(kernel, backing);
            let run = run_point(&spec, baseline.clone(), &host, area.as_ref(), stop, &child)?;
            column.push(MemSweepPoint {
                x: *x,
                data: data_bytes(kernel),
                run,
            });
        }
        if let Some(area) = area {
            area.remove()?;
        }
        columns.push(column);
    }
    // Stored x by x, each x's backings in the order given.
    let mut points = Vec::with_capacity(sweep.points.len() * sweep.backings.len());
    let mut iters: Vec<_> = columns.into_iter().map(Vec::into_iter).collect();
    for _ in &sweep.points {
        points.extend(iters.iter_mut().filter_map(Iterator::next));
    }
    let outcome = if stopped(stop) {
        MemOutcome::Interrupted
    } else {
        MemOutcome::Swept
    };
    let first = sweep
        .points
        .first()
        .map(|(_, k)| k)
        .unwrap_or(&template.kernel);
    let first_backing = sweep.backings.first().unwrap_or(&template.backing);
    Ok(MemRun {
        spec: at(first, first_backing),
        host,
        outcome,
        cgroup: None,
        baseline: None,
        warnings: Vec::new(),
        sweep: Some(Box::new(MemSweep {
            axis: sweep.axis,
            backings: sweep.backings.clone(),
            points,
        })),
        // Each point carries its own CPU; the sweep as a whole has none.
        cpu: None,
        cluster: None,
    })
}

fn stopped(stop: &AtomicBool) -> bool {
    stop.load(std::sync::atomic::Ordering::Relaxed)
}

/// The constrained run's execution time over the baseline's, when it
/// completed and the baseline took any time.
fn relative_time(outcome: &MemOutcome, baseline: Nanos) -> Option<f64> {
    match outcome {
        MemOutcome::Completed { execution, .. } if baseline.get() > 0 => {
            Some(execution.get() as f64 / baseline.get() as f64)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::mem::{Advice, HimenoGrid, HimenoLength, HimenoSpec, StreamSpec};

    fn spec(kernel: MemKernelSpec, threads: u32) -> MemJobSpec {
        MemJobSpec {
            kernel,
            threads,
            backing: Backing::Heap,
            advice: Advice::Normal,
            mem_limit: None,
        }
    }

    #[test]
    fn limits_refuse_absurd_jobs_without_overflowing() {
        let small = MemKernelSpec::Stream(StreamSpec {
            array_len: 1000,
            ntimes: 2,
            nt_stores: false,
        });
        assert!(check_limits(&spec(small.clone(), 1), false).is_ok());
        let many = check_limits(&spec(small, threads::MAX_THREADS + 1), false);
        assert!(matches!(many, Err(MemError::TooManyThreads { .. })));
        let huge = MemKernelSpec::Himeno(HimenoSpec {
            grid: HimenoGrid {
                name: None,
                i: u64::MAX,
                j: u64::MAX,
                k: u64::MAX,
            },
            length: HimenoLength::Iterations(1),
        });
        let err = check_limits(&spec(huge, 1), false).unwrap_err().to_string();
        assert!(err.contains("use a smaller --grid"), "{err}");
    }

    fn himeno_xs(length: HimenoLength) -> MemJobSpec {
        let grid = crate::himeno::parse_grid("xs").unwrap();
        spec(MemKernelSpec::Himeno(HimenoSpec { grid, length }), 1)
    }

    fn completed(spec: &MemJobSpec) -> (KernelResult, Nanos) {
        match run_in_process(spec, &AtomicBool::new(false)).unwrap() {
            MemOutcome::Completed {
                result, execution, ..
            } => (result, execution),
            other => panic!("{other:?}"),
        }
    }

    fn himeno_of(r: &KernelResult) -> &iomark_model::mem::HimenoResult {
        match r {
            KernelResult::Himeno(h) => h,
            other => panic!("{other:?}"),
        }
    }

    /// A timed baseline hands its sweep count on; fixed work is kept.
    #[test]
    fn the_constrained_run_repeats_a_timed_baselines_sweeps() {
        let timed = himeno_xs(HimenoLength::Target(Nanos(50_000_000)));
        let (base, base_exec) = completed(&timed);
        let b = himeno_of(&base);
        assert_eq!(b.rehearsal_iterations, 3);
        let same = same_work(&timed, &base);
        let MemKernelSpec::Himeno(h) = &same.kernel else {
            panic!("{same:?}")
        };
        assert_eq!(h.length, HimenoLength::Iterations(b.iterations));
        assert_eq!(
            (same.threads, &same.backing),
            (timed.threads, &timed.backing)
        );
        let (run, exec) = completed(&same);
        let r = himeno_of(&run);
        assert_eq!((r.rehearsal_iterations, r.iterations), (0, b.iterations));
        // Both count initialisation and the timed sweeps, no rehearsal.
        for (h, e) in [(b, base_exec), (r, exec)] {
            assert_eq!(e.get(), h.init.get() + h.elapsed.get());
        }
        assert!(relative_time(
            &MemOutcome::Completed {
                result: run.clone(),
                execution: exec,
                msync: None
            },
            base_exec
        )
        .is_some_and(|t| t > 0.0));

        let fixed = himeno_xs(HimenoLength::Iterations(3));
        assert_eq!(same_work(&fixed, &base), fixed);
        let stream = spec(
            MemKernelSpec::Stream(StreamSpec {
                array_len: 1000,
                ntimes: 2,
                nt_stores: false,
            }),
            1,
        );
        assert_eq!(same_work(&stream, &base), stream);
    }

    #[test]
    fn no_relative_time_without_a_completed_run_or_a_baseline_time() {
        assert_eq!(relative_time(&MemOutcome::Interrupted, Nanos(1)), None);
        let (result, execution) = completed(&himeno_xs(HimenoLength::Iterations(1)));
        let done = MemOutcome::Completed {
            result,
            execution,
            msync: None,
        };
        assert_eq!(relative_time(&done, Nanos(0)), None);
        assert_eq!(relative_time(&done, execution), Some(1.0));
    }
}
