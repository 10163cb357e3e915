//! `iomark mem`: every kernel validates on small sizes, on the heap and in a
//! file mapping; bad input exits 2 with a message naming the fix.

use std::process::Command;
use std::time::Duration;

use crate::common::*;
use serde_json::Value;

/// Run with `--json`, insist on success, return the mem body.
fn mem_json(args: &[&str]) -> Value {
    let mut v = vec!["mem"];
    v.extend_from_slice(args);
    v.push("--json");
    let out = iomark(&v);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["status"], "complete");
    assert_eq!(doc["body"]["kind"], "mem");
    doc["body"].clone()
}

fn result(body: &Value) -> &Value {
    assert_eq!(body["outcome"]["kind"], "completed", "{body}");
    &body["outcome"]["result"]
}

#[test]
fn stream_validates_and_reports_four_kernels() {
    let body = mem_json(&[
        "stream",
        "--size",
        "200k",
        "--ntimes",
        "3",
        "--threads",
        "2",
    ]);
    let r = result(&body);
    assert_eq!(r["validation"]["outcome"], "passed", "{r}");
    let kernels = r["kernels"].as_array().unwrap();
    let ops: Vec<&str> = kernels.iter().map(|k| k["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["copy", "scale", "add", "triad"]);
    for k in kernels {
        assert!(k["best_rate"].as_f64().unwrap() > 0.0);
        assert!(k["min"].as_u64().unwrap() <= k["max"].as_u64().unwrap());
    }
    // 1.6 MB arrays are far below 4 x any last-level cache worth the name.
    let warned = body["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "array_fits_in_cache");
    let has_llc = !body["host"]["llc"].is_null();
    assert_eq!(warned, has_llc);
}

#[test]
fn stream_prints_streams_table() {
    let out = iomark(&[
        "mem",
        "stream",
        "--size",
        "100k",
        "--ntimes",
        "2",
        "--threads",
        "1",
    ]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("Function    Best Rate MB/s  Avg time     Min time     Max time"));
    for label in ["Copy:", "Scale:", "Add:", "Triad:"] {
        assert!(text.lines().any(|l| l.starts_with(label)), "{text}");
    }
    assert!(text.contains("Solution Validates"));
}

#[test]
fn nt_stores_say_which_stores_were_used_and_triad_validates() {
    let run = |nt: &str| {
        let out = iomark(&[
            "mem",
            "stream",
            "--size",
            "100k",
            "--ntimes",
            "2",
            "--threads",
            "2",
            "--nt-stores",
            nt,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let text = run("on");
    let stores = if cfg!(target_arch = "x86_64") {
        "Stores: non-temporal ("
    } else {
        "Stores: regular"
    };
    assert!(flat(&text).contains(stores), "{text}");
    assert!(text.lines().any(|l| l.starts_with("Triad:")), "{text}");
    assert!(text.contains("Solution Validates"), "{text}");
    let text = run("off");
    assert!(text.contains("Stores: regular"), "{text}");
    assert!(text.contains("Solution Validates"), "{text}");

    // The stored result says it too; an array that fits in the cache gets
    // regular stores by default.
    let body = mem_json(&["stream", "--size", "100k", "--ntimes", "2", "--nt-stores"]);
    let r = result(&body);
    assert_eq!(r["validation"]["outcome"], "passed", "{r}");
    assert_eq!(body["spec"]["kernel"]["nt_stores"], true, "{body}");
    if cfg!(target_arch = "x86_64") {
        assert!(
            r["stores"].as_str().unwrap().starts_with("non-temporal"),
            "{r}"
        );
    }
    if !body["host"]["llc"].is_null() {
        let body = mem_json(&["stream", "--size", "1k", "--ntimes", "2"]);
        assert_eq!(result(&body)["stores"], "regular", "{body}");
    }
}

#[test]
fn stream_on_a_file_mapping_validates_and_removes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let backing = mmap_backing(dir.path());
    let body = mem_json(&[
        "stream",
        "--size",
        "100k",
        "--ntimes",
        "2",
        "--backing",
        &backing,
    ]);
    assert_eq!(result(&body)["validation"]["outcome"], "passed");
    assert_eq!(body["spec"]["backing"]["kind"], "mmap");
    assert!(!body["outcome"]["msync"].is_null());
    assert_empty_dir(dir.path(), "backing file");
}

#[test]
fn stencil_masks_validate_and_agree_across_threads_and_backings() {
    let dir = tempfile::tempdir().unwrap();
    let backing = mmap_backing(dir.path());
    for mask in ["3", "15"] {
        let base = ["stencil", "--mask", mask, "--n", "300", "--sweeps", "3"];
        let mut sums = Vec::new();
        for extra in [
            &["--threads", "1"][..],
            &["--threads", "2"][..],
            &["--threads", "2", "--backing", &backing][..],
        ] {
            let mut args = base.to_vec();
            args.extend_from_slice(extra);
            let body = mem_json(&args);
            let r = result(&body);
            assert_eq!(r["validation"]["outcome"], "passed", "{r}");
            let flops = if mask == "3" { 17 } else { 449 };
            assert_eq!(r["flops_per_point"], flops);
            sums.push(r["checksum"].as_f64().unwrap().to_bits());
        }
        assert!(
            sums.windows(2).all(|w| w[0] == w[1]),
            "mask {mask}: {sums:?}"
        );
    }
}

#[test]
fn himeno_gosa_matches_the_reference_at_fixed_iterations() {
    // S at 64 sweeps is LLVM's test-suite reference (f64 sum 2.394869e-3);
    // XS at 3 sweeps with three threads exercises an uneven plane split.
    for (grid, nn, threads, want) in [("s", "64", "2", 2.394869e-3), ("xs", "3", "3", 6.229796e-3)]
    {
        let body = mem_json(&[
            "himeno",
            "--grid",
            grid,
            "--iterations",
            nn,
            "--threads",
            threads,
        ]);
        let r = result(&body);
        assert_eq!(r["validation"]["outcome"], "passed", "{r}");
        let gosa = r["gosa"].as_f64().unwrap();
        assert!((gosa - want).abs() / want <= 1e-3, "{grid}: gosa {gosa}");
        assert_eq!(r["iterations"], nn.parse::<u64>().unwrap());
        assert!(r["mflops"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn himeno_with_a_time_target_runs_and_says_gosa_is_unchecked() {
    let body = mem_json(&[
        "himeno",
        "--grid",
        "xs",
        "--seconds",
        "0.2",
        "--threads",
        "1",
    ]);
    let r = result(&body);
    assert_eq!(r["rehearsal_iterations"], 3);
    assert!(r["iterations"].as_u64().unwrap() >= 1);
    assert_eq!(r["validation"]["outcome"], "unchecked");
}

#[test]
fn bad_input_exits_2_with_a_message_naming_the_fix() {
    let cases: [(&[&str], &str); 9] = [
        (&["mem", "stencil", "--mask", "5"], "use 3 or 15"),
        (&["mem", "stencil", "--n", "10", "--mask", "15"], "--n 16"),
        (&["mem", "stream", "--ntimes", "1"], "at least 2"),
        (&["mem", "stream", "--ntimes", "262"], "use at most 261"),
        (&["mem", "stream", "--backing", "ssd"], "mmap:PATH"),
        (
            &["mem", "stream", "--backing", "mmap:/nonexistent/dir/x"],
            "does not exist",
        ),
        (&["mem", "himeno", "--grid", "huge"], "IxJxK"),
        (&["mem", "stream", "--relative"], "--mem-limit"),
        (&["mem", "stream", "--mem-limit", "12 parsecs"], "mem-limit"),
    ];
    for (args, want) in cases {
        let out = iomark(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed a result");
    }
}

#[test]
fn ctrl_c_stops_between_sweeps_and_removes_the_backing_file() {
    let dir = tempfile::tempdir().unwrap();
    let child = Proc::spawn(
        mem_on_mapping(
            dir.path(),
            &["stencil", "--n", "2000", "--sweeps", "100000"],
        )
        .args(["--threads", "1", "--json"]),
    );
    // Wait until the backing file exists, i.e. the run is under way; the
    // stop is honoured between sweeps, whichever is running.
    wait_until(Duration::from_secs(30), "a backing file appears", || {
        !dir_names(dir.path()).is_empty()
    });
    let killed = Command::new("kill")
        .args(["-INT", &child.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.finish(Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(130));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["status"], "interrupted");
    assert_eq!(doc["body"]["outcome"]["kind"], "interrupted");
    assert_empty_dir(dir.path(), "backing file");
}

/// On a terminal a mem run shows where it is, as a disk run does: the
/// kernel run, the pass of how many and the time left, in 80 columns;
/// the line is cleared before the result is printed.
#[test]
fn on_a_terminal_a_stream_run_shows_its_pass_and_the_time_left() {
    let shown = require!(iomark_on_terminal(&[
        "mem",
        "stream",
        "--no-store",
        "--size",
        "4M",
        "--ntimes",
        "4",
    ]));
    let frames: Vec<&str> = shown
        .split(['\r', '\n'])
        .filter(|f| !f.trim().is_empty() && !f.starts_with("Script "))
        .collect();
    let passes: Vec<&&str> = frames
        .iter()
        .filter(|f| f.contains("kernel run 1: stream") && f.contains(" of 4, "))
        .collect();
    assert!(passes.len() >= 3, "{shown:?}");
    assert!(passes.iter().all(|f| f.contains(" s left")), "{passes:?}");
    for f in &frames {
        let plain: String = f.replace("\x1b[K", "");
        assert!(plain.chars().count() <= 80, "{plain:?}");
    }
    assert!(shown.contains("Triad:"), "{shown}");
}
