//! `iomark disk` never destroys data it was not given, never leaves a test
//! file behind, and says clearly what to do about bad input.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use iomark_testrig::{require, require_root, MountedFs};

/// Start a minute-long job on a test file in `dir`, wait until the file
/// exists, then let the job run for `settle`.
fn start_long_run(dir: &Path, settle: Duration) -> std::process::Child {
    let child = long_disk_run(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    settle_after_test_file(dir, Duration::from_secs(10), settle);
    child
}

#[test]
fn test_file_is_gone_after_success() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = iomark(&[
        "disk",
        d,
        "--size",
        "4M",
        "--runtime",
        "200ms",
        "--engine",
        "psync",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("read:"));
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn test_file_is_gone_after_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // 1000 bytes is no multiple of any logical block size: refused after
    // the test file was made.
    let o = iomark(&["disk", d, "--size", "4M", "--bs", "1000", "--direct"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("logical block size"), "{}", stderr(&o));
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn ctrl_c_prints_what_was_measured_and_removes_the_test_file() {
    let dir = tempfile::tempdir().unwrap();
    let child = start_long_run(dir.path(), Duration::from_millis(1500));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("read:") && out.contains("interrupted"),
        "{out}"
    );
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn a_killed_run_leaves_a_file_that_the_next_run_removes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let mut child = start_long_run(dir.path(), Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let stale: Vec<String> = test_files(dir.path())
        .iter()
        .map(|p| file_name(p))
        .collect();
    assert_eq!(stale.len(), 1, "kill -9 cannot clean up");
    // `iomark clean` finds and removes it ...
    let o = iomark(&["clean", d]);
    assert!(o.status.success());
    assert!(stdout(&o).contains(&stale[0]));
    assert!(test_files(dir.path()).is_empty());
    // ... and so does the next run in that directory.
    let again = dir.path().join(&stale[0]);
    fs::write(&again, b"stale").unwrap();
    // Clean-up takes only files with the mode iomark gives its own.
    fs::set_permissions(&again, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let o = iomark(&[
        "disk",
        d,
        "--size",
        "4M",
        "--runtime",
        "100ms",
        "--engine",
        "psync",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("left by a killed run"),
        "{}",
        stderr(&o)
    );
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn bad_input_exits_2_with_the_fix_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (args, needle) in [
        (vec!["--bs", "0"], "--bs must be larger than 0"),
        (vec!["--iodepth", "0"], "--iodepth must be at least 1"),
        (vec!["--size", "12zz"], "unknown unit"),
        (vec!["--size", "1000T"], "does not fit"),
        (vec!["--rw", "sideways"], "use read, write"),
    ] {
        let mut all = vec!["disk", d];
        all.extend(&args);
        let o = iomark(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).lines().count(),
            1,
            "one clear line: {}",
            stderr(&o)
        );
        assert!(test_files(dir.path()).is_empty());
    }
    let o = iomark(&["disk", "/nonexistent/iomark"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
}

#[test]
fn writes_to_an_existing_file_need_allow_write() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("precious.bin");
    fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    let p = f.to_str().unwrap();
    let o = iomark(&["disk", p, "--rw", "write", "--runtime", "100ms"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--allow-write"), "{}", stderr(&o));
    assert!(fs::read(&f).unwrap().iter().all(|&b| b == 7), "untouched");
    // Reads are fine without it.
    let o = iomark(&[
        "disk",
        p,
        "--rw",
        "read",
        "--runtime",
        "100ms",
        "--buffered",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = iomark(&[
        "disk",
        p,
        "--rw",
        "write",
        "--runtime",
        "100ms",
        "--allow-write",
        p,
        "--buffered",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(f.exists(), "an existing file is never removed");
}

#[test]
fn a_mounted_device_and_a_symlink_to_it_are_refused_for_writing() {
    require!(require_root());
    let fs_rig = match MountedFs::ext4(32 << 20) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let dev = fs_rig.device.dev.to_str().unwrap().to_string();
    let o = iomark(&[
        "disk",
        &dev,
        "--rw",
        "write",
        "--allow-write",
        &dev,
        "--runtime",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("mounted"), "{}", stderr(&o));

    let link_dir = tempfile::tempdir().unwrap();
    let link = link_dir.path().join("innocent-name");
    std::os::unix::fs::symlink(&dev, &link).unwrap();
    let l = link.to_str().unwrap();
    let o = iomark(&[
        "disk",
        l,
        "--rw",
        "write",
        "--allow-write",
        l,
        "--runtime",
        "1s",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("mounted"), "{}", stderr(&o));
    // Without --allow-write the refusal names the flag.
    let o = iomark(&["disk", l, "--rw", "randwrite", "--runtime", "1s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--allow-write"), "{}", stderr(&o));
    // Reading a mounted device is harmless and allowed.
    let o = iomark(&["disk", &dev, "--rw", "randread", "--runtime", "300ms"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_full_file_system_gives_a_clear_error_and_leaves_nothing() {
    require!(require_root());
    let small = match MountedFs::ext4(16 << 20) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let d = small.mountpoint.to_str().unwrap();
    let o = iomark(&["disk", d, "--size", "64M", "--runtime", "1s"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not fit"), "{}", stderr(&o));
    assert!(test_files(&small.mountpoint).is_empty());
}

#[test]
fn a_file_system_without_direct_io_suggests_buffered() {
    require!(require_root());
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path();
    let mounted = Command::new("mount")
        .args(["-t", "ramfs", "none"])
        .arg(mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount ramfs");
        return;
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _guard = Unmount(mnt);
    let d = mnt.to_str().unwrap();
    let o = iomark(&["disk", d, "--size", "4M", "--runtime", "100ms", "--direct"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--buffered"), "{}", stderr(&o));
    assert!(test_files(mnt).is_empty());
    // Without --direct it falls back and says so.
    let o = iomark(&[
        "disk",
        d,
        "--size",
        "4M",
        "--runtime",
        "100ms",
        "--engine",
        "psync",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("does not support O_DIRECT"));
    assert!(test_files(mnt).is_empty());
}
