//! A mem run's seconds in its sink as it goes (the store, for `iomark
//! serve`'s live view): the passes a kernel run counts (STREAM's four
//! kernels once, a stencil sweep, a Himeno Jacobi sweep; under
//! `--mem-limit` as its child reports them), gathered into intervals of a second or more of pass
//! time, each stored as a [`LiveSample`]: the bytes moved (none for
//! Himeno, which counts none) and the floating-point operations done (the
//! stencil's and Himeno's). A memory kernel counts no I/Os and has no
//! per-I/O latency.

use std::time::Instant;

use iomark_model::live::LiveSample;
use iomark_model::mem::{HimenoLength, MemJobSpec, MemKernelSpec};
use iomark_pipeline::{RunDisplay, RunSink};

use crate::json_stream::JsonStream;
use crate::observe::{Measured, MemObserver, Pass, Role};

/// Pass time gathered into one stored interval at least.
const INTERVAL_S: f64 = 1.0;

/// Tells the run's sink (and the stream, under `--json-stream`) of the
/// run's seconds as they go.
pub struct MemWatch<'a> {
    sink: &'a mut dyn RunSink,
    stream: Option<&'a mut JsonStream>,
    /// The kernel run under way: its number from 1, its label, its start.
    run: u32,
    label: String,
    began: Instant,
    /// Counted passes not yet stored.
    pending: Pending,
    /// Where a person follows the run (a terminal's status line), and
    /// how far the kernel run under way is.
    display: Option<&'a mut dyn RunDisplay>,
    length: Length,
    passes: u32,
    pass_seconds: f64,
}

/// How long a kernel run is: passes, or a time it fills (Himeno's
/// original scheme).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Length {
    Passes(u32),
    Seconds(f64),
}

impl Length {
    fn of(spec: &MemJobSpec) -> Length {
        match &spec.kernel {
            MemKernelSpec::Stream(s) => Length::Passes(s.ntimes),
            // Its first sweep warms up: one of `sweeps`.
            MemKernelSpec::Stencil(s) => Length::Passes(s.sweeps),
            MemKernelSpec::Himeno(h) => match h.length {
                HimenoLength::Iterations(n) => Length::Passes(n),
                HimenoLength::Target(t) => Length::Seconds(t.0 as f64 / 1e9),
            },
        }
    }
}

/// The status line of kernel run `run` (`label`) after `passes` passes
/// that took `seconds`: `kernel run 2: stream 228.9 MiB, pass 3 of 10, 7 s
/// left`, the time left from the mean pass so far; before the first,
/// `initialising`.
fn status(run: u32, label: &str, length: Length, passes: u32, seconds: f64) -> String {
    let (of, left) = match length {
        Length::Passes(n) => {
            let mean = if passes > 0 {
                seconds / f64::from(passes)
            } else {
                0.0
            };
            (
                format!(" of {n}"),
                mean * f64::from(n.saturating_sub(passes)),
            )
        }
        Length::Seconds(t) => (String::new(), (t - seconds).max(0.0)),
    };
    if passes == 0 {
        // The arrays are touched first (seconds for gigabytes).
        return format!("kernel run {run}: {label}, initialising");
    }
    let left = left.ceil() as u64;
    format!("kernel run {run}: {label}, pass {passes}{of}, {left} s left")
}

/// What the counted passes since the last stored interval did.
#[derive(Debug, Default)]
struct Pending {
    bytes: u64,
    /// `None` while no pass counted any.
    flops: Option<f64>,
    seconds: f64,
}

impl<'a> MemWatch<'a> {
    /// Watch a run whose record `sink` holds (begun by the caller), and
    /// write its stream to `stream`.
    pub fn new(sink: &'a mut dyn RunSink, stream: Option<&'a mut JsonStream>) -> Self {
        MemWatch {
            sink,
            stream,
            run: 0,
            label: String::new(),
            began: Instant::now(),
            pending: Pending::default(),
            display: None,
            length: Length::Passes(0),
            passes: 0,
            pass_seconds: 0.0,
        }
    }

    /// The watch, telling `display` (the progress line on a terminal)
    /// where the run is at each kernel run's begin and after each pass, as
    /// a [`RunDisplay::status`] line.
    pub fn showing(mut self, display: &'a mut dyn RunDisplay) -> Self {
        self.display = Some(display);
        self
    }

    fn show_status(&mut self) {
        let line = status(
            self.run,
            &self.label,
            self.length,
            self.passes,
            self.pass_seconds,
        );
        if let Some(display) = self.display.as_mut() {
            display.status(&line);
        }
    }

    /// Store what the passes since the last interval moved, if any.
    fn flush(&mut self) {
        let Pending {
            bytes,
            flops,
            seconds,
        } = std::mem::take(&mut self.pending);
        if seconds <= 0.0 {
            return;
        }
        let at_ms = iomark_model::now_ms();
        self.sink.sample(&LiveSample {
            left_at_most: false,
            step: self.run,
            steps: 0,
            label: self.label.clone(),
            at_ms,
            offset_ms: self.began.elapsed().as_millis() as u64,
            duration_ms: (seconds * 1e3).round() as u64,
            bytes,
            ios: 0,
            latency: None,
            left_ms: None,
            flops,
        });
    }
}

impl MemObserver for MemWatch<'_> {
    fn point(&mut self, x: f64) {
        if let Some(s) = self.stream.as_mut() {
            s.point(x);
        }
    }

    fn begin(&mut self, role: Role, spec: &MemJobSpec) {
        self.flush();
        self.run += 1;
        self.label = format!(
            "{} {}{}",
            spec.kernel.name(),
            spec.kernel.data_bytes(),
            match role {
                Role::AllInMemory => " (all in memory)",
                Role::Run => "",
            }
        );
        self.began = Instant::now();
        (self.length, self.passes, self.pass_seconds) = (Length::of(spec), 0, 0.0);
        self.show_status();
        if let Some(s) = self.stream.as_mut() {
            s.begin(role, spec);
        }
    }

    fn pass(&mut self, p: &Pass) {
        // A pass that counts neither bytes nor flops has nothing to store.
        if p.counted && (p.bytes.is_some() || p.flops.is_some()) {
            let pending = &mut self.pending;
            pending.bytes += p.bytes.unwrap_or(0);
            if let Some(f) = p.flops {
                *pending.flops.get_or_insert(0.0) += f;
            }
            pending.seconds += p.seconds;
            if pending.seconds >= INTERVAL_S {
                self.flush();
            }
        }
        self.passes = p.index;
        self.pass_seconds += p.seconds;
        self.show_status();
        if let Some(s) = self.stream.as_mut() {
            s.pass(p);
        }
    }

    fn measured(&mut self, m: &Measured<'_>) {
        self.flush();
        if let Some(s) = self.stream.as_mut() {
            s.measured(m);
        }
    }
}

/// A run stopped mid-kernel (Ctrl-C) hears no end of it: what its counted
/// passes moved since the last stored second is stored as the watch goes.
impl Drop for MemWatch<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    #[test]
    fn the_status_line_names_the_kernel_run_the_pass_and_the_time_left() {
        let stream = Length::Passes(10);
        assert_eq!(
            status(1, "stream 228.9 MiB", stream, 0, 0.0),
            "kernel run 1: stream 228.9 MiB, initialising"
        );
        assert_eq!(
            status(1, "stream 228.9 MiB", stream, 4, 2.0),
            "kernel run 1: stream 228.9 MiB, pass 4 of 10, 3 s left"
        );
        assert_eq!(
            status(2, "himeno", Length::Seconds(60.0), 3, 12.5),
            "kernel run 2: himeno, pass 3, 48 s left"
        );
    }
}
