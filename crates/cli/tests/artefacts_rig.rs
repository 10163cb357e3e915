//! The artefacts probe on devices that compress and one that does not
//! (../shared/TEST-RIGS.md, "Devices that compress or deduplicate"):
//!
//! * zram0 (lzo-rle, zero pages stored as a flag) is flagged;
//! * btrfs mounted with `compress=zstd` on a throttled loop device is
//!   flagged, with direct I/O (btrfs falls back to buffered writes for a
//!   file it compresses) as with buffered;
//! * a plain loop device behind the same throttle is not flagged;
//! * random data written through iomark does not compress on zram
//!   (`mm_stat`), while compressible:50 does;
//! * the verdict and a `--rated` speed are remembered per device and warn
//!   every later run there; the default profile runs the short probe first
//!   unless the store already knows, or `--no-probe`.
//!
//! The throttled rigs hold every bio of the device (the file system's own
//! workers too) to a known rate each way (100 MiB/s, the btrfs rig 32
//! MiB/s), so a pattern that shrinks on its way runs clearly faster than
//! random data and a plain device runs every pattern at the throttle.

use crate::common::*;
use iomark_testrig::{require_root, DeviceThrottle, Limits, LoopDevice, MountedFs, Throttle, Zram};
use serde_json::Value;

/// Each direction's limit on the throttled rigs.
const RIG_BPS: u64 = 100 << 20;

/// The btrfs rig's limit: zstd on zeros is bound by the CPU, and on this
/// 2-CPU machine under a loaded test suite it ran at only 1.3x 100 MiB/s;
/// a lower limit keeps the compression's lead far above the noise.
const BTRFS_RIG_BPS: u64 = 32 << 20;

fn throttle_limits() -> Limits {
    limits_of(RIG_BPS)
}

fn limits_of(bps: u64) -> Limits {
    Limits {
        read_bps: Some(bps),
        write_bps: Some(bps),
        ..Limits::default()
    }
}

/// The probe's result in a `--json` run.
fn artefacts(doc: &Value) -> &Value {
    let r = &doc["body"]["profile_result"];
    assert_eq!(
        r["family"], "artefacts",
        "no artefacts result: {}",
        doc["body"]["profile"]
    );
    r
}

/// The factor of `data` against random data, `dir` "write" or "read".
fn factor(doc: &Value, data: &str, dir: &str) -> f64 {
    artefacts(doc)["verdict"]["factors"]
        .as_array()
        .expect("factors")
        .iter()
        .find(|f| f["data"] == data)
        .and_then(|f| f[dir].as_f64())
        .unwrap_or_else(|| panic!("no {data} {dir} factor: {}", artefacts(doc)))
}

fn finding(doc: &Value) -> &str {
    artefacts(doc)["verdict"]["finding"].as_str().unwrap_or("")
}

fn probe(target: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "disk",
        target,
        "--profile",
        "artefacts",
        "--size",
        "64MiB",
        "--quick",
        "--json",
    ];
    args.extend_from_slice(extra);
    json_of(&iomark(&args))
}

#[test]
fn the_probe_flags_zram() {
    let _zram = exclusive(Shared::Zram0);
    require!(require_root());
    let zram = require!(Zram::new(256 << 20));
    let dev = zram.dev.to_str().unwrap();
    let doc = probe(dev, &["--allow-write", dev, "--no-store"]);
    assert_eq!(finding(&doc), "compresses", "{}", artefacts(&doc));
    let zeros = factor(&doc, "zeros", "write").max(factor(&doc, "zeros", "read"));
    assert!(zeros >= 1.5, "zeros ran {zeros}x random");
    let w = warnings_of_kind(&doc, "compression");
    assert!(
        w.iter().any(|m| m.contains("compresses: zero data")),
        "{w:?}"
    );
}

#[test]
fn random_data_does_not_compress_on_zram_and_compressible_does() {
    let _zram = exclusive(Shared::Zram0);
    require!(require_root());
    // Each pattern on a fresh device, so mm_stat counts only its writes.
    let stored_over_compressed = |data: &str| {
        let zram = Zram::new(256 << 20)?;
        let dev = zram.dev.to_str().unwrap();
        let args = [
            "disk",
            dev,
            "--allow-write",
            dev,
            "--rw",
            "write",
            "--bs",
            "1M",
            "--size",
            "128MiB",
            "--runtime",
            "0",
            "--data",
            data,
            "--no-store",
        ];
        assert_ok(&iomark(&args), &format!("writing {data} to zram"));
        let (orig, compr) = zram.stored_and_compressed()?;
        assert!(orig >= 120 << 20, "{data}: only {orig} bytes stored");
        Ok::<f64, String>(compr as f64 / orig as f64)
    };
    let random = require!(stored_over_compressed("random"));
    assert!(
        random > 0.95,
        "random data compressed to {random:.2} of its size"
    );
    let half = require!(stored_over_compressed("compressible:50"));
    assert!(half < 0.7, "compressible:50 compressed to only {half:.2}");
}

#[test]
fn the_probe_flags_btrfs_with_compression() {
    require!(require_root());
    let fs = require!(MountedFs::btrfs(512 << 20, "compress=zstd"));
    let _throttle = require!(DeviceThrottle::new(
        &require!(fs.device.majmin()),
        limits_of(BTRFS_RIG_BPS)
    ));
    let dir = fs.mountpoint.to_str().unwrap();
    for mode in ["--direct", "--buffered"] {
        let doc = probe(dir, &[mode, "--no-store"]);
        assert_eq!(finding(&doc), "compresses", "{mode}: {}", artefacts(&doc));
        let zeros = factor(&doc, "zeros", "write");
        assert!(
            zeros >= 2.0,
            "{mode}: zeros wrote {zeros}x random through zstd"
        );
        let random = &artefacts(&doc)["patterns"][0];
        assert_eq!(random["data"], "random");
        // Buffered writes land in the page cache at first, ahead of the
        // flush the rate counts; random data still cannot pass the
        // throttle by much.
        let write = random["write"].as_f64().unwrap();
        assert!(
            write < 1.3 * BTRFS_RIG_BPS as f64,
            "{mode}: random data beat the throttle ({write} B/s): not compressed, not cached"
        );
    }
    assert!(
        test_files(&fs.mountpoint).is_empty(),
        "test file left behind"
    );
}

#[test]
fn the_probe_does_not_flag_a_plain_loop_device() {
    require!(require_root());
    let dev = require!(LoopDevice::new(128 << 20));
    let _throttle = require!(DeviceThrottle::new(
        &require!(dev.majmin()),
        throttle_limits()
    ));
    let path = dev.dev.to_str().unwrap();
    let doc = probe(path, &["--allow-write", path, "--no-store"]);
    assert_eq!(finding(&doc), "plain", "{}", artefacts(&doc));
    for data in ["zeros", "repeat", "compressible:50"] {
        for dir in ["write", "read"] {
            let x = factor(&doc, data, dir);
            assert!((0.8..1.25).contains(&x), "{data} {dir} ran {x}x random");
        }
    }
    assert!(warnings_of_kind(&doc, "compression").is_empty());
}

#[test]
fn verdicts_and_rated_speeds_are_remembered_per_device() {
    let _zram = exclusive(Shared::Zram0);
    require!(require_root());
    let zram = require!(Zram::new(256 << 20));
    let dev = zram.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let stored = probe(dev, &["--allow-write", dev, "--db", db.db()]);
    assert_eq!(finding(&stored), "compresses", "{}", artefacts(&stored));

    // A later custom run on the device carries the verdict, naming the
    // probe's run, and a --rated speed it beats.
    let read = |extra: &[&str]| {
        let mut args = vec![
            "disk",
            dev,
            "--rw",
            "read",
            "--bs",
            "1M",
            "--size",
            "64MiB",
            "--runtime",
            "1s",
            "--json",
            "--db",
            db.db(),
        ];
        args.extend_from_slice(extra);
        json_of(&iomark(&args))
    };
    let rated = read(&["--rated", "read=10MB/s"]);
    let c = warnings_of_kind(&rated, "compression");
    assert!(
        c.iter().any(|m| m.contains("artefacts probe of run 1")),
        "{c:?}"
    );
    let r = warnings_of_kind(&rated, "above_rated");
    assert!(r.iter().any(|m| m.contains("10.00 MB/s")), "{r:?}");
    // Remembered: the next run says neither flag and is still checked.
    let later = read(&[]);
    assert!(!warnings_of_kind(&later, "above_rated").is_empty());
    assert!(!warnings_of_kind(&later, "compression").is_empty());
    // A run somewhere else is not.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let elsewhere = json_of(&iomark(&[
        "disk",
        d,
        "--rw",
        "read",
        "--bs",
        "1M",
        "--size",
        "8MiB",
        "--runtime",
        "1s",
        "--json",
        "--db",
        db.db(),
    ]));
    assert!(warnings_of_kind(&elsewhere, "above_rated").is_empty());
    assert!(warnings_of_kind(&elsewhere, "compression").is_empty());
}

#[test]
fn the_default_profile_probes_first_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let db = ScratchDb::new();
    let cdm = |extra: &[&str]| {
        let mut args = vec![
            "disk",
            d,
            "--quick",
            "--size",
            "16MiB",
            "--passes",
            "1",
            // What is checked is the probe, not the profile's figures:
            // short tests keep the three runs to seconds.
            "--pass-time",
            "0.5s",
            "--json",
            "--db",
            db.db(),
        ];
        args.extend_from_slice(extra);
        json_of(&iomark(&args))
    };
    let none = cdm(&["--no-probe"]);
    assert!(none["body"]["probe"].is_null(), "--no-probe still probed");
    let first = cdm(&[]);
    let probed = &first["body"]["probe"];
    assert!(probed["finding"].is_string(), "no probe: {}", first["body"]);
    assert_eq!(
        probed["region"],
        16u64 << 20,
        "the probe stays inside the test file"
    );
    // The store now knows this file system: the probe is not run again
    // (its jobs would show), and its verdict is kept with the run.
    let second = cdm(&[]);
    assert_eq!(second["body"]["probe"], *probed);
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn random_reads_above_a_rating_in_iops_are_flagged_and_remembered() {
    require!(require_root());
    // A loop device over memory stands for a hidden cache: it serves
    // random reads far faster than a device rated for 400 IOPS could.
    let dev = LoopDevice::new(64 << 20).unwrap();
    let d = dev.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let rnd = |extra: &[&str]| {
        let mut args = vec!["disk", d, "--rw", "randread", "--bs", "4k"];
        args.extend([
            "--iodepth",
            "1",
            "--runtime",
            "1s",
            "--json",
            "--db",
            db.db(),
        ]);
        args.extend_from_slice(extra);
        json_of(&iomark(&args))
    };
    let flagged = rnd(&["--rated", "read=1GB/s,randread=400IOPS"]);
    let r = warnings_of_kind(&flagged, "above_rated");
    assert!(
        r.iter()
            .any(|m| m.contains("400 IOPS") && m.contains("randread")),
        "{r:?}"
    );
    // Remembered with the device: the next run is judged too.
    assert!(!warnings_of_kind(&rnd(&[]), "above_rated").is_empty());
    // A rating it stays under says nothing.
    let under = rnd(&["--rated", "randread=100MIOPS"]);
    assert!(warnings_of_kind(&under, "above_rated").is_empty());
}

#[test]
fn a_flash_stick_reading_far_faster_than_it_writes_is_not_a_cache() {
    require!(require_root());
    // A loop device reads at 25 MiB/s and writes at 1 MiB/s, as a cheap
    // USB stick does: reads 25x its writes is flash, not a cache. Loop
    // devices report rotational=1, which once made this "a hard disk".
    // Writes at 1 MiB/s, not 2: beside two busy loops the 4 KiB QD1 reads
    // reached 11.5 MB/s, 46% of their throttle (each goes through the loop
    // device's worker, which the loops starve), and 2 MiB/s writes left
    // the rig at 4.5x, under the 5x it must be to stand for a stick.
    let dev = LoopDevice::new(8 << 20).unwrap();
    let d = dev.dev.to_str().unwrap();
    let throttle = Throttle::new(
        &dev.majmin().unwrap(),
        Limits {
            read_bps: Some(25 << 20),
            write_bps: Some(1 << 20),
            ..Limits::default()
        },
    )
    .unwrap();
    let args = [
        "disk",
        d,
        "--allow-write",
        d,
        "--profile",
        "cdm",
        "--quick",
        "--passes",
        "1",
        "--pass-time",
        "0.5s",
        "--size",
        "2MiB",
        "--no-probe",
        "--engine",
        "psync",
        "--json",
        "--no-store",
    ];
    let out = throttle.command(IOMARK, &args).output().unwrap();
    assert_ok(&out, "cdm on the stick");
    let doc = json(&out);
    let jobs = doc["body"]["jobs"].as_array().unwrap();
    let rate = |name: &str, dir: &str| {
        jobs.iter()
            .filter(|j| {
                j["spec"]["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with(name))
            })
            .find_map(|j| j[dir]["bw"].as_f64())
            .unwrap_or_else(|| panic!("no {name} {dir} job"))
    };
    let (read, write) = (rate("RND4K Q1T1", "read"), rate("RND4K Q1T1", "write"));
    assert!(
        read > 5.0 * write,
        "the rig: reads {read} B/s, writes {write} B/s"
    );
    let cache = warnings_of_kind(&doc, "cache_suspected");
    assert!(cache.is_empty(), "a flash stick is not a cache: {cache:?}");
}
