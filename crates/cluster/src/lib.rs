//! Many ranks as one benchmark (`mpirun -np N iomark disk DIR`).
//!
//! * [`detect`]: whether the process was started by an MPI launcher
//!   (mpirun, srun), read from the environment the launcher sets; a build
//!   without MPI uses it to refuse instead of running N separate
//!   benchmarks.
//! * [`merge`]: the ranks' results as one: bytes and I/Os summed,
//!   latency histograms merged bucket by bucket, per-second samples
//!   aligned, the aggregate rate over the first rank's start to the last
//!   rank's end (as IOR computes it).
//! * `World` (feature `mpi`): the few collective steps between phases:
//!   barrier, everyone's status, gathering each rank's result; and while
//!   the ranks run, the messages that wait for nobody: notices between
//!   them, each rank's seconds posted to rank 0. The ranks run the
//!   single-machine engine between them; nothing here is on the I/O path.
//! * `ranks` (feature `mpi`): a disk run's coordinator across ranks,
//!   the lifecycle's seam (`iomark_disk::lifecycle::Coordinator`) with the
//!   collectives in one documented sequence, and STREAM in step across
//!   ranks (`ranks::mem`), its results merged on rank 0.

pub mod detect;
pub mod merge;
#[cfg(feature = "mpi")]
pub mod ranks;
#[cfg(feature = "mpi")]
mod world;

#[cfg(feature = "mpi")]
pub use world::{Notices, World};

/// Whether this build can run across ranks.
pub const HAS_MPI: bool = cfg!(feature = "mpi");

/// What can go wrong between ranks.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// MPI could not be started (or was started twice).
    #[error("MPI could not be initialised: is this started by mpirun or srun with a working MPI?")]
    Init,
    /// A rank failed; the others stop with its message.
    #[error("rank {rank} ({host}): {message}")]
    Rank {
        /// The failing rank.
        rank: u32,
        /// Its host.
        host: String,
        /// What it said.
        message: String,
    },
    /// A rank's result could not be read back.
    #[error("rank {rank} sent a result that cannot be read: {reason}")]
    Garbled {
        /// The rank.
        rank: u32,
        /// Why.
        reason: String,
    },
    /// A build without MPI started by an MPI launcher: each rank would
    /// run its own benchmark.
    #[error(
        "this iomark was built without MPI but was started by an MPI launcher{} \
         ({variable} is set): each rank would run its own benchmark. Build it with \
         `cargo build --release --features mpi` (docs/mpi.md), or run iomark without mpirun or srun",
        size.map_or_else(String::new, |n| format!(" of {n} ranks"))
    )]
    NoMpi {
        /// The launcher's variable that gave it away.
        variable: &'static str,
        /// The number of ranks, when the launcher says.
        size: Option<u32>,
    },
    /// A command that runs alone, started by an MPI launcher.
    #[error(
        "iomark {command} runs alone, not across MPI ranks (started under an MPI \
         launcher: {variable} is set): run it without mpirun or srun; `iomark disk` and \
         `iomark mem stream` run across ranks"
    )]
    RunsAlone {
        /// The command, as typed after `iomark`.
        command: String,
        /// The launcher's variable that gave it away.
        variable: &'static str,
    },
    /// The ranks' STREAM results do not merge.
    #[error("the ranks ran different kernels: run every rank with the same arguments")]
    DifferentKernels,
}
