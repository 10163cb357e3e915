//! Hooks for a front end that reports a run as it goes (`iomark mem
//! --json-stream`): every kernel run measured, as soon as it ends, and
//! where a sweep is. The defaults do nothing, so an observer implements
//! only what it reports ([`Quiet`] reports nothing).

use iomark_model::mem::{MemJobSpec, MemOutcome};

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

/// Receives a run's progress, on the thread that runs the job.
pub trait MemObserver {
    /// A sweep's point `x` (a size in bytes, or a ratio to the limit)
    /// begins; the runs measured until the next are its.
    fn point(&mut self, _x: f64) {}

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

    /// What an observer heard, in order.
    #[derive(Default)]
    struct Heard(Vec<(Role, bool)>);

    impl MemObserver for Heard {
        fn measured(&mut self, m: &Measured<'_>) {
            let completed = matches!(m.outcome, MemOutcome::Completed { .. });
            self.0.push((m.role, completed));
        }
    }

    #[test]
    fn each_kernel_run_is_heard_as_it_ends_repeats_alternating() {
        let spec = MemJobSpec {
            kernel: MemKernelSpec::Stream(StreamSpec {
                array_len: 20_000,
                ntimes: 2,
                nt_stores: false,
            }),
            threads: 1,
            backing: Backing::Heap,
            advice: Advice::Normal,
            mem_limit: None,
        };
        let stop = AtomicBool::new(false);
        let mut heard = Heard::default();
        let child = || Command::new("false");
        crate::relative::run(&spec, true, 2, None, &stop, child, &mut heard).unwrap();
        assert_eq!(
            heard.0,
            [
                (Role::AllInMemory, true),
                (Role::Run, true),
                (Role::AllInMemory, true),
                (Role::Run, true)
            ]
        );
        // Stopped before it starts: nothing was measured, nothing heard.
        let stop = AtomicBool::new(true);
        let mut heard = Heard::default();
        crate::relative::run(&spec, false, 1, None, &stop, child, &mut heard).unwrap();
        assert!(heard.0.is_empty());
    }
}
