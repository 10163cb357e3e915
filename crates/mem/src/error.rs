use std::io;
use std::path::PathBuf;

/// What can go wrong setting up or running a memory job. Each message names
/// the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemError {
    /// The arrays could not be allocated.
    #[error("cannot allocate {bytes} bytes of memory for the arrays: {source} (use a smaller size or --backing mmap:DIR)")]
    Allocate {
        /// Bytes asked for.
        bytes: u64,
        /// The system's answer.
        source: io::Error,
    },
    /// A backing file operation failed.
    #[error("backing file {path}: {what}: {source}")]
    BackingFile {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The system's answer.
        source: io::Error,
    },
    /// The backing path is not usable.
    #[error("--backing mmap:{path}: {reason}")]
    BadBackingPath {
        /// The path given.
        path: PathBuf,
        /// Why, with the fix.
        reason: String,
    },
    /// `--backing swap:PATH` cannot be set up there.
    #[error("--backing swap:{}: {reason}", path.display())]
    BadSwap {
        /// The file or device.
        path: PathBuf,
        /// Why, with the fix.
        reason: String,
    },
    /// Not enough space for the backing file.
    #[error("not enough space for the {need}-byte backing file on {path}: {free} bytes free (choose another directory or a smaller size)")]
    NoSpace {
        /// The directory.
        path: PathBuf,
        /// Bytes needed.
        need: u64,
        /// Bytes free.
        free: u64,
    },
    /// The memory cgroup of `--mem-limit` could not be made or used.
    #[error(transparent)]
    Cgroup(#[from] iomark_host::cgroup::CgroupError),
    /// The child process could not be started or talked to.
    #[error("limited child process: {what}: {source}")]
    Child {
        /// What was being done.
        what: &'static str,
        /// The system's answer.
        source: io::Error,
    },
    /// The child process ended without a result.
    #[error("limited child process failed ({status}){stderr}")]
    ChildFailed {
        /// How it ended.
        status: String,
        /// The last lines it wrote to stderr, prefixed with ": ".
        stderr: String,
    },
    /// The child wrote a line that is not its protocol's
    /// ([`crate::job::ChildLine`]).
    #[error("limited child process wrote a line iomark cannot read: {0}")]
    ChildLine(String),
    /// The child reported an error.
    #[error("{0}")]
    InChild(String),
    /// A job parameter is out of range.
    #[error("{0}")]
    BadSpec(String),
    /// The kernel refused a thread (a pids cgroup limit, or out of memory).
    #[error(
        "cannot start thread {index} of {total}: {reason}: lower --threads or raise the pids limit"
    )]
    ThreadStart {
        /// The thread, counted from 1.
        index: usize,
        /// Threads asked for.
        total: usize,
        /// The system's answer; not a `source`, which the message already
        /// holds (an error chain would print it twice).
        reason: io::Error,
    },
    /// More threads than [`crate::threads::max_threads`].
    #[error("--threads {asked} is more than {max}, the most this machine allows ({per_cpu} per CPU, at most {cap}): use at most {max}")]
    TooManyThreads {
        /// Threads asked for.
        asked: u32,
        /// The bound here.
        max: u32,
        /// Threads allowed per CPU.
        per_cpu: u32,
        /// The bound whatever the CPUs.
        cap: u32,
    },
    /// The arrays need more memory than the machine has available.
    #[error("the arrays need {need} of memory but {available} is available ({what}): use a smaller {flag}{hint}")]
    TooBig {
        /// What the arrays need, as text (it may exceed any byte count).
        need: String,
        /// What is available, as text.
        available: String,
        /// Where the figure comes from.
        what: String,
        /// The flag that sets the size.
        flag: &'static str,
        /// Another way out, prefixed with " or ".
        hint: &'static str,
    },
    /// The backing file was truncated while it was mapped.
    #[error("the file shrank under the mapping: {} was truncated by another process while it was mapped, so the run's data is void (keep other programs off the backing file)", path.display())]
    FileShrank {
        /// The backing file.
        path: PathBuf,
    },
}
