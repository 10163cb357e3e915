//! The job's seconds as it runs: every rank's share of each second of a
//! test summed on rank 0, which stores them as the run goes (the live
//! view, `iomark serve`).
//!
//! Each rank cuts its own seconds (iomark-disk's runner); a second is
//! named by its test (the job's place among the jobs every rank starts in
//! the same order) and its place in the test. The ranks start each test
//! together (a barrier before a profile's job, or the run's common start),
//! so the i-th second of each rank is the same second of the job to within
//! that barrier's skew. While a job runs there is no collective: a rank
//! other than 0 posts each second to rank 0 without waiting
//! ([`World::post_to_root`]), from the thread that makes every other MPI
//! call (the one that runs the job and calls the coordinator), and rank 0
//! takes what came at each look at its progress (ten a second). Rank 0
//! stores a second once every rank's share of it came, in order; after a
//! job (at a collective every rank reaches: a profile's job merged, the
//! run gathered) it takes every share the ranks sent, which they count in
//! that collective, and stores what is left with what it has: a rank that
//! had stopped (`--stonewall`) adds nothing to the seconds it did not run.
//! A stop signal (a rank died) ends that wait: the seconds are stored with
//! the shares that came, the dead rank's left out.
//!
//! The sum: bytes and I/Os added; latency from the ranks' histograms
//! added bucket by bucket ([`LatencyCounts::add`]), so mean and
//! quantiles are those of every I/O of the second, as one process counting
//! them all would give (not an average of the ranks' quantiles); the
//! second's window is the ranks' widest (its length and end the longest
//! and latest), so a rate is the job's over the time its ranks took.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use iomark_disk::LatencyCounts;
use iomark_model::live::LiveSample;
use serde::{Deserialize, Serialize};

use crate::world::Posted;
use crate::World;

/// Which second of the run: the job's place among the jobs every rank
/// starts, and the second's place in it.
type SecondKey = (u32, u32);

/// One rank's share of a second, as it travels to rank 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Share {
    /// The job's place among the jobs started.
    pub(super) job: u32,
    /// The second's place in the job, from 0.
    pub(super) index: u32,
    /// The second as the rank measured it.
    pub(super) sample: LiveSample,
    /// The latency counts its figures came from.
    pub(super) counts: LatencyCounts,
}

/// Rank 0's seconds of the job: the ranks' shares as they come, each
/// second summed once it is whole.
#[derive(Debug)]
pub(super) struct Joined {
    ranks: usize,
    /// The seconds not yet stored: each rank's share, when it came.
    pending: BTreeMap<SecondKey, Vec<Option<Share>>>,
    /// The seconds stored: a share of one that comes after (a stop ended
    /// the wait for it) is left out, not stored as a second again.
    stored: BTreeSet<SecondKey>,
    /// Seconds summed, to store, in order.
    ready: Vec<LiveSample>,
}

impl Joined {
    /// The seconds of a job of `ranks` ranks.
    pub(super) fn new(ranks: usize) -> Joined {
        Joined {
            ranks,
            pending: BTreeMap::new(),
            stored: BTreeSet::new(),
            ready: Vec::new(),
        }
    }

    /// Rank `rank`'s share of a second; the seconds at the front that are
    /// now whole are summed, to store.
    pub(super) fn add(&mut self, rank: usize, share: Share) {
        let key = (share.job, share.index);
        if self.stored.contains(&key) {
            return;
        }
        let shares = self
            .pending
            .entry(key)
            .or_insert_with(|| vec![None; self.ranks]);
        if let Some(slot) = shares.get_mut(rank) {
            *slot = Some(share);
        }
        // In order: a later second waits for an earlier one to be whole.
        while let Some(entry) = self.pending.first_entry() {
            if entry.get().iter().any(Option::is_none) {
                break;
            }
            let (key, shares) = entry.remove_entry();
            self.stored.insert(key);
            self.ready.extend(sum(shares.iter().flatten()));
        }
    }

    /// Every second not yet stored, summed from the shares that came.
    pub(super) fn flush(&mut self) {
        for (key, shares) in std::mem::take(&mut self.pending) {
            self.stored.insert(key);
            self.ready.extend(sum(shares.iter().flatten()));
        }
    }

    /// The seconds summed since the last take.
    pub(super) fn take(&mut self) -> Vec<LiveSample> {
        std::mem::take(&mut self.ready)
    }
}

/// The ranks' shares of one second as the job's; none without shares.
pub(super) fn sum<'s>(shares: impl IntoIterator<Item = &'s Share>) -> Option<LiveSample> {
    let mut shares = shares.into_iter();
    let first = shares.next()?;
    let mut whole = first.sample.clone();
    let mut counts = first.counts.clone();
    for s in shares {
        let t = &s.sample;
        whole.bytes += t.bytes;
        whole.ios += t.ios;
        // Disk seconds count none; summed all the same, should one.
        whole.flops = match (whole.flops, t.flops) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        whole.at_ms = whole.at_ms.max(t.at_ms);
        whole.offset_ms = whole.offset_ms.max(t.offset_ms);
        whole.duration_ms = whole.duration_ms.max(t.duration_ms);
        whole.left_ms = whole.left_ms.max(t.left_ms);
        counts.add(&s.counts);
    }
    whole.latency = counts.latency(whole.ios);
    Some(whole)
}

/// This rank's part in the job's seconds.
pub(super) struct Seconds {
    /// The job under way: its place among the jobs started (0 before the
    /// first), and how many seconds it has cut.
    job: u32,
    index: u32,
    /// On a rank other than 0: how many seconds it posted, and the posts
    /// still in flight.
    posted: u64,
    in_flight: Vec<Posted>,
    /// On rank 0: the shares taken from each rank, and the seconds.
    taken: Vec<u64>,
    joined: Joined,
    /// Whether the run is over: what comes then is stored at once.
    over: bool,
}

impl Seconds {
    /// This rank's part in a job of `ranks` ranks.
    pub(super) fn new(ranks: u32) -> Seconds {
        Seconds {
            job: 0,
            index: 0,
            posted: 0,
            in_flight: Vec::new(),
            taken: vec![0; ranks as usize],
            joined: Joined::new(ranks as usize),
            over: false,
        }
    }

    /// Another job starts (every rank starts the same ones, in order).
    pub(super) fn job_start(&mut self) {
        self.job += 1;
        self.index = 0;
    }

    /// This rank's second just measured: on rank 0, added to the job's,
    /// the seconds now whole returned; elsewhere, posted to rank 0.
    pub(super) fn sample(
        &mut self,
        world: &World,
        sample: LiveSample,
        counts: &LatencyCounts,
    ) -> Vec<LiveSample> {
        let share = Share {
            job: self.job,
            index: self.index,
            sample,
            counts: counts.clone(),
        };
        self.index += 1;
        if world.is_root() {
            self.joined.add(0, share);
            return self.ready(world);
        }
        // Plain data: serialising it cannot fail.
        let bytes = serde_json::to_vec(&share).unwrap_or_default();
        self.in_flight.push(world.post_to_root(bytes));
        self.posted += 1;
        self.in_flight.retain_mut(|p| !p.done());
        Vec::new()
    }

    /// The seconds whole since the last look, on rank 0 (a look, never a
    /// wait).
    pub(super) fn ready(&mut self, world: &World) -> Vec<LiveSample> {
        if !world.is_root() {
            self.in_flight.retain_mut(|p| !p.done());
            return Vec::new();
        }
        while self.take_one(world) {}
        if self.over {
            self.joined.flush();
        }
        self.joined.take()
    }

    /// Take one rank's share that came, if one did.
    fn take_one(&mut self, world: &World) -> bool {
        let Some((from, bytes)) = world.take_posted() else {
            return false;
        };
        if let Some(n) = self.taken.get_mut(from as usize) {
            *n += 1;
        }
        // Every rank runs this same build: a share that does not read is
        // left out (its second is summed without it).
        if let Ok(share) = serde_json::from_slice::<Share>(&bytes) {
            self.joined.add(from as usize, share);
        }
        true
    }

    /// After a job, on every rank (a collective): rank 0 takes every share
    /// the ranks posted and sums every second left with the shares it
    /// has; the others see their posts through. A stop signal ends the
    /// wait (a rank may be gone): false then.
    pub(super) fn settle(&mut self, world: &World, stop: &AtomicBool) -> bool {
        let posted = world.all_gather(&self.posted.to_le_bytes());
        let expected: Vec<u64> = posted
            .iter()
            .map(|b| b.as_slice().try_into().map_or(0, u64::from_le_bytes))
            .collect();
        loop {
            let done = if world.is_root() {
                while self.take_one(world) {}
                self.taken.iter().zip(&expected).all(|(t, e)| t >= e)
            } else {
                self.in_flight.retain_mut(|p| !p.done());
                self.in_flight.is_empty()
            };
            if done {
                break;
            }
            if stop.load(Ordering::Relaxed) {
                self.end(world);
                return false;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        self.joined.flush();
        true
    }

    /// The run is over, or stopped: every second left is summed from the
    /// shares that came (a look, never a wait).
    pub(super) fn end(&mut self, world: &World) {
        if world.is_root() {
            while self.take_one(world) {}
        }
        self.over = true;
        self.joined.flush();
    }
}

#[cfg(test)]
mod tests;
