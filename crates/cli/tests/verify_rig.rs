//! The verify profile on loop devices (docs/verify.md):
//!
//! * a write phase, bytes flipped at known offsets in the backing file,
//!   then a read phase: exactly those blocks are reported, as corrupted,
//!   in coalesced ranges, and nothing else;
//! * the verdict is remembered with the device and every later run there
//!   carries the warning;
//! * a clean device passes the full check and the quick probe;
//! * a read phase on a device without iomark's blocks says so in one line;
//! * fake capacity: a device that wraps around past its real size (a loop
//!   device over a FUSE file, [`FakeDisk`]): the full check and the quick
//!   probe both find the real size within one block group, the probe in
//!   seconds;
//! * lost writes: a device that drops writes in a range: reported as lost,
//!   not corrupted; dropped to the end, the usable size is where they
//!   start.

use std::os::unix::fs::FileExt;

use crate::common::*;
use iomark_testrig::{require_root, Fake, FakeDisk, LoopDevice};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// The verify result of a `--json` run.
fn verify(doc: &Value) -> &Value {
    let r = &doc["body"]["profile_result"];
    assert_eq!(r["family"], "verify", "no verify result: {doc}");
    r
}

/// `(start, len, kind)` of every bad range.
fn ranges(r: &Value) -> Vec<(u64, u64, String)> {
    r["ranges"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| {
                    (
                        x["start"].as_u64().unwrap(),
                        x["len"].as_u64().unwrap(),
                        x["kind"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn bad(r: &Value, kind: &str) -> u64 {
    r["bad"][kind].as_u64().unwrap()
}

#[test]
fn flipped_bytes_are_reported_as_exactly_those_blocks() {
    require!(require_root());
    let rig = require!(LoopDevice::new(64 * MIB));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let run = |phase: &str| verify_run(dev, &db, &["--phase", phase]);
    let written = run("write");
    let w = verify(&written);
    assert_eq!(w["claimed"].as_u64(), Some(64 * MIB));
    assert!(w["write_bw"].as_f64().unwrap() > 0.0, "{w}");
    assert!(
        w.get("usable").is_none(),
        "a write phase has no verdict: {w}"
    );

    // Behind the device's back: two adjacent blocks at 5 MiB, one at
    // 40 MiB (one byte each, none in the magic), and a byte in the header
    // of the block at 63 MiB.
    let image = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(rig.image())
        .unwrap();
    for at in [
        5 * MIB + 100,
        5 * MIB + 4096 + 4000,
        40 * MIB + 2048,
        63 * MIB + 9,
    ] {
        let mut b = [0u8; 1];
        image.read_exact_at(&mut b, at).unwrap();
        b[0] ^= 0x5a;
        image.write_all_at(&b, at).unwrap();
    }
    image.sync_all().unwrap();

    let read = run("read");
    let r = verify(&read);
    assert_eq!(
        ranges(r),
        vec![
            (5 * MIB, 8192, "corrupted".to_string()),
            (40 * MIB, 4096, "corrupted".to_string()),
            (63 * MIB, 4096, "corrupted".to_string()),
        ],
        "{r}"
    );
    assert_eq!(
        (bad(r, "corrupted"), bad(r, "lost"), bad(r, "wrapped")),
        (4, 0, 0)
    );
    assert_eq!(r["checked_blocks"].as_u64(), Some(64 * MIB / 4096));
    assert_eq!(
        r["usable"].as_u64(),
        Some(64 * MIB),
        "damage, not a smaller device"
    );
    let first = &r["ranges"][0];
    assert!(
        first["found"].as_str().unwrap().contains("crc32c"),
        "{first}"
    );

    // Every later run on the device says so.
    let later = json_of(&iomark(&[
        "disk",
        dev,
        "--rw",
        "read",
        "--size",
        "4M",
        "--runtime",
        "0",
        "--json",
        "--db",
        db.db(),
    ]));
    let found = warnings_of_kind(&later, "data_errors");
    let msg = found
        .first()
        .unwrap_or_else(|| panic!("no data_errors warning: {later}"));
    assert!(
        msg.contains("returned wrong data in 3 range(s) on "),
        "{msg}"
    );
}

#[test]
fn a_good_device_passes_the_full_check_and_the_probe() {
    require!(require_root());
    let rig = require!(LoopDevice::new(32 * MIB));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    for extra in [&[][..], &["--quick"][..], &["--engine", "psync"][..]] {
        let doc = verify_run(dev, &db, extra);
        let r = verify(&doc);
        assert_eq!(
            r["bad"],
            serde_json::json!({"corrupted": 0, "lost": 0, "wrapped": 0}),
            "{extra:?}: {r}"
        );
        assert_eq!(r["usable"].as_u64(), Some(32 * MIB), "{extra:?}");
        assert!(ranges(r).is_empty());
        if extra.is_empty() {
            assert_eq!(r["checked_blocks"].as_u64(), Some(32 * MIB / 4096));
            assert!(r["read_bw"].as_f64().unwrap() > 0.0);
            assert!(!r["read_series"].as_array().unwrap().is_empty());
        }
        let kinds: Vec<&Value> = doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| &w["kind"])
            .collect();
        assert!(!kinds.contains(&&Value::from("data_errors")), "{kinds:?}");
    }
}

#[test]
fn a_read_phase_without_iomark_blocks_says_so_in_one_line() {
    require!(require_root());
    let rig = require!(LoopDevice::new(8 * MIB));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let out = iomark(&[
        "disk",
        dev,
        "--profile",
        "verify",
        "--phase",
        "read",
        "--db",
        db.db(),
    ]);
    let msg = fails_with(&out, "holds no iomark verify blocks");
    assert!(msg.contains("--phase write"), "{msg}");
}

/// `iomark disk DEV --profile verify` with `extra`, as JSON.
fn verify_run(dev: &str, db: &ScratchDb, extra: &[&str]) -> Value {
    let mut args = vec![
        "disk",
        dev,
        "--allow-write",
        dev,
        "--profile",
        "verify",
        "--json",
        "--db",
        db.db(),
    ];
    args.extend_from_slice(extra);
    let out = iomark(&args);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stderr(&out), stdout(&out)));
    // Exit code 3 exactly when the check found bad blocks or a smaller
    // real size, as a custom --verify run (and fio) exits non-zero.
    let r = verify(&doc);
    let wanting = ["corrupted", "lost", "wrapped"]
        .iter()
        .any(|k| bad(r, k) > 0)
        || r["usable"]
            .as_u64()
            .is_some_and(|u| u < r["claimed"].as_u64().unwrap());
    let want = if wanting { 3 } else { 0 };
    assert_eq!(out.status.code(), Some(want), "{}\n{r}", stderr(&out));
    doc
}

/// Fails unless `usable` is within one block group (1 MiB) of `real`.
fn within_one_group(what: &str, r: &Value, real: u64) {
    let usable = r["usable"]
        .as_u64()
        .unwrap_or_else(|| panic!("{what}: no usable size: {r}"));
    assert!(
        usable.abs_diff(real) <= MIB,
        "{what}: usable {usable}, the device holds {real}"
    );
}

#[test]
fn a_device_that_wraps_is_found_out_by_the_full_check_and_the_probe() {
    let real = 64 * MIB;
    let rig = require!(FakeDisk::new(256 * MIB, Fake::Wrap { real }));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();

    let full = verify_run(dev, &db, &[]);
    let r = verify(&full);
    within_one_group("full check", r, real);
    assert_eq!((bad(r, "corrupted"), bad(r, "lost")), (0, 0), "{r}");
    // Everything below the last real-size stretch was overwritten by it.
    assert_eq!(bad(r, "wrapped"), 192 * MIB / 4096, "{r}");
    let first = &r["ranges"][0];
    assert_eq!(first["kind"], "wrapped");
    assert_eq!(first["from"].as_u64(), Some(192 * MIB), "{first}");

    let started = std::time::Instant::now();
    let quick = verify_run(dev, &db, &["--quick"]);
    let took = started.elapsed();
    let q = verify(&quick);
    assert_eq!(q["quick"], true);
    within_one_group("quick probe", q, real);
    assert!(q["checked_blocks"].as_u64().unwrap() < 1000, "{q}");
    assert!(took.as_secs() < 30, "the probe took {took:?}");
    eprintln!("quick probe of a 256 MiB wrapping device: {took:?}");
    let shortened = quick["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["message"].as_str().unwrap().contains("not a full check"));
    assert!(
        shortened,
        "the probe says it is a probe: {}",
        quick["warnings"]
    );
}

#[test]
fn writes_dropped_in_a_range_are_lost_not_corrupted() {
    let (from, to) = (40 * MIB, 48 * MIB);
    let rig = require!(FakeDisk::new(128 * MIB, Fake::Lost { from, to }));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let doc = verify_run(dev, &db, &[]);
    let r = verify(&doc);
    assert_eq!(
        ranges(r),
        vec![(from, to - from, "lost".to_string())],
        "{r}"
    );
    assert_eq!(
        (bad(r, "corrupted"), bad(r, "lost"), bad(r, "wrapped")),
        (0, (to - from) / 4096, 0)
    );
    assert_eq!(r["ranges"][0]["found"], "zeros");
    assert_eq!(
        r["usable"].as_u64(),
        Some(128 * MIB),
        "a hole, not a smaller device"
    );
}

#[test]
fn writes_dropped_to_the_end_give_the_real_size_full_and_quick() {
    let real = 96 * MIB + 300 * 1024;
    let rig = require!(FakeDisk::new(
        128 * MIB,
        Fake::Lost {
            from: real,
            to: 128 * MIB
        }
    ));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let full = verify_run(dev, &db, &[]);
    let r = verify(&full);
    within_one_group("full check", r, real);
    assert_eq!(bad(r, "corrupted"), 0, "{r}");
    let quick = verify_run(dev, &db, &["--quick"]);
    within_one_group("quick probe", verify(&quick), real);
}

#[test]
fn a_write_phase_in_a_directory_keeps_its_file_for_the_read_phase_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let db = ScratchDb::new();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "disk",
            path,
            "--profile",
            "verify",
            "--size",
            "16M",
            "--json",
            "--db",
            db.db(),
        ];
        args.extend_from_slice(extra);
        iomark(&args)
    };
    let written = run(&["--phase", "write"]);
    let doc = json_of(&written);
    let kept = files_like(dir.path(), "iomark-verify-", ".dat");
    assert_eq!(kept.len(), 1, "{:?}", dir_names(dir.path()));
    assert_eq!(doc["body"]["target"]["path"], kept[0].to_str().unwrap());
    assert!(
        stderr(&written).contains("--phase read"),
        "{}",
        stderr(&written)
    );
    assert_no_test_files(dir.path());
    // The stale-file cleaner leaves it alone: the user asked for it.
    ok(&iomark(&["clean", path]));
    assert_eq!(files_like(dir.path(), "iomark-verify-", ".dat"), kept);

    let read = json_of(&run(&["--phase", "read"]));
    let r = verify(&read);
    assert_eq!(r["phase"], "read");
    assert_eq!(r["usable"].as_u64(), Some(16 * MIB));
    assert_eq!(r["bad"]["corrupted"].as_u64(), Some(0));
    assert_empty_dir(dir.path(), "the read phase removes the kept file");

    let again = run(&["--phase", "read"]);
    fails_with(&again, "run --profile verify --phase write on it first");
}
