//! The MPI world of a run: every rank's number and host, and the few
//! collective steps iomark takes between phases. Each is a blocking
//! collective every rank calls at the same point; none runs while I/O is
//! measured.

use mpi::datatype::PartitionMut;
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;
use std::sync::atomic::{AtomicBool, Ordering};

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

    /// Wait until every rank is here, unless `stop` rises first (a signal:
    /// mpirun is ending the job, a peer may be gone): false then, and this
    /// rank must take no further collective step. The wait is a
    /// non-blocking barrier polled every 100 µs, so a signal is seen while
    /// waiting for a dead peer; an abandoned barrier's request is leaked,
    /// the job is ending.
    pub fn barrier_unless(&self, stop: &AtomicBool) -> bool {
        let mut req = self.world.immediate_barrier();
        loop {
            match req.test() {
                Ok(_) => return true,
                Err(r) => req = r,
            }
            if stop.load(Ordering::Relaxed) {
                std::mem::forget(req);
                return false;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
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

    /// Start listening for the first rank to finish (`--stonewall`); every
    /// rank calls it after the common start.
    pub fn stonewall(&self) -> Stonewall<'_> {
        // The receive outlives this call: its one byte is leaked, once per
        // run.
        let buf: &'static mut [u8; 1] = Box::leak(Box::new([0u8; 1]));
        let recv = self.world.any_process().immediate_receive_into_with_tag(
            StaticScope,
            &mut buf[..],
            STONEWALL_TAG,
        );
        Stonewall {
            world: self,
            recv: Some(recv),
            sent: Vec::new(),
            heard: false,
        }
    }
}

/// The tag of a stonewall notice: "I have finished, stop".
const STONEWALL_TAG: mpi::Tag = 0x5707;

/// What a notice carries (its arrival is the message).
static NOTICE: [u8; 1] = [1];

/// IOR's stonewalling: the first rank to finish its time or its size tells
/// every other rank, which stop where they are. A rank polls for the notice
/// from the thread that runs its job ([`Stonewall::heard`], between looks at
/// its progress), sends its own when its job ends ([`Stonewall::finished`]),
/// and after the run every rank takes the notices meant for it
/// ([`Stonewall::settle`], a collective), so none is left in flight.
pub struct Stonewall<'w> {
    world: &'w World,
    recv: Option<Request<'static, [u8]>>,
    sent: Vec<Request<'static, [u8]>>,
    heard: bool,
}

impl std::fmt::Debug for Stonewall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stonewall")
            .field("heard", &self.heard)
            .field("sent", &!self.sent.is_empty())
            .finish()
    }
}

impl Stonewall<'_> {
    /// Whether another rank has finished (a look, never a wait).
    pub fn heard(&mut self) -> bool {
        if !self.heard {
            if let Some(r) = self.recv.take() {
                match r.test() {
                    Ok(_) => self.heard = true,
                    Err(r) => self.recv = Some(r),
                }
            }
        }
        self.heard
    }

    /// This rank's job ended: tell every other rank, once, unless one
    /// already told it.
    pub fn finished(&mut self) {
        if self.heard() || !self.sent.is_empty() {
            return;
        }
        let me = self.world.world.rank();
        for r in (0..self.world.world.size()).filter(|&r| r != me) {
            let send = self.world.world.process_at_rank(r).immediate_send_with_tag(
                StaticScope,
                &NOTICE[..],
                STONEWALL_TAG,
            );
            self.sent.push(send);
        }
    }

    /// After the run, on every rank: take every notice sent to this rank
    /// and finish this rank's own, so nothing is in flight after it.
    /// Returns whether any rank finished and sent its notice.
    pub fn settle(mut self) -> bool {
        let me = self.world.rank() as usize;
        let senders = self.world.all_gather(&[u8::from(!self.sent.is_empty())]);
        let expected = senders
            .iter()
            .enumerate()
            .filter(|&(r, s)| r != me && s.first() == Some(&1))
            .count();
        let any = senders.iter().any(|s| s.first() == Some(&1));
        let mut taken = 0;
        if let Some(r) = self.recv.take() {
            if expected == 0 {
                // Nobody sent this rank anything: meet its receive with a
                // notice of its own.
                let own = self.world.world.this_process().immediate_send_with_tag(
                    StaticScope,
                    &NOTICE[..],
                    STONEWALL_TAG,
                );
                r.wait();
                own.wait();
            } else {
                r.wait();
                taken = 1;
            }
        } else {
            taken = 1;
        }
        let mut buf = [0u8; 1];
        for _ in taken..expected {
            self.world
                .world
                .any_process()
                .receive_into_with_tag(&mut buf[..], STONEWALL_TAG);
        }
        for s in self.sent.drain(..) {
            s.wait();
        }
        any
    }
}

/// Leaving without [`Stonewall::settle`] (a signal, a failed step: a peer
/// may be gone, so no collective): the pending receive is cancelled, sends
/// still in flight are left to MPI.
impl Drop for Stonewall<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.recv.take() {
            r.cancel();
            r.wait();
        }
        for s in self.sent.drain(..) {
            std::mem::forget(s);
        }
    }
}
