//! `iomark disk` never destroys data it was not given, never leaves a test
//! file behind, and says clearly what to do about bad input.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::*;
use iomark_testrig::{require, require_root, MountedFs};

/// Start a minute-long job on a test file in `dir` and wait until it has
/// read `bytes` (it is measuring). It is killed on drop.
fn start_long_run(dir: &Path, bytes: u64) -> Proc {
    let child = Proc::spawn(&mut long_disk_run(dir));
    wait_until_measuring(child.pid(), dir, bytes, Duration::from_secs(30));
    child
}

/// `iomark disk DIR` with psync on a 4 MiB test file for `runtime`.
fn short_run(dir: &str, runtime: &str) -> Output {
    iomark(&[
        "disk",
        dir,
        "--size",
        "4M",
        "--runtime",
        runtime,
        "--engine",
        "psync",
    ])
}

#[test]
fn test_file_is_gone_after_success() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = short_run(d, "200ms");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("read:"));
    assert_no_test_files(dir.path());
}

#[test]
fn a_closed_pipe_on_stdout_ends_the_run_quietly_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for format in [&["--json"][..], &[], &["--output-format", "json"]] {
        let mut cmd = iomark_cmd(&["disk", d, "--size", "4M", "--runtime", "200ms"]);
        cmd.args(format).args(["--engine", "psync", "--no-store"]);
        // The reading end is closed before iomark writes a byte, as
        // `iomark ... | head -0` would.
        let child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut child = child;
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(o.status.success(), "{format:?}: {:?} {err}", o.status);
        assert!(!err.contains("panicked"), "{format:?}: {err}");
        assert_no_test_files(dir.path());
    }
}

#[test]
fn a_path_of_any_bytes_is_tested_stored_and_shown_escaped() {
    use std::os::unix::ffi::OsStrExt;
    let top = tempfile::tempdir().unwrap();
    // Any bytes but NUL and '/' make a name: an invalid UTF-8 byte, a
    // newline, a terminal escape and a right-to-left override (U+202E).
    let name = b"bad\xff\nline\x1b[31m\xe2\x80\xaeexe.txt";
    let dir = top.path().join(std::ffi::OsStr::from_bytes(name));
    let raw =
        |out: &[u8]| out.contains(&0x1b) || out.windows(3).any(|w| w == "\u{202e}".as_bytes());
    fs::create_dir(&dir).unwrap();
    let db = ScratchDb::new();
    let o = Command::new(IOMARK)
        .arg("disk")
        .arg(&dir)
        .args(["--size", "4M", "--runtime", "200ms", "--engine", "psync"])
        .args(["--db", db.db()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!raw(&o.stdout), "shown raw: {}", stdout(&o));
    assert!(!raw(&o.stderr), "shown raw: {}", stderr(&o));
    // The target's line, wrapped at 80 columns.
    let text = flat(&stdout(&o));
    let at = text.find("target: ").expect("a target line");
    let target = &text[at..at + text[at..].find(" (test file").expect("its kind")];
    assert!(
        target.contains("bad\u{fffd}\\nline\\x1b[31m\\u{202e}exe.txt"),
        "{target}"
    );
    assert_no_test_files(&dir);
    let info = Command::new(IOMARK).arg("info").arg(&dir).output().unwrap();
    assert!(info.status.success(), "{}", stderr(&info));
    assert!(!raw(&info.stdout), "shown raw: {}", stdout(&info));
    let clean = Command::new(IOMARK)
        .arg("clean")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(clean.status.success(), "{}", stderr(&clean));
    assert!(!raw(&clean.stdout), "shown raw: {}", stdout(&clean));
    for how in [&["list"][..], &["show", "1"], &["show", "1", "--json"]] {
        let shown = iomark_cmd(&["results"])
            .args(how)
            .args(["--db", db.db()])
            .output()
            .unwrap();
        assert!(shown.status.success(), "{how:?}: {}", stderr(&shown));
        // JSON is for programs: it escapes control characters, and keeps
        // other characters (U+202E included) as they are.
        let shown_raw = if how.contains(&"--json") {
            shown.stdout.contains(&0x1b)
        } else {
            raw(&shown.stdout)
        };
        assert!(!shown_raw, "{how:?}: {}", stdout(&shown));
    }
}

#[test]
fn test_file_is_gone_after_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // 1000 bytes is no multiple of any logical block size: refused after
    // the test file was made.
    let o = iomark(&["disk", d, "--size", "4M", "--bs", "1000", "--direct"]);
    fails_with(&o, "logical block size");
    assert_no_test_files(dir.path());
}

#[test]
fn ctrl_c_prints_what_was_measured_and_removes_the_test_file() {
    let dir = tempfile::tempdir().unwrap();
    let child = start_long_run(dir.path(), 4 << 20);
    let pid = rustix::process::Pid::from_raw(child.pid() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let o = child.finish(Duration::from_secs(30));
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("read:") && out.contains("interrupted"),
        "{out}"
    );
    assert_no_test_files(dir.path());
}

#[test]
fn a_killed_run_leaves_a_file_that_the_next_run_removes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // Dropping it kills it (SIGKILL) and reaps it.
    drop(start_long_run(dir.path(), 1 << 20));
    let stale: Vec<String> = test_files(dir.path())
        .iter()
        .map(|p| file_name(p))
        .collect();
    assert_eq!(stale.len(), 1, "kill -9 cannot clean up");
    // `iomark clean` finds and removes it ...
    let o = iomark(&["clean", d]);
    assert!(o.status.success());
    assert!(stdout(&o).contains(&stale[0]));
    assert_no_test_files(dir.path());
    // A file by that name that iomark would not have made is kept, and
    // clean says why.
    let foreign = dir.path().join(&stale[0]);
    fs::write(&foreign, b"someone's").unwrap();
    fs::set_permissions(
        &foreign,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let o = iomark(&["clean", d]);
    assert!(o.status.success());
    assert!(
        stdout(&o).contains("not a file iomark made"),
        "{}",
        stdout(&o)
    );
    assert!(foreign.exists());
    fs::remove_file(&foreign).unwrap();
    // ... and so does the next run in that directory.
    let again = dir.path().join(&stale[0]);
    fs::write(&again, b"stale").unwrap();
    // Clean-up takes only files with the mode iomark gives its own.
    fs::set_permissions(&again, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let o = short_run(d, "100ms");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("left by a killed run"),
        "{}",
        stderr(&o)
    );
    assert_no_test_files(dir.path());
}

#[test]
fn a_killed_io_uring_runs_file_is_removed_and_its_space_reused_at_once() {
    require!(require_root());
    require!(iomark_disk::io_uring_available());
    // Room for one 40 MiB test file, not two.
    let small = require!(MountedFs::ext4(64 << 20));
    let d = small.mountpoint.to_str().unwrap();
    let mut run = long_disk_run(&small.mountpoint);
    run.args(["--size", "40M", "--engine", "io_uring"]);
    let child = Proc::spawn(&mut run);
    // Measuring: the job's thread is up, its ring holding the file.
    wait_until(Duration::from_secs(60), "the job thread runs", || {
        !threads_named(child.pid(), "iomark-job-0").is_empty()
    });
    // Dropping it kills it (SIGKILL) and reaps it; the kernel may tear the
    // ring down, and let go of the file, seconds later.
    drop(child);
    // Both at once: clean sees the file (its lock went with the process),
    // and the next run has the space (the file was emptied before its name
    // went, so the ring's late reference holds no blocks).
    let o = iomark(&["clean", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("removed"), "{}", stdout(&o));
    let mut again = long_disk_run(&small.mountpoint);
    again.args([
        "--size",
        "40M",
        "--runtime",
        "200ms",
        "--engine",
        "io_uring",
    ]);
    let o = again.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_no_test_files(&small.mountpoint);
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
        let err = fails_with(&iomark(&all), needle);
        assert_eq!(err.lines().count(), 1, "{args:?}: one clear line: {err}");
        assert_no_test_files(dir.path());
    }
    fails_with(&iomark(&["disk", "/nonexistent/iomark"]), "does not exist");
}

#[test]
fn writes_to_an_existing_file_need_allow_write() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("precious.bin");
    fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    let p = f.to_str().unwrap();
    let o = iomark(&["disk", p, "--rw", "write", "--runtime", "100ms"]);
    fails_with(&o, "--allow-write");
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
    let fs_rig = require!(MountedFs::ext4(32 << 20));
    let dev = fs_rig.device.dev.to_str().unwrap();
    let link_dir = tempfile::tempdir().unwrap();
    let link = link_dir.path().join("innocent-name");
    std::os::unix::fs::symlink(dev, &link).unwrap();
    let l = link.to_str().unwrap();
    for target in [dev, l] {
        let o = iomark_cmd(&["disk", target, "--rw", "write", "--runtime", "1s"])
            .args(["--allow-write", target])
            .output()
            .unwrap();
        fails_with(&o, "mounted");
    }
    // Without --allow-write the refusal names the flag.
    let o = iomark(&["disk", l, "--rw", "randwrite", "--runtime", "1s"]);
    fails_with(&o, "--allow-write");
    // Reading a mounted device is harmless and allowed.
    let o = iomark(&["disk", dev, "--rw", "randread", "--runtime", "300ms"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_full_file_system_gives_a_clear_error_and_leaves_nothing() {
    require!(require_root());
    let small = require!(MountedFs::ext4(16 << 20));
    let d = small.mountpoint.to_str().unwrap();
    let o = iomark(&["disk", d, "--size", "64M", "--runtime", "1s"]);
    fails_with(&o, "does not fit");
    assert_no_test_files(&small.mountpoint);
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
    require!(mounted, "cannot mount ramfs");
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _guard = Unmount(mnt);
    let d = mnt.to_str().unwrap();
    let o = iomark(&["disk", d, "--size", "4M", "--runtime", "100ms", "--direct"]);
    fails_with(&o, "--buffered");
    assert_no_test_files(mnt);
    // Without --direct it falls back and says so.
    let o = short_run(d, "100ms");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        flat(&stdout(&o)).contains("does not support O_DIRECT"),
        "{}",
        stdout(&o)
    );
    assert_no_test_files(mnt);
}

#[test]
fn size_suffixes_are_1024_based_as_in_fio() {
    // Issue 14: `16MB` and `4KB` were 16_000_000 and 4000 bytes; fio's
    // default (kb_base=1024) reads them as 16 MiB and 4 KiB.
    let dir = tempfile::Builder::new()
        .prefix("iomark-units-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let d = dir.path().to_str().unwrap();
    let disk = |json: &[&str]| {
        let mut args = vec!["disk", d, "--size", "16MB", "--bs", "4KB"];
        args.extend(["--runtime", "200ms", "--no-store"]);
        args.extend(json);
        iomark(&args)
    };
    let doc = json_of(&disk(&["--json"]));
    let run = &doc["body"];
    assert_eq!(run["target"]["size"], 16_777_216, "{run}");
    let spec = &run["jobs"][0]["spec"];
    assert_eq!(spec["size"], 16_777_216, "{spec}");
    assert_eq!(spec["bs"], 4096, "{spec}");
    assert_no_test_files(dir.path());
    // The text labels say which unit: IEC for sizes, MB/s next to MiB/s.
    let text = ok(&disk(&[]));
    assert!(text.contains("16 MiB"), "{text}");
    assert!(text.contains("bs=4 KiB"), "{text}");
    assert!(
        text.contains(" MB/s (") && text.contains(" MiB/s)"),
        "{text}"
    );
    assert_no_test_files(dir.path());
}
