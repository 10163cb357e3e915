//! The classic profiles on a loop device throttled to a known read rate
//! (../shared/TEST-RIGS.md): CrystalDiskMark's SEQ1M Q1T1 read and GNOME
//! Disks' average read rate must land within 3% of the throttle, GNOME's
//! access test must take exactly the samples asked for at aligned offsets
//! inside the device, and IOmeter's sweep must hold each queue depth.

mod common;

use common::*;
use iomark_testrig::{require, require_root, Limits, LoopDevice, Throttle};
use serde_json::Value;

/// 30 MiB/s, the rig's read limit.
const READ_BPS: u64 = 30 << 20;

fn rig(size: u64, limits: Limits) -> Result<(LoopDevice, Throttle), String> {
    require_root()?;
    let dev = LoopDevice::new(size)?;
    let throttle = Throttle::new(&dev.majmin()?, limits)?;
    Ok((dev, throttle))
}

fn read_limit() -> Limits {
    Limits {
        read_bps: Some(READ_BPS),
        ..Limits::default()
    }
}

fn within(measured: f64, expected: f64, tolerance: f64) -> bool {
    (measured / expected - 1.0).abs() <= tolerance
}

#[test]
fn cdm_quick_seq1m_q1t1_read_matches_the_throttle() {
    let r = rig(64 << 20, read_limit());
    require!(r);
    let (dev, throttle) = r.unwrap();
    let d = dev.dev.to_str().unwrap();
    // psync: io_uring reads of exactly 1 MiB run at half the limit under the
    // v1 throttle (a kernel artefact, TEST-RIGS.md). The throttle also lets
    // a few I/Os through at once when a pass starts (its 100 ms slice plus
    // the idle between passes: about 5 MiB here), so a pass must be long
    // for that to stay under 3%: one 8 s pass after --quick's 1 s
    // preparation. cdm-real's SEQ1M Q1T1 row is cdm's, with half the rows.
    let out = throttle
        .command(
            IOMARK,
            &[
                "disk",
                d,
                "--profile",
                "cdm-real",
                "--quick",
                "--passes",
                "1",
                "--pass-time",
                "8s",
                "--engine",
                "psync",
                "--allow-write",
                d,
                "--json",
            ],
        )
        .output()
        .unwrap();
    let doc = json_of(&out);
    let body = &doc["body"];
    assert_eq!(body["profile"], "cdm-real");
    let tests = body["profile_result"]["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4, "2 rows, read and write");
    let t = tests
        .iter()
        .find(|t| t["row"] == "SEQ1M Q1T1" && t["dir"] == "read")
        .unwrap();
    let bw = t["bw"].as_f64().unwrap();
    eprintln!(
        "SEQ1M Q1T1 read {:.2} MB/s, throttle {:.2} MB/s",
        bw / 1e6,
        READ_BPS as f64 / 1e6
    );
    assert!(
        within(bw, READ_BPS as f64, 0.03),
        "SEQ1M Q1T1 read {:.2} MB/s vs throttle {:.2} MB/s",
        bw / 1e6,
        READ_BPS as f64 / 1e6
    );
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
    let shortened = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "shortened");
    assert!(shortened, "--quick says so: {}", doc["warnings"]);
}

#[test]
fn gnome_read_rate_and_access_samples_on_a_read_only_device() {
    let r = rig(96 << 20, read_limit());
    require!(r);
    let (dev, throttle) = r.unwrap();
    let d = dev.dev.to_str().unwrap();
    // No --allow-write: the device is only read. Samples of 30 MiB (one
    // second each at the limit): the throttle's 100 ms slices make 10 MiB
    // samples scatter by +-15%, and a mean of rates leans high on scatter.
    let out = throttle
        .command(
            IOMARK,
            &[
                "disk",
                d,
                "--profile",
                "gnome",
                "--samples",
                "6",
                "--sample-size",
                "30MiB",
                "--access-samples",
                "150",
                "--json",
            ],
        )
        .output()
        .unwrap();
    let doc = json_of(&out);
    let g = &doc["body"]["profile_result"];
    assert_eq!(g["family"], "gnome");
    let avg = g["avg_read"].as_f64().unwrap();
    eprintln!(
        "gnome average read {:.2} MB/s, throttle {:.2} MB/s",
        avg / 1e6,
        READ_BPS as f64 / 1e6
    );
    assert!(
        within(avg, READ_BPS as f64, 0.03),
        "average read {:.2} MB/s vs throttle {:.2} MB/s",
        avg / 1e6,
        READ_BPS as f64 / 1e6
    );
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
    let again = throttle
        .command(
            IOMARK,
            &[
                "disk",
                d,
                "--profile",
                "gnome",
                "--samples",
                "0",
                "--access-samples",
                "150",
                "--json",
            ],
        )
        .output()
        .unwrap();
    let again = json_of(&again);
    let offsets = |a: &Value| -> Vec<u64> {
        a.as_array()
            .unwrap()
            .iter()
            .map(|s| s["offset"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(
        offsets(&g["access"]),
        offsets(&again["body"]["profile_result"]["access"])
    );
}

#[test]
fn iometer_sweep_holds_each_requested_depth_with_io_uring() {
    let r = rig(
        64 << 20,
        Limits {
            read_bps: Some(READ_BPS),
            write_bps: Some(READ_BPS),
            ..Limits::default()
        },
    );
    require!(r);
    let (dev, throttle) = r.unwrap();
    let d = dev.dev.to_str().unwrap();
    let out = throttle
        .command(
            IOMARK,
            &[
                "disk",
                d,
                "--profile",
                "iometer",
                "--qd",
                "1..8",
                "--ramp",
                "200ms",
                "--runtime",
                "1s",
                "--allow-write",
                d,
                "--json",
            ],
        )
        .output()
        .unwrap();
    let doc = json_of(&out);
    let points = doc["body"]["profile_result"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 16, "4 patterns x 4 depths");
    for p in points {
        let depth = p["depth"].as_f64().unwrap();
        let achieved = p["achieved_depth"].as_f64().unwrap();
        eprintln!("{} QD{depth}: achieved {achieved:.3}", p["pattern"]);
        assert!(
            (achieved - depth).abs() <= 0.05 * depth,
            "{} at QD{depth}: achieved {achieved:.2}",
            p["pattern"]
        );
        assert!(p["bw"].as_f64().unwrap() > 0.0);
        let job = &doc["body"]["jobs"][p["job"].as_u64().unwrap() as usize];
        assert_eq!(job["spec"]["engine"], "io_uring");
    }
}
