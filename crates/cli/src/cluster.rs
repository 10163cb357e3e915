//! Runs under an MPI launcher (`mpirun -np N iomark disk DIR`, `srun
//! iomark disk DIR`): the layout flags, the refusal when this build has no
//! MPI or the command does not run across ranks, and (feature `mpi`) the
//! disk run across ranks in [`disk`]. See docs/mpi.md.

use iomark_cluster::detect::Launched;

use crate::disk_args::DiskArgs;
use crate::exit::Exit;
use crate::mem::MemArgs;

#[cfg(feature = "mpi")]
mod disk;
#[cfg(feature = "mpi")]
mod mem;

/// How a rank leaves the job with `out`, its outcome. Only rank 0 speaks
/// for the job: the others leave with its code. A failure every rank agreed
/// on ([`iomark_cluster::ClusterError::Rank`], from a collective status) is
/// printed by rank 0 before any rank exits: mpirun ends the whole job as
/// soon as the first rank exits non-zero, and rank 0 killed before it
/// printed would leave the user an exit code without a reason.
#[cfg(feature = "mpi")]
fn leave(world: &iomark_cluster::World, out: anyhow::Result<Exit>) -> anyhow::Result<Exit> {
    let Err(e) = out else { return out };
    let agreed = e.chain().any(iomark_cluster::ranks::agreed);
    if !agreed {
        return if world.is_root() {
            Err(e)
        } else {
            Ok(Exit::Error)
        };
    }
    if world.is_root() {
        eprintln!(
            "iomark: {}",
            iomark_text::escape_controls(&format!("{e:#}"))
        );
    }
    world.barrier();
    Ok(Exit::Error)
}

/// `iomark disk` started by an MPI launcher.
pub fn disk(args: DiskArgs, launched: &Launched) -> anyhow::Result<Exit> {
    #[cfg(feature = "mpi")]
    {
        let _ = launched;
        disk::run(args)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = args;
        Err(launched.without_mpi().into())
    }
}

/// `iomark mem stream` started by an MPI launcher.
pub fn mem(args: MemArgs, launched: &Launched) -> anyhow::Result<Exit> {
    #[cfg(feature = "mpi")]
    {
        let _ = launched;
        mem::run(args)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = args;
        Err(launched.without_mpi().into())
    }
}

/// A command that runs alone, started by an MPI launcher.
pub fn refuse(command: &str, launched: &Launched) -> anyhow::Result<Exit> {
    Err(launched.refusal(command).into())
}
