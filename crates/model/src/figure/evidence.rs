//! Whether two figures differ: the one rule behind every `~`, every
//! verdict and the CI gate (`results compare`, the report's comparison
//! table, serve's compare), issue 46.
//!
//! A figure summarises samples: a run's seconds, a profile's passes,
//! `--repeat`'s runs, GNOME's access times. What they say about the
//! figure is their mean, its standard error and how many independent
//! samples they are worth ([`Sampled`]). Two figures are compared as the
//! ratio of their means, with a confidence interval for that ratio
//! ([`RatioInterval`]: Welch's, on the log scale, degrees of freedom from
//! the samples). The interval, not a band around each figure, decides:
//! two bands of two samples each were so wide that a 25% loss behind a
//! throttle was "within noise" (issue 46).
//!
//! Three outcomes against a threshold ([`Evidence`]): the interval rules
//! out a loss of the threshold's size (no regression), the loss is
//! significant and past the threshold (regressed), or neither: the samples
//! are too few or too scattered to judge that threshold (cannot tell). Why
//! these statistics fit per-second samples is in docs/warnings.md.

use serde::{Deserialize, Serialize};

/// What a figure's samples say about their mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sampled {
    /// The samples' mean.
    pub mean: f64,
    /// Their standard deviation (n - 1).
    pub sd: f64,
    /// How many there were.
    pub n: usize,
    /// How many independent samples they are worth: `n` shrunk by their
    /// lag-1 autocorrelation (a slow second tends to follow a slow second,
    /// so ten seconds are not ten independent draws).
    pub n_eff: f64,
}

/// Fewer samples than this estimate no autocorrelation: from three or
/// four, the lag-1 estimate is mostly its own bias (about -1/n).
const MIN_FOR_AUTOCORRELATION: usize = 5;

impl Sampled {
    /// The statistics of `samples`; none for fewer than two or a value
    /// that is not finite.
    pub fn of(samples: &[f64]) -> Option<Sampled> {
        let n = samples.len();
        if n < 2 || samples.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let nf = n as f64;
        let mean = samples.iter().sum::<f64>() / nf;
        let ss: f64 = samples.iter().map(|v| (v - mean).powi(2)).sum();
        let sd = (ss / (nf - 1.0)).sqrt();
        let mut n_eff = nf;
        if n >= MIN_FOR_AUTOCORRELATION && ss > 0.0 {
            let lag1: f64 = samples
                .windows(2)
                .map(|w| (w[0] - mean) * (w[1] - mean))
                .sum();
            let r1 = (lag1 / ss).clamp(-1.0, 0.99);
            // Only a positive correlation shrinks n: a negative estimate
            // on a few samples is mostly noise, and would claim more
            // evidence than was taken.
            if r1 > 0.0 {
                n_eff = (nf * (1.0 - r1) / (1.0 + r1)).clamp(2.0, nf);
            }
        }
        Some(Sampled { mean, sd, n, n_eff })
    }

    /// The same samples through `f`, a scaling (MB/s to IOPS).
    pub fn scaled(self, f: impl Fn(f64) -> f64) -> Sampled {
        let k = if self.mean != 0.0 {
            f(self.mean) / self.mean
        } else {
            0.0
        };
        Sampled {
            mean: self.mean * k,
            sd: self.sd * k.abs(),
            ..self
        }
    }

    /// The squared standard error of the mean, relative to the mean
    /// (the variance of its logarithm, to first order).
    fn rel_var(self) -> f64 {
        (self.sd / self.mean).powi(2) / self.n_eff
    }

    /// Degrees of freedom of that variance.
    fn df(self) -> f64 {
        (self.n_eff - 1.0).max(1.0)
    }
}

/// One-sided 95% quantiles of Student's t for 1 to 30 degrees of
/// freedom (a two-sided 90% interval: each end is a one-sided 95% bound,
/// and the gate asks one-sided questions, "worse by more than 5%?").
const T95_ONE_SIDED: [f64; 30] = [
    6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771,
    1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706,
    1.703, 1.701, 1.699, 1.697,
];

/// The one-sided 95% t quantile for `df` degrees of freedom (Welch's are
/// fractional: interpolated between the table's).
fn t95(df: f64) -> f64 {
    let df = if df.is_finite() { df.max(1.0) } else { 1e9 };
    if df >= 30.0 {
        // Towards the normal's 1.645; within 0.2% of the true quantile.
        return 1.645 + (1.697 - 1.645) * 30.0 / df;
    }
    let i = df.floor() as usize;
    let frac = df - i as f64;
    let lo = T95_ONE_SIDED[i - 1];
    let hi = T95_ONE_SIDED.get(i).copied().unwrap_or(1.697);
    lo + (hi - lo) * frac
}

/// A confidence interval for `candidate / baseline`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioInterval {
    /// The ratio of the means.
    pub ratio: f64,
    /// Its lower 95% bound.
    pub lo: f64,
    /// Its upper 95% bound.
    pub hi: f64,
}

impl RatioInterval {
    /// Welch's interval for the ratio of two means, on the log scale
    /// (each mean's relative standard error is that of its logarithm),
    /// with Welch-Satterthwaite degrees of freedom from the effective
    /// sample sizes. None where a mean is not positive.
    pub fn of(baseline: Sampled, candidate: Sampled) -> Option<RatioInterval> {
        if baseline.mean <= 0.0 || candidate.mean <= 0.0 {
            return None;
        }
        let ratio = candidate.mean / baseline.mean;
        let (vb, vc) = (baseline.rel_var(), candidate.rel_var());
        let v = vb + vc;
        if !ratio.is_finite() || !v.is_finite() {
            return None;
        }
        if v == 0.0 {
            // Samples that never moved: the ratio is exact.
            return Some(RatioInterval {
                ratio,
                lo: ratio,
                hi: ratio,
            });
        }
        let df = v * v / (vb * vb / baseline.df() + vc * vc / candidate.df());
        let half = t95(df) * v.sqrt();
        Some(RatioInterval {
            ratio,
            lo: ratio * (-half).exp(),
            hi: ratio * half.exp(),
        })
    }
}

impl RatioInterval {
    /// The interval in which one more run's figure is expected, relative
    /// to the mean of `runs` (a baseline of several runs taken over time:
    /// their spread is the run-to-run spread, drift included), as a ratio
    /// `candidate / mean`: the prediction interval of the runs' mean, on
    /// the log scale, widened by `sqrt(1 + 1/n)` for the candidate's own
    /// draw. None where a value is not positive.
    pub fn predicted(runs: Sampled, candidate: f64) -> Option<RatioInterval> {
        if runs.mean <= 0.0 || candidate <= 0.0 {
            return None;
        }
        let ratio = candidate / runs.mean;
        let v = (runs.sd / runs.mean).powi(2) * (1.0 + 1.0 / runs.n_eff);
        if !ratio.is_finite() || !v.is_finite() {
            return None;
        }
        let half = t95(runs.df()) * v.sqrt();
        Some(RatioInterval {
            ratio,
            lo: ratio * (-half).exp(),
            hi: ratio * half.exp(),
        })
    }
}

/// Which way a figure gets better, as [`Evidence`] needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Bandwidth, IOPS.
    Higher,
    /// Latency.
    Lower,
    /// CPU, depth reached: a change either way, never a loss.
    Neither,
}

/// What a comparison shows about a loss of the threshold's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Significantly better.
    Better,
    /// The interval rules out a loss of the threshold's size and holds no
    /// change at all: within noise, by a test that could have seen the
    /// threshold.
    WithinNoise,
    /// Significantly worse, but the interval rules out a loss of the
    /// threshold's size.
    WorseWithin,
    /// Worse by more than the threshold at the point estimate, the whole
    /// interval worse than half the threshold.
    Loss,
    /// Significantly worse, but neither a [`Evidence::Loss`] nor a loss
    /// of the threshold's size ruled out.
    WorseUnsure,
    /// Significantly higher or lower, for a figure with no better way.
    Changed,
    /// The interval holds both no change and a loss (or change) of the
    /// threshold's size: too few or too scattered samples to judge it.
    CannotTell,
}

/// What the interval `iv` shows in direction `better` against a loss of
/// `threshold` (a fraction: 0.05). The rule (docs/warnings.md, "The
/// gate"): a loss is the point estimate worse than the threshold and the
/// whole interval worse than half of it; no loss of that size is the
/// whole interval better than the threshold; anything else cannot tell.
pub fn weigh(iv: RatioInterval, better: Better, threshold: f64) -> Evidence {
    // How much worse as a fraction of the baseline: a bandwidth at 0.9x
    // and a latency at 1.1x are both 10% worse. `least` is the interval's
    // kindest end, `most` its harshest.
    let (point, least, most) = match better {
        Better::Higher => (1.0 - iv.ratio, 1.0 - iv.hi, 1.0 - iv.lo),
        Better::Lower => (iv.ratio - 1.0, iv.lo - 1.0, iv.hi - 1.0),
        Better::Neither => {
            // Either way is a change; the threshold both ways.
            return if iv.lo > 1.0 || iv.hi < 1.0 {
                Evidence::Changed
            } else if iv.lo >= 1.0 - threshold && iv.hi <= 1.0 / (1.0 - threshold).max(1e-9) {
                Evidence::WithinNoise
            } else {
                Evidence::CannotTell
            };
        }
    };
    // Ratios this close to a threshold count as on it, so `5%` does not
    // flag a figure exactly 5% worse for a rounding error.
    const EPSILON: f64 = 1e-9;
    let rules_out_threshold = most <= threshold + EPSILON;
    if least > 0.0 {
        // A loss must clear half the threshold at the interval's kindest
        // end, not only no change: the seconds of one run cannot see the
        // machine shift between runs, and identical pairs on a busy VM
        // were "regressed" 3 times in 12 on p99s whose seconds agreed
        // tightly while the runs sat a few percent apart.
        if point > threshold + EPSILON && least > threshold / 2.0 {
            Evidence::Loss
        } else if rules_out_threshold {
            Evidence::WorseWithin
        } else {
            Evidence::WorseUnsure
        }
    } else if most < 0.0 {
        Evidence::Better
    } else if rules_out_threshold {
        Evidence::WithinNoise
    } else {
        Evidence::CannotTell
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Sampled {
        Sampled::of(v).unwrap()
    }

    fn weigh_samples(base: &[f64], cand: &[f64], t: f64) -> Evidence {
        weigh(
            RatioInterval::of(s(base), s(cand)).unwrap(),
            Better::Higher,
            t,
        )
    }

    #[test]
    fn one_more_run_is_judged_against_where_the_baseline_runs_say_it_falls() {
        // Five runs over time, 3% apart: the run-to-run spread, drift
        // included. Welch's interval of their mean would be narrow; one
        // more run is expected within about +-7.5%.
        let runs = s(&[100.0, 104.0, 96.0, 102.0, 98.0]);
        let iv = RatioInterval::predicted(runs, 100.0).unwrap();
        assert!(
            (iv.lo - 0.929).abs() < 0.002 && (iv.hi - 1.077).abs() < 0.002,
            "{iv:?}"
        );
        // A 15% loss falls outside it; 8% and no change cannot tell 5%.
        let judge = |c: f64| {
            weigh(
                RatioInterval::predicted(runs, c).unwrap(),
                Better::Higher,
                0.05,
            )
        };
        assert_eq!(judge(85.0), Evidence::Loss);
        assert_eq!(judge(92.0), Evidence::WorseUnsure);
        assert_eq!(judge(100.0), Evidence::CannotTell);
        // Steadier runs, 1% apart: no change rules a 5% loss out.
        let steady = s(&[100.0, 101.0, 99.0, 100.5, 99.5]);
        let iv = RatioInterval::predicted(steady, 100.0).unwrap();
        assert_eq!(weigh(iv, Better::Higher, 0.05), Evidence::WithinNoise);
        assert_eq!(RatioInterval::predicted(runs, 0.0), None);
    }

    #[test]
    fn the_issues_throttled_pair_is_a_loss() {
        // Issue 46: per second 41.9-46.1 MB/s against 31.5-34.6 MB/s, two
        // seconds each, was "0.75x~ within noise".
        let e = weigh_samples(&[41.9, 46.1], &[31.5, 34.6], 0.05);
        assert_eq!(e, Evidence::Loss);
        // Read as latencies (the slow run's seconds higher), the same.
        let iv = RatioInterval::of(s(&[31.5, 34.6]), s(&[41.9, 46.1])).unwrap();
        assert_eq!(weigh(iv, Better::Lower, 0.05), Evidence::Loss);
    }

    #[test]
    fn a_ten_percent_drop_in_two_noisy_seconds_is_never_a_pass() {
        // Seconds scattering 5-10%, 10% less: a loss or cannot tell.
        for (base, cand) in [
            ([100.0, 108.0], [90.0, 97.0]),
            ([96.0, 104.0], [86.0, 94.0]),
            ([95.0, 105.0], [85.0, 95.0]),
            ([100.0, 100.5], [90.0, 90.4]),
        ] {
            let e = weigh_samples(&base, &cand, 0.05);
            assert!(
                matches!(e, Evidence::Loss | Evidence::CannotTell),
                "{base:?} {cand:?}: {e:?}"
            );
        }
        // Tight seconds show it for the loss it is.
        assert_eq!(
            weigh_samples(&[100.0, 100.5], &[90.0, 90.4], 0.05),
            Evidence::Loss
        );
    }

    #[test]
    fn identical_noisy_runs_are_no_regression_when_the_samples_can_show_it() {
        // Two seconds each, scattering 8%: a 5% loss cannot be ruled out.
        assert_eq!(
            weigh_samples(&[96.0, 104.0], &[104.0, 96.0], 0.05),
            Evidence::CannotTell
        );
        // Ten seconds each, the same scatter: it can.
        let a = [
            96.0, 104.0, 99.0, 101.0, 97.0, 103.0, 100.0, 98.0, 102.0, 100.0,
        ];
        let b = [
            101.0, 99.0, 103.0, 97.0, 100.0, 98.0, 102.0, 96.0, 104.0, 100.0,
        ];
        assert_eq!(weigh_samples(&a, &b, 0.05), Evidence::WithinNoise);
        // The same figures never regress on each other.
        assert_eq!(weigh_samples(&a, &a, 0.05), Evidence::WithinNoise);
    }

    #[test]
    fn autocorrelated_seconds_count_as_fewer_samples() {
        // A slow stretch then a fast one: ten seconds worth far fewer.
        let drift = [
            90.0, 91.0, 92.0, 93.0, 94.0, 106.0, 107.0, 108.0, 109.0, 110.0,
        ];
        let d = s(&drift);
        assert!(d.n_eff < 4.0, "{d:?}");
        // Alternating seconds are not credited beyond their count.
        let alt = s(&[90.0, 110.0, 90.0, 110.0, 90.0, 110.0]);
        assert_eq!(alt.n_eff, 6.0);
        // Fewer than five: no estimate.
        assert_eq!(s(&[1.0, 2.0, 3.0, 4.0]).n_eff, 4.0);
    }

    #[test]
    fn access_times_far_apart_are_not_within_noise() {
        // GNOME Disks' access times, 2-5x apart (issue 46), in ms.
        let fast: Vec<f64> = (0..100).map(|i| 0.2 + 0.01 * (i % 7) as f64).collect();
        let slow: Vec<f64> = (0..100).map(|i| 0.6 + 0.05 * (i % 5) as f64).collect();
        let iv = RatioInterval::of(s(&fast), s(&slow)).unwrap();
        assert_eq!(weigh(iv, Better::Lower, 0.05), Evidence::Loss);
    }

    #[test]
    fn better_worse_and_directionless_figures() {
        let a = [100.0, 101.0, 99.0, 100.0, 100.5, 99.5];
        let up: Vec<f64> = a.iter().map(|v| v * 1.2).collect();
        let down: Vec<f64> = a.iter().map(|v| v * 0.97).collect();
        assert_eq!(weigh_samples(&a, &up, 0.05), Evidence::Better);
        assert_eq!(weigh_samples(&a, &down, 0.05), Evidence::WorseWithin);
        assert_eq!(weigh_samples(&a, &down, 0.0), Evidence::Loss);
        let iv = RatioInterval::of(s(&a), s(&up)).unwrap();
        assert_eq!(weigh(iv, Better::Neither, 0.05), Evidence::Changed);
        let iv = RatioInterval::of(s(&a), s(&a)).unwrap();
        assert_eq!(weigh(iv, Better::Neither, 0.05), Evidence::WithinNoise);
        // Exactly on the threshold is not past it.
        let exact = RatioInterval {
            ratio: 0.95,
            lo: 0.95,
            hi: 0.95,
        };
        assert_eq!(weigh(exact, Better::Higher, 0.05), Evidence::WorseWithin);
    }

    #[test]
    fn a_loss_must_clear_half_the_threshold_not_only_no_change() {
        // 7% worse, the interval's kind end 1% worse: a shift between runs
        // could be all of it. Not a loss, not a pass.
        let shifted = RatioInterval {
            ratio: 0.93,
            lo: 0.88,
            hi: 0.99,
        };
        assert_eq!(weigh(shifted, Better::Higher, 0.05), Evidence::WorseUnsure);
        // The kind end 3% worse: past half of 5%, a loss.
        let clear = RatioInterval {
            hi: 0.97,
            ..shifted
        };
        assert_eq!(weigh(clear, Better::Higher, 0.05), Evidence::Loss);
        // The same for a latency 7% up.
        let lat = RatioInterval {
            ratio: 1.07,
            lo: 1.01,
            hi: 1.12,
        };
        assert_eq!(weigh(lat, Better::Lower, 0.05), Evidence::WorseUnsure);
    }

    #[test]
    fn t_quantiles_interpolate_and_approach_the_normal() {
        assert_eq!(t95(1.0), 6.314);
        assert_eq!(t95(2.0), 2.920);
        assert!((t95(1.5) - 4.617).abs() < 1e-3);
        assert!((t95(120.0) - 1.658).abs() < 2e-3);
        assert!((t95(f64::INFINITY) - 1.645).abs() < 1e-6);
    }

    #[test]
    fn scaling_keeps_the_relative_scatter() {
        let b = s(&[100.0, 110.0]).scaled(|v| v / 4.0);
        assert_eq!(b.mean, 26.25);
        assert!((b.sd / b.mean - s(&[100.0, 110.0]).sd / 105.0).abs() < 1e-12);
    }
}
