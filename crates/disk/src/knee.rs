//! The queue-depth knee of a run's sweeps: the series a run holds (each
//! IOmeter pattern; custom jobs alike but for their depth), turned into
//! [`KneePoint`]s from what each job measured, and handed to
//! [`iomark_stats::knee`] with the slowest link's ceiling.

use iomark_model::device::DeviceReport;
use iomark_model::disk::DiskJobResult;
use iomark_model::knee::Knee;
use iomark_model::profile::ProfileResult;
use iomark_stats::knee::{find_knee, Ceiling, KneePoint, Links};

/// The knee of every depth sweep in a run: per IOmeter pattern, or per
/// group of jobs that differ only in their depth, on the device `report`
/// describes. `gain_pct` is the gain per doubling under which throughput
/// counts as no longer rising.
pub(crate) fn sweep_knees(
    result: Option<&ProfileResult>,
    jobs: &[DiskJobResult],
    report: Option<&DeviceReport>,
    gain_pct: f64,
) -> Vec<Knee> {
    let links = Links {
        ceiling: report.and_then(|r| r.slowest.as_ref()).map(|c| Ceiling {
            name: c.name.clone(),
            // What real transfers reach over the link, when known: the hard
            // ceiling is never reached, so a plateau at the typical rate
            // would otherwise go unexplained.
            rate: c.typical.unwrap_or(c.hard),
        }),
        usb_protocol: report
            .and_then(|r| r.device.as_ref())
            .and_then(|d| d.usb.as_ref())
            .and_then(|u| u.protocol())
            .map(str::to_string),
    };
    let mut series: Vec<(String, Vec<KneePoint>)> = Vec::new();
    let mut add = |name: String, point: KneePoint| {
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, points)) => points.push(point),
            None => series.push((name, vec![point])),
        };
    };
    match result {
        Some(ProfileResult::Iometer(io)) => {
            for p in &io.points {
                let Some(job) = jobs.get(p.job) else { continue };
                add(p.pattern.clone(), point(job, p.depth));
            }
        }
        // Other profiles run fixed depths of their own; no sweep.
        Some(_) => {}
        None => {
            for job in jobs {
                add(custom_series(job), point(job, job.spec.iodepth));
            }
        }
    }
    series
        .iter()
        .filter_map(|(name, points)| find_knee(name, points, &links, gain_pct))
        .collect()
}

/// A custom job's series: everything that sets its result but the depth.
fn custom_series(job: &DiskJobResult) -> String {
    let s = &job.spec;
    format!(
        "{} {} T{}, {}, {}",
        s.rw,
        iomark_model::figure::size_label(s.bs),
        s.numjobs,
        s.engine,
        if s.direct { "direct" } else { "buffered" }
    )
}

fn point(job: &DiskJobResult, depth: u32) -> KneePoint {
    let dirs = [job.read.as_ref(), job.write.as_ref()];
    let (ios, lat_sum) = dirs.into_iter().flatten().fold((0u64, 0.0), |(n, sum), d| {
        (n + d.clat.count, sum + d.clat.mean_ns * d.clat.count as f64)
    });
    let queue = job.queue.as_ref();
    let device = queue.and_then(|q| q.device.as_ref());
    KneePoint {
        depth,
        // Runs stored before the time-weighted depth kept only fio's depth
        // at issue.
        engine_depth: queue.map_or(job.mean_depth, |q| q.engine_depth),
        device_inflight: device.map(|d| d.inflight),
        device_utilization_pct: device.map(|d| d.utilization_pct),
        bw: job.total_bw(),
        lat_mean_ns: if ios == 0 { 0.0 } else { lat_sum / ios as f64 },
        // On a CPU or waiting for one: a thread that never sleeps is the
        // limit even when a loaded machine gives it only part of a CPU.
        cpu_pct: queue.map(|q| q.busiest_thread_busy_pct.max(q.busiest_thread_cpu_pct)),
        sequential: !job.spec.rw.is_random(),
    }
}
