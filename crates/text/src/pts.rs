//! Text output of the PTS IOPS test, in the specification's shape: the
//! steps taken (purge, preconditioning), whether and where steady state
//! was reached, the tracking variable round by round, and the IOPS table
//! (block size by read/write mix) averaged over the window.

use std::fmt::Write;

use iomark_model::disk::DiskRun;
use iomark_model::pts::{mix_label, PtsIopsResult, Purge};

/// What the purge did, as the PTS tests' text says it.
pub(crate) fn purge(p: &Purge) -> String {
    match p {
        Purge::Discarded { secure: true } => "every block secure-discarded".into(),
        Purge::Discarded { secure: false } => "every block discarded".into(),
        Purge::Skipped { why } => format!("skipped: {why}"),
    }
}

/// The test's text.
pub fn pts_iops(out: &mut String, run: &DiskRun, r: &PtsIopsResult) {
    let _ = writeln!(
        out,
        "SNIA PTS 2.0.2 IOPS test: QD{} T{}, {} a cell, at most {} rounds",
        r.depth, r.threads, r.cell_time, r.max_rounds
    );
    crate::disk::target_line(out, run);
    if !r.on_device {
        let _ = writeln!(
            out,
            "A file, not a device: the procedure's plumbing, not a PTS result."
        );
    }
    let _ = writeln!(out, "{:15} {}", "Purge", purge(&r.purge));
    let p = &r.preconditioning;
    let _ = writeln!(
        out,
        "{:15} {}",
        "Preconditioned",
        if p.asked.get() == 0 {
            "skipped (--precondition 0)".to_string()
        } else {
            format!(
                "{} of 128 KiB sequential writes in {:.1} s ({} asked)",
                p.written,
                p.took.as_secs_f64(),
                p.asked
            )
        }
    );
    let rounds = r.rounds.len();
    match r.window {
        Some(w) if w.steady => {
            let _ = writeln!(
                out,
                "{:15} reached in round {} (at most {})",
                "Steady state", w.last_round, r.max_rounds
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "{:15} NOT reached in {rounds} rounds: not a steady-state result",
                "Steady state"
            );
        }
    }
    if let Some(w) = r.window {
        let pct = |v: f64| 100.0 * v / w.average.abs().max(f64::MIN_POSITIVE);
        let _ = writeln!(
            out,
            "{:15} rounds {}-{}: average {:.0} IOPS (4 KiB, 0/100)",
            "Window", w.first_round, w.last_round, w.average
        );
        let _ = writeln!(
            out,
            "{:15} data excursion {:.1}% (<= 20%), slope excursion {:.1}% (<= 10%)",
            "",
            pct(w.data_excursion),
            pct(w.slope_excursion)
        );
    }
    // Eight rounds a line, so 25 rounds fit 80 columns.
    for (i, chunk) in r.rounds.chunks(8).enumerate() {
        let values: Vec<String> = chunk
            .iter()
            .map(|x| format!("{:>7.0}", x.tracking))
            .collect();
        let head = if i == 0 { "Tracking IOPS" } else { "" };
        let _ = writeln!(out, "{head:15}{}", values.join(""));
    }
    let _ = writeln!(out);
    let _ = write!(out, "{:>8}", "IOPS");
    for m in &r.mixes {
        let _ = write!(out, "{:>9}", mix_label(*m));
    }
    let _ = writeln!(out);
    for bs in &r.block_sizes {
        let _ = write!(out, "{:>8}", bs.short_label());
        for m in &r.mixes {
            let cell = r.table.iter().find(|c| c.bs == *bs && c.read_pct == *m);
            let _ = match cell {
                Some(c) => write!(out, "{:>9.0}", c.iops),
                None => write!(out, "{:>9}", "-"),
            };
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "(read/write mix; {} of the window's rounds averaged)",
        r.window
            .map_or(rounds.min(5), |w| (w.last_round - w.first_round + 1)
                as usize)
    );
}
