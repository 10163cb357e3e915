//! The classic profiles on a loop device throttled to a known read rate
//! (../shared/TEST-RIGS.md): CrystalDiskMark's SEQ1M Q1T1 read and GNOME
//! Disks' average read rate must land at the throttle (within 3% on a
//! quiet machine, `bench/rig-accuracy`, plus one throttle slice over the
//! measured window: see `iomark_testrig::throttle_band`), GNOME's
//! access test must take exactly the samples asked for at aligned offsets
//! inside the device, and IOmeter's sweep must hold each queue depth.

use crate::common::*;
use iomark_testrig::{require_root, Limits, LoopDevice, Throttle};
use serde_json::Value;
use std::time::Duration;

/// 30 MiB/s, the rig's read limit.
const READ_BPS: u64 = 30 << 20;

/// A loop device of `size` bytes behind a block-I/O throttle.
struct Rig {
    dev: LoopDevice,
    throttle: Throttle,
}

impl Rig {
    fn new(size: u64, limits: Limits) -> Result<Rig, String> {
        require_root()?;
        let dev = LoopDevice::new(size)?;
        let throttle = Throttle::new(&dev.majmin()?, limits)?;
        Ok(Rig { dev, throttle })
    }

    /// The device's path.
    fn dev(&self) -> &str {
        self.dev.dev.to_str().unwrap()
    }

    /// The JSON document of `iomark disk DEV --profile PROFILE FLAGS...
    /// [--allow-write DEV] --json` run under the throttle, which must
    /// succeed. `flags` as on a command line, split at white space.
    fn profile(&self, profile: &str, flags: &str, allow_write: bool) -> Value {
        self.profile_with(&[IOMARK], profile, flags, allow_write)
    }

    /// [`profile`](Self::profile) run as `nice -n -10 iomark ...`: for a
    /// claim about what iomark keeps in flight, which a worker starved of
    /// CPU by the busy loops of a loaded machine does not test (as in
    /// sustained_rig).
    fn profile_fed(&self, profile: &str, flags: &str, allow_write: bool) -> Value {
        self.profile_with(&["nice", "-n", "-10", IOMARK], profile, flags, allow_write)
    }

    fn profile_with(&self, run: &[&str], profile: &str, flags: &str, allow_write: bool) -> Value {
        let dev = self.dev();
        let mut all = run[1..].to_vec();
        all.extend(["disk", dev, "--profile", profile]);
        all.extend(flags.split_whitespace());
        if allow_write {
            all.extend(["--allow-write", dev]);
        }
        all.push("--json");
        json_of(&self.throttle.command(run[0], &all).output().unwrap())
    }
}

fn read_limit() -> Limits {
    Limits {
        read_bps: Some(READ_BPS),
        ..Limits::default()
    }
}

/// A read rate (`what`) measured over `window` at the throttle (see
/// `iomark_testrig::throttle_band`).
fn assert_at_the_read_limit(what: &str, bw: f64, window: Duration, start: WindowStart) {
    assert_at_the_throttle(what, bw, READ_BPS as f64, window, start);
}

/// The `key` of each element of the array `a`.
fn each<'a>(a: &'a Value, key: &str) -> Vec<&'a Value> {
    a.as_array().unwrap().iter().map(|e| &e[key]).collect()
}

#[test]
fn cdm_quick_seq1m_q1t1_read_matches_the_throttle() {
    let rig = require!(Rig::new(64 << 20, read_limit()));
    // psync: io_uring reads of exactly 1 MiB run at half the limit under the
    // v1 throttle (a kernel artefact, TEST-RIGS.md). The throttle also lets
    // a few I/Os through at once when a pass starts (its 100 ms slice plus
    // the idle between passes: about 5 MiB here, two slices, see
    // `WindowStart::FromIdle`), so a pass is long for that to stay small:
    // one 8 s pass after --quick's 1 s preparation. cdm-real's SEQ1M Q1T1 row is cdm's, with half the rows.
    let doc = rig.profile(
        "cdm-real",
        "--quick --passes 1 --pass-time 8s --engine psync",
        true,
    );
    let body = &doc["body"];
    assert_eq!(body["profile"], "cdm-real");
    let tests = body["profile_result"]["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4, "2 rows, read and write");
    let t = tests
        .iter()
        .find(|t| t["row"] == "SEQ1M Q1T1" && t["dir"] == "read")
        .unwrap();
    let bw = t["bw"].as_f64().unwrap();
    // The pass starts on an idle throttle, after the preparation.
    let pass = Duration::from_secs(8);
    assert_at_the_read_limit("SEQ1M Q1T1 read", bw, pass, WindowStart::FromIdle);
    // The statistic is the maximum over the passes, which are all kept.
    let passes: Vec<f64> = t["pass_bw"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(passes.len(), 1);
    assert_eq!(passes.iter().cloned().fold(0.0, f64::max), bw);
    assert_eq!(
        body["jobs"].as_array().unwrap().len(),
        4,
        "every measured pass"
    );
    let shortened = each(&doc["warnings"], "kind")
        .iter()
        .any(|k| *k == "shortened");
    assert!(shortened, "--quick says so: {}", doc["warnings"]);
}

#[test]
fn gnome_read_rate_and_access_samples_on_a_read_only_device() {
    let rig = require!(Rig::new(96 << 20, read_limit()));
    // No --allow-write: the device is only read. Samples of 30 MiB (one
    // second each at the limit): the throttle's 100 ms slices make 10 MiB
    // samples scatter by +-15%, and a mean of rates leans high on scatter.
    let doc = rig.profile(
        "gnome",
        "--samples 6 --sample-size 30MiB --access-samples 150",
        false,
    );
    let g = &doc["body"]["profile_result"];
    assert_eq!(g["family"], "gnome");
    // The average is of the samples' rates, each over its own second (30
    // MiB at 30 MiB/s), read one after another.
    let avg = g["avg_read"].as_f64().unwrap();
    let sample = Duration::from_secs(1);
    assert_at_the_read_limit("gnome average read", avg, sample, WindowStart::Streaming);
    assert_eq!(g["transfer"].as_array().unwrap().len(), 6);
    assert!(g["avg_write"].is_null());
    let size = doc["body"]["target"]["size"].as_u64().unwrap();
    assert_eq!(size, 96 << 20);
    let access = g["access"].as_array().unwrap();
    assert_eq!(access.len(), 150, "exactly the samples asked for");
    for (i, s) in access.iter().enumerate() {
        let off = s["offset"].as_u64().unwrap();
        assert_eq!(off % 4096, 0, "sample {i} at {off} is not 4 KiB aligned");
        assert!(
            off + 4096 <= size,
            "sample {i} at {off} is outside the device"
        );
        assert_eq!(s["distance_pct"].is_null(), i == 0);
    }
    // The fixed seed repeats the offsets from run to run.
    let again = rig.profile("gnome", "--samples 0 --access-samples 150", false);
    assert_eq!(
        each(&g["access"], "offset"),
        each(&again["body"]["profile_result"]["access"], "offset")
    );
}

#[test]
fn iometer_sweep_holds_each_requested_depth_with_io_uring() {
    let rig = require!(Rig::new(
        64 << 20,
        Limits {
            write_bps: Some(READ_BPS),
            ..read_limit()
        },
    ));
    let doc = rig.profile_fed("iometer", "--qd 1..8 --ramp 200ms --runtime 1s", true);
    let points = doc["body"]["profile_result"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 16, "4 patterns x 4 depths");
    for p in points {
        let depth = p["depth"].as_f64().unwrap();
        let achieved = p["achieved_depth"].as_f64().unwrap();
        let job = &doc["body"]["jobs"][p["job"].as_u64().unwrap() as usize];
        eprintln!("{} QD{depth}: achieved {achieved:.3}", p["pattern"]);
        // What the point measured, for a failure to be read from its log:
        // the queue says where held I/Os sat (the device's own `inflight`
        // against the depth iomark held), the device's counts what got
        // through the throttle.
        let evidence = || {
            format!(
                "bw {}, samples {}, queue {}, device io {}, warnings {}",
                p["bw"], job["samples"], job["queue"], job["device_io"], doc["warnings"]
            )
        };
        assert!(
            (achieved - depth).abs() <= 0.05 * depth,
            "{} at QD{depth}: achieved {achieved:.2}; {}",
            p["pattern"],
            evidence()
        );
        assert!(
            p["bw"].as_f64().unwrap() > 0.0,
            "{} at QD{depth} moved no data; {}",
            p["pattern"],
            evidence()
        );
        assert_eq!(job["spec"]["engine"], "io_uring");
    }
}

#[test]
fn cdm3_quick_at_a_rating_equal_to_the_throttle_is_not_called_a_cache_and_twice_it_is() {
    // Issue 46: with the rig's exact rate as the rating, cdm3 --quick's
    // best of two 1 s passes read 5-10% above it (the throttle's
    // start-up slice) and was flagged as a cache. The margin allows a
    // pass its start-up burst; a device reading twice its rating (here
    // rated at half the throttle) is still flagged, the margin named.
    let rig = require!(Rig::new(64 << 20, read_limit()));
    let rating = format!("--rated read={}MB/s", READ_BPS as f64 / 1e6);
    let doc = rig.profile("cdm3", &format!("--quick {rating}"), true);
    let seq = doc["body"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["spec"]["rw"] == "read")
        .filter_map(|j| j["read"]["bw"].as_f64())
        .fold(0.0, f64::max);
    assert!(seq > 0.0, "a sequential read ran: {}", doc["body"]["jobs"]);
    eprintln!(
        "best sequential read {:.3}x the throttle",
        seq / READ_BPS as f64
    );
    let above: Vec<&Value> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "above_rated")
        .collect();
    assert!(
        above.is_empty(),
        "best sequential read {:.3} MB/s against a rating of {:.3}: {above:?}",
        seq / 1e6,
        READ_BPS as f64 / 1e6
    );

    let half = format!("--rated read={}MB/s", READ_BPS as f64 / 2e6);
    let doc = rig.profile("cdm3", &format!("--quick {half}"), true);
    let above: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "above_rated")
        .filter_map(|w| w["message"].as_str())
        .collect();
    assert!(
        above
            .iter()
            .any(|m| m.contains(": read ") && m.contains("% a pass of this length can")),
        "twice the rating, not flagged: {above:?}"
    );
}
