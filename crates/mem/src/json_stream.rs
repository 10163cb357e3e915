//! `iomark mem --json-stream`: one JSON object per line on stdout as the
//! run goes, in the `{"event": ..., "data": ...}` layout of `iomark net
//! --json-stream` (iperf3 3.17's): a `start` saying what runs, an
//! `interval` for each pass of a kernel run measured in this process
//! (`"kind": "pass"`) and for each kernel run as it ends (`"kind": "run"`:
//! each point of a sweep, each all-in-memory run of `--relative` and
//! `--repeat`), and an `end` whose data is the document `--json` prints.
//! The lines are written, each flushed, by the pipeline's [`EventLines`],
//! as every run's are.

use std::io::Stdout;

use crate::observe::{Measured, MemObserver, Pass, Role};
use crate::settings::MemPlan;
use iomark_model::mem::{KernelResult, MemJobSpec, MemKernelSpec, MemOutcome};
use iomark_model::RunDocument;
use iomark_pipeline::EventLines;
use serde_json::{json, Value};

/// Writes the stream's lines on stdout; a closed pipe (a reader gone)
/// ends the writing, not the run, which is still stored.
pub struct JsonStream {
    /// The sweep point under way, if any.
    point: Option<f64>,
    /// Kernel runs begun so far: the one under way's number.
    runs: u32,
    /// What the run under way is: its role and spec, as every interval
    /// of it says.
    what: Value,
    lines: EventLines<Stdout>,
}

impl JsonStream {
    /// The stream of `plan`, its `start` line written.
    pub fn start(plan: &MemPlan) -> JsonStream {
        let mut s = JsonStream {
            point: None,
            runs: 0,
            what: Value::Null,
            lines: EventLines::new(std::io::stdout()),
        };
        s.lines.write("start", &start_data(plan));
        s
    }

    /// The `end` line: the run's document.
    pub fn end(mut self, doc: &RunDocument) {
        self.lines.write("end", doc);
    }
}

impl MemObserver for JsonStream {
    fn point(&mut self, x: f64) {
        self.point = Some(x);
    }

    fn begin(&mut self, role: Role, spec: &MemJobSpec) {
        self.runs += 1;
        self.what = json!({
            "run": self.runs,
            "role": role.name(),
            "point": self.point,
            "kernel": spec.kernel.name(),
            "size": spec.kernel.data_bytes(),
            "threads": spec.threads,
            "backing": spec.backing,
            "mem_limit": spec.mem_limit,
        });
    }

    fn pass(&mut self, p: &Pass) {
        let mut data = json!({
            "kind": "pass",
            "trial": p.index,
            "counted": p.counted,
            "bytes": p.bytes,
            "seconds": p.seconds,
            "bytes_per_second": p.bytes.filter(|_| p.seconds > 0.0).map(|b| b as f64 / p.seconds),
            "flops": p.flops,
            "mflops": p.flops.filter(|_| p.seconds > 0.0).map(|f| f / p.seconds / 1e6),
        });
        merge(&mut data, &self.what);
        self.lines.write("interval", &data);
    }

    fn measured(&mut self, m: &Measured<'_>) {
        let mut data = interval_data(m);
        merge(&mut data, &self.what);
        self.lines.write("interval", &data);
    }
}

/// `from`'s keys added to `into` (both objects).
fn merge(into: &mut Value, from: &Value) {
    if let (Value::Object(into), Value::Object(from)) = (into, from) {
        into.extend(from.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

/// What runs: the kernel with its parameters, threads, where the data
/// lives (backings, advice, limit), and each size a sweep goes through.
fn start_data(plan: &MemPlan) -> Value {
    let spec = &plan.spec;
    let (axis, points, backings) = match &plan.sweep {
        Some(s) => (
            Some(s.axis),
            s.points
                .iter()
                .map(|(x, k)| json!({"x": x, "size": k.data_bytes()}))
                .collect(),
            s.backings.iter().map(|(b, _)| b.clone()).collect(),
        ),
        None => (None, Vec::new(), vec![spec.backing.clone()]),
    };
    json!({
        "kernel": spec.kernel.name(),
        "spec": spec.kernel,
        "size": spec.kernel.data_bytes(),
        "threads": spec.threads,
        "backings": backings,
        "advice": spec.advice,
        "mem_limit": spec.mem_limit,
        "relative": plan.relative,
        "repeat": plan.repeat,
        "sweep_axis": axis,
        "points": points,
    })
}

/// The bytes a completed kernel run moved in its counted part and the
/// seconds that took (STREAM's counted passes over the four kernels, the
/// stencil's counted sweeps at 16 B per interior point); `None` for
/// Himeno, which counts flops, not bytes.
fn moved(kernel: &MemKernelSpec, result: &KernelResult) -> Option<(u64, f64)> {
    match (kernel, result) {
        (MemKernelSpec::Stream(s), KernelResult::Stream(r)) => {
            let counted = u64::from(s.ntimes.max(2) - 1);
            let bytes = r
                .kernels
                .iter()
                .map(|k| k.bytes_per_pass.get())
                .sum::<u64>()
                * counted;
            let secs = r.kernels.iter().map(|k| k.avg.as_secs_f64()).sum::<f64>() * counted as f64;
            Some((bytes, secs))
        }
        (MemKernelSpec::Stencil(s), KernelResult::Stencil(r)) => {
            let counted = u64::from(s.sweeps.saturating_sub(1).max(1));
            Some((
                16 * r.interior_points * counted,
                r.mean_sweep.as_secs_f64() * counted as f64,
            ))
        }
        _ => None,
    }
}

/// One kernel run's end: how it ended and, completed, what it measured
/// (which run it was comes from its begin).
fn interval_data(m: &Measured<'_>) -> Value {
    let spec = m.spec;
    let mut data = json!({"kind": "run"});
    let outcome = match m.outcome {
        MemOutcome::Completed {
            result, execution, ..
        } => {
            let (bytes, seconds) = moved(&spec.kernel, result).unzip();
            let rate = bytes
                .zip(seconds)
                .filter(|(_, s)| *s > 0.0)
                .map(|(b, s)| b as f64 / s);
            let mflops = match result {
                KernelResult::Stream(_) => None,
                KernelResult::Stencil(r) => Some(r.mflops),
                KernelResult::Himeno(r) => Some(r.mflops),
            };
            let fields = json!({
                "bytes": bytes,
                "seconds": seconds.or(match result {
                    KernelResult::Himeno(r) => Some(r.elapsed.as_secs_f64()),
                    _ => None,
                }),
                "bytes_per_second": rate,
                "mflops": mflops,
                "execution_seconds": execution.as_secs_f64(),
                "valid": !result.validation().is_failed(),
            });
            merge(&mut data, &fields);
            "completed"
        }
        MemOutcome::OomKilled { .. } => "oom_killed",
        MemOutcome::Interrupted => "interrupted",
        MemOutcome::Swept => "swept",
    };
    data["outcome"] = json!(outcome);
    data
}
