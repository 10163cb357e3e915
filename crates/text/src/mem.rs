//! A memory run as text: the kernel's own table (STREAM's, the stencil's,
//! Himeno's), then the memory set-up, the baseline and the warnings.

use iomark_model::mem::{
    Backing, CheckOutcome, HimenoResult, KernelResult, MemJobSpec, MemKernelSpec, MemOutcome,
    MemRun, StencilResult, StreamResult,
};
use iomark_model::units::Nanos;

fn secs(n: Nanos) -> f64 {
    n.as_secs_f64()
}

/// The text report: the kernel's own table or summary, then the memory
/// set-up, the baseline and the warnings.
pub fn mem_run(run: &MemRun) -> String {
    if let Some(sweep) = &run.sweep {
        return crate::mem_sweep::mem_sweep(run, sweep);
    }
    let mut out = String::new();
    let spec = &run.spec;
    match &run.outcome {
        MemOutcome::Completed {
            result,
            execution,
            msync,
        } => {
            match result {
                KernelResult::Stream(r) => render_stream(&mut out, spec, r),
                KernelResult::Stencil(r) => render_stencil(&mut out, spec, r),
                KernelResult::Himeno(r) => render_himeno(&mut out, spec, r),
            }
            out.push_str(&format!(
                "Execution time ({}): {:.6} s\n",
                counted_work(spec, result),
                secs(*execution)
            ));
            if let Some(m) = msync {
                out.push_str(&format!(
                    "msync of the backing file: {:.6} s (not counted)\n",
                    secs(*m)
                ));
            }
        }
        MemOutcome::Swept => {}
        MemOutcome::Interrupted => {
            out.push_str(&format!(
                "iomark mem {}: interrupted, no result\n",
                spec.kernel.name()
            ));
        }
        MemOutcome::OomKilled { .. } => {
            out.push_str(&format!(
                "iomark mem {}: {} of data on {}, no result\n",
                spec.kernel.name(),
                spec.kernel.data_bytes(),
                spec.backing
            ));
        }
    }
    if let Backing::Mmap { .. } = spec.backing {
        out.push_str(&format!("madvise: {}\n", spec.advice.as_str()));
    }
    if let Some(cg) = &run.cgroup {
        out.push_str(&format!(
            "Memory limit: {} (cgroup {}), data {}; {}, {} OOM kills\n",
            cg.limit,
            cg.version,
            spec.kernel.data_bytes(),
            crate::disk::cgroup_usage(cg),
            cg.oom_kills
        ));
    }
    let swap = &run.host.swap;
    if swap.devices.is_empty() {
        out.push_str("Swap: none\n");
    } else {
        out.push_str(&format!(
            "Swap: {} on {}, {} in use\n",
            swap.total,
            swap.devices.join(", "),
            swap.used
        ));
    }
    if let Some(b) = &run.baseline {
        let head = format!(
            "All-in-memory baseline (heap, no limit): {:.6} s ({})",
            secs(b.execution),
            counted_work(spec, &b.result)
        );
        match (b.relative_time, b.spread()) {
            (Some(rel), Some((lo, hi))) => out.push_str(&format!(
                "{head}; same work as this run, relative execution time: {rel:.3} (median of {} alternated pairs, {lo:.3}-{hi:.3})\n",
                b.repeats.len()
            )),
            (Some(rel), None) => out.push_str(&format!(
                "{head}; same work as this run, relative execution time: {rel:.3}\n"
            )),
            (None, _) => out.push_str(&format!(
                "{head}; no relative time (this run did not complete)\n"
            )),
        }
    }
    if let Some(c) = &run.cpu {
        let p = &c.process;
        out.push_str(&format!(
            "CPU: process {:.0}% of one CPU (user {:.0}%, system {:.0}%)\n",
            p.total_pct(),
            p.user_pct,
            p.system_pct
        ));
        if let Some(h) = &c.host {
            out.push_str(&format!("Machine CPU: {h}\n"));
        }
    }
    for w in &run.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// What an execution time counts, as `--relative` compares it:
/// "initialisation + 10 passes", "initialisation + 306 sweeps, 3 rehearsal
/// sweeps not counted".
fn counted_work(spec: &MemJobSpec, result: &KernelResult) -> String {
    match (&spec.kernel, result) {
        (MemKernelSpec::Stream(s), KernelResult::Stream(_)) => {
            format!("initialisation + {} passes", s.ntimes.max(2))
        }
        (MemKernelSpec::Stencil(s), KernelResult::Stencil(_)) => {
            format!("initialisation + {} sweeps", s.sweeps)
        }
        (_, KernelResult::Himeno(r)) if r.rehearsal_iterations > 0 => format!(
            "initialisation + {} sweeps, {} rehearsal sweeps not counted",
            r.iterations, r.rehearsal_iterations
        ),
        (_, KernelResult::Himeno(r)) => format!("initialisation + {} sweeps", r.iterations),
        _ => "initialisation + the kernel's work".into(),
    }
}

const RULE: &str = "-------------------------------------------------------------\n";

fn render_stream(out: &mut String, spec: &MemJobSpec, r: &StreamResult) {
    let MemKernelSpec::Stream(s) = &spec.kernel else {
        return;
    };
    out.push_str(RULE);
    out.push_str("iomark mem stream: based on a variant of the STREAM benchmark (v5.10)\n");
    out.push_str(RULE);
    out.push_str("This system uses 8 bytes per array element.\n");
    out.push_str(&format!(
        "Array size = {} (elements), Offset = 0 (elements)\n",
        s.array_len
    ));
    let mib = r.array_bytes.get() as f64 / (1u64 << 20) as f64;
    out.push_str(&format!(
        "Memory per array = {mib:.1} MiB (= {:.1} GiB).\n",
        mib / 1024.0
    ));
    out.push_str(&format!(
        "Total memory required = {:.1} MiB (= {:.1} GiB).\n",
        3.0 * mib,
        3.0 * mib / 1024.0
    ));
    out.push_str(&format!(
        "Each kernel will be executed {} times; the best time of the last {} is used.\n",
        s.ntimes,
        s.ntimes - 1
    ));
    out.push_str(&format!(
        "Threads: {} · Backing: {} · Copy: {} · Stores: {}\n",
        spec.threads,
        spec.backing,
        r.copy_method,
        if r.stores.is_empty() {
            "regular"
        } else {
            &r.stores
        }
    ));
    out.push_str(&format!(
        "Initialisation (first touch, not in the rates): {:.6} s\n",
        secs(r.init)
    ));
    out.push_str(RULE);
    out.push_str("Function    Best Rate MB/s  Avg time     Min time     Max time\n");
    for k in &r.kernels {
        out.push_str(&format!(
            "{:<11}{:12.1}  {:11.6}  {:11.6}  {:11.6}\n",
            format!("{}:", k.op.label()),
            k.best_rate.mb_per_sec(),
            secs(k.avg),
            secs(k.min),
            secs(k.max)
        ));
    }
    out.push_str(RULE);
    out.push_str(&format!("{}\n", r.validation.detail));
    out.push_str(RULE);
}

fn render_stencil(out: &mut String, spec: &MemJobSpec, r: &StencilResult) {
    let MemKernelSpec::Stencil(s) = &spec.kernel else {
        return;
    };
    out.push_str(&format!(
        "iomark mem stencil: {k}x{k} mask on {n} x {n} f64 ({} in 2 arrays), {} sweeps, {} threads, {}\n",
        r.data_bytes,
        s.sweeps,
        spec.threads,
        spec.backing,
        k = s.mask,
        n = s.n
    ));
    for (label, t) in [
        ("Initialisation (not in MFLOPS):", r.init),
        ("First sweep (warm-up):", r.first_sweep),
        ("Best sweep:", r.best_sweep),
        ("Mean sweep:", r.mean_sweep),
    ] {
        out.push_str(&format!("{label:<31} {:.6} s\n", secs(t)));
    }
    out.push_str(&format!(
        "MFLOPS (best sweep, {} flop per point): {:.1}\n",
        r.flops_per_point, r.mflops
    ));
    out.push_str(&format!(
        "Effective rate (16 B per point): {:.1} MB/s\n",
        r.effective_rate.mb_per_sec()
    ));
    out.push_str(&format!("Checksum: {:.17e}\n", r.checksum));
    out.push_str(&format!("Validation: {}\n", r.validation.detail));
}

fn render_himeno(out: &mut String, spec: &MemJobSpec, r: &HimenoResult) {
    let MemKernelSpec::Himeno(s) = &spec.kernel else {
        return;
    };
    out.push_str(&format!(
        "Grid-size = {} ({} in 14 float arrays), {} threads, {}\n",
        s.grid, r.data_bytes, spec.threads, spec.backing
    ));
    out.push_str(&format!(
        "Initialisation (not in MFLOPS): {:.6} s\n",
        secs(r.init)
    ));
    if r.rehearsal_iterations > 0 {
        out.push_str(&format!(
            "Rehearsal: {} sweeps (not counted)\n",
            r.rehearsal_iterations
        ));
    }
    out.push_str(&format!("Loop executed for {} times\n", r.iterations));
    out.push_str(&format!("Gosa : {:.6e} (summed in f64)\n", r.gosa));
    out.push_str(&format!(
        "MFLOPS measured : {:.1}\tcpu : {:.6}\n",
        r.mflops,
        secs(r.elapsed)
    ));
    out.push_str(&format!(
        "Score based on Pentium III 600MHz using Fortran 77: {:.1}\n",
        r.mflops / 82.84
    ));
    let tag = match r.validation.outcome {
        CheckOutcome::Passed => "ok",
        CheckOutcome::Failed => "FAILED",
        CheckOutcome::Unchecked => "not checked",
    };
    out.push_str(&format!("Validation ({tag}): {}\n", r.validation.detail));
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::mem::{
        Advice, CgroupUsage, HimenoGrid, HimenoLength, HimenoSpec, MemBaseline, MemHost, Validation,
    };
    use iomark_model::mem::{MemSweep, SweepAxis};
    use iomark_model::units::Bytes;

    fn himeno(rehearsal: u32, iterations: u32, secs: u64) -> KernelResult {
        KernelResult::Himeno(HimenoResult {
            data_bytes: Bytes(3_670_016),
            init: Nanos(4_000_000),
            rehearsal_iterations: rehearsal,
            iterations,
            elapsed: Nanos::from_secs(secs),
            mflops: 1234.5,
            gosa: 1.5e-3,
            gosa_reference: None,
            validation: Validation::unchecked("no reference"),
        })
    }

    /// `himeno --seconds 1 --relative --mem-limit 1GiB`: both lines say
    /// what the times count, and that the work is the same.
    #[test]
    fn himeno_relative_says_what_both_times_count() {
        let run = MemRun {
            spec: MemJobSpec {
                kernel: MemKernelSpec::Himeno(HimenoSpec {
                    grid: HimenoGrid {
                        name: Some("xs".into()),
                        i: 32,
                        j: 32,
                        k: 64,
                    },
                    length: HimenoLength::Target(Nanos::from_secs(1)),
                }),
                threads: 2,
                backing: Backing::Heap,
                advice: Advice::Normal,
                mem_limit: Some(Bytes(1 << 30)),
            },
            host: MemHost::default(),
            outcome: MemOutcome::Completed {
                result: himeno(0, 306, 2),
                execution: Nanos(2_004_000_000),
                msync: None,
            },
            cgroup: Some(Box::new(CgroupUsage {
                version: "v1".into(),
                limit: Bytes(1 << 30),
                peak: Some(Bytes(4 << 20)),
                oom_kills: 0,
                limit_hits: Some(0),
                major_faults: Some(0),
            })),
            baseline: Some(Box::new(MemBaseline {
                result: himeno(3, 306, 1),
                execution: Nanos(1_004_000_000),
                relative_time: Some(2_004.0 / 1_004.0),
                repeats: Vec::new(),
            })),
            warnings: Vec::new(),
            sweep: None,
            cpu: None,
            cluster: None,
        };
        insta::assert_snapshot!(mem_run(&run));
    }

    /// Two swap columns named by their devices; a point with repeats shows
    /// its median and range, a killed one "killed".
    #[test]
    fn a_sweep_table_names_swap_devices_and_shows_repeat_ranges() {
        let swap_on = |d: &str| Backing::Swap {
            path: format!("/dev/{d}"),
            device: Some(d.into()),
        };
        let spec = |backing| MemJobSpec {
            kernel: MemKernelSpec::Himeno(HimenoSpec {
                grid: HimenoGrid {
                    name: None,
                    i: 32,
                    j: 32,
                    k: 64,
                },
                length: HimenoLength::Iterations(3),
            }),
            threads: 1,
            backing,
            advice: Advice::Normal,
            mem_limit: Some(Bytes(64 << 20)),
        };
        let pair = |b: u64, c: u64| iomark_model::mem::RepeatPair {
            baseline: Nanos(b),
            constrained: Nanos(c),
        };
        let point = |backing, outcome, repeats: Vec<_>| iomark_model::mem::MemSweepPoint {
            x: 2.0,
            data: Bytes(128 << 20),
            run: MemRun {
                spec: spec(backing),
                host: MemHost::default(),
                outcome,
                cgroup: None,
                baseline: Some(Box::new(MemBaseline {
                    result: himeno(0, 3, 1),
                    execution: Nanos(100),
                    relative_time: iomark_model::mem::median(
                        &repeats
                            .iter()
                            .map(iomark_model::mem::RepeatPair::relative)
                            .collect::<Vec<_>>(),
                    ),
                    repeats,
                })),
                warnings: Vec::new(),
                sweep: None,
                cpu: None,
                cluster: None,
            },
        };
        let done = MemOutcome::Completed {
            result: himeno(0, 3, 1),
            execution: Nanos(400),
            msync: None,
        };
        let killed = MemOutcome::OomKilled {
            message: "killed".into(),
        };
        let backings = vec![swap_on("zram0"), swap_on("loop3")];
        let sweep = MemSweep {
            axis: SweepAxis::Ratio,
            points: vec![
                point(
                    swap_on("zram0"),
                    done,
                    vec![pair(100, 400), pair(100, 250), pair(100, 300)],
                ),
                point(swap_on("loop3"), killed, Vec::new()),
            ],
            backings,
        };
        let run = MemRun {
            sweep: Some(Box::new(sweep.clone())),
            outcome: MemOutcome::Swept,
            baseline: None,
            ..sweep.points[0].run.clone()
        };
        let text = mem_run(&run);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].ends_with("swap on zram0  swap on loop3"), "{text}");
        assert!(
            lines[2].ends_with("3.00 [2.50-4.00]         killed"),
            "{text}"
        );
        assert!(text.contains("median relative time of 3 alternated pairs"));
    }
}
