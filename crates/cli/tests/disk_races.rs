//! Attacks on `iomark disk`, staged deterministically: strace delays one
//! system call of iomark's (fault injection, `-e inject=SYSCALL:delay_*`),
//! the test waits until iomark sits in that call, swaps a name under it,
//! and checks that nothing but iomark's own object was written. Also: the
//! same bytes reached through another door (a second loop device over a
//! mounted loop device's file, and that file itself), validation before
//! anything is created, and bounds on every number.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use iomark_testrig::{require, require_root, unique_name, LoopDevice};

/// How long strace holds the call: far longer than the swap takes, so the
/// order of events does not depend on the machine's load.
const DELAY_US: u64 = 3_000_000;

/// iomark under strace, its first `syscall` held for [`DELAY_US`] on entry
/// (`delay_enter`: before the kernel acts) or on exit (`delay_exit`: after).
fn staged(syscall: &str, when: &str, args: &[&str]) -> Child {
    Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null"])
        .arg(format!("-e trace={syscall}").replace(' ', ""))
        .arg(format!("-einject={syscall}:{when}={DELAY_US}:when=1"))
        .arg(IOMARK)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strace runs")
}

/// Wait until the process strace started is stopped in system call `nr`.
fn wait_in_syscall(strace: &mut Child, nr: libc::c_long) {
    let start = Instant::now();
    loop {
        if let Some(pid) = traced_pid(strace.id()) {
            let now = fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
            if now.split_whitespace().next() == Some(nr.to_string().as_str()) {
                return;
            }
        }
        if let Ok(Some(status)) = strace.try_wait() {
            panic!("iomark ended ({status}) before reaching system call {nr}");
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = strace.kill();
            panic!("iomark never reached system call {nr}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Wait until the process strace started holds a descriptor of `path`.
fn wait_for_descriptor(strace: &mut Child, path: &Path) {
    let start = Instant::now();
    loop {
        if let Some(pid) = traced_pid(strace.id()) {
            let held = fs::read_dir(format!("/proc/{pid}/fd"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| fs::read_link(fd.path()).is_ok_and(|p| p == path));
            if held {
                return;
            }
        }
        if let Ok(Some(status)) = strace.try_wait() {
            panic!("iomark ended ({status}) before opening {}", path.display());
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = strace.kill();
            panic!("iomark never opened {}", path.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The first child of strace: iomark.
fn traced_pid(strace_pid: u32) -> Option<u32> {
    let children =
        fs::read_to_string(format!("/proc/{strace_pid}/task/{strace_pid}/children")).ok()?;
    children.split_whitespace().next()?.parse().ok()
}

fn finish(child: Child) -> Output {
    child.wait_with_output().expect("strace ends")
}

/// SHA-256 of a block device's bytes, read past the page cache.
fn device_digest(dev: &Path) -> String {
    let o = Command::new("sh")
        .arg("-c")
        .arg(r#"dd if="$0" iflag=direct bs=1M status=none | sha256sum"#)
        .arg(dev)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn a_test_file_swapped_for_a_symlink_sends_no_data_elsewhere() {
    require!(have("strace"));
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim.bin");
    let original = vec![0x5au8; 4 << 20];
    fs::write(&victim, &original).unwrap();
    let d = dir.path().to_str().unwrap();
    // Held after the test file is created and locked, before it is filled:
    // the old code opened the name again at this point.
    let mut child = staged(
        "fallocate",
        "delay_enter",
        &[
            "disk",
            d,
            "--rw",
            "write",
            "--size",
            "4M",
            "--runtime",
            "300ms",
            "--engine",
            "psync",
        ],
    );
    wait_in_syscall(&mut child, libc::SYS_fallocate);
    let files = test_files(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let moved = dir.path().join("moved-away");
    fs::rename(&files[0], &moved).unwrap();
    std::os::unix::fs::symlink(&victim, &files[0]).unwrap();
    let o = finish(child);

    assert_eq!(
        fs::read(&victim).unwrap(),
        original,
        "the victim was written"
    );
    assert!(
        o.status.success(),
        "iomark keeps writing its own file: {}",
        stderr(&o)
    );
    // The symlink is not iomark's to remove; its own file, under a name it
    // no longer knows, is left empty.
    assert!(files[0].symlink_metadata().unwrap().is_symlink());
    assert_eq!(fs::metadata(&moved).unwrap().len(), 0);
}

/// The allowed file is swapped for a symlink to a loop device while
/// iomark opens it: before the open (`delay_enter`) iomark must stop with
/// a clear error; after it (`delay_exit`) it must keep writing the file it
/// opened. Either way the device is untouched.
fn swap_allowed_file_for_device(when: &str) -> (Output, Vec<u8>) {
    let dev = LoopDevice::new(8 << 20).expect("loop device");
    let before = device_digest(&dev.dev);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let allowed = dir.path().join("allowed.bin");
    fs::write(&allowed, vec![7u8; 4 << 20]).unwrap();
    let a = allowed.to_str().unwrap();
    let mut child = staged(
        "openat2",
        when,
        &[
            "disk",
            a,
            "--rw",
            "write",
            "--allow-write",
            a,
            "--runtime",
            "300ms",
            "--engine",
            "psync",
            "--buffered",
        ],
    );
    wait_in_syscall(&mut child, libc::SYS_openat2);
    if when == "delay_exit" {
        // Stopped at the call's entry reads the same in /proc/PID/syscall,
        // and strace may sit there a while under load: the swap must come
        // after the open, so wait for the descriptor it made.
        wait_for_descriptor(&mut child, &allowed.canonicalize().unwrap());
    }
    let kept = dir.path().join("allowed.orig");
    fs::rename(&allowed, &kept).unwrap();
    std::os::unix::fs::symlink(&dev.dev, &allowed).unwrap();
    let o = finish(child);
    assert_eq!(device_digest(&dev.dev), before, "the device was written");
    (o, fs::read(&kept).unwrap())
}

#[test]
fn an_allowed_file_swapped_for_a_device_before_the_open_is_refused() {
    require!(require_root());
    require!(have("strace"));
    let (o, file) = swap_allowed_file_for_device("delay_enter");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("changed while it was being opened"),
        "{}",
        stderr(&o)
    );
    assert!(file.iter().all(|&b| b == 7), "nothing was written");
}

#[test]
fn an_allowed_file_swapped_for_a_device_after_the_open_is_the_one_written() {
    require!(require_root());
    require!(have("strace"));
    let (o, file) = swap_allowed_file_for_device("delay_exit");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        file.iter().any(|&b| b != 7),
        "iomark wrote the file it opened"
    );
}

/// An image file with a read-only ext4 mounted from one loop device over
/// it, and a second loop device over the same file. Removed on drop.
struct SharedImage {
    image: PathBuf,
    mountpoint: PathBuf,
    mounted_on: String,
    second: String,
    mounted_here: bool,
    /// What holds `mounted_on` when it is not mounted here.
    elsewhere: Option<Proc>,
    _exclusive: Option<fs::File>,
}

/// Who holds the first loop device of a [`SharedImage`].
#[derive(Debug, Clone, Copy)]
enum Holder {
    /// Mounted in this mount namespace.
    MountedHere,
    /// Mounted in a mount namespace of its own (`unshare -m`, as a
    /// container or a service with a private namespace does), by a process
    /// that sleeps: invisible in this namespace's mount table.
    MountedInAnotherNamespace,
    /// Not mounted, but held open with `O_EXCL` (by this test's process).
    OpenedExclusively,
}

impl SharedImage {
    fn new() -> Result<Self, String> {
        Self::held(Holder::MountedHere)
    }

    fn held(holder: Holder) -> Result<Self, String> {
        let run = |cmd: &mut Command| -> Result<String, String> {
            let o = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
            if !o.status.success() {
                return Err(format!("{cmd:?}: {}", stderr(&o).trim()));
            }
            Ok(stdout(&o).trim().to_string())
        };
        let image = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(unique_name("shared.img"));
        let mountpoint = std::env::temp_dir().join(unique_name("shared-mnt"));
        let mut rig = SharedImage {
            image: image.clone(),
            mountpoint: mountpoint.clone(),
            mounted_on: String::new(),
            second: String::new(),
            mounted_here: false,
            elsewhere: None,
            _exclusive: None,
        };
        fs::write(&image, vec![0u8; 16 << 20]).map_err(|e| e.to_string())?;
        run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image))?;
        rig.mounted_on = run(Command::new("losetup").args(["-f", "--show"]).arg(&image))?;
        fs::create_dir(&mountpoint).map_err(|e| e.to_string())?;
        // Read-only and without journal replay: the file's bytes stay put,
        // so any change to them is iomark's.
        match holder {
            Holder::MountedHere => {
                run(Command::new("mount")
                    .args(["-o", "ro,noload", &rig.mounted_on])
                    .arg(&mountpoint))?;
                rig.mounted_here = true;
            }
            Holder::MountedInAnotherNamespace => {
                rig.elsewhere = Some(mount_in_another_namespace(&rig.mounted_on, &mountpoint));
            }
            Holder::OpenedExclusively => {
                use std::os::unix::fs::OpenOptionsExt;
                let held = fs::File::options()
                    .read(true)
                    .custom_flags(libc::O_EXCL)
                    .open(&rig.mounted_on)
                    .map_err(|e| format!("{}: {e}", rig.mounted_on))?;
                rig._exclusive = Some(held);
            }
        }
        rig.second = run(Command::new("losetup").args(["-f", "--show"]).arg(&image))?;
        Ok(rig)
    }

    fn digest(&self) -> Vec<u8> {
        fs::read(&self.image).unwrap()
    }
}

impl Drop for SharedImage {
    fn drop(&mut self) {
        // The other namespace, and its mount, end with its last process.
        drop(self.elsewhere.take());
        if self.mounted_here {
            let _ = Command::new("umount").arg(&self.mountpoint).status();
        }
        let _ = fs::remove_dir(&self.mountpoint);
        for dev in [&self.second, &self.mounted_on] {
            if !dev.is_empty() {
                let _ = Command::new("losetup").arg("-d").arg(dev).status();
            }
        }
        let _ = fs::remove_file(&self.image);
    }
}

#[test]
fn the_same_bytes_through_another_door_are_refused() {
    require!(require_root());
    let rig = require!(SharedImage::new());
    let before = rig.digest();
    let image = rig.image.to_str().unwrap().to_string();
    for target in [&rig.second, &image] {
        let o = iomark_cmd(&["disk", target, "--rw", "write", "--allow-write", target])
            .args(["--runtime", "300ms", "--engine", "psync", "--buffered"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{target}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("is in use")
                && e.contains(&format!("mounted on {}", rig.mountpoint.display())),
            "{target}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    assert!(
        rig.digest() == before,
        "the mounted file system's bytes changed"
    );
    // Reading through the second door is harmless and allowed.
    let o = iomark_cmd(&["disk", &rig.second, "--rw", "read", "--runtime", "200ms"])
        .args(["--engine", "psync"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn bytes_mounted_in_another_namespace_or_held_exclusively_are_never_written() {
    require!(require_root());
    require!(have("unshare"));
    for (holder, named) in [
        (
            Holder::MountedInAnotherNamespace,
            "in the mount namespace of pid",
        ),
        (Holder::OpenedExclusively, "open in pid"),
    ] {
        let rig = require!(SharedImage::held(holder));
        let before = rig.digest();
        let image = rig.image.to_str().unwrap().to_string();
        // The held device itself, a second loop device over its file, and
        // the file.
        for target in [&rig.mounted_on, &rig.second, &image] {
            let o = iomark_cmd(&["disk", target, "--rw", "write", "--allow-write", target])
                .args(["--runtime", "300ms", "--engine", "psync", "--buffered"])
                .output()
                .unwrap();
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{holder:?} {target}: {e}");
            assert!(
                e.contains("is in use") && e.contains(named),
                "{holder:?} {target}: {e}"
            );
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        assert!(
            rig.digest() == before,
            "{holder:?}: the held file system's bytes changed"
        );
    }
}

/// `iomark disk WORK ARGS...` under strace, which logs every open: the
/// run must fail with exit 2 and one line holding `needle`, and must have
/// created no file (no `O_CREAT` open) on the way.
fn refused_before_creating_anything(args: &[&str], needle: &str) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let log = dir.path().join("opens.log");
    let work = dir.path().join("work");
    fs::create_dir(&work).unwrap();
    let start = Instant::now();
    let o = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat,openat2,creat", "-o"])
        .arg(&log)
        .arg(IOMARK)
        .args(["disk", work.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert!(e.contains(needle), "{args:?}: {e}");
    assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
    let opens = fs::read_to_string(&log).unwrap();
    assert!(
        !opens.contains("O_CREAT"),
        "{args:?}: a file was created before the refusal:\n{opens}"
    );
    assert!(test_files(&work).is_empty());
    // Refused up front: generous for a busy machine.
    assert_within(
        &format!("{args:?} refused"),
        start.elapsed(),
        Duration::from_secs(20),
    );
}

#[test]
fn an_unaligned_block_size_is_refused_before_anything_is_created() {
    require!(have("strace"));
    refused_before_creating_anything(
        &["--rw", "write", "--bs", "3", "--runtime", "1s", "--direct"],
        "--bs 3 B is not a multiple of the logical block size",
    );
}

#[test]
fn numbers_past_their_bounds_are_refused_before_anything_is_created() {
    require!(have("strace"));
    // A custom write job with `extra`.
    let job = |extra: &[&'static str]| {
        let mut args = vec!["--rw", "write", "--runtime", "1s"];
        args.extend_from_slice(extra);
        args
    };
    for (args, needle) in [
        (
            job(&["--numjobs", "4294967295"]),
            "--numjobs 4294967295 is too many",
        ),
        (job(&["--numjobs", "1025"]), "use at most 1024"),
        (
            job(&["--iodepth", "100000"]),
            "--iodepth 100000 is too deep",
        ),
        (job(&["--bs", "2G"]), "is too large"),
        (
            job(&["--numjobs", "1024", "--iodepth", "65536", "--bs", "1G"])
                .into_iter()
                .chain(["--engine", "psync"])
                .collect(),
            "of memory available",
        ),
        // io_uring's ring holds 32768 entries: known before the test file.
        (
            job(&["--iodepth", "40000", "--engine", "io_uring"]),
            "--iodepth 40000 is deeper than an io_uring ring can be: use at most 32768",
        ),
        // A depth list: every depth checked, a range's end said, not capped.
        (
            job(&["--iodepth", "1..65536", "--engine", "io_uring"]),
            "--iodepth 65536 is deeper than an io_uring ring",
        ),
        (job(&["--iodepth", "1..100000"]), "depths go up to 65536"),
        // Smaller than one block: refused, not rounded up to one.
        (
            job(&["--size", "2k", "--bs", "4k"]),
            "--size 2 KiB is smaller than one block (--bs 4 KiB)",
        ),
        // The default profile, whose largest block is 1 MiB.
        (
            vec!["--size", "1"],
            "smaller than one block of this test (1 MiB)",
        ),
    ] {
        refused_before_creating_anything(&args, needle);
    }
}

#[test]
fn a_database_that_cannot_store_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let o = iomark_cmd(&["disk", dir.path().to_str().unwrap(), "--runtime", "30s"])
        .args(["--engine", "psync", "--db", ":memory:"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(test_files(dir.path()).is_empty());
    // Refused up front, not after the 30 s job.
    assert_within(
        "the database refused",
        start.elapsed(),
        Duration::from_secs(20),
    );
}
