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
use iomark_model::mem::MemJobSpec;
use iomark_pipeline::RunSink;

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
