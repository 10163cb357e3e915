//! A job that ends once steady (fio's `ss`, `ss_dur`, `ss_ramp`): each
//! second's interval, from the steady-state ramp on, goes into a rolling
//! window that `iomark_stats::steady` judges as fio's `steadystate.c` does;
//! the first window within the criterion ends the job.

use std::collections::VecDeque;
use std::time::Duration;

use iomark_model::steady::{Metric, SteadyStateOutcome, SteadyStateSpec};
use iomark_model::units::Nanos;
use iomark_stats::steady::judge;

use super::live::Interval;

/// One second's rates.
#[derive(Debug, Clone, Copy)]
struct Sample {
    iops: f64,
    bw: f64,
    lat_ns: f64,
}

/// The window of a job with a steady-state criterion, and how it stands.
pub(super) struct SteadyWatch {
    spec: SteadyStateSpec,
    /// Samples in a full window: one a second.
    len: usize,
    window: VecDeque<Sample>,
    outcome: SteadyStateOutcome,
}

impl SteadyWatch {
    pub(super) fn new(spec: SteadyStateSpec) -> SteadyWatch {
        let len = (spec.window.as_duration().as_secs() as usize).max(2);
        SteadyWatch {
            spec,
            len,
            window: VecDeque::with_capacity(len),
            outcome: SteadyStateOutcome {
                spec,
                attained: false,
                attained_at: None,
                criterion: None,
                max_deviation: 0.0,
                slope: 0.0,
                iops: Vec::new(),
                bw: Vec::new(),
                lat_ns: Vec::new(),
            },
        }
    }

    /// Takes one whole interval of the measured time; true once the
    /// criterion is met (then the job is to end).
    pub(super) fn observe(&mut self, iv: &Interval) -> bool {
        if self.outcome.attained {
            return true;
        }
        // Samples start once the ramp is over: an interval that began
        // inside it is the ramp's.
        let began = iv.offset.saturating_sub(iv.duration);
        let secs = iv.duration.as_secs_f64();
        if began < self.spec.ramp.as_duration() || secs <= 0.0 {
            return false;
        }
        if self.window.len() == self.len {
            self.window.pop_front();
        }
        self.window.push_back(Sample {
            iops: iv.ios as f64 / secs,
            bw: iv.bytes as f64 / secs,
            lat_ns: iv.latency.map_or(0.0, |l| l.mean_ns as f64),
        });
        if self.window.len() < self.len {
            return false;
        }
        let tracked: Vec<f64> = self
            .window
            .iter()
            .map(|s| match self.spec.criterion.metric {
                Metric::Iops => s.iops,
                Metric::Bandwidth => s.bw,
                Metric::Latency => s.lat_ns,
            })
            .collect();
        let Some(judged) = judge(&self.spec.criterion, &tracked) else {
            return false;
        };
        let o = &mut self.outcome;
        o.attained = judged.attained;
        o.attained_at = judged.attained.then(|| Nanos::from_duration(iv.offset));
        o.criterion = Some(judged.criterion);
        o.max_deviation = judged.max_deviation;
        o.slope = judged.slope;
        o.iops = self.window.iter().map(|s| s.iops).collect();
        o.bw = self.window.iter().map(|s| s.bw).collect();
        o.lat_ns = self.window.iter().map(|s| s.lat_ns).collect();
        judged.attained
    }

    /// How it came out. A job that ended before a window filled reports
    /// the samples it had, and no criterion.
    pub(super) fn outcome(mut self) -> SteadyStateOutcome {
        if self.outcome.criterion.is_none() {
            let o = &mut self.outcome;
            o.iops = self.window.iter().map(|s| s.iops).collect();
            o.bw = self.window.iter().map(|s| s.bw).collect();
            o.lat_ns = self.window.iter().map(|s| s.lat_ns).collect();
        }
        self.outcome
    }
}

/// A whole second, so a window's samples weigh alike; the job's last,
/// shorter interval is not judged.
pub(super) fn is_whole(iv: &Interval, every: Duration) -> bool {
    iv.duration + Duration::from_millis(50) >= every
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::live::IntervalLatency;

    fn second(at: u64, ios: u64) -> Interval {
        Interval {
            offset: Duration::from_secs(at),
            duration: Duration::from_secs(1),
            bytes: ios * 4096,
            ios,
            latency: Some(IntervalLatency {
                mean_ns: 1_000_000_000 / ios.max(1),
                p50_ns: 0,
                p99_ns: 0,
                max_ns: 0,
            }),
            counts: Default::default(),
        }
    }

    fn spec(criterion: &str, window: u64, ramp: u64) -> SteadyStateSpec {
        SteadyStateSpec {
            criterion: criterion.parse().unwrap(),
            window: Nanos::from_secs(window),
            ramp: Nanos::from_secs(ramp),
        }
    }

    #[test]
    fn the_first_window_within_the_limit_ends_the_job() {
        let mut w = SteadyWatch::new(spec("iops:5%", 3, 0));
        // Falling 1000, 800, 600, then flat at 500 within 2%.
        let rates = [1000, 800, 600, 500, 505, 495, 500];
        let ended: Vec<bool> = rates
            .iter()
            .enumerate()
            .map(|(i, &r)| w.observe(&second(i as u64 + 1, r)))
            .collect();
        assert_eq!(ended, [false, false, false, false, false, true, true]);
        let o = w.outcome();
        assert!(o.attained);
        assert_eq!(o.attained_at, Some(Nanos::from_secs(6)));
        assert_eq!(o.iops, [500.0, 505.0, 495.0]);
        assert_eq!(o.bw, [500.0 * 4096.0, 505.0 * 4096.0, 495.0 * 4096.0]);
        assert!((o.criterion.unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_ramp_is_not_sampled_and_a_short_job_reports_what_it_had() {
        let mut w = SteadyWatch::new(spec("bw_slope:1%", 4, 2));
        for at in 1..=4 {
            assert!(!w.observe(&second(at, 100)));
        }
        // Two samples after the ramp, of a window of four.
        let o = w.outcome();
        assert!(!o.attained && o.criterion.is_none());
        assert_eq!(o.iops, [100.0, 100.0]);
    }

    #[test]
    fn a_rate_that_keeps_alternating_never_ends_the_job() {
        let mut w = SteadyWatch::new(spec("iops:10%", 4, 0));
        for at in 1..=20 {
            assert!(!w.observe(&second(at, if at % 2 == 0 { 100 } else { 60 })));
        }
        let o = w.outcome();
        assert!(!o.attained && o.attained_at.is_none());
        assert!((o.criterion.unwrap() - 25.0).abs() < 1e-9);
    }
}
