//! A run across MPI ranks (docs/mpi.md): each rank's read and write rate
//! over its own time, as stored in the run's per-rank table, the slowest
//! and fastest rank named in the title.

use iomark_model::cluster::{ClusterRun, RankResult};

use super::{disk, mb, push_bars, Chart, MB};
use crate::svg::{Bar, BarChart, BarSeries};
use crate::{Report, ReportRun};

/// One chart per run that ran across ranks: a bar per rank and direction
/// that moved bytes.
pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    for r in report.runs() {
        if let Some(c) = disk(r).and_then(|d| d.cluster.as_deref()) {
            let from = out.len();
            chart(r, c, out);
            super::of_run(out, from, r);
        }
    }
}

fn chart(r: &ReportRun, c: &ClusterRun, out: &mut Vec<Chart>) {
    let categories: Vec<String> = c
        .per_rank
        .iter()
        .map(|k| format!("rank {}", k.rank))
        .collect();
    let mut series = Vec::new();
    let of = |k: &RankResult, read: bool| {
        if read {
            (k.read_bytes.get(), k.read_bw)
        } else {
            (k.write_bytes.get(), k.write_bw)
        }
    };
    // One run's chart: read and write get the first two colours.
    for (colour, (what, read)) in [("read", true), ("write", false)].into_iter().enumerate() {
        if c.per_rank.iter().all(|k| of(k, read).0 == 0) {
            continue;
        }
        series.push(BarSeries {
            name: what.into(),
            colour,
            bars: c
                .per_rank
                .iter()
                .map(|k| {
                    let bw = of(k, read).1;
                    Some(Bar::new(mb(bw), bw.0))
                })
                .collect(),
        });
    }
    let named = c
        .slowest_fastest()
        .map(|(slow, fast)| format!(" (slowest rank {}, fastest rank {})", slow.rank, fast.rank))
        .unwrap_or_default();
    push_bars(
        out,
        BarChart {
            id: format!("ranks-{}", r.id),
            title: format!(
                "{}: rate per rank, {} ranks{named}{}",
                r.name,
                c.ranks,
                if c.stonewall { ", stonewalled" } else { "" }
            ),
            y_label: MB.into(),
            categories,
            series,
            reference: None,
        },
    );
}
