//! How many queued I/Os go to the kernel in one call.
//!
//! Two targets want opposite things. A device completes I/Os later, from
//! its interrupt: submitting each I/O as soon as its unit is free keeps its
//! queue evenly fed, where a batch submitted together tends to finish
//! together and leave the queue in lockstep (docs/architecture.md). The
//! page cache and zram complete an I/O within the call that submits it:
//! nothing is in flight between calls, so the only cost left is the calls
//! themselves, and one call for the whole refill is what the kernel's own
//! peak tool (fio's t/io_uring) does.
//!
//! So, unless `--iodepth-batch` forces a batch, the runner watches where
//! completions arrive. Every submission that does not also wait (each
//! `commit`) says how many of the I/Os it handed over were already complete
//! when it returned. Over a window of [`WINDOW`] such I/Os: if at least
//! [`ENTER`] of them completed within their submission, the whole refill
//! goes down in one call; while batching, if fewer than [`LEAVE`] did (the
//! cache stopped holding the data), back to one call per I/O. Starting per
//! I/O means a device never sees a batch.
//!
//! Direct I/O to zram completes within the call too, but its completion
//! reaches the ring as deferred task work, posted at the next wait, so it
//! looks asynchronous here and is submitted per I/O. Measured, that is
//! the faster way for zram: 4k random reads QD32, 395-448k IOPS per I/O
//! against 240-270k submitting whole refills (t/io_uring -s32 -c32:
//! 250-284k).

use iomark_model::disk::{DiskJobSpec, Submission, SubmitMode};

/// I/Os looked at before the choice is made again.
pub(super) const WINDOW: u64 = 256;
/// Share of I/Os completing within their submission above which a refill
/// is submitted at once.
///
/// Half, not nearly all: a device's share is nil (its completions come
/// from interrupts, after the call), while a page cache's falls well below
/// 100% when some of its reads go down the kernel's async path (pages still
/// marked for readahead). On a 16-core machine the runner stayed per I/O
/// at 0.75-0.8 of a forced batch's rate, the cost of one call per I/O
/// measured here too (0.95 M IOPS against 1.22 M).
pub(super) const ENTER: f64 = 0.5;
/// Share below which batching stops again.
pub(super) const LEAVE: f64 = 0.25;

/// The submission choice of one thread, and what it saw.
#[derive(Debug, Clone)]
pub(super) struct SubmitPolicy {
    /// `--iodepth-batch`, when given.
    forced: Option<u32>,
    depth: u32,
    batching: bool,
    window_looked: u64,
    window_inline: u64,
    pub(super) counts: SubmitCounts,
}

/// What a thread's submissions did, summed over threads at the end.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct SubmitCounts {
    /// I/Os issued (measured time) while submitting one at a time.
    per_io: u64,
    /// I/Os issued (measured time) while submitting in batches.
    batched: u64,
    /// I/Os submitted by a call that did not wait.
    looked: u64,
    /// Of those, complete when the call returned.
    inline: u64,
}

impl SubmitPolicy {
    /// The policy for a job's `iodepth_batch` at queue depth `depth`.
    pub(super) fn new(iodepth_batch: u32, depth: u32) -> Self {
        let forced =
            (iodepth_batch != DiskJobSpec::ADAPTIVE_BATCH).then(|| iodepth_batch.clamp(1, depth));
        SubmitPolicy {
            forced,
            depth: depth.max(1),
            batching: false,
            window_looked: 0,
            window_inline: 0,
            counts: SubmitCounts::default(),
        }
    }

    /// I/Os to queue before handing them to the kernel.
    #[inline]
    pub(super) fn batch(&self) -> u32 {
        match self.forced {
            Some(n) => n,
            None if self.batching => self.depth,
            None => 1,
        }
    }

    /// Whether a refill's last I/Os should be submitted on their own, so
    /// their completions can be looked at, rather than with the wait for
    /// completions. Only while batching by choice: per I/O, the refill's
    /// last I/O rides on the wait (one call, not two), and a forced batch
    /// does what was asked.
    #[inline]
    pub(super) fn submit_before_wait(&self) -> bool {
        self.forced.is_none() && self.batching
    }

    /// A call submitted `submitted` I/Os without waiting, and `inline` of
    /// them were complete when it returned.
    pub(super) fn observe(&mut self, submitted: u32, inline: usize) {
        let submitted = u64::from(submitted);
        // On a ring without deferred task running, a device completion may
        // land during the call too; never count more than were submitted.
        let inline = (inline as u64).min(submitted);
        self.counts.looked += submitted;
        self.counts.inline += inline;
        if self.forced.is_some() {
            return;
        }
        self.window_looked += submitted;
        self.window_inline += inline;
        if self.window_looked >= WINDOW {
            let share = self.window_inline as f64 / self.window_looked as f64;
            if !self.batching && share >= ENTER {
                self.batching = true;
            } else if self.batching && share < LEAVE {
                self.batching = false;
            }
            self.window_looked = 0;
            self.window_inline = 0;
        }
    }

    /// `n` I/Os were issued in the measured time under the current batch.
    #[inline]
    pub(super) fn issued(&mut self, n: u64) {
        if self.batch() > 1 {
            self.counts.batched += n;
        } else {
            self.counts.per_io += n;
        }
    }

    /// Whether `--iodepth-batch` was left to the runner.
    #[cfg(test)]
    fn adaptive(&self) -> bool {
        self.forced.is_none()
    }
}

impl SubmitCounts {
    pub(super) fn merge(&mut self, o: &SubmitCounts) {
        self.per_io += o.per_io;
        self.batched += o.batched;
        self.looked += o.looked;
        self.inline += o.inline;
    }

    /// The job's record; none when no I/O went through a queue (a
    /// synchronous engine, or nothing measured).
    pub(super) fn submission(&self, adaptive: bool) -> Option<Submission> {
        let issued = self.per_io + self.batched;
        if issued == 0 {
            return None;
        }
        let batched_pct = 100.0 * self.batched as f64 / issued as f64;
        Some(Submission {
            adaptive,
            mode: SubmitMode::from_batched_pct(batched_pct),
            batched_pct,
            inline_pct: (self.looked > 0).then(|| 100.0 * self.inline as f64 / self.looked as f64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `ios` single-I/O submissions, `inline` per 100 of them
    /// complete at submission, as the runner does while submitting per I/O.
    fn feed(p: &mut SubmitPolicy, ios: u64, inline_per_100: u64) {
        for i in 0..ios {
            let inline = usize::from(i % 100 < inline_per_100);
            p.observe(1, inline);
        }
    }

    #[test]
    fn adaptive_starts_per_io_so_a_device_never_sees_a_batch() {
        let p = SubmitPolicy::new(DiskJobSpec::ADAPTIVE_BATCH, 32);
        assert_eq!(p.batch(), 1);
        assert!(p.adaptive());
        assert!(!p.submit_before_wait());
    }

    #[test]
    fn completions_within_the_submission_switch_to_whole_refills() {
        let mut p = SubmitPolicy::new(DiskJobSpec::ADAPTIVE_BATCH, 32);
        feed(&mut p, WINDOW - 1, 100);
        assert_eq!(p.batch(), 1, "not before a whole window was seen");
        feed(&mut p, 1, 100);
        assert_eq!(p.batch(), 32);
        assert!(p.submit_before_wait());
    }

    #[test]
    fn asynchronous_completions_keep_one_submission_per_io() {
        let mut p = SubmitPolicy::new(DiskJobSpec::ADAPTIVE_BATCH, 32);
        feed(&mut p, 10 * WINDOW, 0);
        assert_eq!(p.batch(), 1);
        // Some but not enough inline (a cache that misses three in five).
        feed(&mut p, 10 * WINDOW, 40);
        assert_eq!(p.batch(), 1);
        // Enough: a cache that sends two in five down the async path.
        feed(&mut p, WINDOW, 60);
        assert_eq!(p.batch(), 32);
    }

    #[test]
    fn batching_stops_when_completions_stop_arriving_inline() {
        let mut p = SubmitPolicy::new(DiskJobSpec::ADAPTIVE_BATCH, 16);
        feed(&mut p, WINDOW, 100);
        assert_eq!(p.batch(), 16);
        // Between the thresholds: no flapping, the choice stays.
        for _ in 0..WINDOW / 16 {
            p.observe(16, 5);
        }
        assert_eq!(p.batch(), 16);
        for _ in 0..WINDOW / 16 {
            p.observe(16, 3);
        }
        assert_eq!(p.batch(), 1);
    }

    #[test]
    fn a_forced_batch_is_kept_whatever_completions_do() {
        let mut p = SubmitPolicy::new(1, 32);
        feed(&mut p, 4 * WINDOW, 100);
        assert_eq!(p.batch(), 1);
        assert!(!p.adaptive());
        let mut p = SubmitPolicy::new(8, 32);
        feed(&mut p, 4 * WINDOW, 0);
        assert_eq!(p.batch(), 8);
        assert!(!p.submit_before_wait());
        // Never beyond the depth.
        assert_eq!(SubmitPolicy::new(64, 32).batch(), 32);
    }

    #[test]
    fn more_completions_than_submissions_are_not_counted() {
        let mut p = SubmitPolicy::new(DiskJobSpec::ADAPTIVE_BATCH, 4);
        p.observe(1, 3);
        assert_eq!((p.counts.looked, p.counts.inline), (1, 1));
    }

    #[test]
    fn the_record_says_which_submission_was_used() {
        let mut p = SubmitPolicy::new(DiskJobSpec::ADAPTIVE_BATCH, 32);
        p.issued(10);
        feed(&mut p, WINDOW, 100);
        p.issued(990);
        let s = p.counts.submission(p.adaptive()).unwrap();
        assert!(s.adaptive);
        assert_eq!(s.mode, SubmitMode::Batched);
        assert!((s.batched_pct - 99.0).abs() < 1e-9);
        assert_eq!(s.inline_pct, Some(100.0));

        let mut merged = SubmitCounts::default();
        let mut q = SubmitPolicy::new(1, 32);
        q.issued(1000);
        merged.merge(&p.counts);
        merged.merge(&q.counts);
        assert_eq!(merged.submission(true).unwrap().mode, SubmitMode::Mixed);
        assert_eq!(q.counts.submission(false).unwrap().inline_pct, None);
        assert_eq!(SubmitCounts::default().submission(true), None);
    }
}
