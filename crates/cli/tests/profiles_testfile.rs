//! Profiles on a test file in a directory: nothing is left behind, neither
//! after a complete run nor after Ctrl-C, and Ctrl-C keeps the tests that
//! finished (printed and in JSON). Also the CLI's choice between a profile
//! and a custom workload, and its refusals.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::*;
use serde_json::Value;

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn scratch() -> tempfile::TempDir {
    // Under /var/tmp: a real file system with O_DIRECT, unlike a tmpfs /tmp.
    tempfile::Builder::new()
        .prefix("iomark-prof-")
        .tempdir_in("/var/tmp")
        .or_else(|_| tempfile::tempdir())
        .unwrap()
}

#[test]
fn gnome_with_write_on_a_test_file_leaves_nothing() {
    let dir = scratch();
    let out = iomark_cmd(&["disk", dir.path().to_str().unwrap()])
        .args(["--profile", "gnome", "--size", "16MiB", "--samples", "4"])
        .args(["--sample-size", "1MiB", "--access-samples", "20", "--write"])
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let g = &doc["body"]["profile_result"];
    assert_eq!(g["transfer"].as_array().unwrap().len(), 4);
    assert!(g["avg_write"].as_f64().unwrap() > 0.0);
    assert!(g["transfer"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["write"].as_f64().unwrap() > 0.0));
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

/// Start the cdm profile, send SIGINT once its first test is stored (the
/// store is written after each finished test), and return the exit code
/// and stdout.
fn interrupted_cdm(dir: &Path, json: bool) -> (Option<i32>, String) {
    let db = ScratchDb::new();
    let mut cmd = Command::new(IOMARK);
    cmd.args(["disk", dir.to_str().unwrap(), "--quick", "--size", "16MiB"])
        .args(["--db", db.db()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if json {
        cmd.arg("--json");
    }
    let child = cmd.spawn().unwrap();
    // A fresh database's first run is run 1; its CSV export has a row per
    // stored figure under the header.
    let first_test_stored = || {
        let out = results(db.db(), &["export", "1", "--format", "csv"]);
        out.status.success() && stdout(&out).lines().count() > 1
    };
    wait_until(
        Duration::from_secs(120),
        "the first test stored",
        first_test_stored,
    );
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code(), stdout(&out))
}

#[test]
fn ctrl_c_keeps_finished_tests_and_removes_the_test_file() {
    let dir = scratch();
    for json in [false, true] {
        let (code, stdout) = interrupted_cdm(dir.path(), json);
        assert_eq!(code, Some(130), "{stdout}");
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
        if json {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(doc["status"], "interrupted");
            let tests = doc["body"]["profile_result"]["tests"].as_array().unwrap();
            assert!(!tests.is_empty() && tests.len() < 8, "{}", tests.len());
            assert_eq!(tests[0]["row"], "SEQ1M Q8T1");
            assert!(tests[0]["bw"].as_f64().unwrap() > 0.0);
        } else {
            assert!(stdout.contains("status: interrupted"), "{stdout}");
            let row = stdout
                .lines()
                .find(|l| l.starts_with("SEQ1M Q8T1"))
                .unwrap_or_else(|| panic!("no grid in:\n{stdout}"));
            let read = row
                .split_whitespace()
                .nth(2)
                .and_then(|v| v.parse::<f64>().ok());
            assert!(read.is_some_and(|r| r > 0.0), "{row}");
        }
    }
}

#[test]
fn workload_flags_choose_a_custom_run_and_wrong_flags_are_refused() {
    let dir = scratch();
    let d = dir.path().to_str().unwrap();
    let out = iomark_cmd(&["disk", d, "--size", "4MiB", "--runtime", "300ms", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["body"]["profile"], "custom");
    assert!(doc["body"].get("profile_result").is_none());
    for (args, needle) in [
        (
            vec!["--profile", "gnome", "--passes", "3"],
            "--passes does not apply",
        ),
        (
            vec!["--profile", "cdm", "--bs", "4k"],
            "cannot be combined with --profile",
        ),
        (vec!["--profile", "crystal"], "unknown profile"),
        (vec!["--profile", "iometer", "--qd", "8..1"], "--qd"),
        (vec!["--profile", "sweep", "--engines", "aio"], "--engines"),
        (
            vec!["--samples", "5"],
            "--samples does not apply to the cdm profile",
        ),
    ] {
        let out = iomark_cmd(&["disk", d]).args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(leftovers(dir.path()).is_empty());
}
