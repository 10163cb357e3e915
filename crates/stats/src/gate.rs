//! Judging a comparison: better, worse, inside the noise, a regression
//! past a threshold a CI job set, or not enough evidence to tell.
//!
//! A ratio alone misleads: `1.73x` is a gain on a bandwidth and a loss on
//! a latency. [`judge`] reads the ratio in the figure's [`Direction`], and
//! weighs it with the model's one rule
//! (`iomark_model::figure::evidence::weigh`): a regression is a loss past
//! the threshold that the samples show for real, "within noise" is said
//! only where they rule out a loss of the threshold's size, and the rest
//! is "cannot tell" (issue 46: two seconds a run, a 25% loss behind a
//! throttle passed as "within noise").

use std::fmt;
use std::str::FromStr;

use iomark_model::figure::evidence::{weigh, Better, Evidence};
use iomark_model::figure::Direction;
use serde::{Deserialize, Serialize};

use crate::compare::Comparison;

/// How much worse than the baseline a figure may get before it counts as
/// a regression, as a fraction (`5%` is 0.05).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct WorseThreshold(f64);

impl WorseThreshold {
    /// The threshold as a fraction of the baseline, `0.05` for `5%`.
    pub fn fraction(self) -> f64 {
        self.0
    }

    /// The threshold in percent, `5.0` for `5%`.
    pub fn percent(self) -> f64 {
        self.0 * 100.0
    }
}

impl fmt::Display for WorseThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.percent())
    }
}

/// A threshold that is not a percentage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThresholdError {
    /// No `%` sign: `5` could mean 5% or 5x.
    #[error("'{0}' has no % sign: write how much worse a figure may get as a percentage, e.g. 5%")]
    NoPercentSign(String),
    /// Not a number before the `%`.
    #[error("'{0}' is not a percentage: write how much worse a figure may get, e.g. 5% or 2.5%")]
    NotANumber(String),
    /// Negative: every figure would regress, even a better one.
    #[error("'{0}' is negative: write a percentage of 0% or more, e.g. 5%")]
    Negative(String),
}

impl FromStr for WorseThreshold {
    type Err = ThresholdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let Some(number) = t.strip_suffix('%') else {
            return Err(if t.parse::<f64>().is_ok() {
                ThresholdError::NoPercentSign(s.to_string())
            } else {
                ThresholdError::NotANumber(s.to_string())
            });
        };
        let pct: f64 = number
            .trim()
            .parse()
            .ok()
            .filter(|p: &f64| p.is_finite())
            .ok_or_else(|| ThresholdError::NotANumber(s.to_string()))?;
        if pct < 0.0 {
            return Err(ThresholdError::Negative(s.to_string()));
        }
        Ok(WorseThreshold(pct / 100.0))
    }
}

/// What a candidate figure's comparison with the baseline's means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Better, outside the noise.
    Better,
    /// Worse, outside the noise, but not by more than the threshold (or no
    /// threshold was set).
    Worse,
    /// Worse by more than the threshold and outside the noise.
    Regressed,
    /// No real difference, and the samples rule out a loss of the
    /// threshold's size (5% without one).
    WithinNoise,
    /// The samples can neither show a loss past the threshold nor rule
    /// one out: too few, or too scattered. The gate says so with its own
    /// exit code; more samples (`--repeat`, a longer `--runtime`) decide.
    CannotTell,
    /// Exactly the baseline's value.
    Same,
    /// Higher, for a figure with no better direction (CPU, depth reached).
    Higher,
    /// Lower, for a figure with no better direction.
    Lower,
    /// No ratio: the baseline is zero or a value is not a number.
    NoRatio,
}

impl Verdict {
    /// The name in JSON layouts: `better`, `within_noise`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Regressed => "regressed",
            Verdict::WithinNoise => "within_noise",
            Verdict::CannotTell => "cannot_tell",
            Verdict::Same => "same",
            Verdict::Higher => "higher",
            Verdict::Lower => "lower",
            Verdict::NoRatio => "no_ratio",
        }
    }

    /// The verdict as people read it in a table: `within noise`.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::WithinNoise => "within noise",
            Verdict::CannotTell => "cannot tell",
            Verdict::NoRatio => "no ratio",
            v => v.as_str(),
        }
    }
}

/// Ratios this close to a threshold count as on it, so `5%` does not
/// flag a figure exactly 5% worse for a rounding error.
const EPSILON: f64 = 1e-9;

/// The difference "within noise" must rule out where no threshold was
/// set: the README's CI threshold.
pub const RESOLUTION: f64 = 0.05;

/// What comparison `c` of a figure that gets better in `direction` means;
/// with a `threshold`, a figure shown worse by more than it is
/// [`Verdict::Regressed`], and one whose samples can neither show nor rule
/// out such a loss is [`Verdict::CannotTell`].
pub fn judge(direction: Direction, c: Comparison, threshold: Option<WorseThreshold>) -> Verdict {
    let Some(r) = c.ratio else {
        return Verdict::NoRatio;
    };
    let t = threshold.map_or(RESOLUTION, WorseThreshold::fraction);
    let better = match direction {
        Direction::HigherIsBetter => Better::Higher,
        Direction::LowerIsBetter => Better::Lower,
        Direction::Unknown => Better::Neither,
    };
    let higher_or_lower = || {
        if r > 1.0 {
            Verdict::Higher
        } else {
            Verdict::Lower
        }
    };
    if let Some(iv) = c.interval {
        return match weigh(iv, better, t) {
            Evidence::Better => Verdict::Better,
            Evidence::WithinNoise => Verdict::WithinNoise,
            Evidence::WorseWithin => Verdict::Worse,
            Evidence::Loss if threshold.is_some() => Verdict::Regressed,
            // Without a threshold, a loss shown is just worse.
            Evidence::Loss | Evidence::WorseUnsure if threshold.is_none() => Verdict::Worse,
            Evidence::WorseUnsure | Evidence::Loss | Evidence::CannotTell => Verdict::CannotTell,
            Evidence::Changed => higher_or_lower(),
        };
    }
    if r == 1.0 {
        return Verdict::Same;
    }
    // How much worse, as a fraction of the baseline: a bandwidth at 0.9x
    // and a latency at 1.1x are both 10% worse.
    let worse_by = match direction {
        Direction::HigherIsBetter => 1.0 - r,
        Direction::LowerIsBetter => r - 1.0,
        Direction::Unknown => {
            return if c.bands_overlap {
                Verdict::WithinNoise
            } else {
                higher_or_lower()
            }
        }
    };
    if c.bands_overlap {
        // Bands alone (no samples to weigh): overlapping bands show no
        // difference, but rule out a loss only where the point is within
        // the threshold.
        return if worse_by > t + EPSILON {
            Verdict::CannotTell
        } else {
            Verdict::WithinNoise
        };
    }
    if worse_by < 0.0 {
        Verdict::Better
    } else if threshold.is_some_and(|t| worse_by > t.fraction() + EPSILON) {
        Verdict::Regressed
    } else if threshold.is_some() && !c.bands_known {
        // Worse by less than the threshold, with nothing known of the
        // noise (no samples, no bands: an imported run without its
        // intervals): a loss past it is not ruled out, and a gate does not
        // pass on no evidence (issue 46).
        Verdict::CannotTell
    } else {
        Verdict::Worse
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{compare, Measured};

    fn pct(s: &str) -> WorseThreshold {
        s.parse().unwrap()
    }

    fn c(base: f64, cand: f64, noise: bool) -> Comparison {
        let spread = |v: f64| noise.then_some((v * 0.5, v * 1.5));
        compare(
            Measured {
                value: base,
                spread: spread(base),
                sampled: None,
            },
            Measured {
                value: cand,
                spread: spread(cand),
                sampled: None,
            },
        )
    }

    #[test]
    fn thresholds_are_percentages() {
        assert_eq!(pct("5%").fraction(), 0.05);
        assert_eq!(pct(" 2.5 % ").percent(), 2.5);
        assert_eq!(pct("0%").fraction(), 0.0);
        assert_eq!(pct("5%").to_string(), "5%");
        for (bad, err) in [
            ("fast", ThresholdError::NotANumber("fast".into())),
            ("", ThresholdError::NotANumber("".into())),
            ("%", ThresholdError::NotANumber("%".into())),
            ("x%", ThresholdError::NotANumber("x%".into())),
            ("nan%", ThresholdError::NotANumber("nan%".into())),
            ("inf%", ThresholdError::NotANumber("inf%".into())),
            ("5", ThresholdError::NoPercentSign("5".into())),
            ("-5%", ThresholdError::Negative("-5%".into())),
        ] {
            assert_eq!(bad.parse::<WorseThreshold>(), Err(err), "{bad:?}");
        }
        let msg = "fast".parse::<WorseThreshold>().unwrap_err().to_string();
        assert!(msg.contains("e.g. 5%"), "{msg}");
    }

    #[test]
    fn bandwidth_is_better_higher_and_latency_lower() {
        use Direction::*;
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 173.0, false), None),
            Verdict::Better
        );
        assert_eq!(
            judge(LowerIsBetter, c(100.0, 173.0, false), None),
            Verdict::Worse
        );
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 50.0, false), None),
            Verdict::Worse
        );
        assert_eq!(
            judge(LowerIsBetter, c(100.0, 50.0, false), None),
            Verdict::Better
        );
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 100.0, false), None),
            Verdict::Same
        );
        assert_eq!(judge(Unknown, c(10.0, 20.0, false), None), Verdict::Higher);
        assert_eq!(judge(Unknown, c(10.0, 5.0, false), None), Verdict::Lower);
        assert_eq!(
            judge(HigherIsBetter, c(0.0, 5.0, false), None),
            Verdict::NoRatio
        );
    }

    #[test]
    fn a_regression_is_worse_past_the_threshold_and_outside_the_noise() {
        use Direction::*;
        let t = Some(pct("5%"));
        // 10% less bandwidth, 10% more latency: both regress.
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 90.0, false), t),
            Verdict::Regressed
        );
        assert_eq!(
            judge(LowerIsBetter, c(100.0, 110.0, false), t),
            Verdict::Regressed
        );
        // Worse, but not by more than 5%, and nothing known of the noise
        // (no samples, no bands): a loss of 5% is not ruled out.
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 96.0, false), t),
            Verdict::CannotTell
        );
        assert_eq!(
            judge(LowerIsBetter, c(100.0, 104.0, false), t),
            Verdict::CannotTell
        );
        // Without a threshold it is just worse.
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 96.0, false), None),
            Verdict::Worse
        );
        // Exactly on the threshold is not past it.
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 95.0, false), t),
            Verdict::CannotTell
        );
        assert_eq!(
            judge(LowerIsBetter, c(100.0, 105.0, false), t),
            Verdict::CannotTell
        );
        // Worse by less than the threshold, and bands that do not
        // overlap: worse, and a pass.
        let apart = compare(
            Measured {
                value: 100.0,
                spread: Some((99.0, 101.0)),
                sampled: None,
            },
            Measured {
                value: 97.0,
                spread: Some((96.0, 98.0)),
                sampled: None,
            },
        );
        assert_eq!(judge(HigherIsBetter, apart, t), Verdict::Worse);
        // Far worse, but only bands are known and they overlap: no
        // verdict either way.
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 70.0, true), t),
            Verdict::CannotTell
        );
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 98.0, true), t),
            Verdict::WithinNoise
        );
        // Better never regresses, nor does a figure with no direction.
        assert_eq!(
            judge(LowerIsBetter, c(100.0, 50.0, false), t),
            Verdict::Better
        );
        assert_eq!(judge(Unknown, c(10.0, 100.0, false), t), Verdict::Higher);
        // 0% flags any real loss.
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 99.9, false), Some(pct("0%"))),
            Verdict::Regressed
        );
    }

    fn sampled(base: &[f64], cand: &[f64]) -> Comparison {
        let m = |v: &[f64]| Measured {
            value: v.iter().sum::<f64>() / v.len() as f64,
            spread: iomark_model::figure::noise_band(v),
            sampled: iomark_model::figure::Sampled::of(v),
        };
        compare(m(base), m(cand))
    }

    #[test]
    fn samples_decide_between_regressed_no_regression_and_cannot_tell() {
        use Direction::*;
        let t = Some(pct("5%"));
        // Issue 46: two seconds each at 41.9-46.1 and 31.5-34.6 MB/s, the
        // bands overlapping, was "0.75x~ within noise" and passed.
        let issue = sampled(&[41.9, 46.1], &[31.5, 34.6]);
        assert!(issue.bands_overlap);
        assert_eq!(judge(HigherIsBetter, issue, t), Verdict::Regressed);
        // Two identical noisy pairs of seconds: a 5% loss is not ruled out.
        let same2 = sampled(&[96.0, 104.0], &[104.0, 96.0]);
        assert_eq!(judge(HigherIsBetter, same2, t), Verdict::CannotTell);
        // Ten seconds each with the same scatter rule it out.
        let a = [
            96.0, 104.0, 99.0, 101.0, 97.0, 103.0, 100.0, 98.0, 102.0, 100.0,
        ];
        let b = [
            101.0, 99.0, 103.0, 97.0, 100.0, 98.0, 102.0, 96.0, 104.0, 100.0,
        ];
        assert_eq!(
            judge(HigherIsBetter, sampled(&a, &b), t),
            Verdict::WithinNoise
        );
        // A 10% drop in two noisy seconds is never a pass.
        let drop = sampled(&[95.0, 105.0], &[85.0, 95.0]);
        assert!(matches!(
            judge(HigherIsBetter, drop, t),
            Verdict::Regressed | Verdict::CannotTell
        ));
        // Without a threshold the issue's pair is worse, and the noisy
        // identical pair cannot tell a 5% difference either.
        assert_eq!(judge(HigherIsBetter, issue, None), Verdict::Worse);
        assert_eq!(judge(HigherIsBetter, same2, None), Verdict::CannotTell);
        // Latency read the other way round.
        let lat = sampled(&[31.5, 34.6], &[41.9, 46.1]);
        assert_eq!(judge(LowerIsBetter, lat, t), Verdict::Regressed);
    }

    #[test]
    fn verdicts_read_as_words_and_serialise_as_their_names() {
        assert_eq!(Verdict::WithinNoise.words(), "within noise");
        assert_eq!(Verdict::WithinNoise.as_str(), "within_noise");
        assert_eq!(Verdict::Regressed.words(), "regressed");
        assert_eq!(Verdict::CannotTell.words(), "cannot tell");
        assert_eq!(Verdict::CannotTell.as_str(), "cannot_tell");
    }
}
