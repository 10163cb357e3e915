//! The shared harness of the CLI integration tests: running the binary,
//! reading its output, checking for the tools a test needs, scratch results
//! databases, test-file scans and children that are killed on drop. Each
//! area's module says `use crate::common::*` and uses what it needs.
// tests/mpi_rig.rs compiles this module too, and uses a part of it.
#![allow(dead_code, unused_imports)]

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

mod browser;
mod own_store;
mod runs;
mod served;
pub use browser::*;
pub use runs::*;
pub use served::*;

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

/// [`results`] with text fitted to 400 columns (`$COLUMNS`), for a test
/// that reads a table's or a warning's whole line; the 80-column default
/// is a test of its own (`results_width`).
pub fn results_wide(db: &str, args: &[&str]) -> Output {
    iomark_cmd(&["results", "--db", db])
        .args(args)
        .env("COLUMNS", "400")
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

/// `text` with its lines joined and each run of spaces made one: printed
/// text is fitted to 80 columns (a terminal's width, or 80 in a pipe), so
/// a sentence a test looks for may be wrapped over lines.
pub fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
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

/// Store `doc` in the database `db` through `results import`, written
/// first as `dir/name.json`.
pub fn import_doc(db: &Path, dir: &Path, name: &str, doc: &iomark_model::RunDocument) {
    let file = dir.join(format!("{name}.json"));
    fs::write(&file, serde_json::to_vec(doc).unwrap()).unwrap();
    iomark_ok(&[
        "results",
        "import",
        file.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
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

    /// Store `doc` here through `results import` (see [`import_doc`]).
    pub fn import(&self, name: &str, doc: &iomark_model::RunDocument) {
        import_doc(&self.path, self.dir.path(), name, doc);
    }
}

/// A database of its own on the test PostgreSQL server
/// (`IOMARK_TEST_PG_URL`, which scripts/test sets), dropped with every
/// connection to it when this goes.
pub struct PgScratchDb {
    /// Its URL, as `--db` takes it.
    pub url: String,
    admin: postgres::Client,
    name: String,
}

impl PgScratchDb {
    pub fn new() -> Result<PgScratchDb, String> {
        let admin_url = std::env::var("IOMARK_TEST_PG_URL").map_err(|_| {
            "IOMARK_TEST_PG_URL is not set (scripts/test starts a PostgreSQL server and sets it)"
                .to_string()
        })?;
        let name = format!(
            "iomark_cli_test_{}",
            iomark_testrig::unique_name("db").replace('-', "_")
        );
        let mut admin =
            postgres::Client::connect(&admin_url, postgres::NoTls).map_err(|e| e.to_string())?;
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .map_err(|e| e.to_string())?;
        let base = admin_url.split('?').next().unwrap();
        let url = format!("{}/{name}", base.rsplit_once('/').unwrap().0);
        Ok(PgScratchDb { url, admin, name })
    }

    /// Runs `sql` on the server as its administrator (for settings of the
    /// scratch database itself).
    pub fn admin(&mut self, sql: &str) {
        let sql = sql.replace("{db}", &self.name);
        self.admin.batch_execute(&sql).unwrap();
    }

    /// `host:port` of the server.
    pub fn server(&self) -> String {
        let rest = self.url.split_once('@').unwrap().1;
        rest.split('/').next().unwrap().to_string()
    }
}

impl Drop for PgScratchDb {
    fn drop(&mut self) {
        let _ = self.admin.batch_execute(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

/// A TCP relay to a server that can be frozen: from then on it passes
/// nothing either way and keeps every connection open, as a server stopped
/// with SIGSTOP does (its kernel still holds the connections).
pub struct FreezableRelay {
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    frozen: Arc<std::sync::atomic::AtomicBool>,
}

impl FreezableRelay {
    pub fn to(upstream: &str) -> FreezableRelay {
        use std::net::{TcpListener, TcpStream};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let frozen = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let upstream = upstream.to_string();
        let flag = Arc::clone(&frozen);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                for (from, to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let flag = Arc::clone(&flag);
                    std::thread::spawn(move || relay(from, to, &flag));
                }
            }
        });
        FreezableRelay { port, frozen }
    }

    /// Nothing passes from now on.
    pub fn freeze(&self) {
        self.frozen.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

fn relay(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    frozen: &std::sync::atomic::AtomicBool,
) {
    use std::io::Write;
    let mut buf = [0u8; 1 << 14];
    loop {
        if frozen.load(std::sync::atomic::Ordering::SeqCst) {
            // Hold the connection, answer nothing: a stopped server.
            std::thread::park_timeout(Duration::from_millis(100));
            continue;
        }
        match read_some(&mut from, &mut buf) {
            Ok(0) | Err(_) => {
                let _ = to.shutdown(std::net::Shutdown::Write);
                return;
            }
            Ok(n) => {
                while frozen.load(std::sync::atomic::Ordering::SeqCst) {
                    std::thread::park_timeout(Duration::from_millis(100));
                }
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
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

/// The bytes process `pid` has read through system calls so far (`rchar`
/// of /proc/PID/io, every thread's counted).
pub fn bytes_read_by(pid: u32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/io"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("rchar:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The thread ids of process `pid` whose name (comm) is `name`: a disk
/// job's workers are `iomark-job-N` while the job runs, and only then.
pub fn threads_named(pid: u32, name: &str) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter(|t| fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect()
}

/// Waits (at most `limit`) until the disk run `pid` has a test file in
/// `dir` and has read `bytes` from it: it is measuring, past the file's
/// fill, which only writes.
pub fn wait_until_measuring(pid: u32, dir: &Path, bytes: u64, limit: Duration) {
    wait_until(limit, "the run has a test file", || {
        !test_files(dir).is_empty()
    });
    // Start-up reads (sysfs, /proc) are a few KiB; the job reads MiBs.
    let what = format!("the run has read {bytes} bytes");
    wait_until(limit, &what, || bytes_read_by(pid) >= bytes);
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

/// A child process whose stdout and stderr are read as it runs (so a test
/// can wait for what it prints, and a chatty child never blocks on a full
/// pipe), killed and reaped when dropped.
pub struct Proc {
    child: Option<Child>,
    /// How much of stdout [`Proc::wait_stdout`] has looked past.
    seen: usize,
    /// How much of stderr [`Proc::wait_stderr`] has looked past.
    seen_err: usize,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<JoinHandle<()>>,
}

/// `read`, again after EINTR. A blocking socket read with a timeout
/// (SO_RCVTIMEO) is never restarted by the kernel: whatever interrupts
/// it, a stop and continue included, even with no handler (signal(7)),
/// it returns EINTR, which std's `read` hands back. A loaded run met it
/// (net_abuse read EINTR as the server's close); every test helper that
/// reads a socket or pipe by hand goes through this.
pub fn read_some(from: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match from.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Appends everything `from` gives to `into` until end of file.
fn collect(mut from: impl Read + Send + 'static, into: Arc<Mutex<Vec<u8>>>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = read_some(&mut from, &mut buf) {
            if n == 0 {
                break;
            }
            into.lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(&buf[..n]);
        }
    })
}

impl Proc {
    /// Spawns `cmd` with stdin closed and stdout and stderr piped.
    pub fn spawn(cmd: &mut Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn a child process");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let readers = vec![
            collect(child.stdout.take().unwrap(), stdout.clone()),
            collect(child.stderr.take().unwrap(), stderr.clone()),
        ];
        Proc {
            child: Some(child),
            seen: 0,
            seen_err: 0,
            stdout,
            stderr,
            readers,
        }
    }

    /// What it printed on stdout so far.
    pub fn stdout_so_far(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Waits until its stdout shows `needle` again, past what earlier
    /// waits found (at most `limit`); fails the test with what it printed
    /// otherwise, or when it exits first.
    pub fn wait_stdout(&mut self, needle: &str, limit: Duration) {
        self.wait_for(false, needle, limit)
    }

    /// [`Proc::wait_stdout`] for its stderr.
    pub fn wait_stderr(&mut self, needle: &str, limit: Duration) {
        self.wait_for(true, needle, limit)
    }

    /// What it printed on stderr so far.
    pub fn stderr_so_far(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    fn wait_for(&mut self, on_stderr: bool, needle: &str, limit: Duration) {
        let end = Instant::now() + limit;
        let found = |p: &Proc| {
            let (text, seen) = if on_stderr {
                (p.stderr_so_far(), p.seen_err)
            } else {
                (p.stdout_so_far(), p.seen)
            };
            text.get(seen..)
                .and_then(|rest| rest.find(needle))
                .map(|at| seen + at + needle.len())
        };
        let mark = |p: &mut Proc, past: usize| {
            if on_stderr {
                p.seen_err = past;
            } else {
                p.seen = past;
            }
        };
        loop {
            if let Some(past) = found(self) {
                mark(self, past);
                return;
            }
            let exited = self
                .child
                .as_mut()
                .expect("running")
                .try_wait()
                .expect("poll a child")
                .is_some();
            if exited || Instant::now() >= end {
                if exited {
                    // What it printed before it exited is all there is
                    // once the readers are done: look once more.
                    self.readers.drain(..).for_each(|r| {
                        let _ = r.join();
                    });
                    if let Some(past) = found(self) {
                        mark(self, past);
                        return;
                    }
                }
                panic!(
                    "{needle:?} not printed on {} ({}); stdout:\n{}\nstderr:\n{}",
                    if on_stderr { "stderr" } else { "stdout" },
                    if exited { "it exited" } else { "timed out" },
                    self.stdout_so_far(),
                    self.stderr_so_far()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends it `sig`.
    pub fn signal(&self, sig: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.pid() as i32).expect("a pid");
        rustix::process::kill_process(pid, sig).expect("signal the child");
    }

    /// Waits for it to end (at most `limit`), returning its output; kills
    /// it and fails the test when it does not end in time.
    pub fn finish(self, limit: Duration) -> Output {
        self.finish_timed(limit).0
    }

    /// [`Proc::finish`], with how long it took to end from this call.
    pub fn finish_timed(mut self, limit: Duration) -> (Output, Duration) {
        let mut child = self.child.take().expect("not finished yet");
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("poll a child") {
                break Some(status);
            }
            if start.elapsed() >= limit {
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let took = start.elapsed();
        // Where a child that did not end was stuck, read before it is
        // killed: for a hang seen once under load, the only evidence.
        let stuck = status.is_none().then(|| threads_of(child.id()));
        let status = status.unwrap_or_else(|| {
            let _ = child.kill();
            child.wait().expect("reap a child")
        });
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let take = |b: &Arc<Mutex<Vec<u8>>>| std::mem::take(&mut *b.lock().unwrap());
        let out = Output {
            status,
            stdout: take(&self.stdout),
            stderr: take(&self.stderr),
        };
        assert!(
            took < limit,
            "child did not finish within {limit:?}; its threads then:\n{}\nstdout:\n{}\nstderr:\n{}",
            stuck.unwrap_or_default(),
            stdout(&out),
            stderr(&out)
        );
        (out, took)
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Whether it has not exited yet.
    pub fn running(&mut self) -> bool {
        let child = self.child.as_mut().expect("not finished");
        child.try_wait().expect("poll a child").is_none()
    }
}

/// Each thread of process `pid`: its name, state, the kernel function it
/// waits in and, as root, its kernel stack (from `/proc`).
fn threads_of(pid: u32) -> String {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return format!("(no /proc/{pid}/task)");
    };
    let mut out = String::new();
    for task in tasks.flatten() {
        let dir = task.path();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
        let stat = read("stat");
        // The state is the field after the name's closing parenthesis.
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next());
        out.push_str(&format!(
            "{} {} state {} wchan {}\n{}",
            task.file_name().to_string_lossy(),
            read("comm").trim(),
            state.unwrap_or("?"),
            read("wchan"),
            read("stack")
        ));
    }
    out
}

/// `dev` mounted read-only, without journal replay, on `mountpoint` in a
/// mount namespace of its own (`unshare -m`, as a container or a service
/// with a private namespace mounts), by a process that sleeps until it is
/// dropped: invisible in this namespace's mount table. The mount ends with
/// the process.
pub fn mount_in_another_namespace(dev: &str, mountpoint: &Path) -> Proc {
    let script = format!(
        "mount -o ro,noload {dev} {} && echo mounted && exec sleep 600",
        mountpoint.display()
    );
    let mut p = Proc::spawn(
        Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c"])
            .arg(script),
    );
    p.wait_stdout("mounted", Duration::from_secs(30));
    p
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The tolerances of the rig tests (iomark_testrig's bounds), here for
/// every module that says `use crate::common::*`.
pub use iomark_testrig::{
    assert_at_the_throttle, assert_at_the_throttle_but_for_stalls, assert_near, assert_within,
    rig_slack, WindowStart,
};

/// `iomark ARGS` at `nice -10`, which must succeed: the writer that keeps
/// a drive's queue fed, as a cliff rig's claim needs (sustained_rig's
/// header says why).
pub fn iomark_fed_ok(args: &[&str]) -> Output {
    let out = Command::new("nice")
        .args(["-n", "-10", IOMARK])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("nice iomark runs");
    assert!(
        out.status.success(),
        "iomark {args:?} failed: {}",
        stderr(&out)
    );
    out
}

/// A sustained pass's cliff on `rig` of `shape`: cache size within 10% of
/// where the rig's rate fell (itself within 5% of the cache asked for),
/// the rates before and after within 5% of what the device served before
/// and after the fall (each held to its rule's band: testrig's cliff
/// module says why not the rules' own). The device is written by iomark
/// alone, so what it served from its first write is what the pass wrote.
pub fn assert_rig_cliff(
    pass: &Value,
    rig: &iomark_testrig::ThrottleCliff,
    shape: iomark_testrig::CacheShape,
) {
    let c = &pass["cliff"];
    assert!(c.is_object(), "no cliff found: {pass}");
    let fell_at = rig.fell_at()[0];
    assert_near("rig's fall", fell_at as f64, shape.cache as f64, 0.05);
    assert_near(
        "cache size",
        c["at"].as_f64().unwrap(),
        fell_at as f64,
        0.10,
    );
    let served = rig.served().expect("the rig saw its fall");
    assert_at_the_throttle(
        "rig: the device served before the fall",
        served.before,
        shape.fast_bps as f64,
        served.before_window,
        WindowStart::FromIdle,
    );
    assert_near(
        "rate before (against what the device served)",
        c["rate_before"].as_f64().unwrap(),
        served.before,
        0.05,
    );
    served.assert_after_within_the_rule(shape.slow_bps);
    assert_near(
        "rate after (against what the device served)",
        c["rate_after"].as_f64().unwrap(),
        served.after,
        0.05,
    );
}

/// The time a job's device held requests and completed none, from the
/// job's `device_io` in iomark's JSON (zero when it has none).
pub fn device_stalled(job: &Value) -> Duration {
    Duration::from_nanos(job["device_io"]["stalled"].as_u64().unwrap_or(0))
}

/// `iomark disk DIR --profile pts-iops` in a second or so: the
/// procedure's plumbing on a small test file, no preconditioning, 100 ms
/// cells at QD1 of psync, the read shares `mixes` at the block sizes
/// `sizes`, at most `passes` rounds; `extra` flags after.
pub fn quick_pts<'a>(
    dir: &'a str,
    mixes: &'a str,
    sizes: &'a str,
    passes: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    pts_on_file(dir, mixes, sizes, passes, "100ms", extra)
}

/// [`quick_pts`] with cells of `runtime`: a test that lasts, to be watched
/// or stopped while it goes.
pub fn pts_on_file<'a>(
    dir: &'a str,
    mixes: &'a str,
    sizes: &'a str,
    passes: &'a str,
    runtime: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "disk",
        dir,
        "--profile",
        "pts-iops",
        "--size",
        "8M",
        "--precondition",
        "0",
        "--mixes",
        mixes,
        "--sizes",
        sizes,
        "--qd",
        "1",
        "--runtime",
        runtime,
        "--passes",
        passes,
        "--engine",
        "psync",
    ];
    args.extend_from_slice(extra);
    args
}

/// Runs `iomark ARGS...` on a pseudo-terminal of 80x24 (util-linux
/// `script`, the size set with `stty`), so stderr is a terminal as a
/// person's is; what the terminal showed, or why it could not run.
pub fn iomark_on_terminal(args: &[&str]) -> Result<String, String> {
    have_command("script", "util-linux")?;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("typescript");
    let command = std::iter::once(IOMARK)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let line = format!("stty cols 80 rows 24 && exec {command}");
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

/// `text` cut into lines by Python's `str.splitlines()` (python3 itself,
/// reading UTF-8 from stdin): what a consumer that splits lines so, at
/// U+2028, U+0085 or U+001C as at `\n`, reads.
pub fn python_splitlines(text: &str) -> Vec<String> {
    use std::io::Write;
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import sys, json; json.dump(sys.stdin.buffer.read().decode('utf-8').splitlines(), sys.stdout)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(text.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A JSON stream as a `str.splitlines()` reader takes it: every line one
/// JSON object (panics naming `who` and the line otherwise).
pub fn python_json_lines(text: &str, who: &str) -> Vec<Value> {
    let lines = python_splitlines(text);
    assert_eq!(
        lines,
        text.lines().collect::<Vec<_>>(),
        "{who}: splitlines() cuts lines that \\n does not"
    );
    lines
        .iter()
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(v) if v.is_object() => v,
            other => panic!("{who}: not a JSON object ({other:?}): {l:?}"),
        })
        .collect()
}
