//! CrystalDiskMark 8's other units: IOPS and mean latency (µs) per test,
//! beside the MB/s charts, as its unit switch offers.

use iomark_model::profile::{CdmResult, CdmTest};

use super::{push_bars, union, Chart};
use crate::svg::{Bar, BarChart, BarSeries};
use crate::ReportRun;

/// `cdm-iops` and `cdm-latency`: one bar per run for every test (row and
/// direction). RND4K's IOPS next to SEQ1M's span decades, so the value
/// axis usually turns logarithmic.
pub(super) fn draw(runs: &[(usize, &ReportRun, &CdmResult)], out: &mut Vec<Chart>) {
    let name = |t: &CdmTest| format!("{} {}", t.row, t.dir.as_str());
    let cats = union(runs.iter().flat_map(|(_, _, c)| c.tests.iter().map(name)));
    let series = |bar: &dyn Fn(&CdmTest) -> Bar| -> Vec<BarSeries> {
        runs.iter()
            .map(|(_, r, c)| BarSeries {
                name: r.name.clone(),
                colour: r.colour,
                bars: cats
                    .iter()
                    .map(|cat| c.tests.iter().find(|t| name(t) == *cat).map(bar))
                    .collect(),
            })
            .collect()
    };
    push_bars(
        out,
        BarChart {
            id: "cdm-iops".into(),
            title: "CrystalDiskMark IOPS (from the reported MB/s and the block size)".into(),
            y_label: "IOPS (I/Os per second)".into(),
            categories: cats.clone(),
            series: series(&|t| Bar::as_stored(t.iops.0)),
            reference: None,
        },
    );
    push_bars(
        out,
        BarChart {
            id: "cdm-latency".into(),
            title: "CrystalDiskMark mean latency (best pass; whiskers: lowest to highest pass)"
                .into(),
            y_label: "mean latency (µs)".into(),
            categories: cats.clone(),
            series: series(&|t| {
                let lo = t
                    .pass_lat_mean_ns
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min);
                let hi = t.pass_lat_mean_ns.iter().copied().fold(0.0, f64::max);
                Bar {
                    value: t.lat_mean_ns / 1e3,
                    stored: t.lat_mean_ns,
                    spread: lo.is_finite().then_some((lo / 1e3, hi / 1e3)),
                }
            }),
            reference: None,
        },
    );
}
