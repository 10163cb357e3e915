//! Comparing a figure of one run with the same figure of a baseline run.
//!
//! The arithmetic people do by hand when they put two benchmark screenshots
//! side by side: the ratio of candidate to baseline, and what the samples
//! behind each figure say about it: a confidence interval for the ratio
//! of their means ([`RatioInterval`], the one rule of
//! `iomark_model::figure::evidence`), or, where only bands are known, whether
//! the bands overlap.

use iomark_model::figure::evidence::RatioInterval;
use iomark_model::figure::Sampled;

/// One figure of a run: its value, its noise band when it summarises
/// several passes or intervals, and what those samples say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// The figure.
    pub value: f64,
    /// `(lowest, highest)`: the noise band over the passes or intervals.
    pub spread: Option<(f64, f64)>,
    /// The samples' mean, scatter and worth, when known.
    pub sampled: Option<Sampled>,
}

/// How a candidate figure compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// `candidate / baseline`; `None` when the baseline is zero or either
    /// value is not a finite number.
    pub ratio: Option<f64>,
    /// The 90% interval of the ratio of the samples' means (each end a
    /// one-sided 95% bound), when both figures' samples are known: what
    /// the verdict rests on.
    pub interval: Option<RatioInterval>,
    /// The two bands overlap: where no interval can be had (a stored run
    /// whose document cannot be read), the verdict's weaker evidence.
    /// `false` when either figure has no band.
    pub bands_overlap: bool,
    /// Both figures have a band: with neither samples nor bands, nothing
    /// is known of the noise, and a loss cannot be ruled out.
    pub bands_known: bool,
}

/// Compare `candidate` with `baseline`.
pub fn compare(baseline: Measured, candidate: Measured) -> Comparison {
    Comparison {
        ratio: ratio(baseline.value, candidate.value),
        interval: baseline
            .sampled
            .zip(candidate.sampled)
            .and_then(|(b, c)| RatioInterval::of(b, c)),
        bands_overlap: match (baseline.spread, candidate.spread) {
            (Some(a), Some(b)) => overlaps(a, b),
            _ => false,
        },
        bands_known: baseline.spread.is_some() && candidate.spread.is_some(),
    }
}

/// `candidate / baseline`, or `None` when that is not a finite number.
pub fn ratio(baseline: f64, candidate: f64) -> Option<f64> {
    let r = candidate / baseline;
    (baseline != 0.0 && r.is_finite()).then_some(r)
}

/// Whether two closed ranges share at least one point. Each range may be
/// given in either order.
pub fn overlaps(a: (f64, f64), b: (f64, f64)) -> bool {
    let (a_lo, a_hi) = (a.0.min(a.1), a.0.max(a.1));
    let (b_lo, b_hi) = (b.0.min(b.1), b.0.max(b.1));
    a_lo <= b_hi && b_lo <= a_hi
}

/// A ratio as people write it: `1.68x`.
pub fn format_ratio(r: f64) -> String {
    if r == 0.0 {
        // Not `0.0000x`: a figure that fell to nothing.
        "0x".to_string()
    } else if r >= 100.0 {
        format!("{r:.0}x")
    } else if r >= 0.01 {
        format!("{r:.2}x")
    } else {
        format!("{r:.4}x")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(value: f64, spread: Option<(f64, f64)>) -> Measured {
        Measured {
            value,
            spread,
            sampled: None,
        }
    }

    #[test]
    fn ratio_is_candidate_over_baseline() {
        let c = compare(m(40e6, None), m(67.2e6, None));
        assert!((c.ratio.unwrap() - 1.68).abs() < 1e-12);
        assert!(!c.bands_overlap);
        assert_eq!(format_ratio(c.ratio.unwrap()), "1.68x");
        assert_eq!(format_ratio(0.5), "0.50x");
        assert_eq!(format_ratio(250.0), "250x");
        assert_eq!(format_ratio(0.0), "0x");
        assert_eq!(format_ratio(0.004), "0.0040x");
    }

    #[test]
    fn zero_or_nan_baseline_has_no_ratio() {
        assert_eq!(ratio(0.0, 5.0), None);
        assert_eq!(ratio(0.0, 0.0), None);
        assert_eq!(ratio(f64::NAN, 1.0), None);
        assert_eq!(ratio(2.0, 0.0), Some(0.0));
    }

    #[test]
    fn overlapping_bands_are_seen() {
        let c = compare(m(100.0, Some((95.0, 105.0))), m(103.0, Some((99.0, 108.0))));
        assert!(c.bands_overlap);
        // Touching ends still overlap.
        assert!(overlaps((1.0, 2.0), (2.0, 3.0)));
        // Reversed bounds are accepted.
        assert!(overlaps((2.0, 1.0), (1.5, 1.6)));
    }

    #[test]
    fn separate_bands_or_a_missing_one_do_not_overlap() {
        let c = compare(
            m(100.0, Some((95.0, 105.0))),
            m(120.0, Some((110.0, 130.0))),
        );
        assert!(!c.bands_overlap);
        assert!((c.ratio.unwrap() - 1.2).abs() < 1e-12);
        let c = compare(m(100.0, Some((95.0, 105.0))), m(101.0, None));
        assert!(!c.bands_overlap);
        assert!(c.interval.is_none());
    }

    #[test]
    fn samples_on_both_sides_give_an_interval_for_the_ratio() {
        let s = |v: &[f64]| Measured {
            value: v[0],
            spread: None,
            sampled: Sampled::of(v),
        };
        let c = compare(s(&[41.9, 46.1]), s(&[31.5, 34.6]));
        let iv = c.interval.unwrap();
        assert!((iv.ratio - 33.05 / 44.0).abs() < 1e-12);
        assert!(
            iv.lo < iv.ratio && iv.ratio < iv.hi && iv.hi < 1.0,
            "{iv:?}"
        );
    }
}
