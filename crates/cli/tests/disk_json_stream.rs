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
