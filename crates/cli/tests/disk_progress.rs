//! The progress line of a profile: test k of N, MB/s, IOPS and the time
//! left on a terminal; nothing with `--quiet`, and nothing at all when
//! stderr is not a terminal (what scripts and tests see).

use crate::common::*;
use iomark_testrig::require;

/// A four-test profile of 0.3 s per test on a small test file.
fn macbench(dir: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "disk",
        dir.to_str().unwrap(),
        "--profile",
        "macbench",
        "--runtime",
        "300ms",
        "--size",
        "16MiB",
        "--engine",
        "psync",
        "--no-store",
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_terminal_sees_test_k_of_n_the_rate_and_the_time_left() {
    let dir = tempfile::tempdir().unwrap();
    let args = macbench(dir.path(), &[]);
    let shown = require!(iomark_on_terminal(&refs(&args)));
    for k in 1..=4 {
        assert!(
            shown.contains(&format!("test {k} of 4, ")),
            "no test {k}: {shown}"
        );
    }
    assert!(shown.contains(" MB/s, "), "{shown}");
    assert!(shown.contains(" IOPS"), "{shown}");
    // 4 x 0.3 s: the first line says 2s left (rounded up), never more.
    assert!(shown.contains("s left"), "{shown}");
    assert!(!shown.contains("m 0"), "minutes for a 1.2 s run: {shown}");
    assert!(shown.contains("MacBench"), "the result follows: {shown}");
}

/// Every frame fits 80 columns but `script`'s own start and end lines.
fn assert_fits_80(frames: &[String]) {
    for f in frames.iter().filter(|f| !f.starts_with("Script ")) {
        let n = f.chars().count();
        assert!(n <= 80, "{n} columns: {f:?}");
    }
}

/// What a terminal shows, cut where it moves the cursor to a line's start
/// or a new line, with its control sequences (colours, erasing) removed.
fn frames(typescript: &str) -> Vec<String> {
    let mut plain = String::new();
    let mut chars = typescript.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters, then a final byte in @..~.
            if chars.next_if_eq(&'[').is_some() {
                while chars.next().is_some_and(|c| !('@'..='~').contains(&c)) {}
            }
            continue;
        }
        plain.push(c);
    }
    plain
        .split(['\r', '\n'])
        .filter(|f| !f.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn at_80_columns_every_line_fits_and_every_progress_frame_shows_the_time_left() {
    let dir = tempfile::tempdir().unwrap();
    let args = macbench(dir.path(), &[]);
    let shown = require!(iomark_on_terminal(&refs(&args)));
    let frames = frames(&shown);
    let progress: Vec<&String> = frames.iter().filter(|f| f.contains(" of 4")).collect();
    assert!(!progress.is_empty(), "no progress frame: {shown:?}");
    assert_fits_80(&frames);
    for f in progress {
        assert!(f.contains(" left"), "no time left: {f:?}");
    }
}

#[test]
fn quiet_silences_the_line_on_a_terminal() {
    require!(have_command("script", "util-linux"));
    let dir = tempfile::tempdir().unwrap();
    let args = macbench(dir.path(), &["-q"]);
    let shown = iomark_on_terminal(&refs(&args)).unwrap();
    assert!(!shown.contains("test 1 of"), "{shown}");
    assert!(!shown.contains(" left"), "{shown}");
    assert!(
        shown.contains("MacBench"),
        "the result still prints: {shown}"
    );
}

#[test]
fn no_progress_when_stderr_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let args = macbench(dir.path(), &[]);
    let out = iomark(&refs(&args));
    let text = ok(&out);
    assert!(text.contains("MacBench"), "{text}");
    let err = stderr(&out);
    assert!(!err.contains("test 1 of"), "progress on a pipe: {err}");
    assert!(!err.contains(" left"), "{err}");
    assert!(
        !err.contains('\r') && !err.contains('\u{1b}'),
        "terminal codes: {err:?}"
    );
}

/// Issue 48: in a pipe (a CI log, `| less`) the text is fitted to 80
/// columns as on an 80-column terminal: a custom run's percentiles and
/// device lines, a profile's table and a STREAM run, each line at most 80
/// characters but a word that cannot be split.
#[test]
fn in_a_pipe_every_line_fits_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let runs: [&[&str]; 3] = [
        &[
            "disk",
            d,
            "--size",
            "16MiB",
            "--runtime",
            "300ms",
            "--no-store",
        ],
        &[
            "disk",
            d,
            "--size",
            "16MiB",
            "--profile",
            "gnome",
            "--no-store",
        ],
        &[
            "mem",
            "stream",
            "--size",
            "8M",
            "--ntimes",
            "2",
            "--no-store",
        ],
    ];
    for args in runs {
        let out = iomark_cmd(args)
            .env_remove("COLUMNS")
            .output()
            .expect("iomark runs");
        let text = ok(&out);
        assert!(text.lines().count() > 5, "{args:?}: {text}");
        for line in text.lines() {
            let n = line.chars().count();
            assert!(
                n <= 80 || !line.trim().contains(' '),
                "{args:?}: {n} columns: {line:?}"
            );
        }
    }
}

/// The default run (CrystalDiskMark 8's eight tests) on an 80x24
/// terminal, on a device it has not met: the probe is counted on its own
/// before test 1; every line, table and warnings included, fits 80
/// columns, and every progress frame shows the time left.
#[test]
fn a_default_run_at_80_columns_counts_the_probe_on_its_own_and_always_shows_the_time_left() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    // A store of its own: a device it has not met, so the default profile
    // runs the short probe first.
    let db = dir.path().join("results.db");
    let shown = require!(iomark_on_terminal(&[
        "disk",
        target.to_str().unwrap(),
        "--passes",
        "1",
        "--pass-time",
        "200ms",
        "--interval",
        "0s",
        "--db",
        db.to_str().unwrap(),
    ]));
    let probe = shown
        .find("probe 1 of ")
        .unwrap_or_else(|| panic!("no probe step: {shown}"));
    let first = shown
        .find("test 1 of 8, ")
        .unwrap_or_else(|| panic!("no test 1: {shown}"));
    assert!(probe < first, "the probe after test 1: {shown}");
    assert!(
        !shown.contains(": probe"),
        "the probe counted as a test: {shown}"
    );
    assert!(
        shown.contains("probe") && shown.contains("SEQ1M"),
        "{shown}"
    );
    let frames = frames(&shown);
    assert_fits_80(&frames);
    let progress: Vec<&String> = frames
        .iter()
        .filter(|f| f.contains("test ") && f.contains(" of 8") || f.contains("probe 1 of "))
        .collect();
    assert!(progress.len() >= 9, "{progress:?}");
    for f in progress {
        assert!(f.contains(" left"), "no time left: {f:?}");
    }
}

/// Issue 49: on an 80-column terminal a PTS test prints a line as each
/// round ends: the round of the most it may run, the tracking figure, and
/// from the fifth round the window's excursions against their limits,
/// each line fitting the terminal.
#[test]
fn a_pts_test_shows_each_round_and_its_window_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let args = quick_pts(
        dir.path().to_str().unwrap(),
        "0",
        "4k",
        "6",
        &["--no-store"],
    );
    let shown = require!(iomark_on_terminal(&args));
    let frames = frames(&shown);
    assert_fits_80(&frames);
    // A round's line wraps at the terminal's width: read across the breaks.
    let text = frames.join(" ");
    let ran = if text.contains("reached in round 5 ") {
        5
    } else {
        6
    };
    for k in 1..=ran {
        assert!(
            text.contains(&format!("iomark: round {k} of at most 6: 4K 0/100 ")),
            "no line for round {k}: {text}"
        );
    }
    assert!(
        text.contains("steady state is judged over 5 rounds"),
        "{text}"
    );
    // Round 6 may not run: until it starts, the time left is the most.
    assert!(text.contains(" of 6, at most "), "{text}");
    assert!(
        text.contains("rounds 1-5: data excursion ") && text.contains("% (<= 20%), slope"),
        "{text}"
    );
    assert!(text.contains("% (<= 10%): "), "{text}");
}
