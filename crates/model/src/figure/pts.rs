//! Figures of the PTS round-based tests: the table's cells, each with the
//! spread of its tracked figure over the window's rounds, and the round
//! steady state was reached in.

use super::*;
use crate::pts::{mix_label, PtsResult, PtsTest};

/// The name of a cell's test among the figures and in `compare`:
/// `PTS IOPS 4KiB 65/35 QD32 T4`.
pub fn cell_test(r: &PtsResult, read_pct: u8, bs: Bytes) -> String {
    format!(
        "PTS {} {} {} QD{} T{}",
        r.test.short(),
        size_label(bs),
        mix_label(read_pct),
        r.depth,
        r.threads
    )
}

/// The test of a cell's job of `r`, from what the job ran (its read share
/// and block size): also a job of a round that a stop cut short, which
/// never reached `r.rounds`.
pub fn test_of_job(r: &PtsResult, spec: &DiskJobSpec) -> String {
    cell_test(r, spec.rw.read_percent(spec.rwmix_read), spec.bs)
}

/// Per cell of the table (averaged over the window), test `PTS IOPS 4KiB
/// 65/35 QD32 T4` (`TP`, `LAT` for the others): `iops` with its spread
/// over the window's rounds and `lat mean`; the throughput test also
/// `bw`, with the spread; the latency test also `lat 99.999` and `lat
/// max`. Test `PTS IOPS` (`PTS TP 1MiB`, `PTS LAT`): `rounds` to steady
/// state, when reached.
pub fn pts_figures(r: &PtsResult) -> Vec<Figure> {
    let mut out = Vec::new();
    let window = r.window.map_or(0..0, |w| {
        (w.first_round - 1) as usize..w.last_round as usize
    });
    for cell in &r.table {
        let test = cell_test(r, cell.read_pct, cell.bs);
        let rounds = |f: fn(&crate::pts::PtsCell) -> f64| -> Vec<f64> {
            r.rounds
                .get(window.clone())
                .unwrap_or_default()
                .iter()
                .filter_map(|round| {
                    round
                        .cells
                        .iter()
                        .find(|c| c.read_pct == cell.read_pct && c.bs == cell.bs)
                        .map(f)
                })
                .collect()
        };
        let dir = match cell.read_pct {
            100 => "read",
            0 => "write",
            _ => "mix",
        };
        let mut figs = TestFigures::new(&mut out, &test, dir);
        if r.test == PtsTest::Throughput {
            figs.push(
                "bw",
                FigureUnit::BytesPerSec,
                cell.bw.0,
                Spread::of(&rounds(|c| c.bw.0)),
            );
        }
        figs.push(
            "iops",
            FigureUnit::Iops,
            cell.iops,
            Spread::of(&rounds(|c| c.iops)),
        );
        if cell.lat_mean_ns > 0.0 {
            let spread = if r.test == PtsTest::Latency {
                Spread::of(&rounds(|c| c.lat_mean_ns))
            } else {
                Spread::from(None)
            };
            figs.push("lat mean", FigureUnit::Nanos, cell.lat_mean_ns, spread);
        }
        if r.test == PtsTest::Latency && cell.lat_max_ns > 0.0 {
            figs.push("lat 99.999", FigureUnit::Nanos, cell.lat_p99999_ns, None);
            figs.push("lat max", FigureUnit::Nanos, cell.lat_max_ns, None);
        }
    }
    if let Some(w) = r.window.filter(|w| w.steady) {
        let test = match r.test {
            PtsTest::Throughput => format!("PTS TP {}", size_label(r.tracking_cell().1)),
            t => format!("PTS {}", t.short()),
        };
        TestFigures::new(&mut out, &test, "").push(
            "rounds",
            FigureUnit::Count,
            f64::from(w.last_round),
            None,
        );
    }
    out
}
