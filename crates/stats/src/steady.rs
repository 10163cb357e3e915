//! Steady state: whether a series of measurements has settled, by the two
//! definitions people hold results to.
//!
//! - fio's `steadystate` (`ss=iops:10%`, `ss_dur`, `ss_ramp`): a rolling
//!   window of one sample per check interval; the job stops once every
//!   sample is within the limit of the window's mean (`iops`, `bw`, `lat`),
//!   or once the least-squares slope is under it (`iops_slope`, …). A
//!   limit is a fixed value or a percentage of the window's mean.
//!   [`Criterion`] is that criterion; [`judge`] computes what
//!   fio's `steadystate.c` computes, from the same samples.
//! - SNIA PTS 2.0.2's (section 2.1, "Steady State"): a measurement window
//!   of five rounds whose tracking variable has a data excursion (its
//!   largest value less its smallest) within 20% of the window's average,
//!   and whose best-fit line's excursion across the window is within 10%
//!   of it, reached within 25 rounds. [`PtsRule`] holds those numbers and
//!   [`PtsRule::steady_round`] finds the first round that ends such a
//!   window.

pub use iomark_model::steady::{Criterion, Limit, Measure, Metric, ParseCriterionError};

/// A window judged by a [`Criterion`]: the figures fio's JSON
/// `steadystate` block reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// The window's mean.
    pub mean: f64,
    /// The largest distance of a sample from the mean.
    pub max_deviation: f64,
    /// The least-squares slope, per sample.
    pub slope: f64,
    /// The figure held to the limit: the deviation or the slope, as a
    /// percentage of the mean when the limit is one (signed, as fio
    /// reports a slope).
    pub criterion: f64,
    /// Whether `|criterion|` is under the limit.
    pub attained: bool,
}

/// The window `samples` (oldest first, one a check interval) judged by
/// `criterion` as fio judges it: none when there are fewer than two.
pub fn judge(criterion: &Criterion, samples: &[f64]) -> Option<Judged> {
    if samples.len() < 2 {
        return None;
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let max_deviation = samples.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
    let slope = least_squares(samples).0;
    let measured = match criterion.measure {
        Measure::Deviation => max_deviation,
        Measure::Slope => slope,
    };
    let (criterion, limit) = match criterion.limit {
        // A window of zeros has no percentage; fio's division gives a
        // NaN, never under the limit.
        Limit::Percent(limit) => (100.0 * measured / mean, limit),
        Limit::Absolute(limit) => (measured, limit),
    };
    Some(Judged {
        mean,
        max_deviation,
        slope,
        criterion,
        attained: criterion.abs() < limit,
    })
}

/// The least-squares line through `(i, samples[i])`: slope and intercept.
/// `samples` has at least two values.
fn least_squares(samples: &[f64]) -> (f64, f64) {
    let n = samples.len() as f64;
    let x_mean = (n - 1.0) / 2.0;
    let y_mean = samples.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in samples.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (y - y_mean);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    (slope, y_mean - slope * x_mean)
}

/// SNIA PTS's steady-state rule, with the specification's numbers by
/// default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PtsRule {
    /// Rounds in the measurement window (5).
    pub window: usize,
    /// The largest data excursion, a fraction of the window's average (0.20).
    pub data_excursion: f64,
    /// The largest excursion of the best-fit line across the window, a
    /// fraction of its average (0.10).
    pub slope_excursion: f64,
    /// Rounds after which a test stops unsteady (25).
    pub max_rounds: usize,
}

impl Default for PtsRule {
    fn default() -> Self {
        PtsRule {
            window: 5,
            data_excursion: 0.20,
            slope_excursion: 0.10,
            max_rounds: 25,
        }
    }
}

/// A PTS measurement window and how it measures up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PtsWindow {
    /// The round (from 1) the window ends with.
    pub last_round: usize,
    /// The tracking variable's average over the window.
    pub average: f64,
    /// Its largest value less its smallest.
    pub data_excursion: f64,
    /// The best-fit line's slope, per round.
    pub slope: f64,
    /// The best-fit line's value at the window's first round.
    pub intercept: f64,
    /// How far the best-fit line moves across the window: |slope| times
    /// the window's rounds less one.
    pub slope_excursion: f64,
    /// Whether the data excursion is within the rule's fraction.
    pub data_within: bool,
    /// Whether the line's excursion is within the rule's fraction.
    pub slope_within: bool,
}

impl PtsWindow {
    /// Both conditions hold: the window is steady.
    pub fn steady(&self) -> bool {
        self.data_within && self.slope_within
    }
}

impl PtsRule {
    /// The window of `self.window` rounds ending with round `last_round`
    /// (from 1) of `rounds`; none until there are that many rounds.
    pub fn window_at(&self, rounds: &[f64], last_round: usize) -> Option<PtsWindow> {
        if self.window < 2 || last_round < self.window || last_round > rounds.len() {
            return None;
        }
        let w = &rounds[last_round - self.window..last_round];
        let average = w.iter().sum::<f64>() / w.len() as f64;
        let max = w.iter().copied().fold(f64::MIN, f64::max);
        let min = w.iter().copied().fold(f64::MAX, f64::min);
        let (slope, intercept) = least_squares(w);
        let slope_excursion = slope.abs() * (w.len() - 1) as f64;
        Some(PtsWindow {
            last_round,
            average,
            data_excursion: max - min,
            slope,
            intercept,
            slope_excursion,
            data_within: max - min <= self.data_excursion * average.abs(),
            slope_within: slope_excursion <= self.slope_excursion * average.abs(),
        })
    }

    /// The first window within the rule among the first `max_rounds`
    /// rounds, or none: steady state not reached.
    pub fn steady_round(&self, rounds: &[f64]) -> Option<PtsWindow> {
        (self.window..=rounds.len().min(self.max_rounds))
            .filter_map(|last| self.window_at(rounds, last))
            .find(PtsWindow::steady)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crit(s: &str) -> Criterion {
        s.parse().unwrap()
    }

    #[test]
    fn criteria_read_as_fio_reads_them() {
        assert_eq!(
            crit("iops:10%"),
            Criterion {
                metric: Metric::Iops,
                measure: Measure::Deviation,
                limit: Limit::Percent(10.0)
            }
        );
        assert_eq!(crit("iops_slope:.1%").limit, Limit::Percent(0.1));
        assert_eq!(crit("bw:12").limit, Limit::Absolute(12.0));
        assert_eq!(crit("bw_slope:1m").limit, Limit::Absolute(1048576.0));
        assert_eq!(crit("lat:500").limit, Limit::Absolute(500_000.0));
        assert_eq!(crit("lat_slope:2ms").limit, Limit::Absolute(2_000_000.0));
        assert_eq!(crit("bw_slope:1%").fio_form(), "bw_slope:1.000000%");
        assert_eq!(crit("iops:5000").fio_form(), "iops:5000.000000");
        assert_eq!(crit("iops_slope:.1%").to_string(), "iops_slope:0.1%");
        assert_eq!(crit("lat:2ms").to_string(), "lat:2000000ns");
        // Stored as written, and read back the same.
        for text in ["iops_slope:0.1%", "bw:1048576", "lat_slope:250000"] {
            assert_eq!(crit(text).to_string().parse::<Criterion>(), Ok(crit(text)));
        }
        for bad in ["iops", "iops:", "iops:x%", "rate:10%", "iops:0%", "bw:-1"] {
            let e = bad.parse::<Criterion>().unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("e.g. iops:10%"), "{e}");
        }
    }

    #[test]
    fn a_window_is_judged_by_its_largest_deviation_or_its_slope() {
        let w = [100.0, 104.0, 96.0, 100.0];
        let j = judge(&crit("iops:5%"), &w).unwrap();
        assert_eq!((j.mean, j.max_deviation), (100.0, 4.0));
        assert!((j.criterion - 4.0).abs() < 1e-12 && j.attained);
        assert!(!judge(&crit("iops:4%"), &w).unwrap().attained);
        assert!(!judge(&crit("iops:4"), &w).unwrap().attained);
        // y = 10 + 2i: the slope is 2 a sample, 2/13 of the mean 13.
        let rising = [10.0, 12.0, 14.0, 16.0];
        let j = judge(&crit("bw_slope:16%"), &rising).unwrap();
        assert!((j.slope - 2.0).abs() < 1e-12);
        assert!((j.criterion - 200.0 / 13.0).abs() < 1e-9 && j.attained);
        // A falling rate has a negative slope, judged by its size.
        let falling = [16.0, 14.0, 12.0, 10.0];
        let j = judge(&crit("bw_slope:15%"), &falling).unwrap();
        assert!(j.criterion < 0.0 && !j.attained);
        assert_eq!(judge(&crit("iops:1%"), &[1.0]), None);
        assert!(!judge(&crit("iops:1%"), &[0.0, 0.0]).unwrap().attained);
    }

    #[test]
    fn pts_finds_the_first_window_within_both_excursions() {
        let rule = PtsRule::default();
        // Falling to 100 by round 6, then flat with a 10% wobble.
        let rounds = [
            400.0, 300.0, 200.0, 150.0, 120.0, 100.0, 105.0, 95.0, 100.0, 104.0,
        ];
        let w = rule.steady_round(&rounds).unwrap();
        assert_eq!(w.last_round, 10);
        assert!(w.steady() && (w.average - 100.8).abs() < 1e-9);
        // Rounds 5..9 (120 down to 95) move 25%, more than 20%.
        let before = rule.window_at(&rounds, 9).unwrap();
        assert!(!before.data_within);
        // Within 20% every time, but rising 4 a round: the line moves 16
        // across the window, over 10% of its average of about 108.
        let creeping = [100.0, 104.0, 108.0, 112.0, 116.0];
        let w = rule.window_at(&creeping, 5).unwrap();
        assert!(w.data_within && !w.slope_within, "{w:?}");
        assert!((w.slope_excursion - 16.0).abs() < 1e-9);
        assert_eq!(rule.steady_round(&creeping), None);
    }

    #[test]
    fn a_rate_that_keeps_alternating_is_never_steady_by_pts() {
        let rule = PtsRule::default();
        let flip: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 100.0 } else { 60.0 })
            .collect();
        assert_eq!(rule.steady_round(&flip), None);
        // Past round 25 nothing counts, even a steady stretch.
        let late: Vec<f64> = flip[..24].iter().copied().chain([80.0; 6]).collect();
        assert_eq!(rule.steady_round(&late), None);
        assert!(rule.window_at(&late, 30).unwrap().steady());
    }
}
