//! The shared harness of the CLI integration tests: running the binary,
//! reading its output, checking for the tools a test needs, scratch results
//! databases, test-file scans and children that are killed on drop. Each
//! area's module says `use crate::common::*` and uses what it needs.
// tests/mpi_rig.rs compiles this module too, and uses a part of it.
#![allow(dead_code, unused_imports)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod runs;
pub use runs::*;

/// The binary under test.
pub const IOMARK: &str = env!("CARGO_BIN_EXE_iomark");

/// `iomark ARGS...` as a [`Command`], for runs that need env, stdin,
/// spawning or a wrapper.
pub fn iomark_cmd(args: &[&str]) -> Command {
    let mut cmd = Command::new(IOMARK);
    cmd.args(args);
    cmd
}

/// Runs `iomark ARGS...` to completion.
pub fn iomark(args: &[&str]) -> Output {
    iomark_cmd(args).output().expect("iomark runs")
}

/// Runs `iomark ARGS...` to completion and fails the test unless it succeeded.
pub fn iomark_ok(args: &[&str]) -> Output {
    let out = iomark(args);
    assert!(
        out.status.success(),
        "iomark {args:?} failed: {}",
        stderr(&out)
    );
    out
}

/// Runs `iomark results --db DB ARGS...` to completion, stdin closed.
pub fn results(db: &str, args: &[&str]) -> Output {
    iomark_cmd(&["results", "--db", db])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("iomark runs")
}

/// Stdout, after checking that the run succeeded.
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Fails the test unless the run succeeded, showing `what` and its output.
pub fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}); stdout:\n{}\nstderr:\n{}",
        out.status,
        stdout(out),
        stderr(out)
    );
}

/// Stdout as one JSON document (whatever the exit status).
pub fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}); stdout:\n{}\nstderr:\n{}",
            stdout(out),
            stderr(out)
        )
    })
}

/// The run's JSON document, after checking that it succeeded.
pub fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "iomark failed: {}\n{}",
        stderr(out),
        stdout(out)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// The messages of a run document's warnings of `kind`.
pub fn warnings_of_kind<'a>(doc: &'a Value, kind: &str) -> Vec<&'a str> {
    doc["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| w["kind"] == kind)
        .filter_map(|w| w["message"].as_str())
        .collect()
}

/// `Ok` when `tool --version` runs here, else why not (for `require!`).
pub fn have(tool: &str) -> Result<(), String> {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let package = match tool {
        "setpriv" | "losetup" => "util-linux",
        other => other,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "needs {tool} (Debian package {package}; scripts/test installs it)"
        ))
    }
}

/// Whether the tests run as root (effective user id 0).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `Ok` when a `--mem-limit` run can happen here, else why not (for
/// `require!`): it needs root and a memory cgroup controller (v1 or v2).
pub fn memory_cgroup() -> Result<(), &'static str> {
    if !is_root() {
        return Err("needs root for --mem-limit");
    }
    let v1 = Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists();
    let v2 = fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
        .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"));
    if v1 || v2 {
        Ok(())
    } else {
        Err("needs a memory cgroup controller")
    }
}

/// What the whole machine has one of, which tests of different areas
/// change or need unchanged: one binary runs every area's tests at once.
#[derive(Clone, Copy, Debug)]
pub enum Shared {
    /// The set of active swap areas (`swapon`), which decides whether a
    /// heap run over its memory limit swaps or is killed.
    Swap,
    /// `/dev/zram0`, reset to a size by the tests that use it.
    Zram0,
}

/// Holds `what` for this test alone until the guard is dropped. A test
/// that failed while holding it does not take it from the next one.
pub fn exclusive(what: Shared) -> std::sync::MutexGuard<'static, ()> {
    static SWAP: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static ZRAM0: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let lock = match what {
        Shared::Swap => &SWAP,
        Shared::Zram0 => &ZRAM0,
    };
    lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The one skip of the workspace's tests (iomark_testrig::require!), here
/// for every module that says `use crate::common::*`.
pub use iomark_testrig::require;

/// Fails the test unless the run exited 2 with `needle` in its stderr;
/// returns the stderr.
pub fn fails_with(out: &Output, needle: &str) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "expected exit 2: {err}");
    assert!(err.contains(needle), "{needle:?} not in: {err}");
    err
}

/// A results database in a temporary directory of its own, removed on drop.
pub struct ScratchDb {
    pub dir: tempfile::TempDir,
    path: PathBuf,
}

impl ScratchDb {
    /// `r.db` in a new temporary directory.
    pub fn new() -> ScratchDb {
        ScratchDb::named("r.db")
    }

    /// `name` in a new temporary directory.
    pub fn named(name: &str) -> ScratchDb {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join(name);
        ScratchDb { dir, path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path as `--db` takes it.
    pub fn db(&self) -> &str {
        self.path.to_str().expect("a UTF-8 temporary path")
    }
}

/// The files in `dir` whose names start with `prefix` and end with `suffix`.
pub fn files_like(dir: &Path, prefix: &str, suffix: &str) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(prefix) && n.ends_with(suffix)
        })
        .map(|e| e.path())
        .collect()
}

/// iomark's test files in `dir` (`iomark-*.tmp`).
pub fn test_files(dir: &Path) -> Vec<PathBuf> {
    files_like(dir, "iomark-", ".tmp")
}

/// `iomark disk DIR` for a minute on an 8 MiB test file with psync: a run
/// for a test to stop. Add arguments, then spawn it.
pub fn long_disk_run(dir: &Path) -> Command {
    let d = dir.to_str().unwrap();
    iomark_cmd(&[
        "disk",
        d,
        "--size",
        "8M",
        "--runtime",
        "60s",
        "--engine",
        "psync",
    ])
}

/// Waits until `done` (checked every 10 ms), failing the test when it is
/// not within `limit`: `what` says what should have happened.
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < end, "not within {limit:?}: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until a test file exists in `dir` (at most `limit`), then lets the
/// run go on for `settle`.
pub fn settle_after_test_file(dir: &Path, limit: Duration, settle: Duration) {
    let start = Instant::now();
    while test_files(dir).is_empty() && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(settle);
}

/// The name of a file, as a String.
pub fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The names of what is in `dir`, sorted.
pub fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Fails the test unless `dir` is empty, naming what was `left` behind.
pub fn assert_empty_dir(dir: &Path, left: &str) {
    let names = dir_names(dir);
    assert!(names.is_empty(), "{left} left behind: {names:?}");
}

/// Fails the test unless no iomark test file is left in `dir`.
pub fn assert_no_test_files(dir: &Path) {
    let left = test_files(dir);
    assert!(left.is_empty(), "test files left behind: {left:?}");
}

/// `--backing` for a file mapping in `dir`.
pub fn mmap_backing(dir: &Path) -> String {
    format!("mmap:{}", dir.display())
}

/// `iomark mem ARGS... --backing mmap:DIR`: a kernel on a file mapping in
/// `dir`, as a [`Command`] to add arguments to.
pub fn mem_on_mapping(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = iomark_cmd(&["mem"]);
    cmd.args(args).args(["--backing", &mmap_backing(dir)]);
    cmd
}

/// A child process that is killed and reaped when dropped.
pub struct Proc(pub Option<Child>);

impl Proc {
    /// Spawns `cmd` with stdout and stderr piped.
    pub fn spawn(cmd: &mut Command) -> Proc {
        Proc(Some(
            cmd.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn a child process"),
        ))
    }

    /// Wait for it to end (at most `limit`), returning its output.
    pub fn finish(mut self, limit: Duration) -> Output {
        let mut child = self.0.take().expect("not finished yet");
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if child.try_wait().expect("poll a child").is_some() {
                return child.wait_with_output().expect("collect output");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let out = child.wait_with_output().expect("collect output");
        panic!(
            "child did not finish within {limit:?}; stdout:\n{}\nstderr:\n{}",
            stdout(&out),
            stderr(&out)
        );
    }

    pub fn pid(&self) -> u32 {
        self.0.as_ref().expect("running").id()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// How far a figure may land from a throttled rig's limit, as fractions:
/// never more than 3% above it (that would be a measurement error or a
/// cache artefact, whatever the load), and by default up to 25% below it.
/// A throttled device is a fair yardstick only while the host keeps its
/// queue fed, and a loaded 2-core machine sometimes cannot (fio misses the
/// same way), so the 3% accuracy below the limit is a benchmark's claim:
/// `bench/rig-accuracy` runs the rig tests on a quiet machine with
/// `IOMARK_RIG_SLACK=0.03` and quotes each error.
pub fn rig_band() -> (f64, f64) {
    let below = std::env::var("IOMARK_RIG_SLACK")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(0.25);
    (1.0 - below, 1.03)
}

/// Assert that `measured` is in [`rig_band`] around the rig's `limit`,
/// printing the error either way (`bench/rig-accuracy` collects these
/// lines).
pub fn assert_at_the_limit(what: &str, measured: f64, limit: f64) {
    let err = measured / limit - 1.0;
    eprintln!(
        "rig-accuracy: {what}: measured {measured:.1}, limit {limit:.1}, error {:+.2}%",
        err * 100.0
    );
    let (lo, hi) = rig_band();
    assert!(
        (lo..=hi).contains(&(measured / limit)),
        "{what}: {measured:.1} vs limit {limit:.1} ({:+.2}%), outside {:+.0}%..{:+.0}%",
        err * 100.0,
        (lo - 1.0) * 100.0,
        (hi - 1.0) * 100.0
    );
}

/// Runs `iomark ARGS...` on a pseudo-terminal (util-linux `script`), so
/// stderr is a terminal as a person's is; what the terminal showed, or why
/// it could not run.
pub fn iomark_on_terminal(args: &[&str]) -> Result<String, String> {
    have_command("script", "util-linux")?;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("typescript");
    let line = std::iter::once(IOMARK)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qec", &line])
        .arg(&log)
        .stdin(Stdio::null())
        .output()
        .expect("script runs");
    assert!(
        out.status.success(),
        "{line} on a terminal failed: {}",
        String::from_utf8_lossy(&fs::read(&log).unwrap_or_default())
    );
    Ok(String::from_utf8_lossy(&fs::read(&log).unwrap()).into_owned())
}

/// `Ok` when `tool` is on the PATH, else which Debian package has it.
pub fn have_command(tool: &str, package: &str) -> Result<(), String> {
    let found = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()));
    if found {
        Ok(())
    } else {
        Err(format!(
            "needs {tool} (Debian package {package}; scripts/test installs it)"
        ))
    }
}
