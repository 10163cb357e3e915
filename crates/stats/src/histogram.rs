//! A log-linear latency histogram: fixed memory, mergeable across threads,
//! and under 1% relative error at any percentile.
//!
//! fio keeps 64 linear buckets per power of two (`FIO_IO_U_PLAT_BITS = 6`,
//! about 0.8% error); HdrHistogram with two significant decimal digits has
//! the same shape with at most 0.5% error. We use the `hdrhistogram` crate
//! with that precision and keep exact min, max, sum and sum of squares
//! beside it, so the mean and standard deviation carry no bucket error.

use hdrhistogram::Histogram;
use iomark_model::disk::{LatencySummary, Percentile};

/// fio's default percentile list (`percentile_list`), in percent.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Latencies in nanoseconds, up to about 10 minutes each.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    buckets: Histogram<u64>,
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
    sum_sq: u128,
}

/// The longest latency the buckets track; longer ones are clamped into the
/// last bucket but still count exactly in min, max, mean and stddev.
const MAX_TRACKED_NS: u64 = 600_000_000_000;

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        // Two significant digits: at most 0.5% relative error per value.
        let buckets = Histogram::new_with_bounds(1, MAX_TRACKED_NS, 2)
            .expect("constant histogram bounds are valid");
        LatencyHistogram {
            buckets,
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0,
        }
    }

    /// Record one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.buckets.saturating_record(ns.max(1));
        self.count += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += u128::from(ns);
        self.sum_sq += u128::from(ns) * u128::from(ns);
    }

    /// Add every value of `other` to this histogram.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Both use the same bounds, so adding cannot fail.
        self.buckets
            .add(&other.buckets)
            .expect("histograms share bounds");
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    /// The histogram a [`LatencySummary`] was made from, again: its bins
    /// back in their buckets (each bin's midpoint lies in its own bucket),
    /// its exact count, extremes, sum and sum of squares from the mean and
    /// standard deviation. How summaries gathered from other processes (MPI
    /// ranks) are merged: bucket by bucket, not by averaging percentiles.
    pub fn from_summary(s: &LatencySummary) -> Self {
        let mut h = LatencyHistogram::new();
        for &[ns, count] in &s.bins {
            h.buckets.saturating_record_n(ns.max(1), count);
        }
        h.count = s.count;
        if s.count > 0 {
            h.min = s.min_ns;
            h.max = s.max_ns;
            let n = s.count as f64;
            h.sum = (s.mean_ns * n).round() as u128;
            let mean_sq = s.stddev_ns * s.stddev_ns + s.mean_ns * s.mean_ns;
            h.sum_sq = (mean_sq * n).round() as u128;
        }
        h
    }

    /// Forget every value (at the end of a ramp).
    pub fn clear(&mut self) {
        *self = LatencyHistogram::new();
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The smallest value, or 0 when empty.
    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// The largest value, or 0 when empty.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The exact arithmetic mean, or 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The exact population standard deviation, or 0 when empty.
    pub fn stddev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        let mean = self.sum as f64 / n;
        (self.sum_sq as f64 / n - mean * mean).max(0.0).sqrt()
    }

    /// The value below which `percent` of the values lie (nearest rank),
    /// clamped to the exact min and max.
    pub fn value_at_percentile(&self, percent: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let v = self.buckets.value_at_quantile(percent / 100.0);
        // Report the bucket's midpoint, not its upper edge, to halve the error.
        let mid = self.buckets.median_equivalent(v);
        mid.clamp(self.min, self.max)
    }

    /// The summary that results carry: counts, extremes, mean, stddev and
    /// fio's percentile list.
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            min_ns: self.min(),
            max_ns: self.max(),
            mean_ns: self.mean(),
            stddev_ns: self.stddev(),
            percentiles: FIO_PERCENTILES
                .iter()
                .map(|&p| Percentile {
                    percent: p,
                    ns: self.value_at_percentile(p),
                })
                .collect(),
            bins: self.bins(),
        }
    }

    /// Each non-empty bucket as `[midpoint ns, count]`, in order (fio's
    /// `json+` bins). The midpoint is the value percentiles report too.
    pub fn bins(&self) -> Vec<[u64; 2]> {
        self.buckets
            .iter_recorded()
            .map(|v| {
                let mid = self.buckets.median_equivalent(v.value_iterated_to());
                [mid, v.count_at_value()]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nearest-rank percentile of sorted values, the exact answer.
    fn exact_percentile(sorted: &[u64], percent: f64) -> u64 {
        let rank = ((percent / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn summaries_merge_as_the_histograms_would() {
        let (mut a, mut b, mut both) = (
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        );
        let mut seed = 3;
        for i in 0..50_000u64 {
            let v = 10_000 + lcg(&mut seed) % 90_000 + if i % 7 == 0 { 400_000 } else { 0 };
            if i % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            both.record(v);
        }
        let mut merged = LatencyHistogram::from_summary(&a.summary());
        merged.merge(&LatencyHistogram::from_summary(&b.summary()));
        let (m, w) = (merged.summary(), both.summary());
        assert_eq!((m.count, m.min_ns, m.max_ns), (w.count, w.min_ns, w.max_ns));
        assert_eq!(m.percentiles, w.percentiles);
        assert_eq!(m.bins, w.bins);
        assert!(
            (m.mean_ns - w.mean_ns).abs() < 1.0,
            "{} {}",
            m.mean_ns,
            w.mean_ns
        );
        assert!((m.stddev_ns - w.stddev_ns).abs() / w.stddev_ns < 1e-6);
    }

    #[test]
    fn percentiles_are_within_one_percent_of_sorted_values() {
        let mut seed = 7;
        // A long-tailed mix: most around 100 µs, some up to 50 ms.
        let mut values: Vec<u64> = (0..200_000)
            .map(|i| {
                let base = 80_000 + lcg(&mut seed) % 40_000;
                if i % 100 == 0 {
                    base * (1 + lcg(&mut seed) % 500)
                } else {
                    base
                }
            })
            .collect();
        let mut h = LatencyHistogram::new();
        for &v in &values {
            h.record(v);
        }
        values.sort_unstable();
        for p in FIO_PERCENTILES {
            let exact = exact_percentile(&values, p) as f64;
            let got = h.value_at_percentile(p) as f64;
            let err = (got - exact).abs() / exact;
            assert!(err < 0.01, "p{p}: got {got}, exact {exact}, error {err}");
        }
        assert_eq!(h.min(), values[0]);
        assert_eq!(h.max(), *values.last().unwrap());
    }

    #[test]
    fn mean_and_stddev_are_exact() {
        let mut h = LatencyHistogram::new();
        for v in [2, 4, 4, 4, 5, 5, 7, 9] {
            h.record(v);
        }
        assert_eq!(h.mean(), 5.0);
        assert_eq!(h.stddev(), 2.0);
    }

    #[test]
    fn merged_histograms_equal_one_fed_everything() {
        let mut seed = 3;
        let values: Vec<u64> = (0..10_000)
            .map(|_| 1000 + lcg(&mut seed) % 1_000_000)
            .collect();
        let (mut a, mut b, mut all) = (
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        );
        for (i, &v) in values.iter().enumerate() {
            if i % 2 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a.count(), all.count());
        assert_eq!(a.mean(), all.mean());
        for p in FIO_PERCENTILES {
            assert_eq!(a.value_at_percentile(p), all.value_at_percentile(p));
        }
    }

    #[test]
    fn bins_count_every_value_once_near_its_value() {
        let mut h = LatencyHistogram::new();
        for v in [100, 100, 101, 5_000, 1_000_000] {
            h.record(v);
        }
        let bins = h.bins();
        assert_eq!(bins.iter().map(|b| b[1]).sum::<u64>(), 5);
        assert!(bins.windows(2).all(|w| w[0][0] < w[1][0]), "{bins:?}");
        for v in [100u64, 5_000, 1_000_000] {
            let near = bins
                .iter()
                .any(|b| (b[0] as f64 - v as f64).abs() / v as f64 <= 0.01);
            assert!(near, "{v} in {bins:?}");
        }
        assert!(LatencyHistogram::new().bins().is_empty());
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let s = LatencyHistogram::new().summary();
        assert_eq!((s.count, s.min_ns, s.max_ns), (0, 0, 0));
        assert!(s.percentiles.iter().all(|p| p.ns == 0));
    }
}
