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
            "Throughput is still rising at QD{}: from every shallower depth a deeper one \
             gained {gain:.0}% or more per doubling, so the knee lies deeper than the sweep.",
            k.depth
        );
    };
    format!("{}: {}.", head(k, e), because(cause, e, k.depth))
}

/// The curve's shape from the knee to the deepest point, in the words the
/// table's numbers bear out: "flat" only while the plateau stays within the
/// threshold of the knee's rate.
fn head(k: &Knee, e: &KneeEvidence) -> String {
    let threshold = k.gain_threshold_pct / 100.0;
    let (knee, deepest) = (k.depth, e.deepest);
    if e.rate_gain > threshold {
        format!(
            "Throughput rises only slowly from QD{knee}: under {:.0}% per doubling, \
             {} by QD{deepest}",
            k.gain_threshold_pct,
            change(e.rate_gain)
        )
    } else if e.rate_gain < -threshold {
        format!(
            "Throughput peaks at QD{knee} and {} by QD{deepest}",
            change(e.rate_gain)
        )
    } else if k.shape == KneeShape::FlatFromStart {
        format!("Throughput is flat from QD{knee}")
    } else {
        format!("Throughput stops rising at QD{knee}")
    }
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
             ({})",
            e.device_inflight.unwrap_or(0.0),
            e.device_utilization_pct.unwrap_or(0.0),
            if e.usb_protocol.as_deref() == Some("BOT") {
                "usb-storage's Bulk-Only Transport takes one command at a time"
            } else {
                "the device or its driver takes one command at a time"
            }
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
            sequential: false,
            usb_protocol: None,
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
        let s = knee_sentence(&knee(
            KneeShape::Knee,
            2,
            KneeCause::DepthBound,
            bot.clone(),
        ));
        assert!(s.contains("the device kept 1.0 I/O in flight of 8 asked while 99% busy"));
        // Bulk-Only Transport is named only where usb-storage is the driver.
        assert!(!s.contains("Bulk-Only"), "{s}");
        let on_bot = KneeEvidence {
            usb_protocol: Some("BOT".into()),
            ..bot
        };
        let s = knee_sentence(&knee(KneeShape::Knee, 2, KneeCause::DepthBound, on_bot));
        assert!(s.contains("usb-storage's Bulk-Only Transport"), "{s}");
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
            "Throughput is still rising at QD32: from every shallower depth a deeper one \
             gained 10% or more per doubling, so the knee lies deeper than the sweep."
        );
    }

    /// Issue 33's sweeps through the analysis and into words: the sentence
    /// agrees with the rates of the table.
    #[test]
    fn the_sentence_agrees_with_the_table() {
        use iomark_stats::knee::{find_knee, KneePoint, Links, DEFAULT_GAIN_PCT};
        let sweep = |rates: &[(u32, f64)]| {
            let points: Vec<KneePoint> = rates
                .iter()
                .map(|&(depth, mb)| KneePoint {
                    depth,
                    engine_depth: f64::from(depth),
                    device_inflight: None,
                    device_utilization_pct: None,
                    bw: BytesPerSec(mb * 1e6),
                    lat_mean_ns: 1e5 * f64::from(depth),
                    cpu_pct: Some(5.0),
                    sequential: false,
                })
                .collect();
            let k = find_knee("s", &points, &Links::default(), DEFAULT_GAIN_PCT).unwrap();
            knee_sentence(&k)
        };
        // 1088 / 1003 / 1103 / 1601 MB/s was "flat from QD1 ... rose 47%".
        let s = sweep(&[(1, 1088.0), (2, 1003.0), (4, 1103.0), (8, 1601.0)]);
        assert!(s.starts_with("Throughput is still rising at QD8"), "{s}");
        // IOmeter's 70 / 143 / 132 / 178 MB/s was "stops rising at QD2".
        let s = sweep(&[(1, 70.0), (2, 143.0), (4, 132.0), (8, 178.0)]);
        assert!(s.starts_with("Throughput is still rising at QD8"), "{s}");
        // 9% per doubling from QD1 is under the threshold at each step but
        // 30% in all: not "flat".
        let s = sweep(&[(1, 100.0), (2, 109.0), (4, 119.0), (8, 130.0)]);
        assert!(
            s.starts_with(
                "Throughput rises only slowly from QD1: under 10% per doubling, rose 30% by QD8"
            ),
            "{s}"
        );
        // A level plateau is flat, and its change is the table's.
        let s = sweep(&[(1, 100.0), (2, 102.0), (4, 101.0), (8, 103.0)]);
        assert!(s.starts_with("Throughput is flat from QD1: "), "{s}");
        assert!(s.contains("rose 3%"), "{s}");
        // A peak, then a fall.
        let s = sweep(&[(1, 50.0), (2, 100.0), (4, 90.0), (8, 80.0)]);
        assert!(
            s.starts_with("Throughput peaks at QD2 and fell 20% by QD8"),
            "{s}"
        );
    }
}
