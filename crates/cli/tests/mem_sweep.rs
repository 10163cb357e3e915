//! `iomark mem ... --ratios/--sizes --backing heap,mmap:DIR,swap:DIR`: the
//! paper's relative-time curves in one run. A ratio sweep under a memory
//! cgroup on a small ext4 file system (a loop device the test makes): the
//! heap point past the limit is killed and kept as "killed", the file
//! mapping and the swap file complete; the swap area is gone afterwards,
//! also after Ctrl-C. Swap refusals: a mounted device, a device already
//! used as swap, a device not named with --allow-write. All need root, a
//! memory cgroup and loop devices; they skip with the reason otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::*;
use iomark_testrig::{require, LoopDevice, MountedFs};
use serde_json::Value;

/// Active swap areas, as `/proc/swaps` names them.
fn active_swaps() -> Vec<PathBuf> {
    std::fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(PathBuf::from)
        .collect()
}

/// Turns off, when dropped, any swap area under `root` (a file on the
/// test's file system, or the test's device) that a failed run left on:
/// declared after the file system so it drops first (swapoff before
/// umount).
struct SwapoffUnder(PathBuf);

impl Drop for SwapoffUnder {
    fn drop(&mut self) {
        for s in active_swaps() {
            if s.starts_with(&self.0) {
                let _ = Command::new("swapoff").arg(&s).status();
            }
        }
    }
}

fn assert_no_swap_under(root: &Path) {
    let left: Vec<_> = active_swaps()
        .into_iter()
        .filter(|s| s.starts_with(root))
        .collect();
    assert!(left.is_empty(), "swap areas left active: {left:?}");
}

/// What the test's file system holds besides `lost+found`.
fn files_on(mnt: &Path) -> Vec<String> {
    dir_names(mnt)
        .into_iter()
        .filter(|n| n != "lost+found")
        .collect()
}

fn setup() -> Result<(), String> {
    memory_cgroup()?;
    have("losetup")?;
    have("mkswap")
}

/// One point of the stored sweep: its outcome kind and relative time.
fn point<'a>(doc: &'a Value, ratio: f64, backing: &str) -> &'a Value {
    doc["body"]["sweep"]["points"]
        .as_array()
        .expect("points")
        .iter()
        .find(|p| p["x"] == ratio && p["run"]["spec"]["backing"]["kind"] == backing)
        .unwrap_or_else(|| panic!("no point {ratio} {backing}"))
}

#[test]
fn ratio_sweep_kills_the_heap_and_completes_mmap_and_swap() {
    // Swap areas come and go here, and the heap point needs none.
    let _swap = exclusive(Shared::Swap);
    require!(setup());
    let fs = require!(MountedFs::ext4_for_swap(512 << 20));
    let _off = SwapoffUnder(fs.mountpoint.clone());
    let mnt = fs.mountpoint.display().to_string();
    let db = ScratchDb::new();
    // 64 MiB limit: 32 MiB of data fits, 128 MiB does not.
    let backings = format!("heap,mmap:{mnt},swap:{mnt}");
    let out = iomark(&[
        "mem",
        "stencil",
        "--ratios",
        "0.5,2",
        "--mem-limit",
        "64MiB",
        "--backing",
        &backings,
        "--sweeps",
        "2",
        "--threads",
        "1",
        "--db",
        db.db(),
    ]);
    let text = ok(&out);
    assert!(text.contains("data/limit"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("2 "))
        .unwrap_or_else(|| panic!("no ratio 2 row: {text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    // 2, data (two words), heap, mmap, swap
    assert_eq!(cells[3], "killed", "{row}");
    for c in &cells[4..6] {
        assert!(c.parse::<f64>().is_ok_and(|t| t > 0.0), "{row}");
    }

    let shown = results(db.db(), &["show", "1", "--json"]);
    let shown = json(&shown);
    let doc = &shown["document"];
    assert_eq!(doc["body"]["outcome"]["kind"], "swept");
    assert_eq!(doc["body"]["sweep"]["axis"], "ratio");
    assert_eq!(doc["body"]["sweep"]["points"].as_array().unwrap().len(), 6);
    let heap = point(doc, 2.0, "heap");
    assert_eq!(heap["run"]["outcome"]["kind"], "oom_killed");
    assert!(heap["run"]["baseline"]["relative_time"].is_null());
    for backing in ["mmap", "swap"] {
        let p = point(doc, 2.0, backing);
        assert_eq!(p["run"]["outcome"]["kind"], "completed", "{backing}");
        assert_eq!(p["run"]["cgroup"]["oom_kills"], 0, "{backing}");
        assert!(p["run"]["baseline"]["relative_time"].as_f64().unwrap() > 0.0);
    }
    // The swap point really had its area: the child saw it in the group.
    let swap_limit = &point(doc, 2.0, "swap")["run"]["cgroup"]["limit"];
    assert_eq!(swap_limit, 64u64 << 20);
    let text_shown = ok(&results_wide(db.db(), &["show", "1"]));
    // The sweep's table, a line per ratio (its line breaks not escaped).
    let killed_row = text_shown.lines().find(|l| l.starts_with("2 "));
    assert!(
        killed_row.is_some_and(|l| l.contains("killed")),
        "{text_shown}"
    );

    // The warnings name the point that raised them, one line per backing.
    let fits: Vec<&str> = text_shown
        .lines()
        .filter(|l| l.contains("fits within the memory limit"))
        .collect();
    assert_eq!(fits.len(), 3, "{text_shown}");
    for b in ["heap: ", "mmap: ", "swap on "] {
        assert!(
            fits.iter()
                .any(|l| l.starts_with("warning: 31.99 MiB on ") && l.contains(b)),
            "no {b} in {fits:?}"
        );
    }

    // Each point's memory-limit record, as the sweep printed it live
    // (issue 32: it was not in `results show` nor on the page).
    let record = |t: &str| -> Vec<String> {
        t.lines()
            .skip_while(|l| !l.starts_with("memory limit 64 MiB, each point's cgroup:"))
            .skip(2)
            .take(6)
            .map(str::to_string)
            .collect()
    };
    let shown_record = record(&text_shown);
    assert_eq!(shown_record.len(), 6, "{text_shown}");
    assert_eq!(shown_record, record(&text), "{text}\n{text_shown}");
    let heap_killed = shown_record
        .iter()
        .find(|l| l.starts_with("2 ") && l.contains("heap"))
        .unwrap_or_else(|| panic!("{text_shown}"));
    let kills = heap["run"]["cgroup"]["oom_kills"].as_u64().unwrap();
    assert!(
        kills >= 1 && heap_killed.ends_with(&kills.to_string()),
        "{heap_killed}"
    );
    let hits = heap["run"]["cgroup"]["limit_hits"].as_u64().unwrap();
    assert!(heap_killed.contains(&format!(" {hits} ")), "{heap_killed}");

    // Every warning stored with the sweep is on its report page (issue 32:
    // the page said "none" over the points' warnings).
    let stored: Vec<String> = shown["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect();
    assert!(!stored.is_empty(), "a sweep with an OOM kill has warnings");
    let page = ok(&iomark(&["report", "1", "--db", db.db(), "--html", "-"]));
    for m in &stored {
        let escaped = m
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;");
        assert!(page.contains(&escaped), "not on the page: {m}");
    }

    let limits = page
        .split("id=\"sweep-limits-1\"")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .unwrap_or_else(|| panic!("no sweep-limits table on the page"));
    assert_eq!(limits.matches("<tr data-run=\"1\">").count(), 6, "{limits}");

    assert_no_swap_under(&fs.mountpoint);
    assert!(
        files_on(&fs.mountpoint).is_empty(),
        "{:?}",
        files_on(&fs.mountpoint)
    );
}

#[test]
fn ctrl_c_during_a_swap_point_removes_the_swap_area() {
    // Swap areas come and go here, and the heap point needs none.
    let _swap = exclusive(Shared::Swap);
    require!(setup());
    let fs = require!(MountedFs::ext4_for_swap(512 << 20));
    let _off = SwapoffUnder(fs.mountpoint.clone());
    let backing = format!("swap:{}", fs.mountpoint.display());
    // Many sweeps over 3x the limit in swap: long enough to be stopped.
    let child = iomark_cmd(&[
        "mem",
        "stencil",
        "--ratios",
        "3",
        "--mem-limit",
        "32MiB",
        "--backing",
        &backing,
        "--sweeps",
        "40",
        "--threads",
        "1",
        "--no-store",
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("iomark starts");
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    let mnt = fs.mountpoint.clone();
    wait_until(Duration::from_secs(120), "the swap area is active", || {
        active_swaps().iter().any(|s| s.starts_with(&mnt))
    });
    // In the swap point, with its area active: stopped now.
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_no_swap_under(&fs.mountpoint);
    assert!(
        files_on(&fs.mountpoint).is_empty(),
        "{:?}",
        files_on(&fs.mountpoint)
    );
}

/// A small stencil under a 64 MiB limit with its swap area at `target` (a
/// directory or a device).
fn stencil_with_swap_on(target: &Path, extra: &[&str]) -> std::process::Output {
    let backing = format!("swap:{}", target.display());
    let mut cmd = iomark_cmd(&[
        "mem",
        "stencil",
        "--n",
        "1000",
        "--mem-limit",
        "64MiB",
        "--backing",
        &backing,
        "--no-store",
    ]);
    cmd.args(extra);
    cmd.output().expect("iomark runs")
}

#[test]
fn swap_refuses_a_device_mounted_in_another_namespace_before_writing_it() {
    let _swap = exclusive(Shared::Swap);
    require!(setup());
    require!(have("unshare"));
    // mkfs.ext4 (e2fsprogs, in every Debian) has no --version to ask.
    let dev = LoopDevice::blank_on_disk(32 << 20).expect("loop device");
    let d = dev.dev.display().to_string();
    let made = Command::new("mkfs.ext4")
        .args(["-q", "-F", &d])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let mountpoint = tempfile::tempdir().unwrap();
    let held = mount_in_another_namespace(&d, mountpoint.path());
    let before = std::fs::read(&dev.dev).unwrap();
    let o = stencil_with_swap_on(&dev.dev, &["--allow-write", &d]);
    fails_with(&o, "in the mount namespace of pid");
    assert!(
        std::fs::read(&dev.dev).unwrap() == before,
        "the swap header was written over the mounted file system"
    );
    drop(held);
}

#[test]
fn swap_refuses_a_mounted_device_an_active_swap_and_an_unnamed_device_and_takes_a_free_one() {
    // Swap areas come and go here, and the heap point needs none.
    let _swap = exclusive(Shared::Swap);
    require!(setup());
    let fs = require!(MountedFs::ext4_for_swap(64 << 20));
    let dev = fs.device.dev.clone();
    let d = dev.display().to_string();
    fails_with(&stencil_with_swap_on(&dev, &[]), "--allow-write");
    fails_with(
        &stencil_with_swap_on(&dev, &["--allow-write", &d]),
        "in use: mounted on",
    );

    let swapdev = LoopDevice::blank_on_disk(32 << 20).expect("loop device");
    let _off = SwapoffUnder(swapdev.dev.clone());
    let s = swapdev.dev.display().to_string();
    assert!(Command::new("mkswap")
        .arg(&s)
        .output()
        .unwrap()
        .status
        .success());
    assert!(Command::new("swapon").arg(&s).status().unwrap().success());
    let err = fails_with(
        &stencil_with_swap_on(&swapdev.dev, &["--allow-write", &s]),
        "in use",
    );
    assert!(err.contains("swap"), "{err}");
    assert!(Command::new("swapoff").arg(&s).status().unwrap().success());
    assert_no_swap_under(&swapdev.dev);

    // Free and named: swap for the run (the exclusive open that checked
    // it is let go for swapon's own), and off again after it.
    let o = stencil_with_swap_on(&swapdev.dev, &["--allow-write", &s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(&format!("swap:{s}")), "{}", stdout(&o));
    assert_no_swap_under(&swapdev.dev);
}

/// A swap file on a file system whose loop device's image is in memory
/// (/dev/shm): refused before any swap area exists, nothing left. Such an
/// area deadlocked the kernel once: the image's own pages were swapped out
/// into it.
#[test]
fn swap_on_a_file_system_in_memory_is_refused() {
    // Swap areas come and go here, and the heap point needs none.
    let _swap = exclusive(Shared::Swap);
    require!(setup());
    // MountedFs::ext4 keeps its image in /dev/shm.
    let fs = require!(MountedFs::ext4(64 << 20));
    let _off = SwapoffUnder(fs.mountpoint.clone());
    let err = fails_with(
        &stencil_with_swap_on(&fs.mountpoint, &[]),
        "which is in memory",
    );
    assert!(err.contains("put the swap area on a disk"), "{err}");
    assert_no_swap_under(&fs.mountpoint);
    assert!(
        files_on(&fs.mountpoint).is_empty(),
        "{:?}",
        files_on(&fs.mountpoint)
    );
}

/// The paper's Fig. 5 in one sweep: swap on one device against swap on
/// another against a file mapping. Each swap column has its own area (zram0
/// and a loop device over a file on disk, both made here), active for its
/// points only; the table, the stored run, the points' test names and the
/// report's legend name each by its device; no area is left.
#[test]
fn one_sweep_runs_two_swap_devices_and_mmap_each_named_by_its_device() {
    let _swap = exclusive(Shared::Swap);
    let _zram = exclusive(Shared::Zram0);
    require!(setup());
    let zram = require!(iomark_testrig::Zram::new(96 << 20));
    let _off_zram = SwapoffUnder(zram.dev.clone());
    let disk = LoopDevice::blank_on_disk(96 << 20).expect("loop device");
    let _off_loop = SwapoffUnder(disk.dev.clone());
    let dir = tempfile::tempdir().unwrap();
    let (z, l) = (
        zram.dev.display().to_string(),
        disk.dev.display().to_string(),
    );
    let loop_name = disk.dev.file_name().unwrap().to_string_lossy().into_owned();
    let backings = format!("swap:{z},swap:{l},mmap:{}", dir.path().display());
    let db = ScratchDb::new();
    // 32 MiB limit: 16 MiB of data fits, 64 MiB goes to the swap area.
    let out = iomark(&[
        "mem",
        "stencil",
        "--ratios",
        "0.5,2",
        "--mem-limit",
        "32MiB",
        "--backing",
        &backings,
        "--allow-write",
        &z,
        "--allow-write",
        &l,
        "--sweeps",
        "2",
        "--threads",
        "1",
        "--db",
        db.db(),
    ]);
    let text = ok(&out);
    let head = text
        .lines()
        .find(|l| l.starts_with("data/limit"))
        .unwrap_or_else(|| panic!("no table: {text}"));
    let swap_loop = format!("swap on {loop_name}");
    for column in ["swap on zram0", &swap_loop, "mmap"] {
        assert!(head.contains(column), "{head}");
    }
    let row = text.lines().find(|l| l.starts_with("2 ")).expect("row 2");
    let cells: Vec<&str> = row.split_whitespace().collect();
    // 2, data (two words), then the three backings, all completed.
    for c in &cells[3..6] {
        assert!(c.parse::<f64>().is_ok_and(|t| t > 0.0), "{row}");
    }

    let shown = json(&results(db.db(), &["show", "1", "--json"]));
    let sweep = &shown["document"]["body"]["sweep"];
    let devices: Vec<&Value> = sweep["backings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["device"])
        .collect();
    assert_eq!(devices[0], "zram0");
    assert_eq!(devices[1], loop_name.as_str());
    for (path, device) in [(&z, "zram0"), (&l, loop_name.as_str())] {
        let p = sweep["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["x"] == 2.0 && p["run"]["spec"]["backing"]["path"] == path.as_str())
            .unwrap_or_else(|| panic!("no point on {path}"));
        assert_eq!(p["run"]["outcome"]["kind"], "completed", "{device}");
        assert_eq!(p["run"]["spec"]["backing"]["device"], device);
        assert_eq!(p["run"]["cgroup"]["oom_kills"], 0, "{device}");
    }
    // Each swap column is a test of its own, by its device.
    let tests: Vec<&str> = shown["figures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["metric"] == "relative time")
        .map(|f| f["test"].as_str().unwrap())
        .collect();
    assert_eq!(tests.len(), 6, "{tests:?}");
    for column in ["swap on zram0", &swap_loop] {
        let n = tests.iter().filter(|t| t.contains(column)).count();
        assert_eq!(n, 2, "{column} in {tests:?}");
    }
    let page = ok(&iomark(&["report", "1", "--db", db.db(), "--html", "-"]));
    assert!(page.contains("swap on zram0"), "legend");
    assert!(page.contains(&swap_loop), "legend");

    assert_no_swap_under(&zram.dev);
    assert_no_swap_under(&disk.dev);
    assert!(
        dir_names(dir.path()).is_empty(),
        "{:?}",
        dir_names(dir.path())
    );
}

/// Two swap backings on one device cannot be told apart: refused before any
/// area exists.
#[test]
fn two_swap_backings_on_one_device_are_refused() {
    let _swap = exclusive(Shared::Swap);
    require!(setup());
    let fs = require!(MountedFs::ext4_for_swap(64 << 20));
    let _off = SwapoffUnder(fs.mountpoint.clone());
    let mnt = fs.mountpoint.display().to_string();
    let out = iomark(&[
        "mem",
        "stencil",
        "--ratios",
        "2",
        "--mem-limit",
        "32MiB",
        "--backing",
        &format!("swap:{mnt},swap:{mnt}"),
        "--no-store",
    ]);
    let err = fails_with(&out, "twice");
    assert!(err.contains("different devices"), "{err}");
    assert_no_swap_under(&fs.mountpoint);
    assert!(files_on(&fs.mountpoint).is_empty());
}

/// A `--warm` sweep's file-mapped point at data under the limit, in either
/// order of the backings.
/// Alternated pairs per warm-sweep point: five, not three, so each order's
/// range of relative times holds its noise on a busy 2-core machine (with
/// three, 0.622-0.725 against 0.441-0.601 missed by 0.02 once in CI).
const WARM_REPEATS: usize = 5;

/// Sweeps of each order of the backings, alternated
/// (`warm_mmap_starts_cached_whatever_the_order_of_the_backings` says why).
const ORDER_SWEEPS: usize = 3;

fn warm_sweep(backings: &str, warm: bool) -> Value {
    let repeat = WARM_REPEATS.to_string();
    let mut args = vec![
        "mem",
        "stencil",
        "--ratios",
        "0.5",
        "--mem-limit",
        "64MiB",
        "--backing",
        backings,
        "--sweeps",
        "2",
        "--threads",
        "1",
        "--repeat",
        &repeat,
        "--json",
        "--no-store",
    ];
    if warm {
        args.push("--warm");
    }
    let doc = json_of(&iomark(&args));
    let point = doc["body"]["sweep"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["run"]["spec"]["backing"]["kind"] == "mmap")
        .expect("an mmap point")
        .clone();
    assert_eq!(point["run"]["outcome"]["kind"], "completed");
    assert_eq!(
        point["run"]["spec"]["backing"]["warm"]
            .as_bool()
            .unwrap_or(false),
        warm
    );
    assert_eq!(
        point["run"]["baseline"]["repeats"]
            .as_array()
            .unwrap()
            .len(),
        WARM_REPEATS
    );
    point
}

fn majfaults(point: &Value) -> u64 {
    point["run"]["cgroup"]["major_faults"]
        .as_u64()
        .expect("major faults recorded")
}

fn relative(point: &Value) -> (f64, f64, f64) {
    let b = &point["run"]["baseline"];
    let rel: Vec<f64> = b["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["constrained"].as_f64().unwrap() / p["baseline"].as_f64().unwrap())
        .collect();
    let lo = rel.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rel.iter().copied().fold(0.0, f64::max);
    (b["relative_time"].as_f64().unwrap(), lo, hi)
}

/// "mmap wins while the file fits": with --warm the file is in the page
/// cache before the kernel's first touch, whichever backing runs first.
/// The mechanism is asserted exactly (a cold point's first touch of its new
/// file faults pages in from the file system, a warm one finds them all
/// cached: fewer major faults, none of the data's); the times only within
/// their noise: each warm median is at most the cold point's highest pair,
/// and the two orders' warm ranges overlap.
///
/// The orders' sweeps alternate, [`ORDER_SWEEPS`] of each, and each
/// order's range is of all its pairs: a sweep's pairs alternate within it,
/// but a machine that got busier between two sweeps moved every pair of
/// the second (loaded run 1 of fbf7b9b: one sweep of each, 0.583-0.725
/// against 0.378-0.576; quiet, the two orders' medians were 0.48-0.55
/// against 0.49-0.56). Alternating the sweeps puts such a shift on both
/// sides, as `--repeat` does for the pairs.
#[test]
fn warm_mmap_starts_cached_whatever_the_order_of_the_backings() {
    require!(memory_cgroup());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let cold = warm_sweep(&format!("mmap:{d},heap"), false);
    assert!(majfaults(&cold) >= 1, "a new file's first touch reads it");
    let (cold_median, _, cold_hi) = relative(&cold);
    let (mut first, mut last) = (Vec::new(), Vec::new());
    for _ in 0..ORDER_SWEEPS {
        last.push(warm_sweep(&format!("heap,mmap:{d}"), true));
        first.push(warm_sweep(&format!("mmap:{d},heap"), true));
    }
    for warm in first.iter().chain(&last) {
        assert!(majfaults(warm) < majfaults(&cold), "{warm}");
        let (w, _, _) = relative(warm);
        assert!(w <= cold_hi, "warm {w} is slower than every cold pair");
    }
    // Each order's medians and the range of all its pairs.
    let pooled = |sweeps: &[Value]| {
        let each: Vec<(f64, f64, f64)> = sweeps.iter().map(relative).collect();
        let lo = each.iter().map(|e| e.1).fold(f64::INFINITY, f64::min);
        let hi = each.iter().map(|e| e.2).fold(0.0, f64::max);
        (each.iter().map(|e| e.0).collect::<Vec<_>>(), lo, hi)
    };
    let (first_medians, first_lo, first_hi) = pooled(&first);
    let (last_medians, last_lo, last_hi) = pooled(&last);
    let said = format!(
        "relative time, cold {cold_median:.3}; warm mmap first {first_medians:.3?} \
         [{first_lo:.3}-{first_hi:.3}], last {last_medians:.3?} [{last_lo:.3}-{last_hi:.3}]"
    );
    eprintln!("{said}");
    assert!(
        first_lo <= last_hi && last_lo <= first_hi,
        "the order of the backings moved the warm point beyond its noise: {said}"
    );
    assert!(dir_names(dir.path()).is_empty());
}
