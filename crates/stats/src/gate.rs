//! Judging a comparison: better, worse, inside the noise, or a regression
//! past a threshold a CI job set.
//!
//! A ratio alone misleads: `1.73x` is a gain on a bandwidth and a loss on
//! a latency. [`judge`] reads the ratio in the figure's [`Direction`], and a
//! difference inside both runs' spreads is never a regression, however
//! large, because the runs themselves scattered that much.

use std::fmt;
use std::str::FromStr;

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
    /// The two spreads overlap: the runs scattered more than they differ.
    WithinNoise,
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
            Verdict::NoRatio => "no ratio",
            v => v.as_str(),
        }
    }
}

/// Ratios this close to a threshold count as on it, so `5%` does not
/// flag a figure exactly 5% worse for a rounding error.
const EPSILON: f64 = 1e-9;

/// What comparison `c` of a figure that gets better in `direction` means;
/// with a `threshold`, a figure worse by more than it (and outside the
/// noise) is [`Verdict::Regressed`].
pub fn judge(direction: Direction, c: Comparison, threshold: Option<WorseThreshold>) -> Verdict {
    let Some(r) = c.ratio else {
        return Verdict::NoRatio;
    };
    if c.within_noise {
        return Verdict::WithinNoise;
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
            return if r > 1.0 {
                Verdict::Higher
            } else {
                Verdict::Lower
            }
        }
    };
    if worse_by < 0.0 {
        Verdict::Better
    } else if threshold.is_some_and(|t| worse_by > t.fraction() + EPSILON) {
        Verdict::Regressed
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
            },
            Measured {
                value: cand,
                spread: spread(cand),
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
        // Worse, but not by more than 5%.
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 96.0, false), t),
            Verdict::Worse
        );
        assert_eq!(
            judge(LowerIsBetter, c(100.0, 104.0, false), t),
            Verdict::Worse
        );
        // Exactly on the threshold is not past it.
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 95.0, false), t),
            Verdict::Worse
        );
        assert_eq!(
            judge(LowerIsBetter, c(100.0, 105.0, false), t),
            Verdict::Worse
        );
        // Far worse, but the spreads overlap: the runs scatter that much.
        assert_eq!(
            judge(HigherIsBetter, c(100.0, 70.0, true), t),
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

    #[test]
    fn verdicts_read_as_words_and_serialise_as_their_names() {
        assert_eq!(Verdict::WithinNoise.words(), "within noise");
        assert_eq!(Verdict::WithinNoise.as_str(), "within_noise");
        assert_eq!(Verdict::Regressed.words(), "regressed");
    }
}
