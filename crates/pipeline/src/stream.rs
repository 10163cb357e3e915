//! `--json-stream`: a run as it goes, one JSON object per line on its own
//! writer (stdout), in the layout of iperf3's `--json-stream`
//! (`{"event": ..., "data": ...}`), each line flushed as it is written so
//! a reader sees it while the run goes on.
//!
//! [`EventLines`] writes the lines, for every kind of run: a closed pipe
//! (a reader gone) ends the writing, not the run. [`JsonStream`] is the
//! stream of a run told through a [`RunDisplay`] (disk's): a `start`
//! naming the tests, an `interval` for each second of a test as it is
//! measured, a `round` as each round of a PTS test ends (its steady-state
//! window so far), and the `end` (the run's document) the caller writes
//! when the run is over. It wraps the display the user sees (the progress
//! line on stderr), so both show the same run. mem writes its own events
//! (its passes and kernel runs) through [`EventLines`].

use std::io::Write;

use iomark_model::live::{stream_event, LiveSample};
use iomark_model::pts::PtsRoundStatus;
use serde::Serialize;
use serde_json::json;

use crate::display::RunDisplay;
use crate::outline::{Eta, Outline, Progress};

/// Writes `--json-stream` lines, each flushed; the first write error ends
/// the writing and is kept for the caller.
#[derive(Debug)]
pub struct EventLines<W: Write> {
    out: W,
    /// The first write error: the stream ends there (a closed pipe), the
    /// run does not.
    failed: Option<std::io::Error>,
}

impl<W: Write> EventLines<W> {
    /// Lines on `out`.
    pub fn new(out: W) -> Self {
        EventLines { out, failed: None }
    }

    /// One line, `{"event":"...","data":...}`, unless an earlier one
    /// failed.
    pub fn write(&mut self, event: &str, data: &impl Serialize) {
        if self.failed.is_some() {
            return;
        }
        let written =
            writeln!(self.out, "{}", stream_event(event, data)).and_then(|()| self.out.flush());
        if let Err(e) = written {
            self.failed = Some(e);
        }
    }

    /// The first write error, if any.
    pub fn finish(self) -> std::io::Result<()> {
        self.failed.map_or(Ok(()), Err)
    }
}

/// Prints a run's events on `out` and shows everything on `inner` too.
pub struct JsonStream<W: Write, D: RunDisplay> {
    lines: EventLines<W>,
    inner: D,
    started: bool,
}

impl<W: Write, D: RunDisplay> JsonStream<W, D> {
    /// Events on `out`, around `inner`.
    pub fn new(out: W, inner: D) -> Self {
        JsonStream {
            lines: EventLines::new(out),
            inner,
            started: false,
        }
    }

    /// The last line: `{"event":"end","data":...}` with `data` the run's
    /// document (what `--json` prints); the first write error, if any.
    pub fn end(mut self, data: &serde_json::Value) -> std::io::Result<()> {
        self.lines.write("end", data);
        self.lines.finish()
    }
}

/// An interval event's data: the sample with its rates.
fn interval(s: &LiveSample) -> serde_json::Value {
    let mut data = serde_json::to_value(s).unwrap_or_default();
    if let Some(obj) = data.as_object_mut() {
        obj.insert("bytes_per_second".into(), json!(s.bytes_per_sec()));
        obj.insert("iops".into(), json!(s.iops()));
    }
    data
}

impl<W: Write, D: RunDisplay> RunDisplay for JsonStream<W, D> {
    fn follow(&mut self, outline: Outline, counted: &'static str, then: Option<Eta>) {
        // The run's tests, not the short probe's before them.
        if counted == "test" && !self.started {
            self.started = true;
            let tests: Vec<_> = outline
                .steps
                .iter()
                .map(|s| json!({ "test": s.test, "label": s.label }))
                .collect();
            let data = json!({
                "tests": outline.tests(),
                "steps": tests,
                "timestamp_ms": iomark_model::now_ms(),
            });
            self.lines.write("start", &data);
        }
        self.inner.follow(outline, counted, then);
    }

    fn progress(&mut self, p: &Progress) {
        self.inner.progress(p);
    }

    fn begin(&mut self, label: &str) {
        self.inner.begin(label);
    }

    fn end(&mut self) {
        self.inner.end();
    }

    fn close(&mut self) {
        self.inner.close();
    }

    fn say(&mut self, line: &str) {
        self.inner.say(line);
    }

    fn sample(&mut self, sample: &LiveSample) {
        self.lines.write("interval", &interval(sample));
        self.inner.sample(sample);
    }

    fn round(&mut self, status: &PtsRoundStatus) {
        self.lines
            .write("round", &serde_json::to_value(status).unwrap_or_default());
        self.inner.round(status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::NoDisplay;
    use crate::outline::{Cost, Step};
    use std::time::Duration;

    #[test]
    fn a_start_an_interval_per_sample_and_an_end_each_one_json_line() {
        let mut out = Vec::new();
        let mut s = JsonStream::new(&mut out, NoDisplay);
        let outline = Outline {
            steps: vec![Step {
                label: "SEQ1M Q8T1 read".into(),
                test: 1,
                cost: Cost::Time(Duration::from_secs(5)),
                block: Some(1 << 20),
                optional: false,
            }],
        };
        // The probe's outline starts nothing.
        s.follow(outline.clone(), "probe", None);
        s.follow(outline, "test", None);
        s.sample(&LiveSample {
            left_at_most: false,
            step: 1,
            steps: 1,
            label: "SEQ1M Q8T1 read".into(),
            at_ms: 1,
            offset_ms: 1000,
            duration_ms: 1000,
            bytes: 5 << 20,
            ios: 5,
            latency: None,
            left_ms: Some(4000),
            flops: None,
        });
        s.end(&json!({"schema_version": 1})).unwrap();
        let lines: Vec<serde_json::Value> = std::str::from_utf8(&out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
        assert_eq!(events, ["start", "interval", "end"]);
        assert_eq!(lines[0]["data"]["steps"][0]["label"], "SEQ1M Q8T1 read");
        assert_eq!(lines[1]["data"]["bytes_per_second"], 5242880.0);
        assert_eq!(lines[1]["data"]["iops"], 5.0);
        assert_eq!(lines[1]["data"]["left_ms"], 4000);
        assert_eq!(lines[2]["data"]["schema_version"], 1);
    }
}
