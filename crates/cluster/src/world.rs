//! The MPI world of a run: every rank's number and host, and the few
//! collective steps iomark takes between phases. Each is a blocking
//! collective every rank calls at the same point; none runs while I/O is
//! measured.

use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;

use crate::ClusterError;

/// MPI, started; finalised when dropped (every rank must drop it).
pub struct World {
    // Dropped last: MPI_Finalize.
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    host: String,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("rank", &self.rank())
            .field("size", &self.size())
            .field("host", &self.host)
            .finish()
    }
}

impl World {
    /// Start MPI (once per process).
    pub fn init() -> Result<World, ClusterError> {
        let universe = mpi::initialize().ok_or(ClusterError::Init)?;
        let world = universe.world();
        let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
        Ok(World {
            _universe: universe,
            world,
            host,
        })
    }

    /// This process's rank.
    pub fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    /// The number of ranks.
    pub fn size(&self) -> u32 {
        self.world.size() as u32
    }

    /// Whether this is rank 0, which prints and stores the run.
    pub fn is_root(&self) -> bool {
        self.world.rank() == 0
    }

    /// The host this rank runs on (MPI's processor name).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Wait until every rank is here.
    pub fn barrier(&self) {
        self.world.barrier();
    }

    /// Every rank's bytes, in rank order, on every rank.
    pub fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        // Open MPI refuses a gather of nothing at all (an empty buffer is
        // no valid address), so each rank sends one byte more than it has.
        let mut framed = Vec::with_capacity(mine.len() + 1);
        framed.push(0u8);
        framed.extend_from_slice(mine);
        let mine = &framed[..];
        let len = mine.len() as Count;
        let mut counts = vec![0 as Count; self.size() as usize];
        self.world.all_gather_into(&len, &mut counts[..]);
        let displs: Vec<Count> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let total: Count = counts.iter().sum();
        let mut all = vec![0u8; total as usize];
        {
            let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(mine, &mut part);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| all[d as usize + 1..(d + c) as usize].to_vec())
            .collect()
    }

    /// Rank 0's bytes on every rank.
    pub fn broadcast(&self, root: &[u8]) -> Vec<u8> {
        let root_rank = self.world.process_at_rank(0);
        let mut len = root.len() as u64;
        root_rank.broadcast_into(&mut len);
        let mut buf = if self.is_root() {
            root.to_vec()
        } else {
            vec![0u8; len as usize]
        };
        if len > 0 {
            root_rank.broadcast_into(&mut buf[..]);
        }
        buf
    }

    /// Every rank's outcome of a step; the first failure (lowest rank) on
    /// every rank, so all stop together with its message.
    pub fn all_ok(&self, mine: Result<(), String>) -> Result<(), ClusterError> {
        let msg = match &mine {
            Ok(()) => Vec::new(),
            Err(m) => format!("E{}\n{m}", self.host).into_bytes(),
        };
        for (rank, bytes) in self.all_gather(&msg).into_iter().enumerate() {
            if bytes.is_empty() {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes[1..]).into_owned();
            let (host, message) = text.split_once('\n').unwrap_or(("?", &text));
            return Err(ClusterError::Rank {
                rank: rank as u32,
                host: host.to_string(),
                message: message.to_string(),
            });
        }
        Ok(())
    }

    /// End every rank of the job at once (MPI_Abort), for a failure only
    /// one rank knows of at a point where the others cannot be told.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}
