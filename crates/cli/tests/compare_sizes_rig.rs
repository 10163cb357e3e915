//! Devices of different sizes side by side (issue 32): two loop devices of
//! 64 and 96 MiB behind one throttle stand for two SCSI emulators or two
//! ports. GNOME Disks on each compares row for row, since a device's own
//! size is not part of a test's name; CrystalDiskMark 3.0 at two test
//! sizes on two ports compares size for size with `--baseline-label`.

use crate::common::*;
use iomark_testrig::{require_root, Limits, LoopDevice, Throttle};
use serde_json::Value;

/// Two loop devices of 64 and 96 MiB, each throttled to the same rates in
/// one group.
struct TwoDevices {
    small: LoopDevice,
    large: LoopDevice,
    throttle: Throttle,
}

impl TwoDevices {
    fn new() -> Result<TwoDevices, String> {
        require_root()?;
        let small = LoopDevice::new(64 << 20)?;
        let large = LoopDevice::new(96 << 20)?;
        let limits = Limits {
            read_bps: Some(200 << 20),
            write_bps: Some(200 << 20),
            ..Limits::default()
        };
        let throttle = Throttle::each(&[&small.majmin()?, &large.majmin()?], limits)?;
        Ok(TwoDevices {
            small,
            large,
            throttle,
        })
    }

    /// `iomark disk DEV ARGS... --label LABEL --db DB --json` under the
    /// throttle, which must succeed; the stored run's id.
    fn run(&self, dev: &LoopDevice, label: &str, db: &str, args: &[&str]) -> String {
        let dev = dev.dev.to_str().unwrap();
        let mut all = vec!["disk", dev];
        all.extend(args);
        all.extend(["--label", label, "--db", db, "--json"]);
        let out = self.throttle.command(IOMARK, &all).output().unwrap();
        assert_ok(&out, "the disk run");
        let err = stderr(&out);
        let id = err
            .split("stored as run ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or_else(|| panic!("no stored run in:\n{err}"));
        id.to_string()
    }
}

/// `results compare ARGS... --json`, which must succeed.
fn compare_json(db: &str, args: &[&str]) -> Value {
    let mut all = vec!["compare"];
    all.extend(args);
    all.push("--json");
    json(&results(db, &all))
}

/// The figures of stored run `id` as `(test, metric)`.
fn rows_of(db: &str, id: &str) -> Vec<(String, String)> {
    let doc = json(&results(db, &["show", id, "--json"]));
    doc["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["test"].as_str().unwrap().to_string(),
                f["metric"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn gnome_on_devices_of_two_sizes_gives_a_ratio_for_every_row() {
    let rig = require!(TwoDevices::new());
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let gnome = [
        "--profile",
        "gnome",
        "--samples",
        "4",
        "--sample-size",
        "1MiB",
        "--access-samples",
        "20",
    ];
    let a = rig.run(&rig.small, "emulator-64", db, &gnome);
    let b = rig.run(&rig.large, "emulator-96", db, &gnome);

    let rows = rows_of(db, &b);
    assert!(
        rows.iter()
            .any(|(t, m)| t == "GNOME transfer rate, 4 x 1MiB samples" && m == "read bw"),
        "{rows:?}"
    );
    assert!(rows.iter().all(|(t, _)| !t.contains("MiB samples of")));

    let doc = compare_json(db, &[&a, &b]);
    assert_eq!(doc["schema_version"], 4);
    let figures = doc["figures"].as_array().unwrap();
    // Every figure of the 96 MiB run has the 64 MiB run's beside it.
    assert_eq!(figures.len(), rows.len(), "{doc:#}");
    assert!(
        figures
            .iter()
            .all(|f| f["ratio"].is_f64() && f["difference"].is_f64()),
        "{doc:#}"
    );
    assert_eq!(doc["unmatched"], Value::Array(vec![]), "{doc:#}");
    // The region is a fact of each device, kept with its run.
    let regions: Vec<&Value> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["region"])
        .collect();
    assert_eq!(regions[0]["bytes"], 64u64 << 20);
    assert_eq!(regions[1]["bytes"], 96u64 << 20);
    assert_eq!(regions[1]["from_device"], true);

    let text = ok(&results(db, &["compare", &a, &b]));
    assert!(!text.contains("not in #"), "{text}");
    assert!(
        text.contains("region 64 MiB") && text.contains("region 96 MiB"),
        "{text}"
    );
    for line in text.lines().take_while(|l| !l.starts_with("ratios are")) {
        assert!(line.chars().count() <= 100, "{text}");
    }
    let show = ok(&results(db, &["show", &b]));
    assert!(
        show.contains("region    96 MiB (the whole device, not in the test names)"),
        "{show}"
    );
}

#[test]
fn cdm3_at_two_sizes_on_two_ports_gives_ratios_for_both_sizes() {
    let rig = require!(TwoDevices::new());
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let dev = rig.small.dev.to_str().unwrap().to_string();
    // Tiny test sizes and passes: the pairing, not the figures, is tested.
    let cdm3 = |size: &'static str| {
        [
            "--profile",
            "cdm3",
            "--size",
            size,
            "--passes",
            "1",
            "--pass-time",
            "100ms",
            "--interval",
            "0s",
            "--allow-write",
        ]
    };
    let mut ids = Vec::new();
    for (size, port) in [
        ("4MiB", "usb2"),
        ("4MiB", "usb3"),
        ("8MiB", "usb2"),
        ("8MiB", "usb3"),
    ] {
        let mut args = cdm3(size).to_vec();
        args.push(&dev);
        ids.push(rig.run(&rig.small, port, db, &args));
    }
    let [s2, s3, l2, l3] = [&ids[0], &ids[1], &ids[2], &ids[3]];
    let small_rows = rows_of(db, s3);
    let large_rows = rows_of(db, l3);
    assert!(
        small_rows.iter().all(|(t, _)| t.ends_with(", 4MiB")),
        "{small_rows:?}"
    );
    assert!(
        large_rows.iter().all(|(t, _)| t.ends_with(", 8MiB")),
        "{large_rows:?}"
    );

    // Given in any order, each usb3 run is divided by the usb2 run of its
    // size.
    let doc = compare_json(db, &[l3, s3, s2, l2, "--baseline-label", "usb2"]);
    assert_eq!(doc["baseline_label"], "usb2");
    let figures = doc["figures"].as_array().unwrap();
    assert_eq!(
        figures.len(),
        small_rows.len() + large_rows.len(),
        "{doc:#}"
    );
    for f in figures {
        let (run, base) = (f["run"].to_string(), f["baseline_run"].to_string());
        let expected = if &run == s3 { s2 } else { l2 };
        assert_eq!(&base, expected, "{f:#}");
        assert!(f["ratio"].is_f64(), "{f:#}");
    }
    assert_eq!(doc["without_baseline"], Value::Array(vec![]), "{doc:#}");
    // Columns grouped by label, the baseline's first.
    let order: Vec<String> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].to_string())
        .collect();
    assert_eq!(order, [s2, l2, l3, s3].map(String::clone), "{doc:#}");

    let text = ok(&results(
        db,
        &["compare", s2, s3, l2, l3, "--baseline-label", "usb2"],
    ));
    assert!(
        text.contains(&format!("#{s3} against #{s2}; #{l3} against #{l2}")),
        "{text}"
    );
    // A column per port: each port's runs at both sizes share one.
    assert!(
        text.contains(&format!("#{s2} #{l2}")) && text.contains(&format!("#{s3} #{l3}")),
        "{text}"
    );
    assert!(!text.contains(" - "), "every cell has a value:\n{text}");
    for line in text.lines().take_while(|l| !l.starts_with("ratios are")) {
        assert!(line.chars().count() <= 100, "{text}");
    }

    // A label no run carries is refused, naming the labels there are.
    let out = results(db, &["compare", s2, s3, "--baseline-label", "usb1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("none of") && err.contains("their labels are usb2, usb3"),
        "{err}"
    );
    assert_eq!(stdout(&out), "");
    // Every run a baseline: nothing is divided by it.
    let out = results(db, &["compare", s2, l2, "--baseline-label", "usb2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("every run given is labelled usb2"),
        "{}",
        stderr(&out)
    );
    // One baseline or the other, not both.
    let out = results(
        db,
        &[
            "compare",
            s2,
            s3,
            "--baseline",
            s2,
            "--baseline-label",
            "usb2",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
}
