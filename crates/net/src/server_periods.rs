//! Which finished tests a server stores together: those whose measured
//! spans overlap, a busy period. Tests end on threads of their own and are
//! handed over as they end, so a period is closed only once no test still
//! running can overlap it: every running test was accepted after the
//! period's last end. A test accepted during another's teardown (its
//! client connected as the last one left) may start measuring only after
//! that one ended: it then starts a period of its own.

use std::time::SystemTime;

/// A test's measured span: when it started and when it finished.
pub(crate) trait Span {
    fn started(&self) -> SystemTime;
    fn finished(&self) -> SystemTime;
}

impl Span for crate::TestReport {
    fn started(&self) -> SystemTime {
        self.started
    }
    /// The end of the measurement (omit plus the streams' time from the
    /// start), not of the results exchange after it, which a loaded host
    /// may take a while to finish while the next client already measures.
    fn finished(&self) -> SystemTime {
        let streams = self.totals.iter().map(|t| t.seconds).fold(0.0, f64::max);
        let secs = f64::from(self.params.omit) + streams;
        self.started + std::time::Duration::from_secs_f64(secs.clamp(0.0, 1e9))
    }
}

/// A test with its number, as a server hands it over.
impl<T: Span> Span for (u32, T) {
    fn started(&self) -> SystemTime {
        self.1.started()
    }
    fn finished(&self) -> SystemTime {
        self.1.finished()
    }
}

/// The tests of the open period, and when each running test was accepted.
pub(crate) struct Periods<T> {
    open: Vec<T>,
    running: Vec<(u32, SystemTime)>,
}

impl<T: Span> Periods<T> {
    pub fn new() -> Periods<T> {
        Periods {
            open: Vec::new(),
            running: Vec::new(),
        }
    }

    /// Test `n` was accepted at `at`.
    pub fn accepted(&mut self, n: u32, at: SystemTime) {
        self.running.push((n, at));
    }

    /// Whether any test runs.
    pub fn busy(&self) -> bool {
        !self.running.is_empty()
    }

    /// Test `n` ended, with its report when it ran to the end; returns the
    /// periods that closed, oldest first.
    pub fn ended(&mut self, n: u32, report: Option<T>) -> Vec<Vec<T>> {
        self.running.retain(|&(m, _)| m != n);
        let mut closed = Vec::new();
        if let Some(r) = report {
            // It started after the open period's last end: that period is
            // over (nothing running can overlap it, or this one would not
            // have been handed over first).
            if self.open_end().is_some_and(|end| r.started() > end) {
                closed.push(std::mem::take(&mut self.open));
            }
            self.open.push(r);
        }
        if let Some(end) = self.open_end() {
            if self.running.iter().all(|&(_, at)| at > end) {
                closed.push(std::mem::take(&mut self.open));
            }
        }
        closed
    }

    /// What is open when the server stops: the tests that ended.
    pub fn rest(&mut self) -> Vec<T> {
        std::mem::take(&mut self.open)
    }

    fn open_end(&self) -> Option<SystemTime> {
        self.open.iter().map(Span::finished).max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[derive(Debug, PartialEq)]
    struct T(u64, u64);
    impl Span for T {
        fn started(&self) -> SystemTime {
            at(self.0)
        }
        fn finished(&self) -> SystemTime {
            at(self.1)
        }
    }
    fn at(s: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(s)
    }

    #[test]
    fn overlapping_tests_close_together_once_none_runs() {
        let mut p = Periods::new();
        p.accepted(1, at(0));
        p.accepted(2, at(1));
        assert!(p.ended(1, Some(T(0, 10))).is_empty(), "2 may still overlap");
        assert_eq!(p.ended(2, Some(T(2, 12))), [vec![T(0, 10), T(2, 12)]]);
        assert!(!p.busy());
    }

    #[test]
    fn a_test_accepted_during_anothers_teardown_is_a_period_of_its_own() {
        let mut p = Periods::new();
        p.accepted(1, at(0));
        // Accepted at 10 while 1 was tearing down (it finished measuring
        // at 10 too), measured from 11.
        p.accepted(2, at(10));
        assert!(p.ended(1, Some(T(0, 10))).is_empty());
        assert_eq!(
            p.ended(2, Some(T(11, 20))),
            [vec![T(0, 10)], vec![T(11, 20)]]
        );
    }

    #[test]
    fn a_test_accepted_after_the_period_ended_does_not_hold_it_open() {
        let mut p = Periods::new();
        p.accepted(1, at(0));
        p.accepted(2, at(1));
        assert!(p.ended(1, Some(T(0, 5))).is_empty());
        p.accepted(3, at(7));
        // 2 ends at 6; 3, running, was accepted after: the period closes.
        assert_eq!(p.ended(2, Some(T(1, 6))), [vec![T(0, 5), T(1, 6)]]);
        assert!(p.busy());
        // A test that failed stores nothing and closes nothing else.
        assert!(p.ended(3, None).is_empty());
        assert!(p.rest().is_empty());
    }
}
