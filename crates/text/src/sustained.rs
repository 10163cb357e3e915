//! Text output of the sustained-write profile: how much was written, where
//! the rate fell (the cache size) and the rates on either side, or "no
//! cliff in N"; what came back after `--recover`'s idle time; and PTS's
//! host idle recovery (`--hir`), a line per wait state.

use std::fmt::Write;

use iomark_model::disk::DiskRun;
use iomark_model::sustained::{Hir, PassEnd, SustainedPass, SustainedResult};
use iomark_model::units::{Bytes, BytesPerSec};

/// `104.86 MB/s (100.00 MiB/s)`: the unit iomark prints rates in, and the
/// one throttles and drive sheets in MiB are set in.
fn rate(r: BytesPerSec) -> String {
    format!("{:.2} MB/s ({:.2} MiB/s)", r.mb_per_sec(), r.mib_per_sec())
}

fn ended(end: PassEnd) -> &'static str {
    match end {
        PassEnd::Region => "the end of the region",
        PassEnd::Steady => "steady after the drop (--until-steady)",
        PassEnd::Enough => "enough seen",
        PassEnd::Interrupted => "interrupted",
    }
}

/// A rate, and with `iops_of` (WSAT's block size) the I/Os a second too.
fn rate_iops(r: BytesPerSec, iops_of: Option<Bytes>) -> String {
    match iops_of.filter(|b| b.get() > 0) {
        Some(bs) => format!("{}, {:.0} IOPS", rate(r), r.ios_of(bs)),
        None => rate(r),
    }
}

fn pass_lines(out: &mut String, p: &SustainedPass, iops_of: Option<Bytes>) {
    let _ = writeln!(
        out,
        "{:14} {} in {:.1} s, {} mean;\n{:14} stopped at {}",
        "Written",
        p.written,
        p.elapsed.as_secs_f64(),
        rate_iops(p.mean_rate, iops_of),
        "",
        ended(p.end)
    );
    match &p.cliff {
        Some(c) => {
            let _ = writeln!(
                out,
                "{:14} {} (written before the rate fell, at {:.1} s)",
                "Cache size",
                c.at,
                c.time.as_secs_f64()
            );
            let _ = writeln!(
                out,
                "{:14} {}",
                "Rate before",
                rate_iops(c.rate_before, iops_of)
            );
            let _ = writeln!(
                out,
                "{:14} {}",
                "Rate after",
                rate_iops(c.rate_after, iops_of)
            );
            if c.gradual {
                let _ = writeln!(
                    out,
                    "{:14} the rate slid rather than fell; the cache size is the knee of the slide",
                    "Gradual"
                );
            }
        }
        None => {
            let _ = writeln!(
                out,
                "No cliff in {}: the rate held at {}",
                p.written,
                rate_iops(p.mean_rate, iops_of)
            );
        }
    }
}

/// The sustained-write result: its header line, and the lines that follow
/// the target line.
pub(crate) fn sustained(run: &DiskRun, r: &SustainedResult) -> (String, String) {
    let how = run.jobs.first().map_or_else(String::new, |j| {
        let s = &j.spec;
        let direct = if s.direct { "direct" } else { "buffered" };
        format!(", {}, {direct}", s.engine)
    });
    // The depth actually run: a synchronous engine keeps one write in flight.
    let depth = run.jobs.first().map_or(r.depth, |j| j.spec.depth_run());
    let iops_of = r.wsat.as_ref().map(|_| r.bs);
    let header = match &r.wsat {
        Some(w) => {
            let purge = crate::pts::purge(&w.purge);
            format!(
                "SNIA PTS 2.0.2 write saturation: {} random writes QD{depth} T{}{how},\n\
                 each thread over the {} region once ({}x the region)\nPurge          {purge}\n",
                r.bs, w.threads, r.region, w.threads
            )
        }
        None => format!(
            "Sustained write: {} blocks QD{depth}{how}, over up to {}\n",
            r.bs, r.region
        ),
    };
    let mut body = String::from("\n");
    pass_lines(&mut body, &r.pass, iops_of);
    if let Some(again) = &r.recover_pass {
        let idle = r.recovery.map(|v| v.idle.as_secs_f64());
        let _ = writeln!(
            body,
            "\nAfter {} idle:",
            idle.map_or("the".into(), |s| format!("{s:.0} s"))
        );
        pass_lines(&mut body, again, iops_of);
        if let Some(v) = &r.recovery {
            let share = r
                .pass
                .cliff
                .map(|c| v.recovered.get() as f64 / c.at.get().max(1) as f64 * 100.0);
            let _ = writeln!(
                body,
                "{:14} {}{}{}",
                "Recovered",
                if v.at_least { "at least " } else { "" },
                v.recovered,
                share.map_or(String::new(), |s| format!(
                    " of fast cache ({s:.0}% of the first pass's)"
                ))
            );
        }
    }
    if let Some(h) = &r.hir {
        hir_lines(&mut body, h, r.bs);
    }
    (header, body)
}

/// PTS's host idle recovery: each wait state's bursts against the
/// saturated rate, and the rate it returned to.
fn hir_lines(out: &mut String, h: &Hir, bs: Bytes) {
    let iops = |r: BytesPerSec| r.ios_of(bs);
    let _ = writeln!(
        out,
        "\nHost idle recovery (SNIA PTS 2.0.2 section 10)\n{:14} {} each; saturated at {:.0} IOPS",
        "Bursts",
        h.burst,
        iops(h.baseline)
    );
    let row = |idle: &str, bursts: &str, mean: &str, times: &str, back: &str| {
        format!("  {idle:>8}  {bursts:>6}  {mean:>10}  {times:>12}  {back:>18}")
    };
    let _ = writeln!(
        out,
        "{}",
        row(
            "idle",
            "bursts",
            "mean IOPS",
            "x saturated",
            "back to saturation"
        )
    );
    for st in &h.states {
        let mean = st.mean();
        let times = mean
            .filter(|_| h.baseline.0 > 0.0)
            .map_or("-".into(), |m| format!("{:.2}x", m.0 / h.baseline.0));
        let back = st
            .return_rate
            .map_or("-".into(), |r| format!("{:.0} IOPS", iops(r)));
        let _ = writeln!(
            out,
            "{}",
            row(
                &st.idle.to_string(),
                &st.bursts.len().to_string(),
                &mean.map_or("-".into(), |m| format!("{:.0}", iops(m))),
                &times,
                &back,
            )
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::sustained::{HirBurst, HirState};
    use iomark_model::units::Nanos;

    #[test]
    fn host_idle_recovery_is_a_line_per_wait_state_against_the_saturated_rate() {
        let iops = |n: f64| BytesPerSec(n * 4096.0);
        let state = |idle: u64, rates: &[f64], back: Option<f64>| HirState {
            idle: Nanos::from_secs(idle),
            bursts: rates
                .iter()
                .map(|&r| HirBurst {
                    at: Nanos(0),
                    rate: iops(r),
                })
                .collect(),
            return_rate: back.map(iops),
        };
        let h = Hir {
            burst: Nanos::from_secs(5),
            baseline: iops(2560.0),
            states: vec![
                state(5, &[2560.0, 2560.0], Some(2600.0)),
                state(50, &[4000.0, 5000.0], None),
            ],
        };
        let mut out = String::new();
        hir_lines(&mut out, &h, Bytes(4096));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[2], "Bursts         5 s each; saturated at 2560 IOPS");
        assert!(lines[4].ends_with("1.00x           2600 IOPS"), "{out}");
        // Stopped before its return: no rate after the bursts.
        assert!(
            lines[5].contains("50 s") && lines[5].contains("4500"),
            "{out}"
        );
        assert!(
            lines[5].contains("1.76x") && lines[5].ends_with(" -"),
            "{out}"
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{out}");
    }
}
