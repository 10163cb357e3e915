//! Nothing shared on the hot path: each worker of a job does its I/O
//! through an open file description of its own. One description shared by
//! many threads is one `struct file` whose reference count every `pread`
//! takes and drops, and on 16 CPUs psync fell to half of fio's rate. The
//! descriptions of a running job's test file are told apart with
//! `kcmp(KCMP_FILE)`, which says whether two descriptors share one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::*;

const WORKERS: usize = 4;

/// `kcmp(KCMP_FILE)` from the kernel's uapi (linux/kcmp.h).
const KCMP_FILE: libc::c_long = 0;

/// Whether descriptors `a` and `b` of process `pid` are one open file
/// description; `Err` when the kernel cannot say (no kcmp).
fn same_description(pid: u32, a: i32, b: i32) -> Result<bool, String> {
    // SAFETY: kcmp only reads the two processes' descriptor tables; every
    // argument is a plain integer.
    let r = unsafe {
        libc::syscall(
            libc::SYS_kcmp,
            pid as libc::pid_t,
            pid as libc::pid_t,
            KCMP_FILE,
            a as libc::c_ulong,
            b as libc::c_ulong,
        )
    };
    match r {
        0 => Ok(true),
        1 | 2 => Ok(false),
        _ => Err(format!(
            "kcmp(KCMP_FILE) is not available: {}",
            std::io::Error::last_os_error()
        )),
    }
}

/// Process `pid`'s descriptors of `file`.
fn descriptors_of(pid: u32, file: &Path) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|to| to == file))
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// How many distinct open file descriptions process `pid` has of `file`.
fn descriptions_of(pid: u32, file: &Path) -> Result<usize, String> {
    let fds = descriptors_of(pid, file);
    let mut firsts: Vec<i32> = Vec::new();
    for fd in fds {
        let mut known = false;
        for &first in &firsts {
            if same_description(pid, first, fd)? {
                known = true;
                break;
            }
        }
        if !known {
            firsts.push(fd);
        }
    }
    Ok(firsts.len())
}

fn the_test_file(dir: &Path) -> PathBuf {
    let mut found = None;
    wait_until(Duration::from_secs(30), "a test file", || {
        found = test_files(dir).pop();
        found.is_some()
    });
    found.unwrap()
}

#[test]
fn every_worker_has_an_open_file_description_of_its_own() {
    require!(
        is_root(),
        "kcmp of another process needs root (ptrace access)"
    );
    for engine in ["psync", "io_uring", "mmap-sync"] {
        if engine == "io_uring" {
            require!(iomark_disk::io_uring_available());
        }
        let dir = tempfile::tempdir().unwrap();
        // long_disk_run says psync; the last --engine wins, as in fio.
        let workers = WORKERS.to_string();
        let run = Proc::spawn(long_disk_run(dir.path()).args([
            "--numjobs",
            &workers,
            "--engine",
            engine,
            "--no-store",
        ]));
        let file = the_test_file(dir.path());
        let pid = run.pid();
        // The run's own descriptor, and one per worker once they run; a
        // shared one would leave this at one or two (the O_PATH handle).
        let mut seen = 0;
        let what = format!("{engine}: {WORKERS} workers with a description each");
        wait_until(Duration::from_secs(30), &what, || {
            seen = require_kcmp(descriptions_of(pid, &file));
            seen > WORKERS
        });
        eprintln!("{engine}: {seen} open file descriptions of the test file");
        drop(run);
    }
}

/// The count, or a failure that says kcmp is missing.
fn require_kcmp(r: Result<usize, String>) -> usize {
    r.unwrap_or_else(|why| panic!("{why} (the kernel needs CONFIG_KCMP)"))
}
