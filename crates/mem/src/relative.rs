//! A job against the all-in-memory run: the baseline (heap, no limit),
//! the constrained run on the same work, and with `--repeat` pairs of the
//! two alternated, reported as the median of their ratios.

use std::process::Command;
use std::sync::atomic::AtomicBool;

use iomark_model::mem::{
    Backing, KernelResult, MemBaseline, MemHost, MemJobSpec, MemKernelSpec, MemOutcome, MemRun,
    RepeatPair,
};
use iomark_model::units::{Bytes, Nanos};

use crate::job::{check_limits, data_bytes, run_limited, run_observed, same_work, warnings};
use crate::observe::{Measured, MemObserver, Role};
use crate::swap::{SwapArea, SwapTarget};
use crate::{sys, MemError};
use iomark_host::cgroup;

/// Run a job completely: the optional all-in-memory baseline (`relative`),
/// then the job itself, in a limited child when it has a limit. After a
/// baseline the job does the baseline's work ([`crate::job::same_work`]), and the
/// relative time is the ratio of the two execution times (initialisation
/// plus the counted work; see [`MemOutcome::Completed`]).
/// `swap` is where a `--backing swap:PATH` area goes (checked by
/// [`crate::settings`]); it is set up for the run only.
/// `repeat` (with `relative`): pairs of baseline and constrained run,
/// alternated, whose relative times' median is reported (`run_point`).
/// `child` builds the command that re-executes the binary into
/// [`crate::job::serve_child`].
/// `stop` is the Ctrl-C flag (see [`crate::job::run_in_process`]).
/// `obs` hears of each kernel run as it begins and ends, and of each of
/// its passes (a limited child's as the child reports them).
pub fn run(
    spec: &MemJobSpec,
    relative: bool,
    repeat: u32,
    swap: Option<&SwapTarget>,
    stop: &AtomicBool,
    child: impl Fn() -> Command,
    obs: &mut dyn MemObserver,
) -> Result<MemRun, MemError> {
    check_limits(spec, relative)?;
    if spec.mem_limit.is_some() {
        cgroup::available()?;
    }
    let host = sys::host();
    let baseline = if relative {
        baseline_of(spec, stop, obs)?
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
    let run = run_point(
        spec,
        baseline,
        relative,
        repeat,
        &host,
        area.as_ref(),
        stop,
        &child,
        obs,
    )?;
    if let Some(area) = area {
        area.remove()?;
    }
    Ok(run)
}

/// The all-in-memory run (heap, no limit) of `spec`'s kernel: its result
/// and execution time, `None` when it was stopped.
pub(crate) fn baseline_of(
    spec: &MemJobSpec,
    stop: &AtomicBool,
    obs: &mut dyn MemObserver,
) -> Result<Option<(KernelResult, Nanos)>, MemError> {
    let all_in_memory = MemJobSpec {
        backing: Backing::Heap,
        mem_limit: None,
        ..spec.clone()
    };
    obs.begin(Role::AllInMemory, &all_in_memory);
    let outcome = run_observed(&all_in_memory, stop, obs)?;
    if !matches!(outcome, MemOutcome::Interrupted) {
        obs.measured(&Measured {
            role: Role::AllInMemory,
            spec: &all_in_memory,
            outcome: &outcome,
        });
    }
    Ok(match outcome {
        MemOutcome::Completed {
            result, execution, ..
        } => Some((result, execution)),
        _ => None,
    })
}

/// A swap area large enough for the largest of `kernels`' data, plus room
/// for the process itself.
pub(crate) fn swap_size<'a>(kernels: impl Iterator<Item = &'a MemKernelSpec>) -> Bytes {
    let most = kernels.map(|k| data_bytes(k).get()).max().unwrap_or(0);
    Bytes(most + 64 * Bytes::MIB)
}

/// Run `spec` (after its baseline, if any) where its limit says, with the
/// swap `area` of a swap backing active.
///
/// With `relative`, against the all-in-memory run (`baseline`, or run
/// here first when `None`). With `repeat` N > 1, N pairs alternate: an
/// all-in-memory run, then the constrained run, N times (the first pair's
/// baseline is `baseline` when given), and the relative time is the median
/// of the pairs' ratios, each pair stored ([`MemBaseline::repeats`]):
/// alternating puts load that comes and goes on both sides of a ratio. The
/// run's outcome, limit record and CPU are the first pair's; a pair that
/// does not complete (killed, stopped) ends the repeats with that outcome.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_point(
    spec: &MemJobSpec,
    baseline: Option<(KernelResult, Nanos)>,
    relative: bool,
    repeat: u32,
    host: &MemHost,
    area: Option<&SwapArea>,
    stop: &AtomicBool,
    child: &dyn Fn() -> Command,
    obs: &mut dyn MemObserver,
) -> Result<MemRun, MemError> {
    let baseline = match baseline {
        Some(b) => Some(b),
        None if relative => baseline_of(spec, stop, obs)?,
        None => None,
    };
    let mut run = run_once(spec, baseline, host, area, stop, child, obs)?;
    let Some(first) = run.baseline.as_mut() else {
        return Ok(run);
    };
    if repeat < 2 || !matches!(run.outcome, MemOutcome::Completed { .. }) {
        return Ok(run);
    }
    let mut pairs = vec![RepeatPair {
        baseline: first.execution,
        constrained: completed_execution(&run.outcome).expect("completed above"),
    }];
    for _ in 1..repeat {
        let Some(b) = baseline_of(spec, stop, obs)? else {
            break;
        };
        let again = run_once(spec, Some(b), host, area, stop, child, obs)?;
        match (&again.outcome, &again.baseline) {
            (MemOutcome::Completed { execution, .. }, Some(b)) => pairs.push(RepeatPair {
                baseline: b.execution,
                constrained: *execution,
            }),
            // A later kill or stop is the point's outcome: its figures
            // would otherwise hide that it did not always complete.
            _ => return Ok(again),
        }
        for w in again.warnings {
            if !run.warnings.contains(&w) {
                run.warnings.push(w);
            }
        }
    }
    let relatives: Vec<f64> = pairs.iter().map(RepeatPair::relative).collect();
    let first = run.baseline.as_mut().expect("checked above");
    first.relative_time = iomark_model::mem::median(&relatives);
    first.repeats = pairs;
    Ok(run)
}

fn completed_execution(outcome: &MemOutcome) -> Option<Nanos> {
    match outcome {
        MemOutcome::Completed { execution, .. } => Some(*execution),
        _ => None,
    }
}

/// One constrained run of `spec` after `baseline`.
fn run_once(
    spec: &MemJobSpec,
    baseline: Option<(KernelResult, Nanos)>,
    host: &MemHost,
    area: Option<&SwapArea>,
    stop: &AtomicBool,
    child: &dyn Fn() -> Command,
    obs: &mut dyn MemObserver,
) -> Result<MemRun, MemError> {
    let constrained = match &baseline {
        Some((result, _)) => same_work(spec, result),
        None => spec.clone(),
    };
    // The limited run is a child: its CPU counts once it is reaped.
    let sampler = iomark_host::CpuSampler::start_with_children();
    let quota = iomark_host::machine::CpuQuotaWatch::start();
    let wall = std::time::Instant::now();
    if !stopped(stop) {
        obs.begin(Role::Run, &constrained);
    }
    let (outcome, cgroup) = match constrained.mem_limit {
        _ if stop.load(std::sync::atomic::Ordering::Relaxed) => (MemOutcome::Interrupted, None),
        Some(limit) => {
            let swap = area.map(SwapArea::size);
            let (o, u) = run_limited(&constrained, limit, host, swap, child(), stop, obs)?;
            (o, Some(Box::new(u)))
        }
        None => (run_observed(&constrained, stop, obs)?, None),
    };
    let record = sampler.read();
    // A stopped run measured nothing.
    if !matches!(outcome, MemOutcome::Interrupted) {
        obs.measured(&Measured {
            role: Role::Run,
            spec: &constrained,
            outcome: &outcome,
        });
    }
    let mut warnings = warnings(spec, host, cgroup.as_deref());
    warnings.extend(iomark_host::machine::machine_warnings(
        "the kernel's run",
        wall.elapsed(),
        record.process,
        record.host.as_ref(),
        quota.as_ref().and_then(|q| q.throttled()).as_ref(),
        quota.as_ref().and_then(|q| q.unchecked()),
    ));
    let cpu = Some(record);
    let baseline = baseline.map(|(result, execution)| {
        Box::new(MemBaseline {
            relative_time: relative_time(&outcome, execution),
            result,
            execution,
            repeats: Vec::new(),
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

pub(crate) fn stopped(stop: &AtomicBool) -> bool {
    stop.load(std::sync::atomic::Ordering::Relaxed)
}

/// The constrained run's execution time over the baseline's, when it
/// completed and the baseline took any time.
pub(crate) fn relative_time(outcome: &MemOutcome, baseline: Nanos) -> Option<f64> {
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
    use crate::job::run_in_process;
    use iomark_model::mem::{Advice, HimenoLength, HimenoSpec};

    #[test]
    fn no_relative_time_without_a_completed_run_or_a_baseline_time() {
        let grid = crate::himeno::parse_grid("xs").unwrap();
        let spec = MemJobSpec {
            kernel: MemKernelSpec::Himeno(HimenoSpec {
                grid,
                length: HimenoLength::Iterations(1),
            }),
            threads: 1,
            backing: Backing::Heap,
            advice: Advice::Normal,
            mem_limit: None,
        };
        assert_eq!(relative_time(&MemOutcome::Interrupted, Nanos(1)), None);
        let done = run_in_process(&spec, &AtomicBool::new(false)).unwrap();
        let MemOutcome::Completed { execution, .. } = &done else {
            panic!("{done:?}")
        };
        let execution = *execution;
        assert_eq!(relative_time(&done, Nanos(0)), None);
        assert_eq!(relative_time(&done, execution), Some(1.0));
    }
}
