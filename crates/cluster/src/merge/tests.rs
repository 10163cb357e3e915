use super::*;
use iomark_model::disk::{DiskJobSpec, EngineKind, RwMode};

fn job(bytes: u64, secs: u64, lat: &[u64]) -> DiskJobResult {
    let mut h = LatencyHistogram::new();
    for &l in lat {
        h.record(l);
    }
    let runtime = Nanos::from_secs(secs);
    DiskJobResult {
        write: Some(DirectionResult {
            io_bytes: Bytes(bytes),
            ios: lat.len() as u64,
            runtime,
            bw: BytesPerSec::over(Bytes(bytes), runtime),
            iops: Iops::over(lat.len() as u64, runtime),
            clat: h.summary(),
        }),
        samples: (0..secs)
            .map(|i| IntervalSample {
                start: Nanos::from_secs(i),
                length: Nanos::from_secs(1),
                write_bytes: bytes / secs,
                write_ios: 1,
                mean_lat_ns: lat[0] as f64,
                lat_p99: None,
                ..IntervalSample::default()
            })
            .collect(),
        ..DiskJobResult::example(DiskJobSpec {
            name: "custom".into(),
            rw: RwMode::Write,
            bs: Bytes(1 << 20),
            runtime: Some(runtime),
            engine: EngineKind::Psync,
            rwmix_read: 70,
            ..DiskJobSpec::example()
        })
    }
}

fn report(rank: u32, start_ms: u64, end_ms: u64, j: DiskJobResult) -> RankReport {
    RankReport {
        rank,
        host: "h".into(),
        path: format!("/d/{rank}"),
        offset: Bytes(0),
        spans: vec![(Nanos(start_ms * 1_000_000), Nanos(end_ms * 1_000_000))],
        jobs: vec![j],
        interrupted: false,
        stonewalled: false,
        device: None,
        result: None,
        warnings: vec![],
    }
}

#[test]
fn aggregate_is_all_bytes_over_first_start_to_last_end() {
    let reports = [
        report(0, 0, 2000, job(200 << 20, 2, &[1000, 2000])),
        report(1, 500, 2500, job(100 << 20, 2, &[3000, 4000, 5000])),
    ];
    let (jobs, cluster) = merge(&reports, Layout::FilePerRank, false).unwrap();
    let w = jobs[0].write.as_ref().unwrap();
    assert_eq!(w.io_bytes, Bytes(300 << 20));
    assert_eq!(w.ios, 5);
    assert_eq!(w.runtime, Nanos(2_500_000_000));
    assert_eq!(
        w.bw,
        BytesPerSec::over(Bytes(300 << 20), Nanos(2_500_000_000))
    );
    // The histograms merged: every latency of both ranks, exact extremes.
    assert_eq!(
        (w.clat.count, w.clat.min_ns, w.clat.max_ns),
        (5, 1000, 5000)
    );
    assert!((w.clat.mean_ns - 3000.0).abs() < 1.0);
    assert_eq!(jobs[0].samples.len(), 2);
    assert_eq!(jobs[0].samples[0].write_bytes, (100 << 20) + (50 << 20));
    assert_eq!(cluster.wall, Nanos(2_500_000_000));
    assert_eq!(cluster.per_rank[1].write_bytes, Bytes(100 << 20));
    assert_eq!(
        cluster.per_rank[0].write_bw,
        BytesPerSec::over(Bytes(200 << 20), Nanos::from_secs(2))
    );
    let (slow, fast) = cluster.slowest_fastest().unwrap();
    assert_eq!((slow.rank, fast.rank), (1, 0));
}

#[test]
fn ranks_with_different_jobs_do_not_merge() {
    let mut other = report(1, 0, 1000, job(1 << 20, 1, &[1000]));
    other.jobs.clear();
    other.spans.clear();
    let reports = [report(0, 0, 1000, job(1 << 20, 1, &[1000])), other];
    assert!(merge(&reports, Layout::SharedFile, false).is_none());
    assert!(merge(&[], Layout::SharedFile, false).is_none());
}

fn stream_rank(rank: u32, mb: f64, ok: bool) -> MemRankResult {
    use iomark_model::mem::StreamOp;
    let kernels = StreamOp::ALL
        .iter()
        .enumerate()
        .map(|(k, &op)| StreamKernelResult {
            op,
            bytes_per_pass: Bytes(16_000_000),
            best_rate: BytesPerSec((mb + k as f64) * 1e6),
            avg: Nanos(2_000_000 + u64::from(rank)),
            min: Nanos(1_000_000 + u64::from(rank)),
            max: Nanos(3_000_000 + u64::from(rank)),
        })
        .collect();
    MemRankResult {
        rank,
        host: "h".into(),
        result: KernelResult::Stream(StreamResult {
            array_bytes: Bytes(8_000_000),
            init: Nanos(5),
            copy_method: "memcpy".into(),
            stores: "regular".into(),
            kernels,
            validation: if ok {
                Validation::passed("solution validates")
            } else {
                Validation::failed("a: error 1e-3")
            },
        }),
        execution: Nanos(10_000_000 * u64::from(rank + 1)),
    }
}

#[test]
fn stream_across_ranks_sums_the_rates_and_keeps_the_slowest_times() {
    let ranks = [
        stream_rank(0, 1000.0, true),
        stream_rank(1, 2000.0, true),
        stream_rank(2, 3000.0, true),
    ];
    let (s, execution) = merge_stream(&ranks).unwrap();
    assert_eq!(s.kernels.len(), 4);
    for (k, m) in s.kernels.iter().enumerate() {
        assert_eq!(m.best_rate.0, (6000.0 + 3.0 * k as f64) * 1e6);
        assert_eq!(m.bytes_per_pass, Bytes(48_000_000));
        assert_eq!(
            (m.min, m.avg, m.max),
            (Nanos(1_000_002), Nanos(2_000_002), Nanos(3_000_002))
        );
    }
    assert_eq!(execution, Nanos(30_000_000));
    assert_eq!(s.validation.outcome, CheckOutcome::Passed);
    // One rank's failed check fails the run, naming the rank.
    let bad = [stream_rank(0, 1.0, true), stream_rank(1, 1.0, false)];
    let (s, _) = merge_stream(&bad).unwrap();
    assert_eq!(s.validation.outcome, CheckOutcome::Failed);
    assert!(
        s.validation.detail.starts_with("rank 1: "),
        "{}",
        s.validation.detail
    );
    assert!(merge_stream(&[]).is_none());
}

fn at(ms: u64, mib: u64) -> WrittenAt {
    WrittenAt {
        time: Nanos(ms * 1_000_000),
        bytes: Bytes(mib << 20),
    }
}

#[test]
fn series_are_summed_at_every_point_interpolated_and_held_after_the_end() {
    // Rank 0 writes 10 MiB a second for 2 s; rank 1 starts with it at
    // 20 MiB/s, reports at other times and ends after 1 s.
    let r0 = vec![at(0, 0), at(1000, 10), at(2000, 20)];
    let r1 = vec![at(0, 0), at(500, 10), at(1000, 20)];
    let merged = merge_series(&[ranked(0, r0), ranked(0, r1)]);
    assert_eq!(
        merged.points,
        vec![at(0, 0), at(500, 15), at(1000, 30), at(2000, 40)]
    );
    // Rank 1 ended first: the rate of both together is read up to 1 s.
    assert_eq!(merged.together_until, Nanos(1_000_000_000));
    assert_eq!(merged.together(), &merged.points[..3]);
    assert!(merge_series(&[]).points.is_empty());
}

fn ranked(delay_ms: u64, points: Vec<WrittenAt>) -> RankSeries {
    RankSeries {
        delay: Nanos(delay_ms * 1_000_000),
        points,
    }
}

#[test]
fn series_are_placed_by_when_each_ranks_job_started() {
    // A shared device serves 20 MiB/s in all. Rank 1's job got going
    // 1 s after rank 0's (both 0.2 s or more after the barrier): rank 0
    // alone wrote 20 MiB in that second, then each 10 MiB/s for 2 s, then
    // rank 0 stopped and rank 1 had it all for 1 s. Summed on the ranks'
    // own clocks the total would read 30 MiB/s at first and 10 MiB/s at
    // the end; placed, it is the device's 20 MiB/s throughout.
    let r0 = vec![at(0, 0), at(1000, 20), at(3000, 40)];
    let r1 = vec![at(0, 0), at(2000, 20), at(3000, 40)];
    let merged = merge_series(&[ranked(200, r0), ranked(1200, r1)]);
    assert_eq!(
        merged.points,
        vec![at(0, 0), at(1000, 20), at(3000, 60), at(4000, 80)]
    );
    assert_eq!(merged.together_until, Nanos(3_000_000_000));
}
