//! The progress line on a terminal (feature `terminal`): test k of N and
//! the time left in the whole run first, then the step and live MB/s and
//! IOPS, fitted to the terminal's width, on stderr, only when stderr is a terminal and the user did not ask for
//! quiet. Where a run is and how long it has left are the outline's
//! ([`Tracker`]); this module only draws them, as a [`RunDisplay`]. Also
//! the widths every command fits its text to ([`text_width`]).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use iomark_model::pts::PtsRoundStatus;
use iomark_pipeline::{Eta, Outline, Progress, RunDisplay, Tracker};

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

/// Columns of the bar, brackets and the space after it included.
const BAR: usize = 13;

/// The line fitted to `width` columns, what matters most first: the count
/// and the time left (`test 3 of 8, 2m 15s left`), then the step, the rate
/// and IOPS. What does not fit goes in this order: the bar (drawn in
/// front with `done` of it filled, if given, only when all the rest fits
/// beside it), IOPS, the rate, "ramping"; then the step is cut short with
/// `…`.
pub fn fitted_line(s: &Status, done: Option<f64>, width: usize) -> String {
    let mut head = Vec::new();
    if let Some((k, n)) = s.test {
        head.push(format!("{} {k} of {n}", s.counted));
    }
    if let Some(eta) = s.left {
        // Over: steps of unknown length to come; at most: steps the run
        // may end before (a PTS test's rounds after a steady window).
        let over = match (eta.at_least, eta.at_most) {
            (true, _) => "over ",
            (false, true) => "at most ",
            (false, false) => "",
        };
        head.push(format!("{over}{} left", duration(eta.left)));
    }
    let head = head.join(", ");
    let mut rest = vec![s.label.to_string()];
    if s.ramping && s.rate.is_some() {
        rest.push("ramping".into());
    }
    if let Some(rate) = s.rate {
        rest.push(format!("{:.1} MB/s", rate / 1e6));
        if let Some(b) = s.block.filter(|b| *b > 0) {
            rest.push(format!("{} IOPS", count(rate / b as f64)));
        }
    }
    let line = |rest: &[String]| match (head.is_empty(), rest.join(", ")) {
        (true, rest) => rest,
        (false, rest) if rest.is_empty() => head.clone(),
        (false, rest) => format!("{head}: {rest}"),
    };
    let full = line(&rest);
    if let Some(done) = done.filter(|_| full.chars().count().saturating_add(BAR) <= width) {
        let filled = (done.clamp(0.0, 1.0) * (BAR - 3) as f64).round() as usize;
        return format!("[{:<w$}] {full}", "=".repeat(filled), w = BAR - 3);
    }
    while rest.len() > 1 && line(&rest).chars().count() > width {
        rest.pop();
    }
    let fitted = line(&rest);
    if fitted.chars().count() <= width {
        return fitted;
    }
    let mut cut: String = fitted.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The width of the terminal on stderr, 80 when it is not one or does not
/// say; one column less is used, so the cursor never wraps to a new line.
fn line_width() -> usize {
    let columns = console::Term::stderr()
        .size_checked()
        .map_or(80, |(_, cols)| usize::from(cols));
    columns.max(20) - 1
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

/// The width of the terminal on stdout, if stdout is one (80 when it does
/// not say): what printed text is fitted to.
pub fn stdout_width() -> Option<usize> {
    let out = console::Term::stdout();
    out.is_term()
        .then(|| out.size_checked().map_or(80, |(_, cols)| usize::from(cols)))
}

/// The columns text a person reads is fitted to: the terminal's where
/// stdout is one, else `$COLUMNS`, else 80 (a pipe, a CI log); never
/// under 40.
pub fn text_width() -> usize {
    stdout_width()
        .or_else(|| std::env::var("COLUMNS").ok()?.parse().ok())
        .filter(|&w| w >= 40)
        .unwrap_or(80)
}

/// Whether progress is drawn: on a terminal, unless `--quiet`.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// The rate a line shows: bytes over the last second or so of a step's
/// progress reports (an exponential average of their 100 ms windows).
///
/// A timed step counts bytes up to its deadline; the reports go on while
/// its in-flight I/O finishes, uncounted. A window is measured only up to
/// the deadline, and one wholly after it measures nothing: the rate shown
/// stays that of the last window that had a measurement, instead of
/// sliding to 0 MB/s at the end of every step. Before the deadline a
/// window without bytes is a real stall, and shows.
#[derive(Debug, Default)]
pub(crate) struct LiveRate {
    last: Option<(Duration, u64)>,
    rate: f64,
}

impl LiveRate {
    /// A new step: nothing measured.
    pub(crate) fn reset(&mut self) {
        *self = LiveRate::default();
    }

    /// Take a progress report; the rate to show, if any yet.
    pub(crate) fn update(&mut self, p: &Progress) -> Option<f64> {
        let counted = |t: Duration| p.total.map_or(t, |d| t.min(d));
        if let Some((t, b)) = self.last {
            let dt = counted(p.elapsed).saturating_sub(counted(t)).as_secs_f64();
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
        (self.rate > 0.0).then_some(self.rate)
    }
}

/// The line of one run, following its outline with a [`Tracker`].
pub struct RunProgress {
    bar: Option<ProgressBar>,
    tracker: Tracker,
    /// Time after this run's end still to come (the profile after its probe).
    then: Option<Eta>,
    counted: &'static str,
    label: String,
    rate: LiveRate,
}

impl RunProgress {
    /// Progress along `tracker`'s outline, drawn only if `show`; its
    /// steps are `counted` ("test", "probe"), `then` is added to the time
    /// left.
    pub fn new(tracker: Tracker, show: bool, counted: &'static str, then: Option<Eta>) -> Self {
        let bar = show.then(|| {
            let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
            // The bar is drawn in the message, which fits it to the width.
            bar.set_style(ProgressStyle::with_template("{msg}").expect("constant template"));
            bar
        });
        RunProgress {
            bar,
            tracker,
            then,
            counted,
            label: String::new(),
            rate: LiveRate::default(),
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
        self.rate.reset();
    }

    /// The step ended.
    pub fn end(&mut self) {
        self.tracker.end();
    }

    /// A progress report of the current step.
    pub fn progress(&mut self, p: &Progress) {
        self.tracker.progress(p);
        let Some(bar) = &self.bar else { return };
        let rate = self.rate.update(p);
        let fraction = match (p.total, p.bytes_total) {
            (Some(total), _) => p.elapsed.as_secs_f64() / total.as_secs_f64(),
            (None, Some(bytes)) if bytes > 0 => p.bytes as f64 / bytes as f64,
            _ => 0.0,
        };
        let step = self.tracker.step();
        let block = step.and_then(|s| s.block);
        // A pause moves no bytes; it shows no rate.
        let moving = block.is_some() || step.is_none();
        let status = Status {
            label: &self.label,
            counted: self.counted,
            test: self.tracker.test(),
            rate: rate.filter(|_| moving),
            block,
            ramping: p.ramping,
            left: Some(self.left()),
        };
        bar.set_message(fitted_line(&status, Some(fraction), line_width()));
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
    /// A run's own status line is on the screen ([`RunDisplay::status`]).
    status_shown: bool,
}

impl ProgressLine {
    /// The display of a run, with the line drawn only if `show`
    /// ([`wanted`]).
    pub fn new(show: bool) -> Self {
        ProgressLine {
            line: None,
            show,
            status_shown: false,
        }
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
        if std::mem::take(&mut self.status_shown) {
            eprint!("\r\x1b[K");
        }
    }

    fn say(&mut self, line: &str) {
        eprintln!("iomark: {line}");
    }

    /// On a terminal, a line above the progress line per round, fitted to
    /// its width: a test of hours shows its convergence as it goes.
    fn round(&mut self, status: &PtsRoundStatus) {
        let Some(bar) = self.line.as_ref().and_then(|l| l.bar.as_ref()) else {
            return;
        };
        let line = crate::round_line(status);
        let fitted = crate::fit_prose(&format!("iomark: {line}"), line_width());
        bar.suspend(|| eprintln!("{}", fitted.trim_end()));
    }

    /// The line in place of the last, cut to the width: a mem run's
    /// kernel run and pass.
    fn status(&mut self, line: &str) {
        if self.show {
            let cut: String = line.chars().take(line_width()).collect();
            eprint!("\r{cut}\x1b[K");
            self.status_shown = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole line, without the bar.
    fn status_line(s: &Status) -> String {
        fitted_line(s, None, usize::MAX)
    }

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
                at_most: false,
            }),
        });
        assert_eq!(
            line,
            "test 3 of 8, 2m 15s left: RND4K Q32T1 read 2/5, 41.2 MB/s, 10.1k IOPS"
        );
    }

    #[test]
    fn a_time_left_counting_rounds_that_may_not_run_is_at_most() {
        let eta = |at_least, at_most| Eta {
            left: Duration::from_secs(7200),
            at_least,
            at_most,
        };
        let line = |left| {
            status_line(&Status {
                label: "round 3 4K 0/100",
                counted: "test",
                test: Some((3, 25)),
                left: Some(left),
                ..Status::default()
            })
        };
        assert_eq!(
            line(eta(false, true)),
            "test 3 of 25, at most 2h 00m left: round 3 4K 0/100"
        );
        // Unknown steps to come outweigh the ones that may not run.
        assert!(line(eta(true, true)).contains(", over 2h 00m left"));
    }

    #[test]
    fn a_narrow_line_drops_the_bar_then_iops_then_the_rate_and_never_the_time_left() {
        let s = Status {
            label: "RND4K Q32T1 read 2/5 (a long step name for a narrow terminal)",
            counted: "test",
            test: Some((3, 8)),
            rate: Some(474.1e6),
            block: Some(4096),
            ramping: true,
            left: Some(Eta {
                left: Duration::from_secs(135),
                at_least: false,
                at_most: false,
            }),
        };
        let full = status_line(&s);
        assert_eq!(
            fitted_line(&s, Some(0.5), 200),
            format!("[=====     ] {full}"),
            "room for all"
        );
        for width in [40, 60, 79, 100, 119] {
            let line = fitted_line(&s, Some(0.5), width);
            assert!(line.chars().count() <= width, "{width}: {line}");
            assert!(
                line.starts_with("test 3 of 8, 2m 15s left"),
                "{width}: {line}"
            );
            assert!(!line.starts_with('['), "{width}: {line}");
            // What is shown of the rate is whole: never `115.8k IO`.
            assert!(
                !line.contains("k IO") || line.ends_with("IOPS"),
                "{width}: {line}"
            );
        }
        assert_eq!(
            fitted_line(&s, Some(0.5), 100),
            "test 3 of 8, 2m 15s left: RND4K Q32T1 read 2/5 (a long step name for a narrow \
             terminal), ramping"
        );
        // Narrower than the count and the time left: cut, but never wider.
        assert_eq!(fitted_line(&s, Some(0.5), 20), "test 3 of 8, 2m 15s…");
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
                at_most: false,
            }),
        });
        assert_eq!(line, "test 2 of 2, over 1h 01m left: interval");
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
                at_most: false,
            }),
            ..Status::default()
        });
        assert_eq!(line, "probe 1 of 8, 1m 04s left: round 1/2: zeros write");
    }

    /// Reports every 100 ms of a step moving 100 MB/s, on a fake clock.
    fn report(ms: u64, total_ms: u64, bytes: u64) -> Progress {
        Progress {
            elapsed: Duration::from_millis(ms),
            total: Some(Duration::from_millis(total_ms)),
            ramping: false,
            bytes,
            bytes_total: None,
        }
    }

    #[test]
    fn the_rate_stays_at_the_last_measured_window_past_the_deadline() {
        let mut rate = LiveRate::default();
        let mut shown = None;
        for ms in (0..=5_000).step_by(100) {
            shown = rate.update(&report(ms, 5_000, ms * 100_000));
        }
        let at_deadline = shown.unwrap();
        assert!((at_deadline - 100e6).abs() < 1.0, "{at_deadline}");
        // The window over the deadline counts only its part before it; the
        // ones after it, where the in-flight I/O finishes uncounted, none.
        rate.update(&report(5_050, 5_000, 500_000_000));
        for ms in [5_100, 5_200, 5_300, 5_400, 5_500, 6_000] {
            let shown = rate.update(&report(ms, 5_000, 500_000_000)).unwrap();
            assert!((shown - 100e6).abs() < 1.0, "{shown} at {ms} ms");
        }
        // A new step starts from nothing.
        rate.reset();
        assert_eq!(rate.update(&report(100, 5_000, 10_000_000)), None);
    }

    #[test]
    fn a_stall_before_the_deadline_shows() {
        let mut rate = LiveRate::default();
        for ms in (0..=2_000).step_by(100) {
            rate.update(&report(ms, 5_000, ms * 100_000));
        }
        let mut shown = f64::MAX;
        for ms in (2_100..=4_000).step_by(100) {
            shown = rate.update(&report(ms, 5_000, 200_000_000)).unwrap_or(0.0);
        }
        assert!(shown < 1e5, "a stalled device still shows {shown} B/s");
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
