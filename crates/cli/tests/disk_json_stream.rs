//! `iomark disk --json-stream`: the run as it goes, one JSON object per
//! line in iperf3's stream layout (`start`, an `interval` per second of a
//! test, `end` with the document `--json` prints), each line out while
//! the run is still going.

use std::time::Duration;

use crate::common::*;
use serde_json::Value;

/// `iomark disk` on the null engine (no device time, the same every run)
/// in `dir`, for `runtime`, with `extra` flags.
fn null_job<'a>(dir: &'a str, runtime: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "disk",
        dir,
        "--rw",
        "read",
        "--bs",
        "64k",
        "--size",
        "4M",
        "--engine",
        "null",
        "--runtime",
        runtime,
        "--no-store",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn disk_json_stream_prints_each_second_while_the_run_goes_and_ends_with_the_document() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let mut run = Proc::spawn(&mut iomark_cmd(&null_job(path, "4s", &["--json-stream"])));
    run.wait_stdout(r#"{"event":"interval""#, Duration::from_secs(60));
    assert!(
        run.running(),
        "the first interval came only when the run was over"
    );
    let out = run.finish(Duration::from_secs(60));
    let text = ok(&out);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(
        events,
        ["start", "interval", "interval", "interval", "interval", "end"],
        "{text}"
    );
    assert_eq!(lines[0]["data"]["tests"], 1);
    let intervals = &lines[1..5];
    for (i, iv) in intervals.iter().enumerate() {
        let d = &iv["data"];
        assert_eq!(
            (d["step"].as_u64(), d["steps"].as_u64()),
            (Some(1), Some(1))
        );
        assert!(d["bytes_per_second"].as_f64().unwrap() > 0.0, "{d}");
        assert!(d["iops"].as_f64().unwrap() > 0.0, "{d}");
        assert!(d["latency"]["p99_ns"].as_u64().is_some(), "{d}");
        let offset = d["offset_ms"].as_u64().unwrap();
        if i < 3 {
            assert!(offset >= 1000 * (i as u64 + 1), "{d}");
        } else {
            assert!(offset <= 4000, "{d}");
        }
    }
    // The seconds add up to the job's bytes; the end is --json's document.
    let streamed: u64 = intervals
        .iter()
        .map(|iv| iv["data"]["bytes"].as_u64().unwrap())
        .sum();
    let end = &lines[5]["data"];
    assert_eq!(
        end["body"]["jobs"][0]["read"]["io_bytes"].as_u64(),
        Some(streamed)
    );
    let whole = iomark_ok(&null_job(path, "1s", &["--json"]));
    let whole: Value = serde_json::from_slice(&whole.stdout).unwrap();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(end), keys(&whole));
}

#[test]
fn disk_json_stream_is_one_layout_and_refused_with_another() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    for other in [&["--json"][..], &["--output-format", "json"]] {
        let mut args = null_job(path, "1s", &["--json-stream"]);
        args.extend_from_slice(other);
        fails_with(&iomark(&args), "--json-stream");
    }
}

/// Issue 49: a PTS test streams a `round` event as each round ends, with
/// the window ending there once there are five rounds: the same tracking
/// values and window the end document stores.
#[test]
fn a_pts_test_streams_each_round_with_its_window_as_the_document_stores_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let out = iomark_ok(&quick_pts(
        path,
        "0",
        "4k",
        "7",
        &["--json-stream", "--no-store"],
    ));
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rounds: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "round")
        .map(|l| &l["data"])
        .collect();
    let end = &lines.last().unwrap()["data"]["body"]["profile_result"];
    let stored = end["rounds"].as_array().unwrap();
    assert!((5..=7).contains(&stored.len()), "{end}");
    assert_eq!(rounds.len(), stored.len(), "a round event a round");
    for (i, (r, s)) in rounds.iter().zip(stored).enumerate() {
        let round = i as u64 + 1;
        assert_eq!(r["round"].as_u64(), Some(round), "{r}");
        assert_eq!(r["max_rounds"].as_u64(), Some(7), "{r}");
        assert_eq!(r["tracking"], s["tracking"], "round {round}");
        assert_eq!(
            (r["read_pct"].as_u64(), r["bs"].as_u64()),
            (Some(0), Some(4096))
        );
        assert_eq!(r["data_limit"].as_f64(), Some(0.2));
        assert_eq!(r["slope_limit"].as_f64(), Some(0.1));
        if round < 5 {
            assert!(r["window"].is_null(), "{r}");
        } else {
            assert_eq!(r["window"]["first_round"].as_u64(), Some(round - 4), "{r}");
            assert_eq!(r["window"]["last_round"].as_u64(), Some(round), "{r}");
        }
    }
    // Rounds 6 and 7 run only if no window of five was steady, so until
    // the last begins the time left counts them: the most left.
    let intervals: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "interval")
        .map(|l| &l["data"])
        .collect();
    assert_eq!(intervals[0]["left_at_most"], true, "{}", intervals[0]);
    assert!(
        intervals[0]["left_ms"].as_u64().is_some(),
        "{}",
        intervals[0]
    );
    // Exact only once the last round (7) runs: a test steady before it
    // has no exact second.
    for i in &intervals {
        let last_round = i["label"].as_str().unwrap().starts_with("round 7 ");
        assert_eq!(
            i.get("left_at_most").is_none(),
            last_round,
            "only the last round's time left is exact: {i}"
        );
    }
    // The last round's window is the one stored; a test that ends before
    // its last round ended on a steady window.
    assert_eq!(rounds.last().unwrap()["window"], end["window"]);
    if stored.len() < 7 {
        assert_eq!(end["window"]["steady"], true, "{end}");
    }
}

/// Issue 49: a PTS test stopped in a round keeps the rounds that ended
/// and says which round a stop cut short, and how much of it ran.
#[test]
fn a_pts_test_stopped_in_a_round_says_which_round_was_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    // Cells of a second, so the stop comes in a round, not between them.
    let args = pts_on_file(path, "0", "4k", "7", "1s", &["--json-stream", "--no-store"]);
    let mut run = Proc::spawn(&mut iomark_cmd(&args));
    run.wait_stdout(r#""round":2,"#, Duration::from_secs(60));
    run.signal(rustix::process::Signal::INT);
    let out = run.finish(Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let end: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    let doc = &end["data"];
    assert_eq!(doc["status"], "interrupted", "{doc}");
    let rounds = doc["body"]["profile_result"]["rounds"].as_array().unwrap();
    let kept = rounds.len();
    assert!(kept >= 2, "the rounds that ended are kept: {kept}");
    let cut = format!(
        "pts-iops: stopped in round {} of at most 7, 0 of its 1 cells run: rounds 1-{kept} are kept",
        kept + 1
    );
    let warnings: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert!(
        warnings.iter().any(|w| w.starts_with(&cut)),
        "no {cut:?} in {warnings:?}"
    );
}
