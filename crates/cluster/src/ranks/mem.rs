//! STREAM across MPI ranks (`mpirun -np N iomark mem stream`): every rank
//! runs the kernels on its own arrays, in step with the others, and rank 0
//! gathers each rank's result into one run whose figures are the sum of
//! the ranks' rates ([`merge_stream`]), each rank's own result kept in
//! its `cluster`. The collectives, in the order every rank makes them:
//!
//! 1. A barrier before the initialisation and before each kernel of each
//!    pass, outside the timed part (`iomark_mem::job::run_in_step`).
//! 2. An `all_ok` of the ranks' outcomes: one rank's failure stops every
//!    rank with its message.
//! 3. An all-gather of every rank's result, merged on rank 0.
//!
//! A stop signal ends a rank's part without another collective, so
//! nothing waits for a dead peer, and nothing measured is gathered.

use std::sync::atomic::{AtomicBool, Ordering};

use iomark_mem::job;
use iomark_model::cluster::{MemCluster, MemRankResult};
use iomark_model::mem::{KernelResult, MemJobSpec, MemOutcome, MemRun};

use super::decode;
use crate::merge::merge_stream;
use crate::{ClusterError, World};

/// How a rank's part of STREAM across ranks ended.
#[derive(Debug)]
pub enum StreamEnd {
    /// Rank 0: the merged run, for it to record and print.
    Merged(Box<MemRun>),
    /// Another rank: its result went to rank 0.
    Sent,
    /// A stop signal (mpirun ending the job, or Ctrl-C) ended the run
    /// before the ranks' results were gathered.
    Stopped,
}

/// Run `spec` (STREAM, checked by the caller on every rank) as rank
/// `world.rank()`, in step with the others; `stop` is the stop signal's
/// flag.
pub fn stream(
    world: &World,
    spec: &MemJobSpec,
    stop: &AtomicBool,
) -> Result<StreamEnd, ClusterError> {
    let host = iomark_mem::sys::host();
    let sampler = iomark_host::CpuSampler::start_with_children();
    let outcome = job::run_in_step(spec, stop, &mut || world.barrier());
    if stop.load(Ordering::Relaxed) {
        // A peer may be gone: no collective now.
        return Ok(StreamEnd::Stopped);
    }
    let mine = match outcome {
        Ok(MemOutcome::Completed {
            result, execution, ..
        }) => Ok((result, execution)),
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
    // A result that does not encode arrives empty, and rank 0 names it.
    let bytes = serde_json::to_vec(&report).unwrap_or_default();
    let all = world.all_gather(&bytes);
    if !world.is_root() {
        return Ok(StreamEnd::Sent);
    }
    let per_rank: Vec<MemRankResult> = decode(&all)?;
    let (merged, execution) = merge_stream(&per_rank).ok_or(ClusterError::DifferentKernels)?;
    Ok(StreamEnd::Merged(Box::new(MemRun {
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
    })))
}
