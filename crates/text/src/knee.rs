//! The queue-depth knee in words: one sentence per sweep saying where
//! throughput stops rising and why, from the evidence stored with it; and
//! the sweep table of a custom job given several depths.

use std::fmt::Write;

use iomark_model::disk::{DiskJobResult, DiskRun};
use iomark_model::knee::{Knee, KneeCause, KneeEvidence, KneeShape};
use iomark_model::units::Nanos;
use iomark_stats::knee::DEPTH_SHARE;

/// `Throughput stops rising at QD2: depth-bound, ...` in one sentence.
pub fn knee_sentence(k: &Knee) -> String {
    let gain = k.gain_threshold_pct;
    let (Some(cause), Some(e)) = (k.cause, k.evidence.as_ref()) else {
        return format!(
            "Throughput is still rising at QD{} (each doubling gained {gain:.0}% or more): \
             the knee lies deeper than the sweep.",
            k.depth
        );
    };
    let head = match k.shape {
        KneeShape::FlatFromStart => format!("Throughput is flat from QD{}", k.depth),
        KneeShape::Knee | KneeShape::StillRising => {
            format!("Throughput stops rising at QD{}", k.depth)
        }
    };
    format!("{head}: {}.", because(cause, e, k.depth))
}

fn because(cause: KneeCause, e: &KneeEvidence, knee: u32) -> String {
    let deepest = e.deepest;
    match cause {
        KneeCause::LinkBound => {
            let (name, rate) = e.ceiling.clone().unwrap_or_default();
            format!(
                "link-bound, {:.1} MB/s is {:.0}% of what the {name} link carries ({:.1} MB/s): \
                 no depth gets past it",
                e.plateau_bw.mb_per_sec(),
                100.0 * e.plateau_bw.0 / rate.0.max(1.0),
                rate.mb_per_sec()
            )
        }
        KneeCause::DepthBound if e.engine_depth < DEPTH_SHARE * f64::from(deepest) => format!(
            "depth-bound, the engine kept {:.1} I/O in flight of {deepest} asked \
             (a synchronous engine waits for each I/O before the next)",
            e.engine_depth
        ),
        KneeCause::DepthBound => format!(
            "depth-bound, the device kept {:.1} I/O in flight of {deepest} asked while {:.0}% busy \
             (it takes one command at a time, as usb-storage's Bulk-Only Transport does)",
            e.device_inflight.unwrap_or(0.0),
            e.device_utilization_pct.unwrap_or(0.0)
        ),
        KneeCause::CpuBound => format!(
            "CPU-bound, the submitting thread was on a CPU or waiting for one {:.0}% of the \
             time at QD{deepest}: the CPU sets the pace, not the device",
            e.cpu_pct.unwrap_or(0.0)
        ),
        KneeCause::DeviceBound => format!(
            "device-bound, latency grew {:.1}x from QD{knee} to QD{deepest} while throughput {}: \
             Little's law, the device (or a limit in front of it) is saturated",
            e.latency_growth,
            change(e.rate_gain)
        ),
        KneeCause::Undetermined => format!(
            "cause undetermined: latency grew {:.1}x for {:.1}x the achieved depth, \
             the engine kept {:.1} of {deepest} in flight{}",
            e.latency_growth,
            e.depth_growth,
            e.engine_depth,
            e.cpu_pct.map_or(String::new(), |c| format!(
                ", the busiest thread on or waiting for a CPU {c:.0}% of the time"
            ))
        ),
    }
}

/// `rose 4%`, `fell 2%`, `stayed level`.
fn change(gain: f64) -> String {
    let pct = 100.0 * gain;
    if pct.abs() < 0.5 {
        "stayed level".into()
    } else if pct > 0.0 {
        format!("rose {pct:.0}%")
    } else {
        format!("fell {:.0}%", -pct)
    }
}

/// The sweep table of a custom job given several depths, then its knee.
pub(crate) fn depth_sweep(out: &mut String, run: &DiskRun) {
    if run.knees.is_empty() {
        return;
    }
    let _ = writeln!(out, "depth sweep:");
    let _ = writeln!(
        out,
        "{:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "QD", "MB/s", "IOPS", "mean lat", "in flight", "device q", "CPU/busy"
    );
    for job in &run.jobs {
        sweep_row(out, job);
    }
    for k in &run.knees {
        let _ = writeln!(out, "{}", knee_sentence(k));
    }
}

fn sweep_row(out: &mut String, job: &DiskJobResult) {
    let dirs = [job.read.as_ref(), job.write.as_ref()];
    let (ios, lat_sum, iops) = dirs.into_iter().flatten().fold((0u64, 0.0, 0.0), |a, d| {
        (
            a.0 + d.clat.count,
            a.1 + d.clat.mean_ns * d.clat.count as f64,
            a.2 + d.iops.0,
        )
    });
    let lat = if ios == 0 { 0.0 } else { lat_sum / ios as f64 };
    let q = job.queue.as_ref();
    let na = || "n/a".to_string();
    let _ = writeln!(
        out,
        "{:>7} {:>10.2} {:>10.0} {:>10} {:>10} {:>10} {:>10}",
        job.spec.iodepth,
        job.total_bw().mb_per_sec(),
        iops,
        Nanos(lat.round() as u64).to_string(),
        q.map_or_else(na, |q| format!("{:.1}", q.engine_depth)),
        q.and_then(|q| q.device.as_ref())
            .map_or_else(na, |d| format!("{:.1}", d.queue_size)),
        q.map_or_else(na, |q| {
            format!(
                "{:.0}%/{:.0}%",
                q.busiest_thread_cpu_pct, q.busiest_thread_busy_pct
            )
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::units::BytesPerSec;

    fn evidence() -> KneeEvidence {
        KneeEvidence {
            deepest: 8,
            engine_depth: 8.0,
            device_inflight: None,
            device_utilization_pct: None,
            ceiling: None,
            plateau_bw: BytesPerSec(40e6),
            cpu_pct: Some(4.0),
            latency_growth: 3.9,
            depth_growth: 4.0,
            rate_gain: 0.04,
        }
    }

    fn knee(shape: KneeShape, depth: u32, cause: KneeCause, e: KneeEvidence) -> Knee {
        Knee {
            series: "4 KiB random read".into(),
            shape,
            depth,
            gain_threshold_pct: 10.0,
            cause: Some(cause),
            evidence: Some(e),
        }
    }

    #[test]
    fn each_cause_reads_as_one_sentence_with_its_numbers() {
        let s = knee_sentence(&knee(
            KneeShape::Knee,
            2,
            KneeCause::DeviceBound,
            evidence(),
        ));
        assert_eq!(
            s,
            "Throughput stops rising at QD2: device-bound, latency grew 3.9x from QD2 to QD8 \
             while throughput rose 4%: Little's law, the device (or a limit in front of it) \
             is saturated."
        );
        let sync = KneeEvidence {
            engine_depth: 1.0,
            ..evidence()
        };
        let s = knee_sentence(&knee(
            KneeShape::FlatFromStart,
            1,
            KneeCause::DepthBound,
            sync,
        ));
        assert!(
            s.starts_with(
                "Throughput is flat from QD1: depth-bound, the engine kept 1.0 I/O in flight of 8 asked"
            ),
            "{s}"
        );
        let bot = KneeEvidence {
            device_inflight: Some(1.0),
            device_utilization_pct: Some(99.0),
            ..evidence()
        };
        let s = knee_sentence(&knee(KneeShape::Knee, 2, KneeCause::DepthBound, bot));
        assert!(s.contains("the device kept 1.0 I/O in flight of 8 asked while 99% busy"));
        let usb = KneeEvidence {
            ceiling: Some(("USB 2.0".into(), BytesPerSec(42e6))),
            ..evidence()
        };
        let s = knee_sentence(&knee(KneeShape::Knee, 2, KneeCause::LinkBound, usb));
        assert!(
            s.contains("link-bound, 40.0 MB/s is 95% of what the USB 2.0 link carries (42.0 MB/s)")
        );
        let cpu = KneeEvidence {
            cpu_pct: Some(99.6),
            ..evidence()
        };
        let s = knee_sentence(&knee(KneeShape::FlatFromStart, 1, KneeCause::CpuBound, cpu));
        assert!(s.contains(
            "CPU-bound, the submitting thread was on a CPU or waiting for one 100% of the time at QD8"
        ));
        let s = knee_sentence(&knee(
            KneeShape::Knee,
            4,
            KneeCause::Undetermined,
            evidence(),
        ));
        assert!(s.contains("cause undetermined: latency grew 3.9x for 4.0x the achieved depth"));
    }

    #[test]
    fn a_curve_still_rising_says_so() {
        let k = Knee {
            series: "s".into(),
            shape: KneeShape::StillRising,
            depth: 32,
            gain_threshold_pct: 10.0,
            cause: None,
            evidence: None,
        };
        assert_eq!(
            knee_sentence(&k),
            "Throughput is still rising at QD32 (each doubling gained 10% or more): \
             the knee lies deeper than the sweep."
        );
    }
}
