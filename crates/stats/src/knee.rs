//! The queue-depth knee: where a depth sweep stops gaining throughput, and
//! which of four limits explains it, read from what each point measured.
//!
//! The knee is the first depth from which no deeper point gains the
//! threshold (10% by default) per doubling over it: throughput has stopped
//! rising for good, not only for one step. A dip at QD2 followed by a rise
//! to QD8 is no knee at QD1, so the sentence never says "flat from QD1"
//! over a table that climbs 47%. Between depths that are not one doubling
//! apart the gain is taken per doubling (the geometric mean), so `1,4,16`
//! and `1,2,4,8,16` find the same knee.
//!
//! The cause is read over the plateau, from the knee to the deepest point,
//! by checks in this order, the first that holds winning:
//!
//! 1. **link-bound**: the plateau's best rate is at least [`LINK_SHARE`] of
//!    the slowest link's ceiling (its typical rate when known): no depth
//!    can beat the wire;
//! 2. **depth-bound**: the engine kept under [`DEPTH_SHARE`] of the asked
//!    depth in flight (a synchronous engine keeps 1), or it kept the depth
//!    but the device had about one request in flight at a time while busy
//!    (usb-storage's Bulk-Only Transport queues one command). For
//!    sequential I/O on any other transport the device's one request is
//!    not read as this: the block layer merges adjacent I/Os into fewer,
//!    larger requests, so a virtio disk streaming at depth 8 shows one;
//! 3. **CPU-bound**: the busiest submitting thread was on a CPU or waiting
//!    for one at least [`CPU_SATURATED_PCT`] of the time, so it never slept
//!    waiting for I/O: the CPU, not the device, sets the pace (the page
//!    cache);
//! 4. **device-bound**: mean latency grew at least [`LITTLE_SHARE`] as
//!    fast as the achieved depth: Little's law (depth = rate x latency) at
//!    a constant rate, the device or a limit in front of it is saturated.
//!
//! Otherwise the cause is undetermined. A curve still rising at its deepest
//! point has no cause.

use iomark_model::knee::{Knee, KneeCause, KneeEvidence, KneeShape};
use iomark_model::units::BytesPerSec;

/// The default gain per doubling below which throughput has stopped
/// rising, percent.
pub const DEFAULT_GAIN_PCT: f64 = 10.0;
/// Share of the link ceiling from which a plateau is the link's.
pub const LINK_SHARE: f64 = 0.85;
/// Share of the asked depth under which the depth was not reached.
pub const DEPTH_SHARE: f64 = 0.75;
/// At most this many requests in flight at a busy device is "one at a time".
pub const ONE_AT_A_TIME: f64 = 1.3;
/// A device busier than this, percent, is the one holding the queue.
pub const DEVICE_BUSY_PCT: f64 = 80.0;
/// Time of one thread on or waiting for a CPU, percent, from which the CPU
/// is its limit.
pub const CPU_SATURATED_PCT: f64 = 90.0;
/// Latency growth over depth growth from which latency follows depth.
pub const LITTLE_SHARE: f64 = 0.6;

/// What one point of a sweep measured.
#[derive(Debug, Clone, PartialEq)]
pub struct KneePoint {
    /// The depth asked for, per thread.
    pub depth: u32,
    /// Mean I/Os in flight per thread (time-weighted).
    pub engine_depth: f64,
    /// Mean requests in flight at the block device, when known.
    pub device_inflight: Option<f64>,
    /// The block device's busy share, percent, when known.
    pub device_utilization_pct: Option<f64>,
    /// Throughput.
    pub bw: BytesPerSec,
    /// Mean completion latency, nanoseconds.
    pub lat_mean_ns: f64,
    /// Time the busiest submitting thread spent on a CPU or runnable and
    /// waiting for one, percent of the point's time, when known.
    pub cpu_pct: Option<f64>,
    /// Sequential I/O, which the block layer merges.
    pub sequential: bool,
}

/// What is known of the links to the device.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Links {
    /// The slowest link, when its ceiling is known.
    pub ceiling: Option<Ceiling>,
    /// USB mass storage's protocol, `BOT` or `UASP`, when the device is on
    /// USB.
    pub usb_protocol: Option<String>,
}

/// The slowest link: its name and the rate taken as its ceiling.
#[derive(Debug, Clone, PartialEq)]
pub struct Ceiling {
    /// `USB 2.0`, `SATA III`, ...
    pub name: String,
    /// The rate no depth gets past.
    pub rate: BytesPerSec,
}

/// Find the knee of one series. `points` may come in any order; repeated
/// depths keep the first. `None` with fewer than two distinct depths.
pub fn find_knee(series: &str, points: &[KneePoint], links: &Links, gain_pct: f64) -> Option<Knee> {
    let mut pts: Vec<&KneePoint> = Vec::with_capacity(points.len());
    for p in points {
        if p.depth > 0 && !pts.iter().any(|q| q.depth == p.depth) {
            pts.push(p);
        }
    }
    pts.sort_by_key(|p| p.depth);
    if pts.len() < 2 {
        return None;
    }
    let threshold = gain_pct / 100.0;
    let gain_per_doubling = |from: &KneePoint, to: &KneePoint| {
        let doublings = (f64::from(to.depth) / f64::from(from.depth)).log2();
        let ratio = if from.bw.0 > 0.0 {
            to.bw.0 / from.bw.0
        } else {
            f64::INFINITY
        };
        ratio.powf(1.0 / doublings) - 1.0
    };
    let knee_at = (0..pts.len() - 1).find(|&i| {
        pts[i + 1..]
            .iter()
            .all(|later| gain_per_doubling(pts[i], later) < threshold)
    });
    let deepest = *pts.last()?;
    let Some(i) = knee_at else {
        return Some(Knee {
            series: series.to_string(),
            shape: KneeShape::StillRising,
            depth: deepest.depth,
            gain_threshold_pct: gain_pct,
            cause: None,
            evidence: None,
        });
    };
    let knee = pts[i];
    let plateau = &pts[i..];
    let evidence = evidence(knee, deepest, plateau, links);
    Some(Knee {
        series: series.to_string(),
        shape: if i == 0 {
            KneeShape::FlatFromStart
        } else {
            KneeShape::Knee
        },
        depth: knee.depth,
        gain_threshold_pct: gain_pct,
        cause: Some(cause(&evidence)),
        evidence: Some(evidence),
    })
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

fn evidence(
    knee: &KneePoint,
    deepest: &KneePoint,
    plateau: &[&KneePoint],
    links: &Links,
) -> KneeEvidence {
    let best = plateau.iter().map(|p| p.bw.0).fold(0.0, f64::max);
    KneeEvidence {
        deepest: deepest.depth,
        engine_depth: deepest.engine_depth,
        device_inflight: deepest.device_inflight,
        device_utilization_pct: deepest.device_utilization_pct,
        ceiling: links.ceiling.as_ref().map(|c| (c.name.clone(), c.rate)),
        plateau_bw: BytesPerSec(best),
        cpu_pct: deepest.cpu_pct,
        latency_growth: ratio(deepest.lat_mean_ns, knee.lat_mean_ns),
        depth_growth: ratio(deepest.engine_depth, knee.engine_depth),
        rate_gain: ratio(deepest.bw.0, knee.bw.0) - 1.0,
        sequential: deepest.sequential,
        usb_protocol: links.usb_protocol.clone(),
    }
}

/// The checks of the module's list, in order.
pub fn cause(e: &KneeEvidence) -> KneeCause {
    if let Some((_, rate)) = &e.ceiling {
        if rate.0 > 0.0 && e.plateau_bw.0 >= LINK_SHARE * rate.0 {
            return KneeCause::LinkBound;
        }
    }
    let asked = f64::from(e.deepest);
    if e.deepest > 1 && e.engine_depth < DEPTH_SHARE * asked {
        return KneeCause::DepthBound;
    }
    // Merged sequential requests look the same as one command at a time,
    // except where the transport is known to take one.
    let one_command_transport = e.usb_protocol.as_deref() == Some("BOT");
    if let (Some(inflight), Some(util)) = (e.device_inflight, e.device_utilization_pct) {
        if e.deepest > 1
            && inflight <= ONE_AT_A_TIME
            && util >= DEVICE_BUSY_PCT
            && (!e.sequential || one_command_transport)
        {
            return KneeCause::DepthBound;
        }
    }
    if e.cpu_pct.is_some_and(|c| c >= CPU_SATURATED_PCT) {
        return KneeCause::CpuBound;
    }
    if e.depth_growth > 1.0 && e.latency_growth >= LITTLE_SHARE * e.depth_growth {
        return KneeCause::DeviceBound;
    }
    KneeCause::Undetermined
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: f64 = 1e6;

    /// A point with the engine at the asked depth, an idle CPU and no
    /// device figures.
    fn pt(depth: u32, mb_s: f64, lat_us: f64) -> KneePoint {
        KneePoint {
            depth,
            engine_depth: f64::from(depth),
            device_inflight: None,
            device_utilization_pct: None,
            bw: BytesPerSec(mb_s * MB),
            lat_mean_ns: lat_us * 1e3,
            cpu_pct: Some(5.0),
            sequential: false,
        }
    }

    fn knee(points: &[KneePoint], ceiling: Option<&Ceiling>) -> Knee {
        let links = Links {
            ceiling: ceiling.cloned(),
            usb_protocol: None,
        };
        find_knee("s", points, &links, DEFAULT_GAIN_PCT).unwrap()
    }

    #[test]
    fn a_throttle_is_flat_from_qd1_and_device_bound() {
        // An IOPS limit: the rate never moves, latency follows depth.
        let k = knee(
            &[
                pt(1, 20.0, 200.0),
                pt(2, 20.2, 400.0),
                pt(4, 20.1, 800.0),
                pt(8, 20.0, 1600.0),
            ],
            None,
        );
        assert_eq!((k.shape, k.depth), (KneeShape::FlatFromStart, 1));
        assert_eq!(k.cause, Some(KneeCause::DeviceBound));
        let e = k.evidence.unwrap();
        assert!((e.latency_growth - 8.0).abs() < 1e-9);
        assert!((e.depth_growth - 8.0).abs() < 1e-9);
        assert!(e.rate_gain.abs() < 0.01);
    }

    #[test]
    fn the_knee_is_the_first_depth_after_which_doubling_gains_too_little() {
        let k = knee(
            &[
                pt(1, 100.0, 40.0),
                pt(2, 180.0, 44.0),
                pt(4, 190.0, 84.0),
                pt(8, 195.0, 164.0),
            ],
            None,
        );
        assert_eq!((k.shape, k.depth), (KneeShape::Knee, 2));
        assert_eq!(k.cause, Some(KneeCause::DeviceBound));
        // Exactly at the threshold still counts as rising.
        let k = knee(
            &[pt(1, 100.0, 40.0), pt(2, 110.0, 72.0), pt(4, 111.0, 144.0)],
            None,
        );
        assert_eq!(k.depth, 2);
    }

    #[test]
    fn a_dip_then_a_rise_is_no_knee() {
        // Issue 33's custom sweep: a dip at QD2, then +47% by QD8. The old
        // rule stopped at the dip and said "flat from QD1".
        let k = knee(
            &[
                pt(1, 1088.0, 40.0),
                pt(2, 1003.0, 80.0),
                pt(4, 1103.0, 150.0),
                pt(8, 1601.0, 200.0),
            ],
            None,
        );
        assert_eq!((k.shape, k.depth), (KneeShape::StillRising, 8));
        // IOmeter random writes 70 / 143 / 132 / 178 MB/s: QD8 is still
        // 12% per doubling over QD2, so it did not stop rising at QD2.
        let k = knee(
            &[
                pt(1, 70.0, 40.0),
                pt(2, 143.0, 40.0),
                pt(4, 132.0, 90.0),
                pt(8, 178.0, 130.0),
            ],
            None,
        );
        assert_eq!((k.shape, k.depth), (KneeShape::StillRising, 8));
        // A dip that never recovers is a knee where the best point was.
        let k = knee(
            &[pt(1, 50.0, 40.0), pt(2, 100.0, 40.0), pt(4, 90.0, 90.0)],
            None,
        );
        assert_eq!((k.shape, k.depth), (KneeShape::Knee, 2));
    }

    #[test]
    fn still_rising_at_the_deepest_point_has_no_cause() {
        let k = knee(
            &[pt(1, 100.0, 40.0), pt(2, 190.0, 42.0), pt(4, 350.0, 45.0)],
            None,
        );
        assert_eq!((k.shape, k.depth), (KneeShape::StillRising, 4));
        assert_eq!(k.cause, None);
        assert!(k.evidence.is_none());
    }

    #[test]
    fn gaps_between_depths_count_per_doubling() {
        // 1 -> 4 is two doublings: +30% in all is +14% per doubling (rising).
        let k = knee(
            &[
                pt(1, 100.0, 40.0),
                pt(4, 130.0, 120.0),
                pt(16, 131.0, 480.0),
            ],
            None,
        );
        assert_eq!(k.depth, 4);
        // Unordered input, a repeated depth and a zero-rate first point.
        let k = knee(&[pt(4, 50.0, 1.0), pt(1, 0.0, 1.0), pt(4, 99.0, 1.0)], None);
        assert_eq!(k.shape, KneeShape::StillRising);
        assert!(find_knee("s", &[pt(1, 1.0, 1.0)], &Links::default(), 10.0).is_none());
    }

    #[test]
    fn near_the_link_ceiling_it_is_link_bound_before_anything_else() {
        let usb2 = Ceiling {
            name: "USB 2.0".into(),
            rate: BytesPerSec(40.0 * MB),
        };
        let mut pts = vec![pt(1, 30.0, 100.0), pt(2, 37.0, 160.0), pt(4, 37.5, 320.0)];
        // Even with a busy CPU the wire explains it.
        pts[2].cpu_pct = Some(99.0);
        let k = knee(&pts, Some(&usb2));
        assert_eq!((k.depth, k.cause), (2, Some(KneeCause::LinkBound)));
        assert_eq!(k.evidence.unwrap().ceiling.unwrap().0, "USB 2.0");
    }

    #[test]
    fn a_bandwidth_limit_far_under_the_link_is_not_link_bound() {
        let sata3 = Ceiling {
            name: "SATA III".into(),
            rate: BytesPerSec(550.0 * MB),
        };
        let k = knee(
            &[
                pt(1, 50.0, 80.0),
                pt(2, 50.0, 160.0),
                pt(4, 50.0, 320.0),
                pt(8, 50.0, 640.0),
            ],
            Some(&sata3),
        );
        assert_eq!(k.cause, Some(KneeCause::DeviceBound));
    }

    #[test]
    fn a_synchronous_engine_is_depth_bound() {
        let pts: Vec<KneePoint> = [1, 2, 4, 8]
            .into_iter()
            .map(|d| KneePoint {
                engine_depth: 0.97,
                ..pt(d, 60.0, 65.0)
            })
            .collect();
        let k = knee(&pts, None);
        assert_eq!(
            (k.shape, k.cause),
            (KneeShape::FlatFromStart, Some(KneeCause::DepthBound))
        );
        assert!((k.evidence.unwrap().engine_depth - 0.97).abs() < 1e-9);
    }

    #[test]
    fn one_request_at_a_time_at_a_busy_device_is_depth_bound() {
        // usb-storage: the engine keeps 8 in flight, the disk takes one.
        let bot = |d: u32, mb: f64, lat: f64, inflight: f64, util: f64| KneePoint {
            device_inflight: Some(inflight),
            device_utilization_pct: Some(util),
            ..pt(d, mb, lat)
        };
        let k = knee(
            &[
                bot(1, 30.0, 70.0, 0.9, 85.0),
                bot(2, 40.0, 100.0, 1.0, 99.0),
                bot(8, 41.0, 400.0, 1.0, 99.0),
            ],
            None,
        );
        assert_eq!((k.depth, k.cause), (2, Some(KneeCause::DepthBound)));
        // A limit above an idle device (a throttle) is not: the device has
        // little in flight but is mostly idle too.
        let k = knee(
            &[
                bot(1, 20.0, 200.0, 0.2, 10.0),
                bot(8, 20.0, 1600.0, 0.2, 10.0),
            ],
            None,
        );
        assert_eq!(k.cause, Some(KneeCause::DeviceBound));
    }

    #[test]
    fn merged_sequential_requests_are_not_one_command_at_a_time() {
        // A virtio disk streaming sequential reads: the engine keeps 8 in
        // flight, the block layer merges them, the device shows about one.
        let seq = |d: u32, mb: f64, lat: f64| KneePoint {
            device_inflight: Some(1.0),
            device_utilization_pct: Some(99.0),
            sequential: true,
            ..pt(d, mb, lat)
        };
        let pts = [
            seq(1, 900.0, 130.0),
            seq(2, 1000.0, 240.0),
            seq(8, 1010.0, 950.0),
        ];
        let k = knee(&pts, None);
        assert_eq!(k.cause, Some(KneeCause::DeviceBound));
        assert!(k.evidence.unwrap().sequential);
        // On usb-storage (BOT) the same figures are the protocol's one
        // command at a time.
        let links = Links {
            ceiling: None,
            usb_protocol: Some("BOT".into()),
        };
        let k = find_knee("s", &pts, &links, DEFAULT_GAIN_PCT).unwrap();
        assert_eq!(k.cause, Some(KneeCause::DepthBound));
    }

    #[test]
    fn a_saturated_submitting_thread_is_cpu_bound() {
        // The page cache: rate flat, the one submitting thread at 100%.
        let pts: Vec<KneePoint> = [1, 2, 4, 8]
            .into_iter()
            .map(|d| KneePoint {
                cpu_pct: Some(99.5),
                ..pt(d, 3000.0, 1.3 * f64::from(d))
            })
            .collect();
        assert_eq!(knee(&pts, None).cause, Some(KneeCause::CpuBound));
    }

    #[test]
    fn latency_not_following_depth_is_undetermined() {
        let k = knee(
            &[pt(1, 100.0, 40.0), pt(2, 101.0, 41.0), pt(4, 100.0, 45.0)],
            None,
        );
        assert_eq!(k.cause, Some(KneeCause::Undetermined));
        // Unknown CPU and device figures do not decide anything.
        let mut p = vec![pt(1, 10.0, 10.0), pt(2, 10.0, 10.0)];
        p.iter_mut().for_each(|p| p.cpu_pct = None);
        assert_eq!(knee(&p, None).cause, Some(KneeCause::Undetermined));
    }
}
