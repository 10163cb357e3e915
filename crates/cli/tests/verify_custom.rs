//! `--verify` on custom write runs (docs/verify.md, "--verify on a write
//! run"):
//!
//! * a random write run at QD32 with io_uring, on a test file and on a
//!   loop device: every block written reads back as written, the check's
//!   result and (with --verify-timed) its read rate are stored, exit 0;
//! * a device that drops writes in a range, or wraps around past its real
//!   size (a loop device over the FUSE fake of verify_rig.rs): the damaged
//!   blocks are reported as lost or wrapped, with a `data_errors`
//!   warning, and the run exits 3;
//! * what --verify cannot check is refused in one line, exit 2;
//! * `verify=crc32c` in a fio job file: the write job is checked as a
//!   custom run is, the read job after it runs as usual, and one verify
//!   result is stored with the run; `verify=md5` is refused naming it.

use crate::common::*;
use iomark_testrig::{require_root, Fake, FakeDisk, LoopDevice};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// The check's result of a `--json` run.
fn check(doc: &Value) -> &Value {
    let r = &doc["body"]["profile_result"];
    assert_eq!(r["family"], "verify", "no verify result: {doc}");
    assert_eq!(doc["body"]["profile"], "custom", "{doc}");
    r
}

fn bad(r: &Value) -> (u64, u64, u64) {
    let n = |k: &str| r["bad"][k].as_u64().unwrap();
    (n("corrupted"), n("lost"), n("wrapped"))
}

/// A random write run at QD32 with io_uring and --verify on `path`.
fn randwrite_qd32(path: &str, db: &ScratchDb, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "disk",
        path,
        "--rw",
        "randwrite",
        "--bs",
        "4k",
        "--iodepth",
        "32",
        "--engine",
        "io_uring",
        "--runtime",
        "2",
        "--verify",
        "--json",
        "--db",
        db.db(),
    ];
    args.extend_from_slice(extra);
    iomark(&args)
}

/// Skip when this kernel has no io_uring (the run names the fix).
fn or_no_uring(out: &std::process::Output) -> Result<(), String> {
    let err = stderr(out);
    if out.status.code() == Some(2) && err.contains("io_uring") {
        return Err(format!("io_uring unavailable: {err}"));
    }
    Ok(())
}

fn assert_clean(doc: &Value, timed: bool) {
    let r = check(doc);
    assert_eq!(bad(r), (0, 0, 0), "{r}");
    assert!(r["ranges"].is_null(), "{r}");
    let write = &doc["body"]["jobs"][0]["write"];
    let ios = write["ios"].as_u64();
    let checked = r["checked_blocks"].as_u64().unwrap();
    // Random writes hit some blocks more than once: every distinct block
    // is checked once, so at least one and at most one per write.
    assert!(checked > 1000, "{r}");
    if let Some(ios) = ios {
        assert!(checked <= ios, "checked {checked} of {ios} writes");
    }
    assert_eq!(r["read_bw"].is_number(), timed, "{r}");
    assert!(
        doc["body"]["jobs"][0]["read"].is_null(),
        "check reads not counted"
    );
    assert!(warnings_of_kind(doc, "data_errors").is_empty(), "{doc}");
}

#[test]
fn random_writes_at_qd32_on_a_test_file_read_back_clean() {
    let dir = tempfile::tempdir().unwrap();
    let db = ScratchDb::new();
    let path = dir.path().to_str().unwrap();
    let out = randwrite_qd32(path, &db, &["--size", "64MiB", "--verify-timed"]);
    require!(or_no_uring(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_clean(&json_of(&out), true);
    assert_no_test_files(dir.path());
}

#[test]
fn random_writes_at_qd32_on_a_loop_device_read_back_clean() {
    require!(require_root());
    let rig = require!(LoopDevice::new(64 * MIB));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let out = randwrite_qd32(dev, &db, &["--allow-write", dev, "--numjobs", "2"]);
    require!(or_no_uring(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json_of(&out);
    assert_clean(&doc, false);
    assert_eq!(doc["body"]["profile_result"]["direct"], true, "{doc}");
}

/// One sequential pass of `--verify` writes over `dev`, with psync so the
/// FUSE fake sees one write at a time.
fn one_pass(dev: &str, db: &ScratchDb) -> std::process::Output {
    iomark(&[
        "disk",
        dev,
        "--allow-write",
        dev,
        "--rw",
        "write",
        "--bs",
        "64k",
        "--engine",
        "psync",
        "--runtime",
        "0",
        // fio's spelling.
        "--verify=crc32c",
        "--json",
        "--db",
        db.db(),
    ])
}

fn data_errors(doc: &Value) -> String {
    let found = warnings_of_kind(doc, "data_errors");
    let first = found.first();
    first
        .unwrap_or_else(|| panic!("no data_errors warning: {doc}"))
        .to_string()
}

#[test]
fn writes_a_device_drops_are_reported_lost_and_the_run_fails() {
    let (from, to) = (8 * MIB, 12 * MIB);
    let rig = require!(FakeDisk::new(32 * MIB, Fake::Lost { from, to }));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let out = one_pass(dev, &db);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let doc = json(&out);
    let r = check(&doc);
    assert_eq!(bad(r), (0, (to - from) / 4096, 0), "{r}");
    let range = &r["ranges"][0];
    assert_eq!(range["start"].as_u64(), Some(from), "{range}");
    assert_eq!(range["len"].as_u64(), Some(to - from), "{range}");
    assert_eq!(range["found"], "zeros", "{range}");
    assert_eq!(r["ranges"].as_array().unwrap().len(), 1, "{r}");
    let w = data_errors(&doc);
    assert!(w.contains(&format!("first at offset {from}")), "{w}");
}

#[test]
fn a_device_that_wraps_is_reported_wrapped_with_where_the_data_came_from() {
    let real = 16 * MIB;
    let rig = require!(FakeDisk::new(32 * MIB, Fake::Wrap { real }));
    let dev = rig.dev.to_str().unwrap();
    let db = ScratchDb::new();
    let out = one_pass(dev, &db);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let doc = json(&out);
    let r = check(&doc);
    // The second half landed on the first: the first half reads back the
    // blocks written for offset + real.
    assert_eq!(bad(r), (0, 0, real / 4096), "{r}");
    let range = &r["ranges"][0];
    assert_eq!(range["kind"], "wrapped", "{range}");
    assert_eq!(range["start"].as_u64(), Some(0), "{range}");
    assert_eq!(range["from"].as_u64(), Some(real), "{range}");
    assert!(data_errors(&doc).contains("wrapped"));
}

#[test]
fn what_verify_cannot_check_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["disk", path];
        all.extend_from_slice(args);
        iomark(&all)
    };
    fails_with(&run(&["--verify"]), "writes nothing");
    fails_with(&run(&["--rw", "read", "--verify"]), "--rw write, randwrite");
    fails_with(
        &run(&["--rw", "write", "--bs", "512", "--verify"]),
        "--bs 4KiB or a multiple",
    );
    fails_with(
        &run(&["--rw", "write", "--engine", "null", "--verify"]),
        "--engine io_uring or psync",
    );
    fails_with(
        &run(&["--profile", "cdm", "--verify"]),
        "cannot be combined with --profile",
    );
    let md5 = run(&["--rw", "write", "--verify=md5"]);
    assert_eq!(md5.status.code(), Some(2));
    assert!(stderr(&md5).contains("use --verify"), "{}", stderr(&md5));
    let timed_alone = run(&["--rw", "write", "--verify-timed"]);
    assert_eq!(timed_alone.status.code(), Some(2));
    assert!(stderr(&timed_alone).contains("--verify"));
    assert_empty_dir(dir.path(), "refused runs");
}

/// A job file of a verified random write job (io_uring, QD32) and a read
/// job after it, run on a test file in `dir`.
const JOB_FILE_WITH_VERIFY: &str = "[global]
size=32m
[writes]
rw=randwrite
bs=4k
ioengine=io_uring
iodepth=32
verify=crc32c
[reads]
stonewall
rw=read
bs=1m
";

#[test]
fn verify_in_a_job_file_checks_its_write_job_and_stores_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let db = ScratchDb::new();
    let file = dir.path().join("verify.fio");
    std::fs::write(&file, JOB_FILE_WITH_VERIFY).unwrap();
    let out = iomark(&[
        "fio",
        file.to_str().unwrap(),
        target.path().to_str().unwrap(),
        "--json",
        "--db",
        db.db(),
    ]);
    require!(or_no_uring(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json_of(&out);
    assert_eq!(doc["body"]["profile"], "fio-job", "{doc}");
    let jobs = doc["body"]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "{doc}");
    assert!(jobs[1]["read"]["ios"].as_u64().unwrap() > 0, "{doc}");
    let r = &doc["body"]["profile_result"];
    assert_eq!(r["family"], "verify", "no verify result: {doc}");
    assert_eq!(bad(r), (0, 0, 0), "{r}");
    assert_eq!(r["engine"], "io_uring", "{r}");
    assert_eq!(r["claimed"].as_u64(), Some(32 * MIB), "{r}");
    let checked = r["checked_blocks"].as_u64().unwrap();
    let writes = jobs[0]["write"]["ios"].as_u64().unwrap();
    // One pass of random 4 KiB writes over 32 MiB: every distinct block
    // written is checked once.
    assert!(
        checked > 1000 && checked <= writes,
        "checked {checked} of {writes}: {r}"
    );
    assert!(warnings_of_kind(&doc, "data_errors").is_empty(), "{doc}");
    assert_no_test_files(target.path());
}

#[test]
fn a_job_files_other_checksum_is_refused_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("md5.fio");
    std::fs::write(&file, "[w]\nrw=write\nverify=md5\n").unwrap();
    let out = iomark(&["fio", file.to_str().unwrap(), "--no-store"]);
    let err = fails_with(&out, "line 3: verify=md5");
    assert!(err.contains("verify=crc32c"), "{err}");
    assert_no_test_files(dir.path());
}
