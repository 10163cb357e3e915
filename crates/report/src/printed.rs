//! Figures in the unit their run printed them in: the figure table would
//! otherwise show every rate in MB/s, while the block-size sweep prints
//! MiB/s and MacBench KB/s ([`RateUnit`], shared with `results compare`
//! and `results show`).

use iomark_model::figure::{Figure, RateUnit};

use crate::ReportRun;

/// `v`, a figure of `f` of run `r`, as the run printed it.
pub(crate) fn format(r: &ReportRun, f: &Figure, v: f64) -> String {
    RateUnit::printed_by(&r.doc.body).format(f.unit, v)
}
