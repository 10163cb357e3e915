//! Refused threads, stop signals, oversized jobs and files truncated under a
//! mapping end a run cleanly: exit 2 (or 130 for a signal) with one clear
//! line, promptly, and no test or backing file left behind.
//!
//! The pids tests run iomark inside a pids cgroup whose limit is below the
//! threads asked for, so the kernel refuses a thread with EAGAIN.

use std::fs;
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::*;
use iomark_testrig::{require, unique_name};

/// How long any of these runs may take to end once it should: far above the
/// second or so they need, for a busy two-core machine.
const PROMPT: Duration = Duration::from_secs(20);

/// A pids cgroup (v1 or v2) with a low `pids.max`, removed on drop, its
/// processes killed first if a failing test left any.
struct PidsGroup {
    dir: PathBuf,
}

impl PidsGroup {
    /// `Err(reason)` when the test cannot run here.
    fn new(max: u32) -> Result<PidsGroup, String> {
        if !is_root() {
            return Err("needs root to create a pids cgroup".into());
        }
        let v1 = Path::new("/sys/fs/cgroup/pids");
        let v2 = Path::new("/sys/fs/cgroup");
        let parent = if v1.join("cgroup.procs").exists() {
            v1
        } else if fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "pids"))
        {
            v2
        } else {
            return Err("no pids cgroup controller (v1 /sys/fs/cgroup/pids, or pids in the v2 root's subtree_control)".into());
        };
        let dir = parent.join(unique_name("thread-limits"));
        fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let group = PidsGroup { dir };
        fs::write(group.dir.join("pids.max"), max.to_string())
            .map_err(|e| format!("pids.max: {e}"))?;
        Ok(group)
    }

    /// `iomark args` set to start inside the group.
    fn command(&self, args: &[&str]) -> Command {
        let procs = fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.procs"))
            .expect("open cgroup.procs");
        let mut cmd = Command::new(IOMARK);
        cmd.args(args);
        // SAFETY: the closure only makes one write system call on a file
        // opened before the fork (writing 0 moves the writer itself), which
        // is async-signal-safe; it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                rustix::io::write(&procs, b"0")?;
                Ok(())
            });
        }
        cmd
    }
}

impl Drop for PidsGroup {
    fn drop(&mut self) {
        for _ in 0..100 {
            let procs = fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("could not remove {}", self.dir.display());
    }
}

/// The run ended with exit 2 and one clear line holding all `needles`,
/// in less than `limit`.
fn assert_refused(o: &Output, took: Duration, limit: Duration, needles: &[&str], what: &str) {
    assert_eq!(o.status.code(), Some(2), "{what}: {o:?}");
    let err = stderr(o);
    assert_eq!(err.lines().count(), 1, "one clear line: {err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} in: {err}");
    }
    assert_within(what, took, limit);
}

#[test]
fn a_refused_disk_thread_is_an_error_and_leaves_no_test_file() {
    // iomark's main thread plus 7 workers: the 8th worker is refused.
    let group = require!(PidsGroup::new(8));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let run = Proc::spawn(&mut group.command(&[
        "disk",
        d,
        "--numjobs",
        "64",
        "--size",
        "4M",
        "--runtime",
        "30s",
        "--engine",
        "psync",
        "--no-store",
    ]));
    let (o, took) = run.finish_timed(PROMPT);
    assert_refused(
        &o,
        took,
        PROMPT,
        &["cannot start thread", "of 64", "--numjobs", "pids limit"],
        "disk",
    );
    assert_no_test_files(dir.path());
}

#[test]
fn a_refused_mem_thread_is_an_error() {
    let group = require!(PidsGroup::new(8));
    for kernel in [
        &["stream", "--size", "1M", "--ntimes", "3"][..],
        &["stencil", "--n", "256", "--sweeps", "2"],
        &["himeno", "--grid", "xs", "--iterations", "3"],
    ] {
        let mut args = vec!["mem"];
        args.extend_from_slice(kernel);
        args.extend_from_slice(&["--threads", "50", "--no-store"]);
        let (o, took) = Proc::spawn(&mut group.command(&args)).finish_timed(PROMPT);
        assert_refused(
            &o,
            took,
            PROMPT,
            &["cannot start thread", "of 50", "--threads", "pids limit"],
            &format!("{kernel:?}"),
        );
    }
}

/// Start a minute-long disk job on a test file in `dir` and wait until it
/// has read `bytes` (as disk_safety's Ctrl-C test does).
fn start_long_run(dir: &Path, bytes: u64) -> Proc {
    let run = Proc::spawn(long_disk_run(dir).arg("--no-store"));
    wait_until_measuring(run.pid(), dir, bytes, PROMPT);
    run
}

#[test]
fn sigterm_and_sighup_stop_a_disk_run_like_ctrl_c() {
    for sig in [rustix::process::Signal::TERM, rustix::process::Signal::HUP] {
        let dir = tempfile::tempdir().unwrap();
        let run = start_long_run(dir.path(), 4 << 20);
        run.signal(sig);
        let (o, took) = run.finish_timed(PROMPT);
        assert_eq!(o.status.code(), Some(130), "{sig:?}: {o:?}");
        let out = stdout(&o);
        assert!(
            out.contains("read:") && out.contains("interrupted"),
            "{sig:?}: {out}"
        );
        assert_within(&format!("{sig:?} ending the run"), took, PROMPT);
        let left = test_files(dir.path());
        assert!(left.is_empty(), "{sig:?} left {left:?}");
    }
}

/// Wait until the run has `file` mapped, then truncate it to `len` bytes:
/// the truncation hits the mapping and not the opening of the target.
fn truncate_once_mapped(run: &Proc, file: &Path, len: u64) {
    let pid = run.pid();
    let name = file.to_str().unwrap();
    wait_until(PROMPT, &format!("{name} mapped by {pid}"), || {
        fs::read_to_string(format!("/proc/{pid}/maps"))
            .unwrap_or_default()
            .lines()
            .any(|l| l.ends_with(name))
    });
    fs::OpenOptions::new()
        .write(true)
        .open(file)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// Wait until a file matching the pattern exists in `dir`.
fn wait_for_file(dir: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let mut found = None;
    wait_until(
        PROMPT,
        &format!("{prefix}*{suffix} in {}", dir.display()),
        || {
            found = files_like(dir, prefix, suffix).pop();
            found.is_some()
        },
    );
    found.unwrap()
}

fn assert_shrank(o: &Output, took: Duration) {
    assert_ne!(o.status.signal(), Some(libc_sigbus()), "died of SIGBUS");
    assert_refused(
        o,
        took,
        PROMPT,
        &["the file shrank under the mapping", "truncated"],
        "the truncated run",
    );
}

fn libc_sigbus() -> i32 {
    rustix::process::Signal::BUS.as_raw()
}

#[test]
fn a_file_truncated_under_an_mmap_read_job_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("shrinking.bin");
    fs::write(&f, vec![7u8; 16 << 20]).unwrap();
    let run = Proc::spawn(&mut iomark_cmd(&[
        "disk",
        f.to_str().unwrap(),
        "--rw",
        "randread",
        "--engine",
        "mmap-sync",
        "--runtime",
        "60s",
        "--no-store",
    ]));
    truncate_once_mapped(&run, &f, 4096);
    let (o, took) = run.finish_timed(PROMPT);
    assert_shrank(&o, took);
    assert!(f.exists(), "an existing file is never removed");
}

#[test]
fn a_test_file_truncated_under_an_mmap_write_job_is_an_error_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let run = Proc::spawn(&mut iomark_cmd(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--size",
        "16M",
        "--rw",
        "randwrite",
        "--engine",
        "mmap-async",
        "--runtime",
        "60s",
        "--no-store",
    ]));
    truncate_once_mapped(&run, &wait_for_file(dir.path(), "iomark-", ".tmp"), 0);
    let (o, took) = run.finish_timed(PROMPT);
    assert_shrank(&o, took);
    assert_no_test_files(dir.path());
}

#[test]
fn a_mem_backing_file_truncated_under_the_kernel_is_an_error_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let run = Proc::spawn(mem_on_mapping(dir.path(), LONG_MEM_RUN).args([
        "--threads",
        "2",
        "--no-store",
    ]));
    truncate_once_mapped(&run, &wait_for_file(dir.path(), "iomark-", ".tmp"), 0);
    // The kernel notices at its end (the file is checked when it stops),
    // so keep it short: stop it at once.
    run.signal(rustix::process::Signal::INT);
    let (o, took) = run.finish_timed(PROMPT);
    assert_shrank(&o, took);
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn a_killed_mem_runs_mapped_file_is_found_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let run = Proc::spawn(mem_on_mapping(dir.path(), LONG_MEM_RUN).arg("--no-store"));
    let file = wait_for_file(dir.path(), "iomark-", ".tmp");
    // While it runs, its lock keeps clean-up away, and clean says so.
    let o = iomark(&["clean", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(file.exists(), "a live run's file was removed");
    let said = stdout(&o);
    assert!(
        said.contains(&format!("kept {}: in use by a running", file.display())),
        "{said}"
    );
    // kill -9: nothing of iomark's can remove it ...
    drop(run);
    assert!(file.exists());
    // ... and `iomark clean` does, as for a disk run's test file.
    let o = iomark(&["clean", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(&file_name(&file)), "{}", stdout(&o));
    assert!(test_files(dir.path()).is_empty());
    // So does the next mem run there, before it judges the free space.
    fs::write(&file, b"stale").unwrap();
    fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let o = mem_on_mapping(dir.path(), &["stream", "--size", "1M", "--ntimes", "2"])
        .arg("--no-store")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn oversized_mem_jobs_are_refused_before_anything_is_allocated() {
    for (args, needle) in [
        (
            &["stream", "--threads", "100000"][..],
            "--threads 100000 is more than",
        ),
        (&["stream", "--size", "1000000G"], "use a smaller --size"),
        (&["stencil", "--n", "100000000"], "use a smaller --n"),
        (
            &["himeno", "--grid", "100000x100000x100000"],
            "use a smaller --grid",
        ),
    ] {
        let mut all = vec!["mem"];
        all.extend_from_slice(args);
        all.push("--no-store");
        let (o, took) = Proc::spawn(&mut iomark_cmd(&all)).finish_timed(PROMPT);
        let what = format!("{args:?}");
        assert_refused(&o, took, Duration::from_secs(10), &[needle], &what);
    }
}

/// A mem run that goes on until it is stopped: Himeno filling ten
/// minutes. (STREAM ends by its passes, at most 261: its values leave a
/// double's range after that.)
const LONG_MEM_RUN: &[&str] = &["himeno", "--grid", "xs", "--seconds", "600"];

/// A long Himeno run under `--mem-limit`, once its limited child runs the
/// kernel (it has spent a tenth of a second on the CPU): the parent and
/// the child's pid.
fn limited_mem_run() -> (Proc, u32) {
    let mut args = vec!["mem"];
    args.extend_from_slice(LONG_MEM_RUN);
    args.extend_from_slice(&["--threads", "1", "--mem-limit", "256MiB", "--no-store"]);
    let run = Proc::spawn(&mut iomark_cmd(&args));
    let mut child = None;
    wait_until(PROMPT, "the limited child runs the kernel", || {
        child = children_of(run.pid())
            .into_iter()
            .find(|&c| cpu_ticks(c) >= 10);
        child.is_some()
    });
    (run, child.unwrap())
}

#[test]
fn sigterm_reaches_the_limited_mem_child() {
    require!(memory_cgroup());
    // SIGTERM goes to the parent only (as `kill PID` does); the child runs
    // the kernel, so the parent must pass the stop on.
    let (run, _child) = limited_mem_run();
    run.signal(rustix::process::Signal::TERM);
    let (o, took) = run.finish_timed(PROMPT);
    assert_eq!(o.status.code(), Some(130), "{o:?}");
    assert!(stdout(&o).contains("interrupted"), "{}", stdout(&o));
    assert_within("SIGTERM ending the limited child", took, PROMPT);
}

#[test]
fn the_limited_mem_child_dies_with_its_parent() {
    require!(memory_cgroup());
    let (run, child) = limited_mem_run();
    let parent = run.pid();
    // kill -9: the parent can pass nothing on.
    drop(run);
    wait_until(PROMPT, "the child gone with its parent", || {
        !Path::new(&format!("/proc/{child}")).exists()
    });
    // The parent could not remove its group: the test does.
    for root in ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"] {
        let Ok(entries) = fs::read_dir(root) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with(&format!("iomark-mem-{parent}-")) {
                let _ = fs::remove_dir(e.path());
            }
        }
    }
}

/// The children of every thread of process `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The CPU time process `pid` has used, user and system, in clock ticks
/// (fields 14 and 15 of /proc/PID/stat, after the parenthesised name).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let Some((_, after_name)) = stat.rsplit_once(')') else {
        return 0;
    };
    // after_name starts at field 3 (state): utime is the 12th after it.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}
