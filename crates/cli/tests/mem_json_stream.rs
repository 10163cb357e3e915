//! `iomark mem --json-stream`: one JSON object per line as the run goes
//! (`start`, an `interval` per pass and per kernel run as soon as each is
//! measured, `end` holding the document `--json` prints), in `iomark net
//! --json-stream`'s `{"event", "data"}` layout, read line by line while
//! iomark still runs.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::common::*;
use serde_json::Value;

/// One line of the stream: its event and data.
pub(crate) fn event(line: &str) -> (String, Value) {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let keys: Vec<&String> = v.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["data", "event"], "{line}");
    (
        v["event"].as_str().expect("a name").to_string(),
        v["data"].clone(),
    )
}

/// The stream's intervals from `first` on, read with `next` to the end
/// line (the only line after them), and the end's data; `None` without
/// one.
pub(crate) fn the_rest(
    first: Value,
    mut next: impl FnMut() -> Option<String>,
) -> (Vec<Value>, Option<Value>) {
    let mut intervals = vec![first];
    let mut end = None;
    while let Some(line) = next() {
        let (name, data) = event(&line);
        assert!(end.is_none(), "a line after the end: {line}");
        match name.as_str() {
            "interval" => intervals.push(data),
            "end" => end = Some(data),
            other => panic!("unexpected event {other}: {line}"),
        }
    }
    (intervals, end)
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map_or_else(BTreeSet::new, |m| m.keys().cloned().collect())
}

/// A sweep of four sizes, each measured all in memory (first, every size)
/// and then as the run: eight kernel runs, the first of them the smallest
/// (a hundredth of a second) and the rest about two seconds of work on an
/// idle machine (more on a busy one), so the first interval is read while
/// iomark is still running.
const SWEEP: [&str; 10] = [
    "mem",
    "stream",
    "--sizes",
    "8MiB,64MiB,128MiB,256MiB",
    "--ntimes",
    "8",
    "--threads",
    "1",
    "--no-store",
    "--json-stream",
];

#[test]
fn intervals_arrive_while_the_run_goes_and_the_end_is_the_document() {
    let mut child = iomark_cmd(&SWEEP)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("iomark starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().map(|l| l.expect("a line of text"));

    let (first, start) = event(&next().expect("a start line"));
    assert_eq!(first, "start");
    assert_eq!(start["kernel"], "stream");
    assert_eq!(start["threads"], 1);
    assert_eq!(start["sweep_axis"], "size");
    assert_eq!(start["backings"], serde_json::json!([{"kind": "heap"}]));
    let points: Vec<f64> = start["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["x"].as_f64().unwrap())
        .collect();
    assert_eq!(points.len(), 4, "{start}");

    let (second, interval) = event(&next().expect("an interval line"));
    assert_eq!(second, "interval");
    // Read as it was measured: the first pass of eight runs of eight.
    assert!(
        child.try_wait().unwrap().is_none(),
        "iomark ended before its first interval was read"
    );
    let (intervals, end) = the_rest(interval, next);
    assert!(child.wait().unwrap().success());

    // Each kernel run: its eight passes as they were timed, then its end.
    let (passes, runs): (Vec<&Value>, Vec<&Value>) =
        intervals.iter().partition(|d| d["kind"] == "pass");
    assert_eq!(runs.len(), 8, "{runs:#?}");
    assert_eq!(passes.len(), 8 * 8, "{passes:#?}");
    let rate_of = |d: &Value| {
        let bytes = d["bytes"].as_f64().unwrap();
        let seconds = d["seconds"].as_f64().unwrap();
        let rate = d["bytes_per_second"].as_f64().unwrap();
        assert!(bytes > 0.0 && seconds > 0.0, "{d}");
        assert!((rate - bytes / seconds).abs() <= 1e-6 * rate, "{d}");
        seconds
    };
    let mut at = 0;
    for (i, run) in runs.iter().enumerate() {
        let n = i as u64 + 1;
        for trial in 1..=8u64 {
            let p = &intervals[at];
            at += 1;
            assert_eq!(p["kind"], "pass", "{p}");
            assert_eq!((&p["run"], &p["trial"]), (&n.into(), &trial.into()), "{p}");
            assert_eq!(p["counted"], trial > 1, "{p}");
            assert_eq!(p["point"], run["point"], "{p}");
            rate_of(p);
        }
        let d = &intervals[at];
        at += 1;
        assert_eq!(d, *run);
        assert_eq!(d["run"], n, "{d}");
        assert_eq!(d["kernel"], "stream");
        assert_eq!(d["outcome"], "completed", "{d}");
        let role = if i < 4 { "all_in_memory" } else { "run" };
        assert_eq!(d["role"], role, "{d}");
        assert_eq!(d["point"].as_f64(), Some(points[i % 4]), "{d}");
        let seconds = rate_of(d);
        assert!(d["execution_seconds"].as_f64().unwrap() >= seconds, "{d}");
    }

    // The end is the run's document, as --json prints it.
    let end = end.expect("an end line");
    let doc: iomark_model::RunDocument =
        serde_json::from_value(end.clone()).expect("the end is a run document");
    assert_eq!(doc.status, iomark_model::RunStatus::Complete);
    let json = iomark_ok(&[
        "mem",
        "stream",
        "--sizes",
        "8MiB,16MiB",
        "--ntimes",
        "2",
        "--threads",
        "1",
        "--no-store",
        "--json",
    ]);
    let printed: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(keys(&end), keys(&printed));
    assert_eq!(keys(&end["body"]), keys(&printed["body"]));
    assert_eq!(
        keys(&end["body"]["sweep"]["points"][0]),
        keys(&printed["body"]["sweep"]["points"][0])
    );
    assert_eq!(
        end["body"]["sweep"]["points"].as_array().unwrap().len(),
        4,
        "{end}"
    );
}

#[test]
fn json_stream_and_json_are_refused_together() {
    let out = iomark(&[
        "mem",
        "stream",
        "--size",
        "1M",
        "--json",
        "--json-stream",
        "--no-store",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--json and --json-stream"), "{err}");
    assert!(out.stdout.is_empty());
}

/// Himeno counts flops, not bytes: each timed sweep's line carries its
/// flops (Himeno's 34 per interior point) and its MFLOPS.
#[test]
fn a_himeno_pass_carries_its_flops() {
    let out = iomark_ok(&[
        "mem",
        "himeno",
        "--grid",
        "xs",
        "--iterations",
        "3",
        "--threads",
        "1",
        "--no-store",
        "--json-stream",
    ]);
    let per_sweep =
        iomark_mem::himeno::flops_per_sweep(&iomark_mem::himeno::parse_grid("xs").unwrap());
    let text = stdout(&out);
    let passes: Vec<Value> = text
        .lines()
        .map(event)
        .filter(|(name, d)| name == "interval" && d["kind"] == "pass")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(passes.len(), 3, "{text}");
    for (i, p) in passes.iter().enumerate() {
        assert_eq!(
            (&p["trial"], &p["counted"]),
            (&(i + 1).into(), &true.into())
        );
        assert_eq!(p["bytes"], Value::Null, "{p}");
        assert_eq!(p["flops"].as_f64(), Some(per_sweep), "{p}");
        let mflops = per_sweep / p["seconds"].as_f64().unwrap() / 1e6;
        assert!(
            (p["mflops"].as_f64().unwrap() - mflops).abs() <= 1e-9 * mflops,
            "{p}"
        );
    }
}
