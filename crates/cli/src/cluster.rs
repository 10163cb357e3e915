//! Runs under an MPI launcher (`mpirun -np N iomark disk DIR`, `srun
//! iomark disk DIR`): the layout flags, the refusal when this build has no
//! MPI or the command does not run across ranks, and (feature `mpi`) the
//! disk run across ranks in [`disk`]. See docs/mpi.md.

use anyhow::bail;
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
    // The lifecycle carries the coordinator's error as its own.
    let agreed = e.chain().any(|c| {
        let c = match c.downcast_ref::<iomark_disk::lifecycle::RunError>() {
            Some(iomark_disk::lifecycle::RunError::Coordination(inner)) => &**inner,
            _ => c,
        };
        matches!(
            c.downcast_ref::<iomark_cluster::ClusterError>(),
            Some(iomark_cluster::ClusterError::Rank { .. })
        )
    });
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
        bail!("{}", no_mpi(launched))
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
        bail!("{}", no_mpi(launched))
    }
}

/// A command that runs alone, started by an MPI launcher.
pub fn refuse(command: &str, launched: &Launched) -> anyhow::Result<Exit> {
    if !iomark_cluster::HAS_MPI {
        bail!("{}", no_mpi(launched));
    }
    bail!(
        "iomark {command} runs alone, not across MPI ranks (started under an MPI \
         launcher: {} is set): run it without mpirun or srun; `iomark disk` and \
         `iomark mem stream` run across ranks",
        launched.variable
    )
}

/// Why a build without MPI stops under a launcher.
fn no_mpi(launched: &Launched) -> String {
    let ranks = launched
        .size
        .map_or_else(String::new, |n| format!(" of {n} ranks"));
    format!(
        "this iomark was built without MPI but was started by an MPI launcher{ranks} \
         ({} is set): each rank would run its own benchmark. Build it with \
         `cargo build --release --features mpi` (docs/mpi.md), or run iomark without mpirun or srun",
        launched.variable
    )
}
