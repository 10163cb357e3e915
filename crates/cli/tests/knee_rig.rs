//! The queue-depth knee on rigs whose cause is known (docs/knee.md): a
//! depth sweep (`--iodepth 1,2,4,8`, one short job per depth) must find
//! where throughput stops rising and say why.
//!
//! - an IOPS throttle on a loop device, far below what the device does:
//!   flat from QD1, device-bound (latency grows with depth);
//! - a bandwidth throttle, far below any link: flat, device-bound, and not
//!   link-bound (a loop device has no link ceiling at all);
//! - the page cache, more depth than CPUs: the one submitting thread
//!   copies every byte itself, CPU-bound;
//! - psync asked for depth: it keeps one I/O in flight, depth-bound.
//!
//! Link-bound needs a real link (USB, SATA) and is covered by the unit
//! tests of `iomark_stats::knee` with a known ceiling.
//!
//! Each point runs 1 s after a 300 ms ramp; the throttles (20 MiB/s, 150
//! IOPS) are far below what this machine does under load.

use crate::common::*;
use iomark_testrig::{require_root, Limits, LoopDevice, Throttle};
use serde_json::Value;

const SWEEP: &[&str] = &[
    "--iodepth",
    "1,2,4,8",
    "--runtime",
    "1s",
    "--ramp",
    "300ms",
    "--no-store",
    "--json",
];

/// The IOPS rig's limit.
const IOPS_LIMIT: u64 = 150;

/// A loop device of 64 MiB behind a block-I/O throttle.
struct Rig {
    dev: LoopDevice,
    throttle: Throttle,
}

impl Rig {
    fn new(limits: Limits) -> Result<Rig, String> {
        require_root()?;
        let dev = LoopDevice::new(64 << 20)?;
        let throttle = Throttle::new(&dev.majmin()?, limits)?;
        Ok(Rig { dev, throttle })
    }

    /// The document of a read sweep of block size `bs` on the device,
    /// under the throttle.
    fn sweep(&self, bs: &str) -> Value {
        let dev = self.dev.dev.to_str().unwrap();
        let mut args = vec!["disk", dev, "--rw", "randread", "--bs", bs];
        args.extend(SWEEP);
        json_of(&self.throttle.command(IOMARK, &args).output().unwrap())
    }
}

/// The run's one knee, after printing the sweep (for bench/knee-rigs).
fn the_knee<'a>(what: &str, doc: &'a Value) -> &'a Value {
    let body = &doc["body"];
    for j in body["jobs"].as_array().unwrap() {
        let d = &j["read"];
        eprintln!(
            "{what}: QD{} {:.1} MB/s, mean lat {:.0} us, queue {}",
            j["spec"]["iodepth"],
            d["bw"].as_f64().unwrap() / 1e6,
            d["clat"]["mean_ns"].as_f64().unwrap() / 1e3,
            j["queue"]
        );
    }
    let knees = body["knees"].as_array().unwrap();
    assert_eq!(knees.len(), 1, "{what}: one sweep, one knee: {knees:?}");
    let k = &knees[0];
    eprintln!(
        "knee-rig: {what}: knee QD{} ({}), cause {}",
        k["depth"], k["shape"], k["cause"]
    );
    // The knee is a stored figure too.
    let figs = doc["figures"].as_array();
    if let Some(figs) = figs {
        assert!(figs.iter().any(|f| f["metric"] == "knee depth"));
    }
    k
}

#[test]
fn an_iops_throttle_is_flat_from_qd1_and_device_bound() {
    // The throttle releases a waiting I/O on a timer tick (4 ms at
    // HZ=250), so one I/O at a time gets about 250 a second whatever the
    // limit: a limit above that is not reached at QD1 and the curve rises.
    // 150 IOPS is under it, so every depth runs at the limit.
    let rig = require!(Rig::new(Limits {
        read_iops: Some(IOPS_LIMIT),
        ..Limits::default()
    }));
    let doc = rig.sweep("4k");
    let k = the_knee("iops throttle", &doc);
    // Flat from QD1; 150 I/Os counted over 1 s vary by a tick's worth,
    // which once in five runs here put the knee at QD2 (+11%).
    assert_ne!(k["shape"], "still_rising", "{k}");
    assert!(k["depth"].as_u64().unwrap() <= 2, "{k}");
    assert_eq!(k["cause"], "device_bound", "{k}");
    let e = &k["evidence"];
    // Little's law at a fixed rate: latency grows as the depth does, from
    // the knee to the deepest point (8 times from QD1, 4 from QD2; the
    // throttle's slices make it rough).
    let growth = e["latency_growth"].as_f64().unwrap();
    let depth_growth = e["depth_growth"].as_f64().unwrap();
    assert!(
        (0.5 * depth_growth..=1.5 * depth_growth).contains(&growth),
        "latency grew {growth}x over {depth_growth}x the depth"
    );
    assert!(e["engine_depth"].as_f64().unwrap() > 7.5, "{e}");
}

#[test]
fn a_bandwidth_throttle_under_the_link_is_device_bound_not_link_bound() {
    let rig = require!(Rig::new(Limits {
        read_bps: Some(20 << 20),
        ..Limits::default()
    }));
    // 256 KiB reads: 80 a second, under the rate one I/O at a time gets
    // through the throttle's timer ticks (see the IOPS rig), so QD1 is
    // already at the limit.
    let doc = rig.sweep("256k");
    let k = the_knee("bandwidth throttle", &doc);
    // Flat from QD1 on a quiet machine (5 of 5 runs); under a full test
    // suite, scheduling delays between one completion and the next
    // submission once cost QD1 over a tenth of the limit, putting the
    // knee at QD2. The cause is what this rig is for.
    assert_ne!(k["shape"], "still_rising", "{k}");
    assert!(k["depth"].as_u64().unwrap() <= 2, "{k}");
    assert_eq!(k["cause"], "device_bound", "{k}");
    // No ceiling was known, so nothing could call it the link's.
    assert!(k["evidence"]["ceiling"].is_null());
}

#[test]
fn psync_asked_for_depth_is_depth_bound() {
    let rig = require!(Rig::new(Limits {
        read_iops: Some(IOPS_LIMIT),
        ..Limits::default()
    }));
    let dev = rig.dev.dev.to_str().unwrap();
    let mut args = vec!["disk", dev, "--rw", "randread", "--bs", "4k"];
    args.extend(["--engine", "psync"]);
    args.extend(SWEEP);
    let doc = json_of(&rig.throttle.command(IOMARK, &args).output().unwrap());
    let k = the_knee("psync", &doc);
    // 150 I/Os a second counted over 1 s vary by a tick's worth, which can
    // put the knee at QD2; it is never still rising.
    assert_ne!(k["shape"], "still_rising", "{k}");
    assert_eq!(k["cause"], "depth_bound", "{k}");
    let achieved = k["evidence"]["engine_depth"].as_f64().unwrap();
    assert!((0.8..=1.0).contains(&achieved), "{achieved} in flight");
}

#[test]
fn the_page_cache_with_more_depth_than_cpus_is_cpu_bound() {
    // A buffered file: io_uring serves reads that hit the page cache inline,
    // in the submitting thread, so its CPU is the limit at any depth. 64
    // MiB is read into the cache by the ramp of the first point.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let mut args = vec!["disk", path, "--size", "64MiB", "--rw", "randread"];
    args.extend(["--bs", "128k", "--buffered", "--engine", "io_uring"]);
    args.extend(SWEEP);
    let doc = json_of(&iomark_ok(&args));
    let k = the_knee("page cache", &doc);
    assert_eq!(k["cause"], "cpu_bound", "{k}");
    let cpu = k["evidence"]["cpu_pct"].as_f64().unwrap();
    assert!(cpu >= 90.0, "busiest thread {cpu}%");
    assert_no_test_files(dir.path());
}
