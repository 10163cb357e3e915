//! Figures of the PTS IOPS test: the table's cells, each with the spread
//! over the window's rounds, and the round steady state was reached in.

use super::*;
use crate::pts::{mix_label, PtsIopsResult};

/// Per cell of the IOPS table (averaged over the window), test `PTS IOPS
/// 4K 65/35 QD32 T4`: `iops` with its spread over the window's rounds,
/// `lat mean`; test `PTS IOPS`: `rounds` to steady state, when reached.
pub fn pts_iops_figures(r: &PtsIopsResult) -> Vec<Figure> {
    let mut out = Vec::new();
    let window = r.window.map_or(0..0, |w| {
        (w.first_round - 1) as usize..w.last_round as usize
    });
    for cell in &r.table {
        let test = format!(
            "PTS IOPS {} {} QD{} T{}",
            size_label(cell.bs),
            mix_label(cell.read_pct),
            r.depth,
            r.threads
        );
        let rounds: Vec<f64> = r
            .rounds
            .get(window.clone())
            .unwrap_or_default()
            .iter()
            .filter_map(|round| {
                round
                    .cells
                    .iter()
                    .find(|c| c.read_pct == cell.read_pct && c.bs == cell.bs)
                    .map(|c| c.iops)
            })
            .collect();
        let dir = match cell.read_pct {
            100 => "read",
            0 => "write",
            _ => "mix",
        };
        let mut figs = TestFigures::new(&mut out, &test, dir);
        figs.push("iops", FigureUnit::Iops, cell.iops, Spread::of(&rounds));
        if cell.lat_mean_ns > 0.0 {
            figs.push("lat mean", FigureUnit::Nanos, cell.lat_mean_ns, None);
        }
    }
    if let Some(w) = r.window.filter(|w| w.steady) {
        TestFigures::new(&mut out, "PTS IOPS", "").push(
            "rounds",
            FigureUnit::Count,
            f64::from(w.last_round),
            None,
        );
    }
    out
}
