//! Figures of the sustained-write profile.

use super::*;
use crate::disk::DiskJobResult;

/// Figures of the sustained-write profile, one test named by the block
/// size, depth, engine and direct or buffered (from its first job):
/// `written` (bytes the first pass wrote) always; with a cliff its
/// `cache size`, `rate before` and `rate after`; without one the pass's
/// `rate` and no cache size ("no cliff in N GiB" is `written` alone); and
/// after `--recover`, `recovered cache`. PTS's host idle recovery is a
/// test of its own, `PTS HIR ...`: `iops saturated` and each wait state's
/// mean `iops idle N s`.
pub fn sustained_figures(s: &SustainedResult, first: Option<&DiskJobResult>) -> Vec<Figure> {
    let mut out = Vec::new();
    let how = first.map_or_else(String::new, |j| {
        let s = &j.spec;
        format!(
            " {} QD{} T{}, {}, {}",
            size_label(s.bs),
            s.depth_run(),
            s.numjobs,
            s.engine,
            if s.direct { "direct" } else { "buffered" }
        )
    });
    // WSAT's figures are the same measurements under PTS's name, with
    // the rates in I/Os a second as the specification reports them.
    let test = match s.wsat {
        Some(_) => format!("PTS WSAT{how}"),
        None => format!("sustained write{how}"),
    };
    let iops = |rate: f64| crate::units::BytesPerSec(rate).ios_of(s.bs);
    let mut figs = TestFigures::new(&mut out, &test, "");
    let pass = &s.pass;
    figs.push(
        "written",
        FigureUnit::Bytes,
        pass.written.get() as f64,
        None,
    );
    match &pass.cliff {
        Some(c) => {
            figs.push("cache size", FigureUnit::Bytes, c.at.get() as f64, None);
            figs.push(
                "rate before",
                FigureUnit::BytesPerSec,
                c.rate_before.0,
                None,
            );
            figs.push("rate after", FigureUnit::BytesPerSec, c.rate_after.0, None);
            if s.wsat.is_some() {
                figs.push("iops before", FigureUnit::Iops, iops(c.rate_before.0), None);
                figs.push("iops after", FigureUnit::Iops, iops(c.rate_after.0), None);
            }
        }
        None => figs.push("rate", FigureUnit::BytesPerSec, pass.mean_rate.0, None),
    }
    if let Some(r) = &s.recovery {
        figs.push(
            "recovered cache",
            FigureUnit::Bytes,
            r.recovered.get() as f64,
            None,
        );
    }
    if let Some(h) = &s.hir {
        let test = format!("PTS HIR{how}");
        let mut figs = TestFigures::new(&mut out, &test, "");
        figs.push("iops saturated", FigureUnit::Iops, iops(h.baseline.0), None);
        for st in &h.states {
            if let Some(mean) = st.mean() {
                let name = format!("iops idle {}", st.idle);
                figs.push(&name, FigureUnit::Iops, iops(mean.0), None);
            }
        }
    }
    out
}
