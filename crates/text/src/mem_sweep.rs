//! A memory sweep's text: the paper's table of relative execution times
//! (a row per size or ratio, a column per backing), the set-up, each
//! point's memory-limit record and the points' warnings. Shared by the
//! live output and `results show`.

use iomark_model::mem::{Backing, MemOutcome, MemRun, MemSweep, SweepAxis, SweepCell};

/// A sweep: the paper's table (a row per size or ratio, a column per
/// backing, each cell the relative execution time against the
/// all-in-memory run of the same size, or "killed"), then the set-up.
pub(crate) fn mem_sweep(run: &MemRun, sweep: &MemSweep) -> String {
    let mut out = sweep_table(run, sweep);
    let spec = &run.spec;
    for b in &sweep.backings {
        if b != &Backing::Heap {
            out.push_str(&format!("{}: {b}\n", b.label()));
        }
    }
    let pairs = sweep
        .points
        .iter()
        .filter_map(|p| p.run.baseline.as_ref())
        .map(|b| b.repeats.len())
        .max()
        .unwrap_or(0);
    if pairs > 1 {
        out.push_str(&format!(
            "Each cell: the median relative time of {pairs} alternated pairs (all-in-memory run, then the constrained run), [lowest-highest]\n"
        ));
    }
    if sweep
        .backings
        .iter()
        .any(|b| matches!(b, Backing::Mmap { .. }))
    {
        out.push_str(&format!("madvise: {}\n", spec.advice.as_str()));
    }
    match spec.mem_limit {
        Some(l) => out.push_str(&format!(
            "Memory limit: {l} (a memory cgroup per point), {} thread(s)\n",
            spec.threads
        )),
        None => out.push_str(&format!("Memory limit: none, {} thread(s)\n", spec.threads)),
    }
    out.push_str(&crate::sweep_limits::table(sweep).unwrap_or_default());
    if run.outcome == MemOutcome::Interrupted {
        out.push_str("interrupted: points not run are shown as -\n");
    }
    // Each names the point that raised it: the same warning of two
    // backings is two facts.
    let mut seen = Vec::new();
    let raised = sweep
        .points
        .iter()
        .flat_map(|p| p.run.warnings.iter().map(move |w| (p, w)));
    for (p, w) in raised {
        let line = format!(
            "warning: {} on {}: {w}\n",
            p.data,
            p.run.spec.backing.label()
        );
        if !seen.contains(&line) {
            out.push_str(&line);
            seen.push(line);
        }
    }
    out
}

/// The sweep's table alone: a heading, a row per x value, a column per
/// backing ("killed" where the OOM killer ended the point).
pub(crate) fn sweep_table(run: &MemRun, sweep: &MemSweep) -> String {
    let spec = &run.spec;
    let mut out = format!(
        "iomark mem {}: relative execution time (execution over the all-in-memory run of the same size: heap, no limit, same work)\n",
        spec.kernel.name()
    );
    let x_head = match sweep.axis {
        SweepAxis::Size => "size",
        SweepAxis::Ratio => "data/limit",
    };
    let mut table = vec![std::iter::once(x_head.to_string())
        .chain(std::iter::once("data".to_string()))
        .chain(sweep.backings.iter().map(Backing::label))
        .collect::<Vec<_>>()];
    for row in sweep.rows() {
        let cells = row.cells.iter().enumerate().map(|(k, c)| {
            let spread = sweep
                .points
                .iter()
                .find(|p| p.x == row.x && sweep.column_of(&p.run.spec.backing) == k)
                .and_then(|p| p.run.baseline.as_ref())
                .and_then(|b| b.spread());
            match (c, spread) {
                (SweepCell::Relative(_), Some((lo, hi))) => format!("{c} [{lo:.2}-{hi:.2}]"),
                _ => c.to_string(),
            }
        });
        table.push(
            [sweep.x_label(row.x), row.data.to_string()]
                .into_iter()
                .chain(cells)
                .collect(),
        );
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in &table {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                if i == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
