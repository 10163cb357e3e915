//! The ranks' results as one run, as IOR reports a parallel job: bytes and
//! I/Os summed, the aggregate rate over the window from the first rank's
//! start to the last rank's end, latency histograms merged bucket by bucket
//! (gathered, never averaged), per-second samples summed interval by
//! interval, and a per-rank table with each rank's own figures.

use std::collections::BTreeMap;

use iomark_model::cluster::{ClusterRun, Layout, MemRankResult, RankJob, RankResult};
use iomark_model::device::DeviceReport;
use iomark_model::disk::{CpuUsage, DirectionResult, DiskJobResult, IntervalSample};
use iomark_model::mem::{CheckOutcome, KernelResult, StreamKernelResult, StreamResult, Validation};
use iomark_model::profile::ProfileResult;
use iomark_model::sustained::{SummedSeries, WrittenAt};
use iomark_model::units::{Bytes, BytesPerSec, Iops, Nanos};
use iomark_model::Warning;
use iomark_stats::histogram::LatencyHistogram;
use serde::{Deserialize, Serialize};

/// What one rank sends rank 0 after a phase: its jobs, when each ran
/// (from the common start, the barrier every rank left together), and
/// where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankReport {
    /// The rank number.
    pub rank: u32,
    /// The host it ran on.
    pub host: String,
    /// Its target's path.
    pub path: String,
    /// Where its region starts in the target.
    pub offset: Bytes,
    /// Each job's start and end, after the common start.
    pub spans: Vec<(Nanos, Nanos)>,
    /// Each job's result.
    pub jobs: Vec<DiskJobResult>,
    /// Whether it was cut short.
    pub interrupted: bool,
    /// Whether another rank's finish stopped it (`--stonewall`).
    #[serde(default)]
    pub stonewalled: bool,
    /// The device chain behind its target.
    pub device: Option<DeviceReport>,
    /// Its `--verify` check, when one ran.
    pub result: Option<ProfileResult>,
    /// Its run's warnings (its target's, its check's).
    pub warnings: Vec<Warning>,
}

/// The jobs of every rank merged, and the per-rank table; `None` when
/// there are no ranks or they ran different numbers of jobs.
pub fn merge(
    reports: &[RankReport],
    layout: Layout,
    stonewall: bool,
) -> Option<(Vec<DiskJobResult>, ClusterRun)> {
    let first = reports.first()?;
    let jobs = first.jobs.len();
    if reports
        .iter()
        .any(|r| r.jobs.len() != jobs || r.spans.len() != jobs)
    {
        return None;
    }
    let merged = (0..jobs)
        .map(|j| {
            let window = window(reports.iter().map(|r| r.spans[j]));
            merge_job(reports.iter().map(|r| (r.rank, &r.jobs[j])), window)
        })
        .collect();
    let wall = window(reports.iter().flat_map(|r| r.spans.iter().copied()));
    let per_rank = reports.iter().map(rank_row).collect();
    let cluster = ClusterRun {
        ranks: reports.len() as u32,
        layout,
        wall,
        per_rank,
        stonewall,
    };
    Some((merged, cluster))
}

/// The first start to the last end.
fn window(spans: impl Iterator<Item = (Nanos, Nanos)>) -> Nanos {
    let (mut lo, mut hi) = (u64::MAX, 0);
    for (s, e) in spans {
        lo = lo.min(s.0);
        hi = hi.max(e.0);
    }
    Nanos(hi.saturating_sub(lo))
}

fn rank_row(r: &RankReport) -> RankResult {
    let start = r.spans.iter().map(|s| s.0).min().unwrap_or_default();
    let end = r.spans.iter().map(|s| s.1).max().unwrap_or_default();
    let sum = |f: fn(&DiskJobResult) -> Option<&DirectionResult>| {
        Bytes(r.jobs.iter().filter_map(f).map(|d| d.io_bytes.0).sum())
    };
    let (read_bytes, write_bytes) = (sum(|j| j.read.as_ref()), sum(|j| j.write.as_ref()));
    // The rank's own rate over its measured time, as the job reports it.
    let rate = |f: fn(&DiskJobResult) -> Option<&DirectionResult>| {
        let time = Nanos(r.jobs.iter().filter_map(f).map(|d| d.runtime.0).sum());
        let bytes = Bytes(r.jobs.iter().filter_map(f).map(|d| d.io_bytes.0).sum());
        BytesPerSec::over(bytes, time)
    };
    RankResult {
        rank: r.rank,
        host: r.host.clone(),
        path: r.path.clone(),
        offset: r.offset,
        start: Nanos(start.0),
        end: Nanos(end.0),
        read_bytes,
        write_bytes,
        read_bw: rate(|j| j.read.as_ref()),
        write_bw: rate(|j| j.write.as_ref()),
        interrupted: r.interrupted,
        stonewalled: r.stonewalled,
        device: r.device.clone(),
        jobs: if r.jobs.len() > 1 {
            r.spans
                .iter()
                .zip(&r.jobs)
                .map(|(&(start, end), j)| RankJob {
                    start,
                    end,
                    read_bytes: j.read.as_ref().map_or(Bytes(0), |d| d.io_bytes),
                    write_bytes: j.write.as_ref().map_or(Bytes(0), |d| d.io_bytes),
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

/// One job of every rank as one: rank 0's spec, everything summed over
/// `window`.
fn merge_job<'a>(
    jobs: impl Iterator<Item = (u32, &'a DiskJobResult)> + Clone,
    window: Nanos,
) -> DiskJobResult {
    let ranks = jobs.clone().count().max(1) as f64;
    let (_, first) = jobs.clone().next().expect("at least one rank");
    let dir = |f: fn(&DiskJobResult) -> Option<&DirectionResult>| {
        merge_direction(jobs.clone().filter_map(|(_, j)| f(j)), window)
    };
    let mut iodepth_level: BTreeMap<String, f64> = BTreeMap::new();
    let mut warnings: Vec<Warning> = Vec::new();
    for (rank, j) in jobs.clone() {
        for (k, v) in &j.iodepth_level {
            *iodepth_level.entry(k.clone()).or_default() += v / ranks;
        }
        for w in &j.warnings {
            let w = Warning::new(w.kind, format!("rank {rank}: {}", w.message));
            if !warnings.iter().any(|o| o.kind == w.kind) {
                warnings.push(w);
            }
        }
    }
    DiskJobResult {
        spec: first.spec.clone(),
        read: dir(|j| j.read.as_ref()),
        write: dir(|j| j.write.as_ref()),
        samples: merge_samples(jobs.clone().map(|(_, j)| j.samples.as_slice())),
        cpu: CpuUsage {
            user_pct: jobs.clone().map(|(_, j)| j.cpu.user_pct).sum::<f64>() / ranks,
            system_pct: jobs.clone().map(|(_, j)| j.cpu.system_pct).sum::<f64>() / ranks,
        },
        // The machine-wide CPU and the submission mode are rank 0's: ranks
        // may share a host, so a sum would count one machine twice; the
        // per-rank table keeps every rank's own job.
        host_cpu: first.host_cpu,
        submission: first.submission.clone(),
        iodepth_level,
        // Per thread, as a single run reports it: the ranks' mean.
        mean_depth: jobs.clone().map(|(_, j)| j.mean_depth).sum::<f64>() / ranks,
        // Each rank's device queue is its own; the per-rank table keeps the
        // devices, the merged job no queue.
        queue: None,
        // Each rank watched its own device: their counters are not one device's.
        device_io: None,
        page_cache_bypassed: jobs.clone().all(|(_, j)| j.page_cache_bypassed),
        interrupted: jobs.clone().any(|(_, j)| j.interrupted),
        warnings,
        repeats: Vec::new(),
        // Refused across ranks (a rank's seconds are not the job's).
        steady_state: None,
    }
}

fn merge_direction<'a>(
    dirs: impl Iterator<Item = &'a DirectionResult>,
    window: Nanos,
) -> Option<DirectionResult> {
    let mut any = false;
    let (mut bytes, mut ios) = (0u64, 0u64);
    let mut hist = LatencyHistogram::new();
    for d in dirs {
        any = true;
        bytes += d.io_bytes.0;
        ios += d.ios;
        hist.merge(&LatencyHistogram::from_summary(&d.clat));
    }
    any.then(|| DirectionResult {
        io_bytes: Bytes(bytes),
        ios,
        runtime: window,
        bw: BytesPerSec::over(Bytes(bytes), window),
        iops: Iops::over(ios, window),
        clat: hist.summary(),
    })
}

/// Interval `i` of every rank summed (the ranks left the same barrier, so
/// their intervals line up to within its latency); the mean latency
/// weighted by I/Os.
fn merge_samples<'a>(all: impl Iterator<Item = &'a [IntervalSample]>) -> Vec<IntervalSample> {
    let mut out: Vec<IntervalSample> = Vec::new();
    let mut lat_sum: Vec<f64> = Vec::new();
    for samples in all {
        for (i, s) in samples.iter().enumerate() {
            if out.len() <= i {
                out.push(IntervalSample {
                    start: s.start,
                    length: s.length,
                    ..IntervalSample::default()
                });
                lat_sum.push(0.0);
            }
            let o = &mut out[i];
            o.length = Nanos(o.length.0.max(s.length.0));
            o.read_bytes += s.read_bytes;
            o.read_ios += s.read_ios;
            o.write_bytes += s.write_bytes;
            o.write_ios += s.write_ios;
            lat_sum[i] += s.mean_lat_ns * (s.read_ios + s.write_ios) as f64;
        }
    }
    for (o, l) in out.iter_mut().zip(lat_sum) {
        let n = (o.read_ios + o.write_ios) as f64;
        o.mean_lat_ns = if n > 0.0 { l / n } else { 0.0 };
    }
    out
}

/// One rank's bytes-written series of a profile's job (the sustained-write
/// test's), and where its time 0 lies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankSeries {
    /// How long after the barrier every rank left before the job this
    /// rank's job clock started.
    pub delay: Nanos,
    /// Bytes written by each time of the rank's job clock.
    pub points: Vec<WrittenAt>,
}

/// Every rank's bytes-written series summed (the sustained-write test's),
/// on the barrier's time base shifted so the earliest rank's start is 0:
/// at every time any rank has a point, each rank's bytes by then, linearly
/// between its points, nothing before its start, its last total after its
/// end; together until the first rank's end.
pub fn merge_series(all: &[RankSeries]) -> SummedSeries {
    let first = all.iter().map(|r| r.delay).min().unwrap_or_default();
    let shifted: Vec<Vec<WrittenAt>> = all
        .iter()
        .map(|r| {
            let by = r.delay.get() - first.get();
            r.points
                .iter()
                .map(|p| WrittenAt {
                    time: Nanos(p.time.get() + by),
                    bytes: p.bytes,
                })
                .collect()
        })
        .collect();
    let together_until = shifted
        .iter()
        .filter_map(|s| s.last().map(|p| p.time))
        .min()
        .unwrap_or_default();
    let all = &shifted;
    let mut times: Vec<Nanos> = all.iter().flatten().map(|p| p.time).collect();
    times.sort_unstable();
    times.dedup();
    let at = |series: &[WrittenAt], t: Nanos| -> f64 {
        let after = series.partition_point(|p| p.time <= t);
        match (after.checked_sub(1).map(|i| series[i]), series.get(after)) {
            (None, _) => 0.0,
            (Some(p), None) => p.bytes.get() as f64,
            (Some(p), Some(q)) => {
                let span = (q.time.get() - p.time.get()) as f64;
                let part = (t.get() - p.time.get()) as f64 / span;
                p.bytes.get() as f64 + part * (q.bytes.get() as f64 - p.bytes.get() as f64)
            }
        }
    };
    let points = times
        .into_iter()
        .map(|t| WrittenAt {
            time: t,
            bytes: Bytes(all.iter().map(|s| at(s, t)).sum::<f64>().round() as u64),
        })
        .collect();
    SummedSeries {
        points,
        together_until,
    }
}

/// STREAM on every rank as one result: each kernel's bytes per pass and
/// best rate summed over the ranks, its times the slowest rank's (the
/// longest minimum, mean and maximum), the execution time the longest; the
/// check failed when any rank's failed, naming it. `None` when there are no
/// ranks or one did not run STREAM (or ran other kernels).
pub fn merge_stream(ranks: &[MemRankResult]) -> Option<(StreamResult, Nanos)> {
    let streams: Vec<(u32, &StreamResult)> = ranks
        .iter()
        .map(|r| match &r.result {
            KernelResult::Stream(s) => Some((r.rank, s)),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let (_, first) = streams.first()?;
    if streams
        .iter()
        .any(|(_, s)| s.kernels.len() != first.kernels.len())
    {
        return None;
    }
    let kernels = first
        .kernels
        .iter()
        .enumerate()
        .map(|(k, head)| {
            let all = || streams.iter().map(move |(_, s)| &s.kernels[k]);
            StreamKernelResult {
                op: head.op,
                bytes_per_pass: Bytes(all().map(|x| x.bytes_per_pass.0).sum()),
                best_rate: BytesPerSec(all().map(|x| x.best_rate.0).sum()),
                avg: Nanos(all().map(|x| x.avg.0).max().unwrap_or(0)),
                min: Nanos(all().map(|x| x.min.0).max().unwrap_or(0)),
                max: Nanos(all().map(|x| x.max.0).max().unwrap_or(0)),
            }
        })
        .collect();
    let failed: Vec<String> = streams
        .iter()
        .filter(|(_, s)| s.validation.outcome == CheckOutcome::Failed)
        .map(|(rank, s)| format!("rank {rank}: {}", s.validation.detail))
        .collect();
    let validation = if failed.is_empty() {
        Validation::passed(format!(
            "{} ({} ranks)",
            first.validation.detail,
            streams.len()
        ))
    } else {
        Validation::failed(failed.join("; "))
    };
    let merged = StreamResult {
        array_bytes: Bytes(streams.iter().map(|(_, s)| s.array_bytes.0).sum()),
        init: Nanos(streams.iter().map(|(_, s)| s.init.0).max().unwrap_or(0)),
        copy_method: first.copy_method.clone(),
        stores: first.stores.clone(),
        kernels,
        validation,
    };
    let execution = Nanos(ranks.iter().map(|r| r.execution.0).max().unwrap_or(0));
    Some((merged, execution))
}

#[cfg(test)]
mod tests;
