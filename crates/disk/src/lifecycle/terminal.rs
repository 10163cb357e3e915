//! The progress line on a terminal (feature `terminal`): test k of N, the
//! step, live MB/s and IOPS, and the time left in the whole run, on
//! stderr, only when stderr is a terminal and the user did not ask for
//! quiet. Where a run is and how long it has left are the outline's
//! ([`Tracker`]); this module only draws them, as a [`RunDisplay`].

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::RunDisplay;
use crate::profiles::outline::{Eta, Outline, Tracker};
use crate::runner::Progress;

/// What one progress line shows.
#[derive(Debug, Clone, Default)]
pub struct Status<'a> {
    /// The step running: a job, a pass, a phase, a pause.
    pub label: &'a str,
    /// What the steps are counted as: "test", or "probe" for the short
    /// probe before a run's tests.
    pub counted: &'a str,
    /// Test (or probe) k of N.
    pub test: Option<(u32, u32)>,
    /// Bytes per second now; `None` in a pause.
    pub rate: Option<f64>,
    /// Bytes per I/O, so the rate becomes IOPS.
    pub block: Option<u64>,
    /// Still in the ramp (not counted).
    pub ramping: bool,
    /// Time left in the whole run.
    pub left: Option<Eta>,
}

/// The line's text, e.g. `test 3 of 8: RND4K Q32T1 read 2/5, 41.2 MB/s,
/// 10.1k IOPS, 2m 15s left`.
pub fn status_line(s: &Status) -> String {
    let mut parts = Vec::new();
    parts.push(match s.test {
        Some((k, n)) => format!("{} {k} of {n}: {}", s.counted, s.label),
        None => s.label.to_string(),
    });
    if s.ramping && s.rate.is_some() {
        parts.push("ramping".into());
    }
    if let Some(rate) = s.rate {
        parts.push(format!("{:.1} MB/s", rate / 1e6));
        if let Some(b) = s.block.filter(|b| *b > 0) {
            parts.push(format!("{} IOPS", count(rate / b as f64)));
        }
    }
    if let Some(eta) = s.left {
        let over = if eta.at_least { "over " } else { "" };
        parts.push(format!("{over}{} left", duration(eta.left)));
    }
    parts.join(", ")
}

/// 950, 10.1k, 1.25M.
fn count(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// 45s, 2m 15s, 1h 05m: seconds rounded up, so the last second shows 1s.
fn duration(d: Duration) -> String {
    let s = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

/// Whether progress is drawn: on a terminal, unless `--quiet`.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// The line of one run, following its outline with a [`Tracker`].
pub struct RunProgress {
    bar: Option<ProgressBar>,
    tracker: Tracker,
    /// Time after this run's end still to come (the profile after its probe).
    then: Option<Eta>,
    counted: &'static str,
    label: String,
    last: Option<(Duration, u64)>,
    rate: f64,
}

impl RunProgress {
    /// Progress along `tracker`'s outline, drawn only if `show`; its
    /// steps are `counted` ("test", "probe"), `then` is added to the time
    /// left.
    pub fn new(tracker: Tracker, show: bool, counted: &'static str, then: Option<Eta>) -> Self {
        let bar = show.then(|| {
            let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("[{bar:20}] {wide_msg}")
                    .expect("constant template")
                    .progress_chars("=> "),
            );
            bar
        });
        RunProgress {
            bar,
            tracker,
            then,
            counted,
            label: String::new(),
            last: None,
            rate: 0.0,
        }
    }

    /// Time left in this run and after it.
    pub fn left(&self) -> Eta {
        let eta = self.tracker.left();
        self.then.map_or(eta, |t| eta + t)
    }

    /// A step began.
    pub fn begin(&mut self, label: &str) {
        self.tracker.begin(label);
        self.label = label.to_string();
        self.last = None;
        self.rate = 0.0;
        if let Some(bar) = &self.bar {
            bar.set_position(0);
        }
    }

    /// The step ended.
    pub fn end(&mut self) {
        self.tracker.end();
    }

    /// A progress report of the current step.
    pub fn progress(&mut self, p: &Progress) {
        self.tracker.progress(p);
        let Some(bar) = &self.bar else { return };
        if let Some((t, b)) = self.last {
            let dt = p.elapsed.saturating_sub(t).as_secs_f64();
            if dt > 0.0 {
                let now = p.bytes.saturating_sub(b) as f64 / dt;
                // Smooth over about a second of 100 ms updates.
                self.rate = if self.rate == 0.0 {
                    now
                } else {
                    0.7 * self.rate + 0.3 * now
                };
            }
        }
        self.last = Some((p.elapsed, p.bytes));
        let fraction = match (p.total, p.bytes_total) {
            (Some(total), _) => p.elapsed.as_secs_f64() / total.as_secs_f64(),
            (None, Some(bytes)) if bytes > 0 => p.bytes as f64 / bytes as f64,
            _ => 0.0,
        };
        bar.set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
        let step = self.tracker.step();
        let block = step.and_then(|s| s.block);
        // A pause moves no bytes; it shows no rate.
        let moving = block.is_some() || step.is_none();
        bar.set_message(status_line(&Status {
            label: &self.label,
            counted: self.counted,
            test: self.tracker.test(),
            rate: (moving && self.rate > 0.0).then_some(self.rate),
            block,
            ramping: p.ramping,
            left: Some(self.left()),
        }));
    }

    /// Remove the line.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A disk run's display on stderr: one line per run it follows (the
/// probe's, then the profile's), drawn only if `show`, and the run's notes.
pub struct ProgressLine {
    line: Option<RunProgress>,
    show: bool,
}

impl ProgressLine {
    /// The display of a run, with the line drawn only if `show`
    /// ([`wanted`]).
    pub fn new(show: bool) -> Self {
        ProgressLine { line: None, show }
    }
}

impl RunDisplay for ProgressLine {
    fn follow(&mut self, outline: Outline, counted: &'static str, then: Option<Eta>) {
        self.close();
        let tracker = Tracker::new(outline);
        self.line = Some(RunProgress::new(tracker, self.show, counted, then));
    }

    fn progress(&mut self, p: &Progress) {
        if let Some(line) = &mut self.line {
            line.progress(p);
        }
    }

    fn begin(&mut self, label: &str) {
        if let Some(line) = &mut self.line {
            line.begin(label);
        }
    }

    fn end(&mut self) {
        if let Some(line) = &mut self.line {
            line.end();
        }
    }

    fn close(&mut self) {
        if let Some(line) = self.line.take() {
            line.finish();
        }
    }

    fn say(&mut self, line: &str) {
        eprintln!("iomark: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_which_test_the_rate_and_the_time_left() {
        let line = status_line(&Status {
            label: "RND4K Q32T1 read 2/5",
            counted: "test",
            test: Some((3, 8)),
            rate: Some(41.2e6),
            block: Some(4096),
            ramping: false,
            left: Some(Eta {
                left: Duration::from_secs(135),
                at_least: false,
            }),
        });
        assert_eq!(
            line,
            "test 3 of 8: RND4K Q32T1 read 2/5, 41.2 MB/s, 10.1k IOPS, 2m 15s left"
        );
    }

    #[test]
    fn a_pause_shows_no_rate_and_an_unknown_rest_is_a_lower_bound() {
        let line = status_line(&Status {
            label: "interval",
            counted: "test",
            test: Some((2, 2)),
            rate: None,
            block: None,
            ramping: true,
            left: Some(Eta {
                left: Duration::from_millis(3_700_400),
                at_least: true,
            }),
        });
        assert_eq!(line, "test 2 of 2: interval, over 1h 01m left");
    }

    #[test]
    fn the_probe_is_counted_as_its_own_steps_not_as_the_runs_tests() {
        let line = status_line(&Status {
            label: "round 1/2: zeros write",
            counted: "probe",
            test: Some((1, 8)),
            left: Some(Eta {
                left: Duration::from_secs(64),
                at_least: false,
            }),
            ..Status::default()
        });
        assert_eq!(line, "probe 1 of 8: round 1/2: zeros write, 1m 04s left");
    }

    #[test]
    fn durations_round_up_and_counts_scale() {
        assert_eq!(duration(Duration::from_millis(100)), "1s");
        assert_eq!(duration(Duration::from_secs(59)), "59s");
        assert_eq!(duration(Duration::from_secs(60)), "1m 00s");
        assert_eq!(count(950.0), "950");
        assert_eq!(count(1.25e6), "1.25M");
    }
}
