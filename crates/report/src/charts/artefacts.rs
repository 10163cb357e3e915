//! The artefacts probe's chart: each pattern's rate against random data's.

use iomark_model::profile::{ArtefactsResult, ProfileResult};

use super::{push_bars, union, with_profile, Chart};
use crate::svg::{Bar, BarChart, BarSeries};
use crate::{Report, ReportRun};

/// The artefacts probe: each pattern's write and read rate as a share of
/// random data's, per run; bars above 100% are what compression or
/// deduplication buys.
pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(usize, &ReportRun, &ArtefactsResult)> = with_profile(report, |p| match p {
        ProfileResult::Artefacts(c) => Some(c),
        _ => None,
    });
    let cats = union(runs.iter().flat_map(|(_, _, a)| {
        a.verdict.iter().flat_map(|v| {
            v.factors
                .iter()
                .flat_map(|f| [format!("{} write", f.data), format!("{} read", f.data)])
        })
    }));
    let series = runs
        .iter()
        .map(|(_, r, a)| BarSeries {
            name: r.name.clone(),
            colour: r.colour,
            bars: cats
                .iter()
                .map(|c| {
                    let v = a.verdict.as_ref()?;
                    v.factors.iter().find_map(|f| {
                        let x = if *c == format!("{} write", f.data) {
                            f.write
                        } else if *c == format!("{} read", f.data) {
                            f.read
                        } else {
                            return None;
                        };
                        Some(Bar::new(x * 100.0, x * 100.0))
                    })
                })
                .collect(),
        })
        .collect();
    push_bars(
        out,
        BarChart {
            id: "artefacts".into(),
            title: "Artefacts probe: each pattern against random data".into(),
            y_label: "% of random data's rate".into(),
            categories: cats,
            series,
            reference: None,
        },
    );
}
