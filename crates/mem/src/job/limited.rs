//! Both sides of a kernel run under a memory limit (the steps are in
//! [`super`]'s comment): the child's [`serve_child`], and the parent's
//! [`run_limited`], which reads the child's lines as they come and tells
//! its observer of each pass on the thread that runs the job.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use iomark_host::cgroup::{self, MemCgroup};
use iomark_model::mem::{Backing, CgroupUsage, MemHost, MemJobSpec, MemOutcome};
use iomark_model::units::Bytes;

use super::protocol::{write_line, ChildLine, PassWriter};
use super::{run_observed, CHILD_CGROUP_ENV, CHILD_JOB_ENV, CHILD_PARENT_ENV, OOM_NO_SWAP};
use crate::observe::MemObserver;
use crate::MemError;

const OOM_WITH_SWAP: &str =
    "killed by the out-of-memory killer: data larger than the memory limit plus the free swap";

/// How often the parent looks whether the child ended or a stop came,
/// when no line arrives sooner.
const POLL: Duration = Duration::from_millis(50);

/// The child's side: join the cgroup, run, write each pass and then the
/// outcome as JSON lines on stdout ([`ChildLine`]). Errors are written the
/// same way, so the parent can tell a failed run from a killed one.
pub fn serve_child(stop: &AtomicBool) -> Result<(), MemError> {
    die_with_parent()?;
    let job = std::env::var(CHILD_JOB_ENV).map_err(|_| {
        MemError::BadSpec(format!(
            "{CHILD_JOB_ENV} is not set: this subcommand is internal to iomark"
        ))
    })?;
    let spec: MemJobSpec = serde_json::from_str(&job)
        .map_err(|e| MemError::BadSpec(format!("{CHILD_JOB_ENV}: {e}")))?;
    let outcome = (|| {
        if let Some(procs) = std::env::var_os(CHILD_CGROUP_ENV) {
            cgroup::join(&PathBuf::from(procs))?;
        }
        run_observed(&spec, stop, &mut PassWriter)
    })()
    .map_err(|e| e.to_string());
    write_line(&ChildLine::Outcome(outcome)).map_err(|source| MemError::Child {
        what: "write its outcome",
        source,
    })
}

/// The child is killed when its parent dies, however it dies (kill -9
/// included): a child left running would hold its memory group, its
/// backing file and a CPU to the end of its job. A parent that died before
/// the request is seen through `getppid` no longer being it.
fn die_with_parent() -> Result<(), MemError> {
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(|e| MemError::BadSpec(format!("cannot ask to die with the parent: {e}")))?;
    let parent = std::env::var(CHILD_PARENT_ENV)
        .ok()
        .and_then(|p| p.parse::<i32>().ok());
    let now = rustix::process::getppid().map(|p| p.as_raw_nonzero().get());
    if parent.is_some() && parent != now {
        return Err(MemError::BadSpec(
            "the parent iomark is gone: nothing to run for".into(),
        ));
    }
    Ok(())
}

/// Removes the backing file a killed child could not remove.
struct Leftover(Option<PathBuf>);

impl Drop for Leftover {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Run the job in `child` (a command that ends up in [`serve_child`]) inside
/// a memory cgroup of `limit` bytes, allowed `swap` bytes of swap beyond it
/// when given (a swap backing's area), telling `obs` of each pass as the
/// child reports it (the run's begin and end are the caller's to tell).
/// `stop` raised here (SIGTERM or SIGHUP reach only this process) is passed
/// on to the child as SIGINT, so it stops as it would on Ctrl-C.
pub fn run_limited(
    spec: &MemJobSpec,
    limit: Bytes,
    host: &MemHost,
    swap: Option<Bytes>,
    mut child: Command,
    stop: &AtomicBool,
    obs: &mut dyn MemObserver,
) -> Result<(MemOutcome, CgroupUsage), MemError> {
    let _leftover = Leftover(match &spec.backing {
        Backing::Mmap { path, .. } => Some(PathBuf::from(path)),
        Backing::Heap | Backing::Swap { .. } => None,
    });
    let group = MemCgroup::create(limit)?;
    if let Some(swap) = swap {
        group.allow_swap(swap)?;
    }
    let job = serde_json::to_string(spec).expect("specs serialise");
    let started = child
        .env(CHILD_JOB_ENV, job)
        .env(CHILD_CGROUP_ENV, group.procs_path())
        .env(CHILD_PARENT_ENV, std::process::id().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| MemError::Child {
            what: "start",
            source,
        })?;
    let end = watch_child(started, stop, obs)?;
    let usage = group.usage();
    let oom = if host.swap.total.get() == 0 && swap.is_none() {
        OOM_NO_SWAP
    } else {
        OOM_WITH_SWAP
    };
    let stopped = stop.load(Ordering::Relaxed);
    judge(end, oom, stopped, usage.oom_kills > 0).map(|o| (o, usage))
}

/// The run's outcome from how the child ended: the one it reported, else
/// interrupted when it died of the SIGINT passed on (`stopped`), else
/// `oom` when it died of SIGKILL and the group counted an OOM kill
/// (`oom_killed`). A line that broke the protocol is an error, except the
/// last one cut off by a signal.
fn judge(
    end: ChildEnd,
    oom: &str,
    stopped: bool,
    oom_killed: bool,
) -> Result<MemOutcome, MemError> {
    let killed_by = end.status.signal();
    if let Some(bad) = end.unreadable {
        // A kill can cut the line being written; nothing else excuses one.
        if !(bad.cut && killed_by.is_some()) {
            return Err(MemError::ChildLine(bad.why));
        }
    }
    if let Some(reported) = end.outcome {
        return reported.map_err(MemError::InChild);
    }
    // A stop passed on before the child installed its handlers ends it.
    if killed_by == Some(rustix::process::Signal::INT.as_raw()) && stopped {
        return Ok(MemOutcome::Interrupted);
    }
    if killed_by == Some(rustix::process::Signal::KILL.as_raw()) && oom_killed {
        return Ok(MemOutcome::OomKilled {
            message: oom.to_string(),
        });
    }
    let err = String::from_utf8_lossy(&end.stderr);
    let tail: Vec<&str> = err.lines().rev().take(3).collect();
    Err(MemError::ChildFailed {
        status: end.status.to_string(),
        stderr: if tail.is_empty() {
            String::new()
        } else {
            format!(
                ": {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
            )
        },
    })
}

/// A line of the child's stdout that is no [`ChildLine`].
#[derive(Debug)]
struct Unreadable {
    /// The line, quoted, and what is wrong with it.
    why: String,
    /// Whether it was the last, cut off before its newline.
    cut: bool,
}

/// What the reader of the child's stdout hands the waiting thread.
enum Heard {
    Line(ChildLine),
    Unreadable(Unreadable),
}

/// How the child ended and what it said.
#[derive(Debug)]
struct ChildEnd {
    status: ExitStatus,
    /// Its outcome line, if it wrote one.
    outcome: Option<Result<MemOutcome, String>>,
    /// The first line that broke the protocol, if any.
    unreadable: Option<Unreadable>,
    stderr: Vec<u8>,
}

/// The lines heard so far, passes handed to the observer as they come.
struct Listener<'a> {
    obs: &'a mut dyn MemObserver,
    outcome: Option<Result<MemOutcome, String>>,
    unreadable: Option<Unreadable>,
}

impl Listener<'_> {
    fn hear(&mut self, heard: Heard) {
        let broken = |why: &str| Unreadable {
            why: why.to_string(),
            cut: false,
        };
        let bad = match heard {
            Heard::Line(ChildLine::Pass(p)) if self.outcome.is_none() => {
                self.obs.pass(&p);
                return;
            }
            Heard::Line(ChildLine::Pass(_)) => broken("a pass after the outcome line"),
            Heard::Line(ChildLine::Outcome(_)) if self.outcome.is_some() => {
                broken("a second outcome line")
            }
            Heard::Line(ChildLine::Outcome(o)) => {
                self.outcome = Some(o);
                return;
            }
            Heard::Unreadable(u) => u,
        };
        self.unreadable.get_or_insert(bad);
    }
}

/// Read the child's stdout line by line, sending each as it comes, to the
/// end of the pipe or of the listener.
fn read_lines(pipe: ChildStdout, to: &mpsc::Sender<Heard>) {
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        let heard = match reader.read_until(b'\n', &mut line) {
            Ok(0) => return,
            Ok(_) => {
                let cut = line.last() != Some(&b'\n');
                if !cut {
                    line.pop();
                }
                match ChildLine::parse(&line) {
                    Ok(l) => Heard::Line(l),
                    Err(why) => Heard::Unreadable(Unreadable { why, cut }),
                }
            }
            Err(e) => {
                let why = format!("its output could not be read: {e}");
                let _ = to.send(Heard::Unreadable(Unreadable { why, cut: false }));
                return;
            }
        };
        if to.send(heard).is_err() {
            return;
        }
    }
}

/// Wait for the limited child, telling `obs` of each pass it reports as
/// it comes, and pass `stop` on to it. Never returns before the child has
/// ended and its stdout has been read to the end.
fn watch_child(
    mut proc: Child,
    stop: &AtomicBool,
    obs: &mut dyn MemObserver,
) -> Result<ChildEnd, MemError> {
    fn drain(pipe: Option<ChildStderr>) -> Vec<u8> {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    }
    let (out, err) = (proc.stdout.take(), proc.stderr.take());
    let pid = rustix::process::Pid::from_raw(proc.id() as i32);
    let (tx, rx) = mpsc::channel();
    let mut heard = Listener {
        obs,
        outcome: None,
        unreadable: None,
    };
    std::thread::scope(|s| {
        // The pipes are read while the child runs, so a chatty child never
        // blocks on a full pipe, and each pass is heard as it ends.
        let reader = std::thread::Builder::new()
            .name("iomark-child-out".into())
            .spawn_scoped(s, move || {
                if let Some(out) = out {
                    read_lines(out, &tx);
                }
            })
            .and_then(|_| {
                std::thread::Builder::new()
                    .name("iomark-child-err".into())
                    .spawn_scoped(s, move || drain(err))
            });
        let err = match reader {
            Ok(e) => e,
            Err(source) => {
                // Ending the child closes its pipes, which ends any reader.
                let _ = proc.kill();
                let _ = proc.wait();
                return Err(MemError::Child {
                    what: "start a thread to read its output",
                    source,
                });
            }
        };
        let mut open = true;
        let mut passed_on = false;
        let status = loop {
            // Waiting for a line is the pause between looks at the child.
            if open {
                match rx.recv_timeout(POLL) {
                    Ok(h) => heard.hear(h),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => open = false,
                }
            } else {
                std::thread::sleep(POLL);
            }
            match proc.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(source) => {
                    let _ = proc.kill();
                    let _ = proc.wait();
                    return Err(MemError::Child {
                        what: "wait",
                        source,
                    });
                }
            }
            if !passed_on && stop.load(Ordering::Relaxed) {
                if let Some(pid) = pid {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
                }
                passed_on = true;
            }
        };
        // What the child wrote before it ended, to the end of its pipe.
        for h in rx.iter() {
            heard.hear(h);
        }
        Ok(ChildEnd {
            status,
            outcome: heard.outcome,
            unreadable: heard.unreadable,
            stderr: err.join().unwrap_or_default(),
        })
    })
}

#[cfg(test)]
#[path = "limited_tests.rs"]
mod tests;
