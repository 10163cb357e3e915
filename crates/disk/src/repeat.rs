//! `--repeat N`: several runs of the same custom workload stored as one,
//! each job its median run with every run's figures beside it.

use iomark_model::disk::{DirectionFigures, DiskJobResult, RepeatFigures};

/// The most runs `--repeat` takes.
pub(crate) const MAX_REPEAT: u32 = 1000;

/// The jobs of several runs of one workload (`runs[r][j]`: job `j` of run
/// `r`; an interrupted run may have fewer) as one run's: each job is its
/// median run by throughput (the lower middle of an even count), with every
/// run's figures in its `repeats`.
pub(crate) fn median_jobs(runs: Vec<Vec<DiskJobResult>>) -> Vec<DiskJobResult> {
    let jobs_per_run = runs.iter().map(Vec::len).max().unwrap_or(0);
    let mut by_job: Vec<Vec<DiskJobResult>> = vec![Vec::new(); jobs_per_run];
    for run in runs {
        for (i, job) in run.into_iter().enumerate() {
            by_job[i].push(job);
        }
    }
    by_job
        .into_iter()
        .filter_map(|mut tries| {
            let repeats: Vec<RepeatFigures> = tries
                .iter()
                .map(|j| RepeatFigures {
                    read: j.read.as_ref().map(DirectionFigures::of),
                    write: j.write.as_ref().map(DirectionFigures::of),
                })
                .collect();
            tries.sort_by(|a, b| a.total_bw().0.total_cmp(&b.total_bw().0));
            let median = (tries.len().checked_sub(1)?) / 2;
            let mut job = tries.swap_remove(median);
            job.repeats = repeats;
            Some(job)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::disk::{DirectionResult, DiskJobSpec};
    use iomark_model::units::BytesPerSec;

    fn job(mb: f64) -> DiskJobResult {
        let mut j = DiskJobResult::example(DiskJobSpec::example());
        j.read = Some(DirectionResult {
            bw: BytesPerSec(mb * 1e6),
            ..DirectionResult::default()
        });
        j
    }

    #[test]
    fn each_job_is_its_median_run_with_every_runs_figures() {
        let runs = vec![
            vec![job(30.0), job(5.0)],
            vec![job(10.0), job(6.0)],
            vec![job(20.0)],
        ];
        let jobs = median_jobs(runs);
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].total_bw(), BytesPerSec(20e6));
        assert_eq!(jobs[0].repeats.len(), 3);
        // The second job ran twice (the last run was cut short): the lower
        // middle of two.
        assert_eq!(jobs[1].total_bw(), BytesPerSec(5e6));
        assert_eq!(jobs[1].repeats.len(), 2);
    }
}
