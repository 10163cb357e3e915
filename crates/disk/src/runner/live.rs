//! What a job's threads have counted so far, read while the job runs: the
//! progress line's bytes, and each second's [`Interval`] for whoever shows
//! or stores the run as it goes (the live view, `--json-stream`).
//!
//! Each worker owns one [`LiveCounter`] and is its only writer, so a count
//! is a plain load and store, not a locked read-modify-write: four of them
//! per completed I/O (bytes, I/Os, latency sum, one histogram bucket). The
//! watching thread reads them with relaxed loads, so one interval may see
//! an I/O's bytes and the next its latency; over a second of thousands of
//! I/Os that is noise, and the job's own figures never come from here.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use iomark_model::live::IntervalLatency;
use serde::{Deserialize, Serialize};

/// Values below this get a bucket each (exact).
const EXACT: u64 = 16;
/// Buckets per power of two above [`EXACT`]: 8, so a bucket's middle is
/// within 1/16 of any value in it.
const SUB_BITS: u32 = 3;
const SUB: u64 = 1 << SUB_BITS;
/// Enough buckets for any u64 (2^64 ns is 584 years).
const BUCKETS: usize = EXACT as usize + (64 - 4) * SUB as usize;

/// The bucket of a latency of `ns`.
fn bucket(ns: u64) -> usize {
    if ns < EXACT {
        return ns as usize;
    }
    let top = 63 - ns.leading_zeros();
    let sub = (ns >> (top - SUB_BITS)) & (SUB - 1);
    EXACT as usize + (top as usize - 4) * SUB as usize + sub as usize
}

/// The middle of bucket `idx`: the value a quantile in it is given.
fn bucket_value(idx: usize) -> u64 {
    if idx < EXACT as usize {
        return idx as u64;
    }
    let above = idx - EXACT as usize;
    let top = (above / SUB as usize) as u32 + 4;
    let sub = (above % SUB as usize) as u64;
    let width = 1u64 << (top - SUB_BITS);
    (SUB + sub) * width + width / 2
}

/// One worker's running counts, on cache lines of its own (128 bytes
/// apart: x86's adjacent-line prefetcher moves lines in pairs).
#[repr(align(128))]
pub(super) struct LiveCounter {
    bytes: AtomicU64,
    ios: AtomicU64,
    latency_sum_ns: AtomicU64,
    latencies: Box<[AtomicU64]>,
}

impl Default for LiveCounter {
    fn default() -> Self {
        LiveCounter {
            bytes: AtomicU64::new(0),
            ios: AtomicU64::new(0),
            latency_sum_ns: AtomicU64::new(0),
            latencies: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// Add `by` to a counter this thread alone writes.
fn add(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Ordering::Relaxed) + by, Ordering::Relaxed);
}

impl LiveCounter {
    /// Count one completed I/O. Only the counter's own worker calls this.
    pub(super) fn count(&self, bytes: u64, latency_ns: u64) {
        add(&self.bytes, bytes);
        add(&self.ios, 1);
        add(&self.latency_sum_ns, latency_ns);
        add(&self.latencies[bucket(latency_ns)], 1);
    }

    /// Bytes counted so far.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// The counts of every thread at one moment.
#[derive(Clone)]
struct Totals {
    bytes: u64,
    ios: u64,
    latency_sum_ns: u64,
    latencies: Vec<u64>,
}

impl Totals {
    fn zero() -> Totals {
        Totals {
            bytes: 0,
            ios: 0,
            latency_sum_ns: 0,
            latencies: vec![0; BUCKETS],
        }
    }

    fn read(counters: &[LiveCounter]) -> Totals {
        let mut t = Totals::zero();
        for c in counters {
            t.bytes += c.bytes.load(Ordering::Relaxed);
            t.ios += c.ios.load(Ordering::Relaxed);
            t.latency_sum_ns += c.latency_sum_ns.load(Ordering::Relaxed);
            for (sum, b) in t.latencies.iter_mut().zip(c.latencies.iter()) {
                *sum += b.load(Ordering::Relaxed);
            }
        }
        t
    }

    /// What was counted between `before` and these.
    fn since(&self, before: &Totals) -> Totals {
        Totals {
            bytes: self.bytes.saturating_sub(before.bytes),
            ios: self.ios.saturating_sub(before.ios),
            latency_sum_ns: self.latency_sum_ns.saturating_sub(before.latency_sum_ns),
            latencies: self
                .latencies
                .iter()
                .zip(&before.latencies)
                .map(|(a, b)| a.saturating_sub(*b))
                .collect(),
        }
    }

    /// The latency counts, the empty buckets left out.
    fn counts(&self) -> LatencyCounts {
        LatencyCounts {
            sum_ns: self.latency_sum_ns,
            buckets: self
                .latencies
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(idx, &n)| (idx as u16, n))
                .collect(),
        }
    }
}

/// The latency of an interval's I/Os as its threads counted them: their
/// sum and the histogram the quantiles come from (the empty buckets left
/// out). Processes that each count their share of a second (MPI ranks)
/// [`add`](LatencyCounts::add) theirs, and the sum gives the figures one
/// process counting every I/O would have: the same mean, and the same
/// quantiles, not an average of each one's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyCounts {
    /// The I/Os' latencies added up, ns.
    sum_ns: u64,
    /// The I/Os in each bucket that has any, by bucket, ascending.
    buckets: Vec<(u16, u64)>,
}

impl LatencyCounts {
    /// Add `other`'s I/Os to these.
    pub fn add(&mut self, other: &LatencyCounts) {
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
        let mut merged: BTreeMap<u16, u64> = self.buckets.iter().copied().collect();
        for &(idx, n) in &other.buckets {
            *merged.entry(idx).or_default() += n;
        }
        self.buckets = merged.into_iter().collect();
    }

    /// The figures of `ios` I/Os counted here: the mean of the sum, the
    /// quantiles at their bucket's middle; none when none was counted.
    pub fn latency(&self, ios: u64) -> Option<IntervalLatency> {
        let counted: u64 = self.buckets.iter().map(|&(_, n)| n).sum();
        if counted == 0 {
            return None;
        }
        let quantile = |q: f64| {
            // The rank of the quantile, from 1: the median of 4 is the 2nd.
            let rank = ((q * counted as f64).ceil() as u64).max(1);
            let mut seen = 0;
            for &(idx, n) in &self.buckets {
                seen += n;
                if seen >= rank {
                    return bucket_value(usize::from(idx));
                }
            }
            0
        };
        Some(IntervalLatency {
            mean_ns: self.sum_ns / ios.max(1),
            p50_ns: quantile(0.50),
            p99_ns: quantile(0.99),
            max_ns: quantile(1.0),
        })
    }
}

/// One interval of a running job, as its threads counted it.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    /// When it ended, after the job's measured start (the ramp's end).
    pub(crate) offset: Duration,
    /// Its length: a second, the last one shorter.
    pub(crate) duration: Duration,
    /// Bytes completed in it.
    pub(crate) bytes: u64,
    /// I/Os completed in it.
    pub(crate) ios: u64,
    /// Their latency (the quantiles and the longest within 1/16); none
    /// when none completed.
    pub(crate) latency: Option<IntervalLatency>,
    /// What `latency` was worked out from, for a process that adds its
    /// interval to others' (an MPI rank's second to the job's).
    pub(crate) counts: LatencyCounts,
}

/// Cuts a job's counts into intervals of `every`, from its measured start.
pub(super) struct Sampler {
    measured_from: Instant,
    until: Option<Instant>,
    every: Duration,
    last_at: Instant,
    last: Totals,
}

impl Sampler {
    /// Intervals from `measured_from` to `until` (a time-based job's
    /// deadline; none: until the job ends).
    pub(super) fn new(measured_from: Instant, until: Option<Instant>, every: Duration) -> Sampler {
        Sampler {
            measured_from,
            until,
            every,
            last_at: measured_from,
            last: Totals::zero(),
        }
    }

    /// When the next interval ends.
    pub(super) fn next_due(&self) -> Instant {
        let due = self.last_at + self.every;
        self.until.map_or(due, |u| due.min(u))
    }

    /// The interval that ended by `now`, if one did, cut at `now` (a wake
    /// comes late under load). The one that ends at the deadline, and all
    /// once it passed, is left to [`last`](Sampler::last): the threads' own
    /// clocks passed the start gate a little apart from this one, so some
    /// may still count after it.
    pub(super) fn due(&mut self, now: Instant, counters: &[LiveCounter]) -> Option<Interval> {
        let end = self.last_at + self.every;
        if now < end || self.until.is_some_and(|u| end >= u || now >= u) {
            return None;
        }
        Some(self.cut(now.min(self.until.unwrap_or(now)), counters))
    }

    /// The job is over at `now`: what it counted since the last interval,
    /// if it had measured time left.
    pub(super) fn last(mut self, now: Instant, counters: &[LiveCounter]) -> Option<Interval> {
        let end = now.min(self.until.unwrap_or(now));
        if end <= self.last_at || end < self.measured_from {
            return None;
        }
        let iv = self.cut(end, counters);
        (iv.ios > 0 || iv.duration >= Duration::from_millis(100)).then_some(iv)
    }

    fn cut(&mut self, end: Instant, counters: &[LiveCounter]) -> Interval {
        let now = Totals::read(counters);
        let counted = now.since(&self.last);
        let counts = counted.counts();
        let iv = Interval {
            offset: end - self.measured_from,
            duration: end - self.last_at,
            bytes: counted.bytes,
            ios: counted.ios,
            latency: counts.latency(counted.ios),
            counts,
        };
        self.last = now;
        self.last_at = end;
        iv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_is_within_a_sixteenth_of_its_buckets_middle() {
        let mut v = 1u64;
        while v < u64::MAX / 3 {
            for probe in [v, v + v / 3, v * 2 - 1] {
                let mid = bucket_value(bucket(probe)) as f64;
                let err = (mid - probe as f64).abs() / probe as f64;
                assert!(err <= 1.0 / 16.0 + 1e-12, "{probe}: {mid}");
            }
            v *= 2;
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        for small in 0..EXACT {
            assert_eq!(bucket_value(bucket(small)), small);
        }
    }

    #[test]
    fn an_interval_holds_what_was_counted_since_the_last_with_its_quantiles() {
        let counters = [LiveCounter::default(), LiveCounter::default()];
        let t0 = Instant::now();
        let mut s = Sampler::new(t0, None, Duration::from_secs(1));
        // 99 I/Os of 100 µs and one of 10 ms, over two threads.
        for i in 0..100 {
            let lat = if i == 0 { 10_000_000 } else { 100_000 };
            counters[i % 2].count(4096, lat);
        }
        assert_eq!(s.due(t0 + Duration::from_millis(999), &counters), None);
        let iv = s.due(t0 + Duration::from_secs(1), &counters).unwrap();
        assert_eq!((iv.bytes, iv.ios), (409_600, 100));
        assert_eq!(iv.duration, Duration::from_secs(1));
        let lat = iv.latency.unwrap();
        assert_eq!(lat.mean_ns, (99 * 100_000 + 10_000_000) / 100);
        assert!(lat.p50_ns.abs_diff(100_000) <= 100_000 / 16, "{lat:?}");
        assert!(lat.p99_ns.abs_diff(100_000) <= 100_000 / 16, "{lat:?}");
        assert!(
            lat.max_ns.abs_diff(10_000_000) <= 10_000_000 / 16,
            "{lat:?}"
        );
        // The next interval counts only what came after.
        counters[0].count(8192, 50_000);
        let last = s.last(t0 + Duration::from_millis(1500), &counters).unwrap();
        assert_eq!((last.bytes, last.ios), (8192, 1));
        assert_eq!(last.duration, Duration::from_millis(500));
        assert_eq!(last.offset, Duration::from_millis(1500));
    }

    #[test]
    fn intervals_counted_apart_add_up_to_the_one_counted_together() {
        let t0 = Instant::now();
        let second = t0 + Duration::from_secs(1);
        let (fast, slow, both) = (
            [LiveCounter::default()],
            [LiveCounter::default()],
            [LiveCounter::default(), LiveCounter::default()],
        );
        // One process's I/Os of 100 µs, another's of 5 ms: merged, the
        // median is the slow one's, which no average of theirs gives.
        for i in 0..300u64 {
            fast[0].count(4096, 100_000 + i);
            both[0].count(4096, 100_000 + i);
        }
        for i in 0..400u64 {
            slow[0].count(4096, 5_000_000 + 7 * i);
            both[1].count(4096, 5_000_000 + 7 * i);
        }
        let cut = |c: &[LiveCounter]| {
            Sampler::new(t0, None, Duration::from_secs(1))
                .due(second, c)
                .unwrap()
        };
        let (a, b, whole) = (cut(&fast), cut(&slow), cut(&both));
        let mut merged = a.counts.clone();
        merged.add(&b.counts);
        assert_eq!(merged, whole.counts);
        assert_eq!(merged.latency(a.ios + b.ios), whole.latency);
        let lat = whole.latency.unwrap();
        assert!(lat.p50_ns.abs_diff(5_000_000) <= 5_000_000 / 16, "{lat:?}");
        // Adding nothing changes nothing, either way round.
        let mut none = LatencyCounts::default();
        none.add(&merged);
        assert_eq!(none, merged);
        assert_eq!(LatencyCounts::default().latency(0), None);
    }

    #[test]
    fn a_timed_job_is_cut_at_its_deadline_and_an_empty_tail_is_dropped() {
        let counters = [LiveCounter::default()];
        let t0 = Instant::now();
        let deadline = t0 + Duration::from_millis(1020);
        let mut s = Sampler::new(t0, Some(deadline), Duration::from_secs(1));
        counters[0].count(1, 1);
        assert!(s.due(t0 + Duration::from_secs(1), &counters).is_some());
        assert_eq!(s.next_due(), deadline);
        // The interval up to the deadline is the last one's to cut.
        assert_eq!(s.due(t0 + Duration::from_secs(2), &counters), None);
        // 20 ms with nothing counted is no interval worth showing.
        assert_eq!(s.last(t0 + Duration::from_secs(2), &counters), None);
        let mut s = Sampler::new(t0, Some(deadline), Duration::from_secs(1));
        // Woken past the deadline, the rest is the last one's, cut there.
        assert_eq!(s.due(t0 + Duration::from_secs(3), &counters), None);
        let iv = s.last(t0 + Duration::from_secs(3), &counters).unwrap();
        assert_eq!(iv.offset, Duration::from_millis(1020));
        assert_eq!(iv.duration, Duration::from_millis(1020));
    }
}
