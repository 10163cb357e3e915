//! The ranks' figures brought together: a profile's jobs one by one
//! ([`Gather`]), a custom job's at its end ([`custom`]).

use std::sync::atomic::AtomicBool;

use iomark_disk::lifecycle::{Gathered, RunError};
use iomark_disk::plan::DiskOutcome;
use iomark_disk::target::OpenTarget;
use iomark_disk::DiskError;
use iomark_model::cluster::Layout;
use iomark_model::disk::DiskJobResult;
use iomark_model::units::Nanos;
use iomark_model::Warning;

use super::{coordination, decode, stopped, RankCoordinator};
use crate::merge::{merge, RankReport};
use crate::{ClusterError, World};

/// A profile's jobs across the ranks: each rank's job gathered as it ends,
/// merged for the profile; rank 0 keeps every rank's share of the jobs the
/// profile keeps, for the per-rank table.
pub(super) struct Gather<'w> {
    pub(super) world: &'w World,
    pub(super) layout: Layout,
    /// This rank, without jobs.
    pub(super) me: RankReport,
    /// Each rank's report of every job since the profile last kept some.
    pub(super) pending: Vec<Vec<RankReport>>,
    /// Each rank's report of each job the profile kept, in order.
    pub(super) kept: Vec<Vec<RankReport>>,
    /// A rank's failure, which every rank learnt at the same job.
    pub(super) failure: Option<ClusterError>,
}

/// The ranks ran different jobs: their arguments differ.
fn different_jobs() -> RunError {
    RunError::Coordination(
        "the ranks ran different jobs: run every rank with the same arguments".into(),
    )
}

impl Gather<'_> {
    /// Every rank's job, merged; `span` this rank's.
    pub(super) fn merge(
        &mut self,
        job: Result<DiskJobResult, DiskError>,
        span: (Nanos, Nanos),
    ) -> Result<DiskJobResult, ClusterError> {
        self.world.all_ok(
            job.as_ref()
                .map(drop)
                .map_err(|e| format!("{e} on {}", self.me.path)),
        )?;
        let job = job.expect("checked on every rank");
        let report = RankReport {
            spans: measured(&[span], std::slice::from_ref(&job)),
            interrupted: job.interrupted,
            jobs: vec![job],
            ..self.me.clone()
        };
        // Plain data: serialising it cannot fail.
        let bytes = serde_json::to_vec(&report).unwrap_or_default();
        let reports = decode::<RankReport>(&self.world.all_gather(&bytes))?;
        let merged = merge(&reports, self.layout, false)
            .and_then(|(mut jobs, _)| jobs.pop())
            .ok_or_else(|| ClusterError::Garbled {
                rank: self.world.rank(),
                reason: "the ranks ran different jobs".into(),
            })?;
        if self.world.is_root() {
            self.pending.push(reports);
        }
        Ok(merged)
    }

    /// After the profile: on rank 0, the run with the per-rank table and
    /// every other rank's own warnings. A collective.
    pub(super) fn finish(
        self,
        mut outcome: DiskOutcome,
        stop: &AtomicBool,
    ) -> Result<Gathered, RunError> {
        if !self.world.barrier_unless(stop) {
            return Ok(stopped());
        }
        let mine = RankReport {
            interrupted: outcome.interrupted,
            ..self.me.clone()
        };
        // Plain data: serialising it cannot fail.
        let bytes = serde_json::to_vec(&mine).unwrap_or_default();
        let all = self.world.all_gather(&bytes);
        if !self.world.is_root() {
            return Ok(Gathered::Elsewhere);
        }
        let mut reports: Vec<RankReport> = decode(&all).map_err(coordination)?;
        if self.kept.len() != outcome.jobs.len() {
            return Err(RunError::Coordination(
                format!(
                    "the profile kept {} jobs but {} were gathered across the ranks",
                    outcome.jobs.len(),
                    self.kept.len()
                )
                .into(),
            ));
        }
        for job in &self.kept {
            for (r, theirs) in reports.iter_mut().zip(job) {
                r.spans.extend_from_slice(&theirs.spans);
                r.jobs.extend(theirs.jobs.iter().cloned());
            }
        }
        let Some((_, cluster)) = merge(&reports, self.layout, false) else {
            return Err(different_jobs());
        };
        // Rank 0's target's warnings are the document's already.
        add_rank_warnings(&mut outcome, reports.iter().filter(|r| r.rank != 0));
        Ok(Gathered::Run {
            outcome,
            cluster: Some(Box::new(cluster)),
        })
    }
}

/// A custom job's end: every rank's jobs and spans all-gathered, merged on
/// rank 0.
pub(super) fn custom(
    c: &RankCoordinator<'_>,
    outcome: DiskOutcome,
    target: &OpenTarget,
) -> Result<Gathered, RunError> {
    let report = RankReport {
        spans: measured(&c.spans, &outcome.jobs),
        jobs: outcome.jobs,
        interrupted: outcome.interrupted,
        stonewalled: c.stonewalled,
        result: outcome.result,
        warnings: outcome.warnings,
        ..rank_report(c.world, target)
    };
    // Plain data: serialising it cannot fail.
    let bytes = serde_json::to_vec(&report).unwrap_or_default();
    let all = c.world.all_gather(&bytes);
    if !c.world.is_root() {
        return Ok(Gathered::Elsewhere);
    }
    let reports: Vec<RankReport> = decode(&all).map_err(coordination)?;
    let Some((jobs, cluster)) = merge(&reports, c.layout, c.stonewall) else {
        return Err(different_jobs());
    };
    let mut merged = DiskOutcome {
        jobs,
        interrupted: reports.iter().any(|r| r.interrupted),
        ..DiskOutcome::default()
    };
    for r in &reports {
        // A custom job's only result is its verify check: the ranks' checks
        // combine.
        merged.fold_result(r.result.clone());
    }
    add_rank_warnings(&mut merged, &reports);
    Ok(Gathered::Run {
        outcome: merged,
        cluster: Some(Box::new(cluster)),
    })
}

/// The ranks' own warnings, named by rank: the first of each kind.
fn add_rank_warnings<'r>(
    outcome: &mut DiskOutcome,
    reports: impl IntoIterator<Item = &'r RankReport>,
) {
    for r in reports {
        for w in &r.warnings {
            let w = Warning::new(w.kind, format!("rank {}: {}", r.rank, w.message));
            if !outcome.warnings.iter().any(|o| o.kind == w.kind) {
                outcome.warnings.push(w);
            }
        }
    }
}

/// This rank and its target, with nothing run yet.
pub(super) fn rank_report(world: &World, target: &OpenTarget) -> RankReport {
    RankReport {
        rank: world.rank(),
        host: world.host().to_string(),
        path: target.info.path.clone(),
        offset: target.region_base,
        spans: Vec::new(),
        jobs: Vec::new(),
        interrupted: false,
        stonewalled: false,
        device: iomark_host::DeviceChain::for_path(&target.info.path)
            .ok()
            .map(iomark_host::DeviceChain::into_report),
        result: None,
        warnings: Vec::new(),
    }
}

/// Each job's measured part: its span less what came before measuring
/// (threads and queues set up, the ramp), so the aggregate's window holds
/// exactly the measured bytes' time.
pub(super) fn measured(spans: &[(Nanos, Nanos)], jobs: &[DiskJobResult]) -> Vec<(Nanos, Nanos)> {
    spans
        .iter()
        .zip(jobs)
        .map(|(&(start, end), j)| {
            let run = [j.read.as_ref(), j.write.as_ref()]
                .into_iter()
                .flatten()
                .map(|d| d.runtime.0)
                .max()
                .unwrap_or(0);
            (Nanos(start.0.max(end.0.saturating_sub(run))), end)
        })
        .collect()
}
