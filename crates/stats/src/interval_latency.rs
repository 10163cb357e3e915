//! Latency percentiles per interval, cheaply: a coarse log-linear
//! histogram for the interval in progress, kept sparse once it is over.
//!
//! A percentile of a whole run has no spread of its own, so a gate could
//! never call two p99s "within noise" (issue 33: two identical 2 s runs,
//! p99 7.6% apart, gated as a regression). The per-interval p99s give it
//! one, as the per-interval rates give bandwidth its spread.
//!
//! The whole run's percentiles stay with the fine histogram
//! ([`crate::histogram::LatencyHistogram`]); this one has 16 buckets per
//! power of two (each at most 6.25% wide, reported at its middle), which is
//! enough for a spread and costs one shift and one increment per I/O.

/// Buckets per power of two, as a power of two.
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;

/// The bucket of a latency: exact under 16 ns, then 16 per power of two.
#[inline]
fn bucket(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let exp = 63 - ns.leading_zeros();
    let shift = exp - SUB_BITS;
    let sub = (ns >> shift) & (SUB - 1);
    (SUB + u64::from(shift) * SUB + sub) as usize
}

/// The middle of bucket `b`, the value reported for it.
fn middle(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let shift = (b - SUB) / SUB;
    let sub = (b - SUB) % SUB;
    let low = (SUB + sub) << shift;
    low + (1u64 << shift) / 2
}

/// The latencies of the interval in progress.
#[derive(Debug, Clone, Default)]
pub struct IntervalLatencies {
    counts: Vec<u32>,
}

impl IntervalLatencies {
    /// Count one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let b = bucket(ns);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] = self.counts[b].saturating_add(1);
    }

    /// The interval's counts, kept sparse, leaving this one empty for the
    /// next interval (its memory kept).
    pub fn take(&mut self) -> SparseLatencies {
        let kept = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(b, &n)| (b as u16, n))
            .collect();
        self.counts.iter_mut().for_each(|n| *n = 0);
        SparseLatencies(kept)
    }
}

/// One finished interval's latencies: (bucket, count) of the buckets used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SparseLatencies(Vec<(u16, u32)>);

impl SparseLatencies {
    /// Add `other`'s counts (another thread's, the same interval).
    pub fn merge(&mut self, other: &SparseLatencies) {
        let mut all = std::mem::take(&mut self.0);
        all.extend_from_slice(&other.0);
        all.sort_unstable_by_key(|&(b, _)| b);
        for (b, n) in all {
            match self.0.last_mut() {
                Some(last) if last.0 == b => last.1 = last.1.saturating_add(n),
                _ => self.0.push((b, n)),
            }
        }
    }

    /// Latencies counted.
    pub fn count(&self) -> u64 {
        self.0.iter().map(|&(_, n)| u64::from(n)).sum()
    }

    /// The latency at `percent` (0-100), at its bucket's middle; none when
    /// the interval counted nothing.
    pub fn value_at_percentile(&self, percent: f64) -> Option<u64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = ((percent / 100.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for &(b, n) in &self.0 {
            seen += u64::from(n);
            if seen >= rank {
                return Some(middle(usize::from(b)));
            }
        }
        self.0.last().map(|&(b, _)| middle(usize::from(b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lands_in_a_bucket_whose_middle_is_within_a_thirty_second() {
        for ns in (0..5000u64).chain([123_456, 9_999_999, 1 << 40, u64::MAX / 3]) {
            let m = middle(bucket(ns));
            let err = (m as f64 - ns as f64).abs() / (ns.max(1) as f64);
            assert!(err <= 1.0 / 32.0 + 1e-12, "{ns} -> {m}");
        }
        // Buckets follow the order of the values.
        let mut last = 0;
        for ns in [1u64, 15, 16, 17, 31, 32, 100, 1000, 1_000_000] {
            assert!(bucket(ns) >= last);
            last = bucket(ns);
        }
    }

    #[test]
    fn percentiles_of_an_interval_and_of_two_threads_merged() {
        let mut a = IntervalLatencies::default();
        for ns in 1..=100u64 {
            a.record(ns * 1000);
        }
        let first = a.take();
        assert_eq!(first.count(), 100);
        let p99 = first.value_at_percentile(99.0).unwrap() as f64;
        assert!((p99 - 99_000.0).abs() / 99_000.0 < 1.0 / 32.0, "{p99}");
        // The next interval starts empty.
        assert_eq!(a.take().value_at_percentile(99.0), None);
        // Another thread saw only slow I/Os in the same interval: merged,
        // the p99 is theirs.
        let mut b = IntervalLatencies::default();
        for _ in 0..100 {
            b.record(5_000_000);
        }
        let mut merged = first.clone();
        merged.merge(&b.take());
        assert_eq!(merged.count(), 200);
        let p99 = merged.value_at_percentile(99.0).unwrap() as f64;
        assert!((p99 - 5e6).abs() / 5e6 < 1.0 / 32.0, "{p99}");
        let p50 = merged.value_at_percentile(50.0).unwrap() as f64;
        assert!((p50 - 100_000.0).abs() / 100_000.0 < 1.0 / 32.0, "{p50}");
    }
}
