//! A sweep (`--sizes`, `--ratios`): the kernel at each x value, crossed
//! with the backings, each point an ordinary limited run against the
//! all-in-memory run of its size.
//!
//! Swap backings: each column's area is set up before its first point and
//! removed after its last, so a point runs with its own area the only one
//! iomark has active (and, at the highest priority, the one the kernel
//! fills first); the next swap column's area is set up after that.

use std::process::Command;
use std::sync::atomic::AtomicBool;

use iomark_model::mem::{
    Backing, MemJobSpec, MemKernelSpec, MemOutcome, MemRun, MemSweep, MemSweepPoint, SweepAxis,
};

use crate::job::{check_limits, data_bytes};
use crate::observe::MemObserver;
use crate::relative::{baseline_of, run_point, stopped, swap_size};
use crate::swap::{SwapArea, SwapTarget};
use crate::{sys, MemError};
use iomark_host::cgroup;

/// A checked sweep: the kernel at each x value, crossed with the backings.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    /// What x counts.
    pub axis: SweepAxis,
    /// Each x value and the kernel sized for it.
    pub points: Vec<(f64, MemKernelSpec)>,
    /// The backings, in the order given, each swap backing with where its
    /// area goes.
    pub backings: Vec<(Backing, Option<SwapTarget>)>,
}

/// Run a sweep: each backing over all sizes, in the order given, each point
/// under the job's limit in its own memory cgroup against the all-in-memory
/// run (heap, no limit) of its size. With `repeat` 1 the all-in-memory run
/// of every size runs once, first, and serves every backing; with more,
/// each point alternates its own all-in-memory and constrained runs
/// `repeat` times (`relative::run_point`). A swap backing's area is active for its
/// column only. A point the OOM killer ends is kept as killed. `template`
/// gives threads, advice and limit; its kernel and backing are the first
/// point's.
/// `obs` hears of each point as it begins and each kernel run as it ends.
pub fn run_sweep(
    template: &MemJobSpec,
    sweep: &SweepSpec,
    repeat: u32,
    stop: &AtomicBool,
    child: impl Fn() -> Command,
    obs: &mut dyn MemObserver,
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
    for (x, kernel) in &sweep.points {
        baselines.push(if repeat > 1 {
            None
        } else {
            obs.point(*x);
            baseline_of(&at(kernel, &Backing::Heap), stop, obs)?
        });
    }
    let mut columns = Vec::with_capacity(sweep.backings.len());
    for (backing, target) in &sweep.backings {
        let area = match (target, backing) {
            (Some(target), Backing::Swap { .. }) if !stopped(stop) => Some(SwapArea::create(
                target,
                swap_size(sweep.points.iter().map(|(_, k)| k)),
            )?),
            _ => None,
        };
        let mut column = Vec::with_capacity(sweep.points.len());
        for ((x, kernel), baseline) in sweep.points.iter().zip(&baselines) {
            let spec = at(kernel, backing);
            obs.point(*x);
            let run = run_point(
                &spec,
                baseline.clone(),
                true,
                repeat,
                &host,
                area.as_ref(),
                stop,
                &child,
                obs,
            )?;
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
    let first_backing = sweep
        .backings
        .first()
        .map(|(b, _)| b)
        .unwrap_or(&template.backing);
    Ok(MemRun {
        spec: at(first, first_backing),
        host,
        outcome,
        cgroup: None,
        baseline: None,
        warnings: Vec::new(),
        sweep: Some(Box::new(MemSweep {
            axis: sweep.axis,
            backings: sweep.backings.iter().map(|(b, _)| b.clone()).collect(),
            points,
        })),
        // Each point carries its own CPU; the sweep as a whole has none.
        cpu: None,
        cluster: None,
    })
}
