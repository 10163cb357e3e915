//! Memory figures and test names: kernel, size, backing, threads, limit.

use super::*;
use crate::mem::{Backing, MemSweep, MemSweepPoint};

/// An element count for a test name: `10M`, `1500k`, `12345`.
pub(super) fn count_label(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// The name of a memory job's test: everything that changes its result.
/// `STREAM, 10M elements, heap, 2 threads`,
/// `stencil 15x15, 4096x4096 grid, mmap, 1 thread, advice random, limit 256MiB`,
/// `Himeno M (257x257x513), heap, 2 threads`.
pub fn mem_test_name(run: &MemRun) -> String {
    mem_spec_test_name(&run.spec)
}

/// The name of a memory job's test from its spec ([`mem_test_name`]).
pub fn mem_spec_test_name(s: &MemJobSpec) -> String {
    spec_test_name(s, false)
}

/// The test name of a sweep's point: as [`mem_spec_test_name`], with the
/// swap device named when the sweep has several swap backings
/// ([`MemSweep::several_swaps`]).
pub fn mem_point_test_name(sweep: &MemSweep, point: &MemSweepPoint) -> String {
    spec_test_name(&point.run.spec, sweep.several_swaps())
}

/// The test name; `swap_device`: name a swap backing by its device
/// (`swap on zram0`), which tells apart the columns of a sweep over several.
fn spec_test_name(s: &MemJobSpec, swap_device: bool) -> String {
    let kernel = match &s.kernel {
        MemKernelSpec::Stream(k) => format!("STREAM, {} elements", count_label(k.array_len)),
        MemKernelSpec::Stencil(k) => format!("stencil {m}x{m}, {n}x{n} grid", m = k.mask, n = k.n),
        MemKernelSpec::Himeno(k) => format!("Himeno {}", k.grid),
    };
    let backing = match &s.backing {
        Backing::Swap { .. } if !swap_device => "swap".to_string(),
        b => b.label(),
    };
    let threads = if s.threads == 1 { "thread" } else { "threads" };
    let mut name = format!("{kernel}, {backing}, {} {threads}", s.threads);
    if s.advice != Advice::Normal {
        name += &format!(", advice {}", s.advice.as_str());
    }
    if let Some(limit) = s.mem_limit {
        name += &format!(", limit {}", size_label(limit));
    }
    name
}

/// Figures of a memory run: STREAM's best rate per kernel (spread over the
/// passes), the stencil's and Himeno's MFLOPS, and the execution time.
/// A run the OOM killer ended has none. A sweep has each point's figures
/// under the point's own test name (its size, backing and limit), plus its
/// `relative time` against the all-in-memory run, so `compare` lines the
/// points of two sweeps up one by one; a killed point has no figures.
pub fn mem_figures(run: &MemRun) -> Vec<Figure> {
    if let Some(sweep) = &run.sweep {
        let mut out = Vec::new();
        for p in &sweep.points {
            let test = mem_point_test_name(sweep, p);
            out.extend(run_figures(&p.run, &test));
            if let Some(t) = p.relative_time() {
                let spread = p.run.baseline.as_ref().and_then(|b| b.spread());
                TestFigures::new(&mut out, &test, "").push(
                    "relative time",
                    FigureUnit::Ratio,
                    t,
                    spread,
                );
            }
        }
        return out;
    }
    let test = mem_test_name(run);
    let mut out = run_figures(run, &test);
    if let Some(b) = &run.baseline {
        if let (Some(t), Some(spread)) = (b.relative_time, b.spread()) {
            // One pair's relative time is in the text; a median over
            // alternated pairs is a figure with its spread.
            TestFigures::new(&mut out, &test, "").push(
                "relative time",
                FigureUnit::Ratio,
                t,
                Some(spread),
            );
        }
    }
    out
}

/// A single run's figures under `test`.
fn run_figures(run: &MemRun, test: &str) -> Vec<Figure> {
    let MemOutcome::Completed {
        result, execution, ..
    } = &run.outcome
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut figs = TestFigures::new(&mut out, test, "");
    match result {
        KernelResult::Stream(r) => {
            for k in &r.kernels {
                let bytes = k.bytes_per_pass.get() as f64;
                let rate = |t: crate::units::Nanos| bytes / t.as_secs_f64();
                let spread =
                    (k.min.get() > 0 && k.max.get() > 0).then(|| (rate(k.max), rate(k.min)));
                let metric = format!("{} rate", k.op.label());
                figs.push(&metric, FigureUnit::BytesPerSec, k.best_rate.0, spread);
            }
        }
        KernelResult::Stencil(r) => {
            figs.push("mflops", FigureUnit::Mflops, r.mflops, None);
            let rate = r.effective_rate.0;
            figs.push("effective rate", FigureUnit::BytesPerSec, rate, None);
        }
        KernelResult::Himeno(r) => {
            figs.push("mflops", FigureUnit::Mflops, r.mflops, None);
        }
    }
    figs.push("execution", FigureUnit::Nanos, execution.get() as f64, None);
    if let Some(cpu) = &run.cpu {
        cpu_figures(&mut figs, Some(cpu.process), cpu.host.as_ref());
    }
    out
}
