//! One test, visibly one name: `results compare` shows beside each row the
//! name the run printed and warned under (CrystalDiskMark 3.0's `Seq
//! read`), in the unit the run printed.

use crate::common::*;

/// A short CrystalDiskMark 3.0 run on a test file in `dir`, stored in `db`
/// with `label`.
fn cdm3(dir: &std::path::Path, db: &str, label: &str) {
    iomark_ok(&[
        "disk",
        dir.to_str().unwrap(),
        "--profile",
        "cdm3",
        "--size",
        "4MiB",
        "--engine",
        "psync",
        "--passes",
        "1",
        "--pass-time",
        "100ms",
        "--interval",
        "0s",
        "--label",
        label,
        "--db",
        db,
    ]);
}

#[test]
fn compare_rows_name_the_test_as_the_run_printed_it() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let target = scratch.dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    cdm3(&target, db, "a");
    cdm3(&target, db, "b");
    let run_text = ok(&results_wide(db, &["show", "-v", "1"]));
    let text = ok(&results(db, &["compare", "1", "2"]));
    let verbose = ok(&results(db, &["compare", "-v", "1", "2"]));
    // Each of CrystalDiskMark 3.0's tests as the run names them: the row's
    // name, and under -v in brackets under its stored test name.
    for own in [
        "Seq read",
        "Seq write",
        "512K read",
        "4K read",
        "4K QD32 write",
    ] {
        assert!(text.contains(&format!("│ {own} ")), "no {own} in\n{text}");
        assert!(
            verbose.contains(&format!("({own})")),
            "no ({own}) in\n{verbose}"
        );
    }
    assert!(
        text.lines()
            .filter(|l| l.starts_with('│'))
            .all(|l| !l.contains("psync")),
        "{text}"
    );
    let md = ok(&results(db, &["export", "1", "2", "--format", "markdown"]));
    let row = md
        .lines()
        .find(|l| l.contains("(Seq read)") && l.contains("read bw"))
        .unwrap_or_else(|| panic!("{md}"));
    // The row's test name is the one `results show -v` lists for run 1.
    let test = row
        .split('|')
        .nth(1)
        .unwrap()
        .trim()
        .trim_end_matches(" (Seq read)");
    assert!(test.starts_with("read 1MiB QD1 T1, psync"), "{row}");
    assert!(run_text.contains(test), "{test} not in\n{run_text}");
    assert!(row.contains("MB/s"), "{row}");
    assert!(
        md.lines()
            .any(|l| l.contains("4MiB #2 (4K QD32 read)") && l.contains("read bw")),
        "{md}"
    );
}

#[test]
fn metric_keeps_only_the_rows_of_that_metric() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let target = scratch.dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    cdm3(&target, db, "a");
    cdm3(&target, db, "b");
    let text = ok(&results(db, &["compare", "1", "2", "--metric", "bw"]));
    assert!(
        text.contains("read bw") && text.contains("write bw"),
        "{text}"
    );
    assert!(
        !text.contains("iops") && !text.contains("lat mean"),
        "{text}"
    );
    let doc = json(&results(
        db,
        &["compare", "1", "2", "--metric", "bw", "--json"],
    ));
    let figures = doc["figures"].as_array().unwrap();
    assert!(!figures.is_empty());
    assert!(
        figures
            .iter()
            .all(|f| f["metric"].as_str().unwrap().ends_with(" bw")),
        "{doc:#}"
    );
    let out = results(db, &["compare", "1", "2", "--metric", "speed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("--metric speed: no row of these runs has that metric; their metrics are ")
            && stderr(&out).contains("read bw"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn the_markdown_export_is_lined_up_as_compare_lines_it_up() {
    // Issue 48: `results export --format markdown` had no --baseline-label
    // nor --metric, so the table pasted into a pull request could not be
    // the one `results compare` printed.
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let target = scratch.dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    cdm3(&target, db, "old");
    cdm3(&target, db, "new");
    let md = ok(&results(
        db,
        &[
            "export",
            "1",
            "2",
            "--format",
            "markdown",
            "--baseline-label",
            "new",
            "--metric",
            "bw",
        ],
    ));
    let rows: Vec<&str> = md.lines().filter(|l| l.contains(" bw ")).collect();
    assert!(!rows.is_empty(), "{md}");
    assert!(
        !md.contains("iops") && !md.contains("lat mean"),
        "only bw rows: {md}"
    );
    // Against run 2 (labelled `new`): its column comes first.
    let header = md.lines().find(|l| l.contains("#1") && l.contains("#2"));
    let header = header.unwrap_or_else(|| panic!("no header naming both runs: {md}"));
    assert!(
        header.find("#2").unwrap() < header.find("#1").unwrap(),
        "{header}"
    );
    let against = ok(&results(
        db,
        &[
            "export",
            "1",
            "2",
            "--format",
            "markdown",
            "--baseline",
            "2",
            "--metric",
            "bw",
        ],
    ));
    // The same table (the legend below it says how the baseline was named).
    let table = |md: &str| -> Vec<String> {
        md.lines()
            .filter(|l| l.starts_with('|'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        table(&against),
        table(&md),
        "--baseline 2 and --baseline-label new agree"
    );
    // JSON and CSV export every figure: shaping them is refused, in one line.
    for format in ["json", "csv"] {
        let out = results(
            db,
            &["export", "1", "2", "--format", format, "--metric", "bw"],
        );
        assert_eq!(out.status.code(), Some(2), "{format}");
        let err = stderr(&out);
        assert!(err.contains("add --format markdown"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert_eq!(stdout(&out), "");
    }
}
