//! What a person sees of a run while it goes: the [`RunDisplay`] a run
//! tells where it is (the steps of its [`Outline`], each step's
//! [`Progress`], its seconds and its notes). The binary's displays are the
//! progress line on a terminal (`iomark_text::terminal`) and the
//! `--json-stream` lines ([`JsonStream`](crate::JsonStream)); [`NoDisplay`]
//! shows nothing.

use iomark_model::live::LiveSample;
use iomark_model::pts::PtsRoundStatus;

use crate::outline::{Eta, Outline, Progress};

/// The progress the user sees: where the run is and what it does now.
/// Display only: nothing here may change what is measured or stored. Each
/// event is shown or not as a display chooses: by default, none is.
pub trait RunDisplay {
    /// Follow `outline` from here on: the run's tests (`counted` is
    /// "test"), or the short probe's before them ("probe"), so the line
    /// never says "test 1 of 8" of a probe; `then` is the time the steps
    /// after it take.
    fn follow(&mut self, _outline: Outline, _counted: &'static str, _then: Option<Eta>) {}
    /// A job's progress, a few times a second.
    fn progress(&mut self, _p: &Progress) {}
    /// A job or phase called `label` starts.
    fn begin(&mut self, _label: &str) {}
    /// The current job or phase ended.
    fn end(&mut self) {}
    /// The run is over: the line is cleared.
    fn close(&mut self) {}
    /// A line for the user, about what the run did (a stale file removed).
    fn say(&mut self, _line: &str) {}
    /// A second of the run's test just measured (`--json-stream`).
    fn sample(&mut self, _sample: &LiveSample) {}
    /// A round of a PTS test ended: where its steady state stands.
    fn round(&mut self, _status: &PtsRoundStatus) {}
    /// Where a run that follows no outline is, in its own words, in
    /// place of the last such line: a mem run's kernel run and pass, whose
    /// count is not known ahead (a sweep's points, `--repeat`'s runs).
    fn status(&mut self, _line: &str) {}
    /// A line of the run's own report as it goes, when the run's report
    /// is text printed as it measures (`iomark net`'s iperf3 lines, one
    /// per interval among them); a display that is not that report shows
    /// none. Written through [`ReportLines`].
    fn report_line(&mut self, _line: &str) {}
}

/// A run's report written as text, told to a display a line at a time:
/// each complete line, without its newline, goes to
/// [`RunDisplay::report_line`]; an unfinished last line goes when this is
/// dropped.
pub struct ReportLines<'a> {
    display: &'a mut dyn RunDisplay,
    partial: Vec<u8>,
}

impl<'a> ReportLines<'a> {
    /// Lines for `display`.
    pub fn new(display: &'a mut dyn RunDisplay) -> Self {
        ReportLines {
            display,
            partial: Vec::new(),
        }
    }

    fn tell(&mut self, line: &[u8]) {
        self.display.report_line(&String::from_utf8_lossy(line));
    }
}

impl std::io::Write for ReportLines<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for piece in buf.split_inclusive(|&b| b == b'\n') {
            match piece.strip_suffix(b"\n") {
                Some(end) if self.partial.is_empty() => self.tell(end),
                Some(end) => {
                    let mut line = std::mem::take(&mut self.partial);
                    line.extend_from_slice(end);
                    self.tell(&line);
                }
                None => self.partial.extend_from_slice(piece),
            }
        }
        Ok(buf.len())
    }

    /// Lines go as they end; an unfinished one waits for its end.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for ReportLines<'_> {
    fn drop(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.tell(&line);
        }
    }
}

/// Shows nothing.
#[derive(Debug, Default)]
pub struct NoDisplay;

impl RunDisplay for NoDisplay {}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[derive(Default)]
    struct Lines(Vec<String>);

    impl RunDisplay for Lines {
        fn report_line(&mut self, line: &str) {
            self.0.push(line.into());
        }
    }

    #[test]
    fn report_text_reaches_the_display_a_whole_line_at_a_time() {
        let mut shown = Lines::default();
        {
            let mut out = ReportLines::new(&mut shown);
            write!(out, "Connecting to host\n[  5] 0.00-1.00 sec").unwrap();
            write!(out, "  1.0 GBytes\n\nServer output:\nlast").unwrap();
            out.flush().unwrap();
        }
        assert_eq!(
            shown.0,
            [
                "Connecting to host",
                "[  5] 0.00-1.00 sec  1.0 GBytes",
                "",
                "Server output:",
                "last"
            ]
        );
    }
}
