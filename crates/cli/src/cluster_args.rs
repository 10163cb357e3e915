//! The MPI layout flags of `iomark disk` (IOR's layouts), read by the
//! disk arguments and checked alone or under a launcher.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use iomark_model::cluster::Layout;

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
