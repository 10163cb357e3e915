//! Figures in the unit their run printed them in: the figure table would
//! otherwise show every rate in MB/s, while the block-size sweep prints
//! MiB/s and MacBench KB/s (see crates/text/src/profile.rs).

use iomark_model::figure::{Figure, FigureUnit};
use iomark_model::profile::ProfileResult;
use iomark_model::{BytesPerSec, RunBody};

use crate::ReportRun;

/// The rate unit a run's own output used, where it is not MB/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RateUnit {
    Mb,
    Mib,
    Kb,
}

fn rate_unit(r: &ReportRun) -> RateUnit {
    match &r.doc.body {
        RunBody::Disk(d) => match &d.profile_result {
            Some(ProfileResult::Sweep(_)) => RateUnit::Mib,
            Some(ProfileResult::Macbench(_)) => RateUnit::Kb,
            _ => RateUnit::Mb,
        },
        _ => RateUnit::Mb,
    }
}

/// `v`, a figure of `f` of run `r`, as the run printed it.
pub(crate) fn format(r: &ReportRun, f: &Figure, v: f64) -> String {
    if f.unit != FigureUnit::BytesPerSec {
        return f.unit.format(v);
    }
    let rate = BytesPerSec(v);
    match rate_unit(r) {
        RateUnit::Mb => f.unit.format(v),
        RateUnit::Mib => format!("{:.2} MiB/s", rate.mib_per_sec()),
        RateUnit::Kb => format!("{:.0} KB/s", rate.kb_per_sec()),
    }
}
