//! `--json-stream`: the run as it goes, one JSON object per line on its
//! own writer (stdout), in the layout of iperf3's `--json-stream`
//! (`{"event": ..., "data": ...}`): a `start` naming the tests, an
//! `interval` for each second of a test as it is measured, a `round` as
//! each round of a PTS test ends (its steady-state window so far), and
//! the command prints the `end` (the run's document) when the run is over.
//!
//! It is a [`RunDisplay`] around the one the user sees (the progress line
//! on stderr), so both show the same run.

use std::io::Write;

use iomark_model::live::{stream_event, LiveSample};
use iomark_model::pts::PtsRoundStatus;
use serde_json::json;

use super::RunDisplay;
use crate::profiles::outline::{Eta, Outline};
use crate::runner::Progress;

/// Prints the run's events on `out` and shows everything on `inner` too.
pub struct JsonStream<W: Write, D: RunDisplay> {
    out: W,
    inner: D,
    started: bool,
    /// The first write error: the stream ends there (a closed pipe), the
    /// run does not.
    failed: Option<std::io::Error>,
}

impl<W: Write, D: RunDisplay> JsonStream<W, D> {
    /// Events on `out`, around `inner`.
    pub fn new(out: W, inner: D) -> Self {
        JsonStream {
            out,
            inner,
            started: false,
            failed: None,
        }
    }

    /// The last line: `{"event":"end","data":...}` with `data` the run's
    /// document (what `--json` prints); the first write error, if any.
    pub fn end(mut self, data: &serde_json::Value) -> std::io::Result<()> {
        self.line("end", data);
        self.failed.map_or(Ok(()), Err)
    }

    fn line(&mut self, event: &str, data: &serde_json::Value) {
        if self.failed.is_some() {
            return;
        }
        let written =
            writeln!(self.out, "{}", stream_event(event, data)).and_then(|()| self.out.flush());
        if let Err(e) = written {
            self.failed = Some(e);
        }
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
            self.line("start", &data);
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
        self.line("interval", &interval(sample));
        self.inner.sample(sample);
    }

    fn round(&mut self, status: &PtsRoundStatus) {
        self.line("round", &serde_json::to_value(status).unwrap_or_default());
        self.inner.round(status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::NoDisplay;
    use crate::profiles::outline::{Cost, Step};
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
