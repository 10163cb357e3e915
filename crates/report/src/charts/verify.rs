//! The verify profile's chart: the write and read rate by position across
//! the surface, as GNOME Disks draws its transfer rate.

use iomark_model::profile::ProfileResult;
use iomark_model::verify::{SurfaceRate, VerifyResult};

use super::{mb, push_lines, with_profile, Chart, MB};
use crate::svg::{LineChart, LineSeries, Scale, TickFormat};
use crate::{Report, ReportRun};

/// Write (dashed) and read rate of every stretch, at its middle as a
/// percentage of the size checked.
pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(usize, &ReportRun, &VerifyResult)> = with_profile(report, |p| match p {
        ProfileResult::Verify(v) => Some(v),
        _ => None,
    });
    let mut series = Vec::new();
    for (_, r, v) in &runs {
        let points = |s: &[SurfaceRate]| -> Vec<(f64, f64, f64)> {
            let whole = v.claimed.get().max(1) as f64;
            s.iter()
                .map(|p| {
                    let mid = (p.at.get() as f64 + p.len.get() as f64 / 2.0) / whole * 100.0;
                    (mid, mb(p.bw), p.bw.0)
                })
                .collect()
        };
        for (what, s, dashed) in [
            ("read", &v.read_series, false),
            ("write", &v.write_series, true),
        ] {
            if !s.is_empty() {
                series.push(LineSeries {
                    name: format!("{} {what}", r.name),
                    points: points(s),
                    dashed,
                    scatter: false,
                    colour: r.colour,
                });
            }
        }
    }
    push_lines(
        out,
        LineChart {
            id: "verify-rate".into(),
            title: "Verify: rate by position".into(),
            x_label: "position (% of the size checked)".into(),
            y_label: MB.into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series,
        },
    );
}
