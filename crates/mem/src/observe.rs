//! Hooks for a front end that reports a run as it goes (`iomark mem
//! --json-stream`): where a sweep is, each kernel run as it begins and as
//! it ends, and in between each of its passes measured in this process.
//! The defaults do nothing, so an observer implements only what it
//! reports ([`Quiet`] reports nothing).
//!
//! A kernel run under `--mem-limit` runs in a child process in its own
//! memory cgroup: the child writes each pass to the parent as it ends
//! ([`crate::job::serve_child`]), and the parent tells the observer of it
//! on the thread that runs the job, in order and before the run's end. A
//! child killed mid-run (the OOM killer) leaves its passes heard.

use iomark_model::mem::{MemJobSpec, MemOutcome};
use serde::{Deserialize, Serialize};

/// Which of a job's kernel runs was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The all-in-memory run (heap, no limit) a relative time divides by.
    AllInMemory,
    /// The job's own run: where its backing and limit say.
    Run,
}

impl Role {
    /// `all_in_memory` or `run`.
    pub fn name(self) -> &'static str {
        match self {
            Role::AllInMemory => "all_in_memory",
            Role::Run => "run",
        }
    }
}

/// One kernel run, measured.
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    /// Which run it was.
    pub role: Role,
    /// What ran: kernel and its size, threads, backing, limit.
    pub spec: &'a MemJobSpec,
    /// How it ended, with its result when it completed.
    pub outcome: &'a MemOutcome,
}

/// One pass of a kernel run: STREAM's four kernels once, one stencil
/// sweep, one Himeno Jacobi sweep (its rehearsal not counted among them),
/// timed as the kernel times it. A limited child sends it to its parent as
/// JSON.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pass {
    /// Its number in the kernel run, from 1.
    pub index: u32,
    /// Whether the kernel counts it (STREAM's and the stencil's first
    /// pass warm up and are not counted).
    pub counted: bool,
    /// The bytes it moved as the kernel counts them (STREAM's words per
    /// kernel, the stencil's 16 B per interior point); `None` for Himeno.
    pub bytes: Option<u64>,
    /// How long it took.
    pub seconds: f64,
    /// The floating-point operations it did (the stencil, Himeno).
    pub flops: Option<f64>,
}

/// Receives a run's progress, on the thread that runs the job.
pub trait MemObserver {
    /// A sweep's point `x` (a size in bytes, or a ratio to the limit)
    /// begins; the runs measured until the next are its.
    fn point(&mut self, _x: f64) {}

    /// A kernel run of `spec` begins, in the role given.
    fn begin(&mut self, _role: Role, _spec: &MemJobSpec) {}

    /// A pass of the kernel run under way was measured.
    fn pass(&mut self, _p: &Pass) {}

    /// A kernel run ended.
    fn measured(&mut self, _m: &Measured<'_>) {}
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Quiet;

impl MemObserver for Quiet {}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::sync::atomic::AtomicBool;

    use iomark_model::mem::{Advice, Backing, MemKernelSpec, StreamSpec};

    use super::*;

    /// What an observer heard, in order, as words.
    #[derive(Default)]
    struct Heard(Vec<String>);

    impl MemObserver for Heard {
        fn begin(&mut self, role: Role, _spec: &MemJobSpec) {
            self.0.push(format!("begin {}", role.name()));
        }

        fn pass(&mut self, p: &Pass) {
            assert!(p.seconds > 0.0 && p.bytes > Some(0), "{p:?}");
            let counted = if p.counted { "" } else { " (not counted)" };
            self.0.push(format!("pass {}{counted}", p.index));
        }

        fn measured(&mut self, m: &Measured<'_>) {
            let completed = matches!(m.outcome, MemOutcome::Completed { .. });
            self.0
                .push(format!("end {} completed {completed}", m.role.name()));
        }
    }

    #[test]
    fn each_kernel_run_and_pass_is_heard_as_it_ends_repeats_alternating() {
        let spec = MemJobSpec {
            kernel: MemKernelSpec::Stream(StreamSpec {
                array_len: 20_000,
                ntimes: 2,
                nt_stores: false,
            }),
            threads: 2,
            backing: Backing::Heap,
            advice: Advice::Normal,
            mem_limit: None,
        };
        let stop = AtomicBool::new(false);
        let mut heard = Heard::default();
        let child = || Command::new("false");
        crate::relative::run(&spec, true, 2, None, &stop, child, &mut heard).unwrap();
        let one = |role: &str| {
            [
                format!("begin {role}"),
                "pass 1 (not counted)".to_string(),
                "pass 2".to_string(),
                format!("end {role} completed true"),
            ]
        };
        let pair = [one("all_in_memory"), one("run")].concat();
        let want = [pair.clone(), pair].concat();
        assert_eq!(heard.0, want);
        // Stopped before it starts: nothing was measured, nothing heard.
        let stop = AtomicBool::new(true);
        let mut heard = Heard::default();
        crate::relative::run(&spec, false, 1, None, &stop, child, &mut heard).unwrap();
        assert_eq!(heard.0, Vec::<String>::new());
    }
}
