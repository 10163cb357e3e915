//! Text output of the PTS round-based tests, in the specification's shape:
//! the steps taken (purge, preconditioning), whether and where steady
//! state was reached, the tracking variable round by round, and the tables
//! (block size by read/write mix) averaged over the window: IOPS, MB/s, or
//! the latency test's mean, five nines and maximum.

use std::fmt::Write;

use iomark_model::disk::DiskRun;
use iomark_model::pts::{
    mix_label, PtsCell, PtsResult, PtsRoundStatus, PtsTest, PtsWindowFigures, Purge,
};

/// What the purge did, as the PTS tests' text says it.
pub(crate) fn purge(p: &Purge) -> String {
    match p {
        Purge::Discarded { secure: true } => "every block secure-discarded".into(),
        Purge::Discarded { secure: false } => "every block discarded".into(),
        Purge::Skipped { why } => format!("skipped: {why}"),
    }
}

/// The tracking variable's `value` in its unit, as the tables give it.
fn tracked(test: PtsTest, value: f64) -> String {
    let v = test.shown(value);
    if test == PtsTest::Iops {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// A window's two excursions against their limits, as fractions of its
/// average: `data excursion 12.0% (<= 20%), slope excursion 3.1% (<= 10%)`.
fn excursions(w: &PtsWindowFigures, data_limit: f64, slope_limit: f64) -> String {
    let pct = |v: f64| 100.0 * v / w.average.abs().max(f64::MIN_POSITIVE);
    format!(
        "data excursion {:.1}% (<= {:.0}%), slope excursion {:.1}% (<= {:.0}%)",
        pct(w.data_excursion),
        100.0 * data_limit,
        pct(w.slope_excursion),
        100.0 * slope_limit
    )
}

/// Where a test stands after a round, in a sentence, with the
/// specification's words and limits: `round 6 of at most 25: 4K 0/100
/// 1234 IOPS; rounds 2-6: data excursion 12.0% (<= 20%), slope excursion
/// 3.1% (<= 10%): not steady yet`.
pub fn round_line(s: &PtsRoundStatus) -> String {
    let mut out = format!(
        "round {} of at most {}: {} {} {} {}",
        s.round,
        s.max_rounds,
        s.bs.short_label(),
        mix_label(s.read_pct),
        tracked(s.test, s.tracking),
        s.test.unit()
    );
    match &s.window {
        Some(w) => {
            let _ = write!(
                out,
                "; rounds {}-{}: {}: {}",
                w.first_round,
                w.last_round,
                excursions(w, s.data_limit, s.slope_limit),
                if w.steady { "steady" } else { "not steady yet" }
            );
        }
        None => {
            let _ = write!(
                out,
                "; steady state is judged over {} rounds",
                s.window_rounds
            );
        }
    }
    out
}

/// The test's text.
pub fn pts(out: &mut String, run: &DiskRun, r: &PtsResult) {
    let _ = writeln!(
        out,
        "SNIA PTS 2.0.2 {} test: {} QD{} T{}, {} a cell, at most {} rounds",
        r.test.name(),
        if r.test == PtsTest::Throughput {
            "sequential"
        } else {
            "random"
        },
        r.depth,
        r.threads,
        r.cell_time,
        r.max_rounds
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
    let shown = |v: f64| tracked(r.test, v);
    if let Some(w) = r.window {
        let rule = iomark_stats::steady::PtsRule::default();
        let _ = writeln!(
            out,
            "{:15} rounds {}-{}: average {} {}",
            "Window",
            w.first_round,
            w.last_round,
            shown(w.average),
            r.tracking_label()
        );
        let _ = writeln!(
            out,
            "{:15} {}",
            "",
            excursions(&w, rule.data_excursion, rule.slope_excursion)
        );
    }
    // Eight rounds a line of 8 columns each, so 25 rounds fit 80 columns
    // and a seven-digit figure keeps a space before it.
    let head = format!("Tracking {}", r.test.unit());
    for (i, chunk) in r.rounds.chunks(8).enumerate() {
        let values: Vec<String> = chunk
            .iter()
            .map(|x| format!("{:>8}", shown(x.tracking)))
            .collect();
        let head = if i == 0 { head.as_str() } else { "" };
        let _ = writeln!(out, "{head:15}{}", values.join(""));
    }
    match r.test {
        PtsTest::Iops => grid(out, r, "IOPS", |c| format!("{:.0}", c.iops)),
        PtsTest::Throughput => grid(out, r, "MB/s", |c| format!("{:.1}", c.bw.0 / 1e6)),
        PtsTest::Latency => {
            let us = |ns: f64| format!("{:.1}", ns / 1e3);
            grid(out, r, "mean us", |c| us(c.lat_mean_ns));
            grid(out, r, "99.999 us", |c| us(c.lat_p99999_ns));
            grid(out, r, "max us", |c| us(c.lat_max_ns));
        }
    }
    let _ = writeln!(
        out,
        "(read/write mix; {} of the window's rounds averaged)",
        r.window
            .map_or(rounds.min(5), |w| (w.last_round - w.first_round + 1)
                as usize),
    );
    if r.test == PtsTest::Latency {
        let _ = writeln!(out, "(99.999% and max: over every I/O of those rounds)");
    }
}

/// One table: a row per block size, a column per mix, `cell` of each.
fn grid(out: &mut String, r: &PtsResult, head: &str, cell: impl Fn(&PtsCell) -> String) {
    let _ = writeln!(out);
    let _ = write!(out, "{head:>9}");
    for m in &r.mixes {
        let _ = write!(out, "{:>9}", mix_label(*m));
    }
    let _ = writeln!(out);
    for bs in &r.block_sizes {
        let _ = write!(out, "{:>9}", bs.short_label());
        for m in &r.mixes {
            let c = r.table.iter().find(|c| c.bs == *bs && c.read_pct == *m);
            let _ = write!(out, "{:>9}", c.map_or("-".into(), &cell));
        }
        let _ = writeln!(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::units::Bytes;

    #[test]
    fn a_rounds_line_gives_its_figure_in_the_tests_unit_and_its_window_against_the_limits() {
        let mut s = PtsRoundStatus {
            test: PtsTest::Latency,
            round: 3,
            max_rounds: 25,
            read_pct: 0,
            bs: Bytes(4096),
            tracking: 4_012_345.0,
            window: None,
            window_rounds: 5,
            data_limit: 0.2,
            slope_limit: 0.1,
        };
        assert_eq!(
            round_line(&s),
            "round 3 of at most 25: 4K 0/100 4012.3 us; steady state is judged over 5 rounds"
        );
        s.round = 7;
        s.window = Some(PtsWindowFigures {
            first_round: 3,
            last_round: 7,
            average: 4_000_000.0,
            data_excursion: 200_000.0,
            slope: 1000.0,
            intercept: 3_998_000.0,
            slope_excursion: 4000.0,
            steady: true,
        });
        assert_eq!(
            round_line(&s),
            "round 7 of at most 25: 4K 0/100 4012.3 us; rounds 3-7: data excursion 5.0% \
             (<= 20%), slope excursion 0.1% (<= 10%): steady"
        );
        s.test = PtsTest::Throughput;
        s.tracking = 31_540_000.0;
        assert!(
            round_line(&s).contains(" 31.5 MB/s; "),
            "{}",
            round_line(&s)
        );
    }
}
