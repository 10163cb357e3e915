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
/// Display only: nothing here may change what is measured or stored.
pub trait RunDisplay {
    /// Follow `outline` from here on: the run's tests (`counted` is
    /// "test"), or the short probe's before them ("probe"), so the line
    /// never says "test 1 of 8" of a probe; `then` is the time the steps
    /// after it take.
    fn follow(&mut self, outline: Outline, counted: &'static str, then: Option<Eta>);
    /// A job's progress, a few times a second.
    fn progress(&mut self, p: &Progress);
    /// A job or phase called `label` starts.
    fn begin(&mut self, label: &str);
    /// The current job or phase ended.
    fn end(&mut self);
    /// The run is over: the line is cleared.
    fn close(&mut self);
    /// A line for the user, about what the run did (a stale file removed).
    fn say(&mut self, line: &str);
    /// A second of the run's test just measured (`--json-stream`).
    fn sample(&mut self, _sample: &LiveSample) {}
    /// A round of a PTS test ended: where its steady state stands.
    fn round(&mut self, _status: &PtsRoundStatus) {}
    /// Where a run that follows no outline is, in its own words, in
    /// place of the last such line: a mem run's kernel run and pass, whose
    /// count is not known ahead (a sweep's points, `--repeat`'s runs).
    fn status(&mut self, _line: &str) {}
}

/// Shows nothing.
#[derive(Debug, Default)]
pub struct NoDisplay;

impl RunDisplay for NoDisplay {
    fn follow(&mut self, _: Outline, _: &'static str, _: Option<Eta>) {}
    fn progress(&mut self, _: &Progress) {}
    fn begin(&mut self, _: &str) {}
    fn end(&mut self) {}
    fn close(&mut self) {}
    fn say(&mut self, _: &str) {}
}
