//! `mpirun -np N iomark mem stream ...`: every rank runs STREAM on its own
//! arrays, in step with the others (an MPI barrier before the
//! initialisation and before each kernel of each pass, outside the timed
//! part), then rank 0 gathers each rank's result and prints and stores one
//! run whose figures are the sum of the ranks' rates
//! ([`iomark_cluster::merge::merge_stream`]), each rank's own result kept in
//! `body.cluster`.

use std::io::Write;
use std::sync::atomic::Ordering;

use anyhow::{bail, Context};
use iomark_cluster::merge::merge_stream;
use iomark_cluster::World;
use iomark_mem::job;
use iomark_model::cluster::{MemCluster, MemRankResult};
use iomark_model::mem::{KernelResult, MemOutcome, MemRun};
use iomark_model::now_ms;

use crate::exit::Exit;
use crate::mem::{MemArgs, MemOptions};
use crate::signals;

/// Run `iomark mem stream` as rank `world.rank()` of the job.
pub fn run(args: MemArgs) -> anyhow::Result<Exit> {
    let world = World::init()?;
    let stop = signals::stop_flag()?;
    super::leave(&world, run_rank(args, &world, stop))
}

/// The job, checked: what runs alone only is refused.
fn check(args: MemArgs, world: &World) -> anyhow::Result<MemOptions> {
    let Some(options) = args.options()? else {
        bail!("the limited child of --mem-limit does not run under an MPI launcher");
    };
    options.plan.check_across_ranks()?;
    if world.is_root() {
        options.store.check()?;
    }
    Ok(options)
}

fn run_rank(
    args: MemArgs,
    world: &World,
    stop: &'static std::sync::atomic::AtomicBool,
) -> anyhow::Result<Exit> {
    let checked = check(args, world);
    world.all_ok(checked.as_ref().map(drop).map_err(|e| format!("{e:#}")))?;
    let options = checked.expect("checked on every rank");
    let spec = &options.plan.spec;
    let started_at_ms = now_ms();
    let host = iomark_mem::sys::host();
    let sampler = iomark_host::CpuSampler::start_with_children();
    let outcome = job::run_in_step(spec, stop, &mut || world.barrier());
    if stop.load(Ordering::Relaxed) {
        // A signal: mpirun is ending the job. No collective now, a peer may
        // be gone; nothing measured is gathered.
        return Ok(Exit::Interrupted);
    }
    let mine = match &outcome {
        Ok(MemOutcome::Completed {
            result, execution, ..
        }) => Ok((result.clone(), *execution)),
        Ok(_) => Err("STREAM did not complete".to_string()),
        Err(e) => Err(e.to_string()),
    };
    world.all_ok(mine.as_ref().map(drop).map_err(Clone::clone))?;
    let (result, execution) = mine.expect("checked on every rank");
    let report = MemRankResult {
        rank: world.rank(),
        host: world.host().to_string(),
        result,
        execution,
    };
    let bytes = serde_json::to_vec(&report).context("cannot encode this rank's result")?;
    let all = world.all_gather(&bytes);
    if !world.is_root() {
        return Ok(Exit::Success);
    }
    let per_rank: Vec<MemRankResult> = super::decode(&all)?;
    let Some((merged, execution)) = merge_stream(&per_rank) else {
        bail!("the ranks ran different kernels: run every rank with the same arguments");
    };
    let run = MemRun {
        spec: spec.clone(),
        warnings: job::warnings(spec, &host, None),
        host,
        outcome: MemOutcome::Completed {
            result: KernelResult::Stream(merged),
            execution,
            msync: None,
        },
        cgroup: None,
        baseline: None,
        sweep: None,
        cpu: Some(sampler.read()),
        cluster: Some(Box::new(MemCluster {
            ranks: world.size(),
            per_rank,
        })),
    };
    let mut doc = options
        .plan
        .document(run, crate::record::command_line(), started_at_ms);
    crate::record::Recorder::begin(&options.store, &mut doc).finish(&doc);
    let text = options.output.render(&doc)?;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    crate::mem::ended(&doc)
}
