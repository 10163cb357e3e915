//! Runs under an MPI launcher (`mpirun -np N iomark disk DIR`, `srun
//! iomark disk DIR`): the layout flags, the refusal when this build has no
//! MPI or the command does not run across ranks, and (feature `mpi`) the
//! disk run across ranks in [`disk`]. See docs/mpi.md.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use iomark_cluster::detect::Launched;
use iomark_model::cluster::Layout;

use crate::disk::DiskArgs;
use crate::exit::Exit;
use crate::mem::MemArgs;

#[cfg(feature = "mpi")]
mod disk;
#[cfg(feature = "mpi")]
mod mem;

/// Every rank's value, from the bytes each sent (`World::all_gather` of
/// its JSON); a rank whose bytes do not read is named.
#[cfg(feature = "mpi")]
fn decode<T: serde::de::DeserializeOwned>(
    all: &[Vec<u8>],
) -> Result<Vec<T>, iomark_cluster::ClusterError> {
    all.iter()
        .enumerate()
        .map(|(rank, b)| {
            serde_json::from_slice(b).map_err(|e| iomark_cluster::ClusterError::Garbled {
                rank: rank as u32,
                reason: e.to_string(),
            })
        })
        .collect()
}

/// How a rank leaves the job with `out`, its outcome. Only rank 0 speaks
/// for the job: the others leave with its code. A failure every rank agreed
/// on ([`iomark_cluster::ClusterError::Rank`], from a collective status) is
/// printed by rank 0 before any rank exits: mpirun ends the whole job as
/// soon as the first rank exits non-zero, and rank 0 killed before it
/// printed would leave the user an exit code without a reason.
#[cfg(feature = "mpi")]
fn leave(world: &iomark_cluster::World, out: anyhow::Result<Exit>) -> anyhow::Result<Exit> {
    let Err(e) = out else { return out };
    let agreed = e.chain().any(|c| {
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

/// How the ranks of an MPI run share the storage (IOR's layouts).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "MPI (mpirun -np N iomark disk DIR)")]
pub struct ClusterArgs {
    /// Under MPI: one shared test file in DIR, a disjoint region of --size
    /// per rank (IOR's segmented layout). The default is a test file per
    /// rank (IOR -F).
    #[arg(long, conflicts_with = "per_rank_path")]
    pub shared_file: bool,

    /// Under MPI: each rank's own directory, file or device, `{rank}`
    /// replaced by its number, e.g. 'DIR/{rank}'.
    #[arg(long, value_name = "TEMPLATE")]
    pub per_rank_path: Option<String>,

    /// Under MPI: stop every rank when the first one finishes its --runtime
    /// or its --size (IOR's stonewalling); each rank reports the bytes it
    /// managed.
    #[arg(long)]
    pub stonewall: bool,
}

// The layout is read only by the MPI run.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
impl ClusterArgs {
    /// The layout asked for.
    pub fn layout(&self) -> Layout {
        if self.shared_file {
            Layout::SharedFile
        } else if self.per_rank_path.is_some() {
            Layout::PerRankPath
        } else {
            Layout::FilePerRank
        }
    }

    /// Rank `rank`'s path under --per-rank-path.
    pub fn path_of(&self, rank: u32) -> Option<PathBuf> {
        self.per_rank_path
            .as_ref()
            .map(|t| PathBuf::from(t.replace("{rank}", &rank.to_string())))
    }
}

impl ClusterArgs {
    /// Refuse the layout flags outside MPI, where they mean nothing.
    pub fn check_alone(&self) -> anyhow::Result<()> {
        if self.shared_file || self.per_rank_path.is_some() {
            bail!(
                "--shared-file and --per-rank-path lay out the ranks of an MPI run: \
                 start it with mpirun -np N iomark disk ... (docs/mpi.md), or leave them out"
            );
        }
        if self.stonewall {
            bail!(
                "--stonewall stops the ranks of an MPI run when the first one finishes: \
                 start it with mpirun -np N iomark disk ... (docs/mpi.md), or leave it out"
            );
        }
        Ok(())
    }
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
