//! Comparing a figure of one run with the same figure of a baseline run.
//!
//! The arithmetic people do by hand when they put two benchmark screenshots
//! side by side: the ratio of candidate to baseline, and whether the
//! difference is real or inside the scatter the passes already showed.

/// One figure of a run: its value and, when it summarises several passes
/// or intervals, their lowest and highest value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// The figure.
    pub value: f64,
    /// `(lowest, highest)` over the passes or intervals.
    pub spread: Option<(f64, f64)>,
}

/// How a candidate figure compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// `candidate / baseline`; `None` when the baseline is zero or either
    /// value is not a finite number.
    pub ratio: Option<f64>,
    /// The two spreads overlap, so the difference is not a real one.
    /// `false` when either figure has no spread: then nothing is known.
    pub within_noise: bool,
}

/// Compare `candidate` with `baseline`.
pub fn compare(baseline: Measured, candidate: Measured) -> Comparison {
    Comparison {
        ratio: ratio(baseline.value, candidate.value),
        within_noise: match (baseline.spread, candidate.spread) {
            (Some(a), Some(b)) => overlaps(a, b),
            _ => false,
        },
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
        Measured { value, spread }
    }

    #[test]
    fn ratio_is_candidate_over_baseline() {
        let c = compare(m(40e6, None), m(67.2e6, None));
        assert!((c.ratio.unwrap() - 1.68).abs() < 1e-12);
        assert!(!c.within_noise);
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
    fn overlapping_spreads_are_within_noise() {
        let c = compare(m(100.0, Some((95.0, 105.0))), m(103.0, Some((99.0, 108.0))));
        assert!(c.within_noise);
        // Touching ends still overlap.
        assert!(overlaps((1.0, 2.0), (2.0, 3.0)));
        // Reversed bounds are accepted.
        assert!(overlaps((2.0, 1.0), (1.5, 1.6)));
    }

    #[test]
    fn separate_spreads_or_a_missing_one_are_a_real_difference() {
        let c = compare(
            m(100.0, Some((95.0, 105.0))),
            m(120.0, Some((110.0, 130.0))),
        );
        assert!(!c.within_noise);
        assert!((c.ratio.unwrap() - 1.2).abs() < 1e-12);
        let c = compare(m(100.0, Some((95.0, 105.0))), m(101.0, None));
        assert!(!c.within_noise);
    }
}
