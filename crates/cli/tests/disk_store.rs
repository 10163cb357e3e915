//! `iomark disk` runs land in the results store; a run killed with
//! SIGKILL keeps the tests it finished and reads back as interrupted.

use std::process::Stdio;
use std::time::Duration;

use crate::common::*;
use serde_json::Value;

#[test]
fn a_killed_profile_run_keeps_its_finished_tests() {
    let scratch = ScratchDb::named("results.db");
    let dir = &scratch.dir;
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let db = scratch.db();
    // macbench: four tests of 1 s each; kill during the third.
    let mut child = iomark_cmd(&["disk", target.to_str().unwrap(), "--profile", "macbench"])
        .args([
            "--size",
            "8M",
            "--runtime",
            "1s",
            "--engine",
            "psync",
            "--db",
            db,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until two tests are stored, then kill.
    let jobs = |db: &str| -> usize {
        let out = iomark_cmd(&["results", "--db", db, "export", "1", "--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| {
                let doc = if v.is_array() { v[0].clone() } else { v };
                doc["body"]["jobs"].as_array().map(Vec::len)
            })
            .unwrap_or(0)
    };
    wait_until(Duration::from_secs(30), "two tests stored", || {
        jobs(db) >= 2
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let list = ok(&results(db, &["list"]));
    assert!(list.contains("interrupted"), "{list}");
    assert!(jobs(db) >= 2, "finished tests kept");
}

#[test]
fn a_custom_run_is_stored_with_its_labels() {
    let scratch = ScratchDb::named("results.db");
    let dir = &scratch.dir;
    let db = scratch.db();
    let o = iomark_cmd(&["disk", dir.path().to_str().unwrap(), "--size", "4M"])
        .args(["--runtime", "200ms", "--engine", "psync", "--db", db])
        .args(["--label", "usb3", "--note", "first try"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let list = ok(&results(db, &["list", "--label", "usb3"]));
    assert!(list.contains("complete") && list.contains("disk"), "{list}");
}
