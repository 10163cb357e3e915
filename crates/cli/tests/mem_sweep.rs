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
    let text_shown = ok(&results(db.db(), &["show", "1"]));
    assert!(text_shown.contains("killed"), "{text_shown}");

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
