//! The MPI world of a run: every rank's number and host, and the few
//! collective steps iomark takes between phases. Each is a blocking
//! collective every rank calls at the same point; none runs while I/O is
//! measured. While it is, the ranks only look, between looks at their
//! progress, for one-byte notices from each other ([`Notices`]), and post
//! their seconds to rank 0 ([`World::post_to_root`]), which takes them
//! there ([`World::take_posted`]): messages that wait for nobody.

use mpi::datatype::PartitionMut;
use mpi::point_to_point::MatchedReceiveVec;
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

    /// Send `bytes` to rank 0 without waiting for it to take them (a
    /// rank's second of its test, `ranks::seconds`): the send is in flight
    /// until [`Posted::done`] says it completed.
    pub(crate) fn post_to_root(&self, bytes: Vec<u8>) -> Posted {
        let buf: *mut [u8] = Box::into_raw(bytes.into_boxed_slice());
        // SAFETY: `buf` was made by Box::into_raw just above: valid, and
        // nothing else points at it. MPI only reads through this borrow,
        // and the box is rebuilt only once MPI says the send completed
        // (Posted::done), or never (Posted's Drop leaks it).
        let shared: &'static [u8] = unsafe { &*buf };
        let send =
            self.world
                .process_at_rank(0)
                .immediate_send_with_tag(StaticScope, shared, POSTED_TAG);
        Posted {
            send: Some(send),
            buf,
        }
    }

    /// Bytes another rank [posted](World::post_to_root) to this one, if
    /// some have come: the sender and its bytes (a look, never a wait).
    pub(crate) fn take_posted(&self) -> Option<(u32, Vec<u8>)> {
        let (message, status) = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(POSTED_TAG)?;
        let from = status.source_rank() as u32;
        let (bytes, _) = (message, status).matched_receive_vec::<u8>();
        Some((from, bytes))
    }

    /// Start listening for the other ranks' notices (a finish under
    /// `--stonewall`, a failure); every rank calls it after the common
    /// start.
    pub fn notices(&self) -> Notices<'_> {
        Notices {
            world: self,
            finished: Watch::listen(self, Notice::Finished),
            failed: Watch::listen(self, Notice::Failed),
        }
    }
}

/// The tag of the bytes a rank posts to rank 0 while it runs.
const POSTED_TAG: mpi::Tag = 0x5709;

/// Bytes on their way to rank 0 ([`World::post_to_root`]): MPI reads them
/// from the buffer until the send completes, so the buffer is held here
/// until then.
pub(crate) struct Posted {
    send: Option<Request<'static, [u8]>>,
    buf: *mut [u8],
}

impl Posted {
    /// Whether the send completed, its buffer then freed (a look, never a
    /// wait).
    pub(crate) fn done(&mut self) -> bool {
        let Some(send) = self.send.take() else {
            return true;
        };
        match send.test() {
            Ok(_) => {
                // SAFETY: MPI completed the send, so it reads the buffer no
                // more, and the borrow it was given went with the request.
                // `buf` came from Box::into_raw and is rebuilt here once:
                // `send` is gone from now on.
                drop(unsafe { Box::from_raw(self.buf) });
                true
            }
            Err(send) => {
                self.send = Some(send);
                false
            }
        }
    }
}

/// A send still in flight (a stop signal: the job ends without waiting
/// for rank 0) keeps its buffer, leaked: MPI may still read it.
impl Drop for Posted {
    fn drop(&mut self) {
        if let Some(send) = self.send.take() {
            std::mem::forget(send);
        }
    }
}

/// What one rank tells every other while they run, without waiting for
/// them: each kind is a one-byte message of its own tag, whose arrival is
/// the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Notice {
    /// "I have finished my time or size: stop" (IOR's stonewalling).
    Finished,
    /// "My job failed: stop, the run is over" (its message follows in the
    /// status every rank exchanges after the run).
    Failed,
}

impl Notice {
    fn tag(self) -> mpi::Tag {
        match self {
            Notice::Finished => 0x5707,
            Notice::Failed => 0x5708,
        }
    }

    /// Its bit in the after-run exchange of who sent what.
    fn bit(self) -> u8 {
        match self {
            Notice::Finished => 1,
            Notice::Failed => 2,
        }
    }
}

/// The byte every notice carries.
static NOTICE: [u8; 1] = [1];

/// The notices between running ranks. A rank looks for them from the
/// thread that runs its job, between looks at its progress
/// ([`Notices::peer_finished`], [`Notices::peer_failed`]), sends its own
/// ([`Notices::finished`] under `--stonewall`, [`Notices::failed`] when its
/// job fails), and after the run every rank takes the notices meant for it
/// ([`Notices::settle`], a collective), so none is left in flight.
pub struct Notices<'w> {
    world: &'w World,
    finished: Watch,
    failed: Watch,
}

impl std::fmt::Debug for Notices<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notices")
            .field("finished", &self.finished)
            .field("failed", &self.failed)
            .finish()
    }
}

/// One kind of notice: the receive waiting for the first one, and the ones
/// this rank sent.
struct Watch {
    kind: Notice,
    recv: Option<Request<'static, [u8]>>,
    sent: Vec<Request<'static, [u8]>>,
    heard: bool,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("kind", &self.kind)
            .field("heard", &self.heard)
            .field("sent", &!self.sent.is_empty())
            .finish()
    }
}

impl Watch {
    fn listen(world: &World, kind: Notice) -> Watch {
        // The receive may outlive any borrow here: its one byte is leaked,
        // once per kind and run.
        let buf: &'static mut [u8; 1] = Box::leak(Box::new([0u8; 1]));
        let recv = world.world.any_process().immediate_receive_into_with_tag(
            StaticScope,
            &mut buf[..],
            kind.tag(),
        );
        Watch {
            kind,
            recv: Some(recv),
            sent: Vec::new(),
            heard: false,
        }
    }

    /// Whether a notice has come (a look, never a wait).
    fn heard(&mut self) -> bool {
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

    /// Tell every other rank, once.
    fn send(&mut self, world: &World) {
        if !self.sent.is_empty() {
            return;
        }
        let me = world.world.rank();
        for r in (0..world.world.size()).filter(|&r| r != me) {
            let send = world.world.process_at_rank(r).immediate_send_with_tag(
                StaticScope,
                &NOTICE[..],
                self.kind.tag(),
            );
            self.sent.push(send);
        }
    }

    /// Take the `expected` notices the other ranks sent, and finish this
    /// rank's own sends.
    fn settle(&mut self, world: &World, expected: usize) {
        let mut taken = 0;
        if let Some(r) = self.recv.take() {
            if expected == 0 {
                // Nobody sent this rank anything: meet its receive with a
                // notice of its own.
                let own = world.world.this_process().immediate_send_with_tag(
                    StaticScope,
                    &NOTICE[..],
                    self.kind.tag(),
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
            world
                .world
                .any_process()
                .receive_into_with_tag(&mut buf[..], self.kind.tag());
        }
        for s in self.sent.drain(..) {
            s.wait();
        }
    }
}

/// Leaving without [`Notices::settle`] (a signal: a peer may be gone, so
/// no collective): the pending receive is cancelled, sends still in flight
/// are left to MPI.
impl Drop for Watch {
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

impl Notices<'_> {
    /// Whether another rank has finished its time or size.
    pub fn peer_finished(&mut self) -> bool {
        self.finished.heard()
    }

    /// Whether another rank's job has failed.
    pub fn peer_failed(&mut self) -> bool {
        self.failed.heard()
    }

    /// This rank's job ended (`--stonewall`): tell every other rank, once,
    /// unless one already told it.
    pub fn finished(&mut self) {
        if !self.finished.heard() {
            self.finished.send(self.world);
        }
    }

    /// This rank's job failed: tell every other rank, once, so that they
    /// stop now rather than at the end of their own time.
    pub fn failed(&mut self) {
        self.failed.send(self.world);
    }

    /// After the run, on every rank: take every notice sent to this rank
    /// and finish this rank's own, so nothing is in flight after it.
    /// Returns whether any rank finished and sent its notice.
    pub fn settle(mut self) -> bool {
        let me = self.world.rank() as usize;
        let mine = [&self.finished, &self.failed]
            .into_iter()
            .filter(|w| !w.sent.is_empty())
            .fold(0u8, |bits, w| bits | w.kind.bit());
        let senders = self.world.all_gather(&[mine]);
        let sent = |r: usize, k: Notice| senders[r].first().is_some_and(|b| b & k.bit() != 0);
        let any_finished = (0..senders.len()).any(|r| sent(r, Notice::Finished));
        for watch in [&mut self.finished, &mut self.failed] {
            let expected = (0..senders.len())
                .filter(|&r| r != me && sent(r, watch.kind))
                .count();
            watch.settle(self.world, expected);
        }
        any_finished
    }
}
