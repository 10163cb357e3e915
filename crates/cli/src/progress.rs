//! The progress bar: current MB/s and time left, on stderr, only when
//! stderr is a terminal.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iomark_disk::runner::{Observer, Progress};

/// A bar for one job; invisible when nobody is watching.
pub struct JobProgress {
    bar: Option<ProgressBar>,
    last: Option<(Duration, u64)>,
    rate: f64,
}

impl JobProgress {
    /// A bar labelled `name`, shown only on a terminal.
    pub fn new(name: &str) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{prefix:>12} [{bar:30}] {msg}")
                    .expect("constant template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(name.to_string());
            bar
        });
        JobProgress {
            bar,
            last: None,
            rate: 0.0,
        }
    }

    /// Remove the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Observer for JobProgress {
    fn progress(&mut self, p: &Progress) {
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
        let (fraction, left) = match (p.total, p.bytes_total) {
            (Some(total), _) => (
                p.elapsed.as_secs_f64() / total.as_secs_f64(),
                Some(total.saturating_sub(p.elapsed)),
            ),
            (None, Some(bytes)) if bytes > 0 => (p.bytes as f64 / bytes as f64, None),
            _ => (0.0, None),
        };
        bar.set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
        let phase = if p.ramping { "ramping, " } else { "" };
        let left = left.map_or(String::new(), |l| format!(", {}s left", l.as_secs() + 1));
        bar.set_message(format!("{phase}{:.1} MB/s{left}", self.rate / 1e6));
    }
}
