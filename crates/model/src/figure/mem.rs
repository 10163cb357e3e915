//! Memory figures and test names: kernel, size, backing, threads, limit.

use super::*;

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
    let kernel = match &s.kernel {
        MemKernelSpec::Stream(k) => format!("STREAM, {} elements", count_label(k.array_len)),
        MemKernelSpec::Stencil(k) => format!("stencil {m}x{m}, {n}x{n} grid", m = k.mask, n = k.n),
        MemKernelSpec::Himeno(k) => format!("Himeno {}", k.grid),
    };
    let backing = s.backing.kind();
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
            out.extend(mem_figures(&p.run));
            if let Some(t) = p.relative_time() {
                let test = mem_test_name(&p.run);
                TestFigures::new(&mut out, &test, "").push(
                    "relative time",
                    FigureUnit::Ratio,
                    t,
                    None,
                );
            }
        }
        return out;
    }
    let test = mem_test_name(run);
    let MemOutcome::Completed {
        result, execution, ..
    } = &run.outcome
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut figs = TestFigures::new(&mut out, &test, "");
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
