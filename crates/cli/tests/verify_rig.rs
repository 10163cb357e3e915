//! The verify profile on loop devices (docs/verify.md):
//!
//! * a write phase, bytes flipped at known offsets in the backing file,
//!   then a read phase: exactly those blocks are reported, as corrupted,
//!   in coalesced ranges, and nothing else;
//! * the verdict is remembered with the device and every later run there
//!   carries the warning;
//! * a clean device passes the full check and the quick probe;
//! * a read phase on a device without iomark's blocks says so in one line.

mod common;

use std::os::unix::fs::FileExt;

use common::*;
use iomark_testrig::{require_root, LoopDevice};
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
    or_skip!(require_root());
    let rig = or_skip!(LoopDevice::new(64 * MIB));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let run = |phase: &str| {
        iomark(&[
            "disk",
            dev,
            "--allow-write",
            dev,
            "--profile",
            "verify",
            "--phase",
            phase,
            "--json",
            "--db",
            db.db(),
        ])
    };
    let written = json_of(&run("write"));
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

    let read = json_of(&run("read"));
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
    let warnings = later["warnings"].as_array().unwrap();
    let w = warnings
        .iter()
        .find(|w| w["kind"] == "data_errors")
        .unwrap_or_else(|| panic!("no data_errors warning: {warnings:?}"));
    let msg = w["message"].as_str().unwrap();
    assert!(
        msg.contains("returned wrong data in 3 range(s) on "),
        "{msg}"
    );
}

#[test]
fn a_good_device_passes_the_full_check_and_the_probe() {
    or_skip!(require_root());
    let rig = or_skip!(LoopDevice::new(32 * MIB));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    for extra in [&[][..], &["--quick"][..], &["--engine", "psync"][..]] {
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
        let doc = json_of(&iomark(&args));
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
    or_skip!(require_root());
    let rig = or_skip!(LoopDevice::new(8 * MIB));
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
