//! `iomark disk` runs land in the results store; a run killed with
//! SIGKILL keeps the tests it finished and reads back as interrupted.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const IOMARK: &str = env!("CARGO_BIN_EXE_iomark");

fn results(db: &str, args: &[&str]) -> String {
    let o = Command::new(IOMARK)
        .args(["results", "--db", db])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_killed_profile_run_keeps_its_finished_tests() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let db = dir.path().join("results.db");
    let db = db.to_str().unwrap();
    // macbench: four tests of 1 s each; kill during the third.
    let mut child = Command::new(IOMARK)
        .args(["disk", target.to_str().unwrap(), "--profile", "macbench"])
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
    let start = Instant::now();
    let jobs = |db: &str| -> usize {
        let out = Command::new(IOMARK)
            .args(["results", "--db", db, "export", "1", "--format", "json"])
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
    while jobs(db) < 2 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let list = results(db, &["list"]);
    assert!(list.contains("interrupted"), "{list}");
    assert!(jobs(db) >= 2, "finished tests kept");
}

#[test]
fn a_custom_run_is_stored_with_its_labels() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let db = db.to_str().unwrap();
    let o = Command::new(IOMARK)
        .args(["disk", dir.path().to_str().unwrap(), "--size", "4M"])
        .args(["--runtime", "200ms", "--engine", "psync", "--db", db])
        .args(["--label", "usb3", "--note", "first try"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let list = results(db, &["list", "--label", "usb3"]);
    assert!(list.contains("complete") && list.contains("disk"), "{list}");
}
