//! Figures in the unit their run printed them in. Figures are stored in
//! base units and a rate reads `612.35 MB/s` by default, but the
//! block-size sweep prints MiB/s (fio's and the SSD papers' unit) and
//! MacBench KB/s: a comparison, a `results show` and a report page show a
//! run's rates as the run itself printed them (crates/text/src/profile.rs),
//! so the numbers a user saw live are the numbers they find later.

use crate::figure::{Figure, FigureUnit};
use crate::profile::ProfileResult;
use crate::run::RunBody;
use crate::units::BytesPerSec;

/// The unit a run printed its byte rates in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RateUnit {
    /// MB/s, 10^6 bytes per second: CrystalDiskMark, GNOME Disks, fio
    /// jobs and every run not named below.
    #[default]
    Mb,
    /// MiB/s, 2^20 bytes per second: the block-size sweep.
    Mib,
    /// KB/s, 10^3 bytes per second: MacBench.
    Kb,
}

impl RateUnit {
    /// The unit `body`'s own output printed its rates in.
    pub fn printed_by(body: &RunBody) -> RateUnit {
        match body {
            RunBody::Disk(d) => match &d.profile_result {
                Some(ProfileResult::Sweep(_)) => RateUnit::Mib,
                Some(ProfileResult::Macbench(_)) => RateUnit::Kb,
                _ => RateUnit::Mb,
            },
            _ => RateUnit::Mb,
        }
    }

    /// Its name: `MB/s`, `MiB/s`, `KB/s`.
    pub fn as_str(self) -> &'static str {
        match self {
            RateUnit::Mb => "MB/s",
            RateUnit::Mib => "MiB/s",
            RateUnit::Kb => "KB/s",
        }
    }

    /// The name of the unit a figure in `unit` is shown in: this rate unit
    /// for bytes per second, none (the stored unit's own) otherwise.
    pub fn name_for(self, unit: FigureUnit) -> Option<&'static str> {
        (unit == FigureUnit::BytesPerSec).then_some(self.as_str())
    }

    /// A byte rate (bytes per second) in this unit: `20.0` MiB/s.
    pub fn of_bytes_per_sec(self, v: f64) -> f64 {
        let rate = BytesPerSec(v);
        match self {
            RateUnit::Mb => rate.mb_per_sec(),
            RateUnit::Mib => rate.mib_per_sec(),
            RateUnit::Kb => rate.kb_per_sec(),
        }
    }

    /// `v` (base units of `unit`) as the run printed it: `20.00 MiB/s`,
    /// `5243 KB/s`; any figure not a byte rate as [`FigureUnit::format`].
    pub fn format(self, unit: FigureUnit, v: f64) -> String {
        if unit != FigureUnit::BytesPerSec {
            return unit.format(v);
        }
        let rate = BytesPerSec(v);
        match self {
            RateUnit::Mb => unit.format(v),
            RateUnit::Mib => format!("{:.2} MiB/s", rate.mib_per_sec()),
            RateUnit::Kb => format!("{:.0} KB/s", rate.kb_per_sec()),
        }
    }

    /// A signed difference as the run printed its figures: `+1.25 MiB/s`.
    pub fn format_difference(self, unit: FigureUnit, d: f64) -> String {
        let sign = if d < 0.0 { '-' } else { '+' };
        format!("{sign}{}", self.format(unit, d.abs()))
    }

    /// `f`'s value as the run printed it.
    pub fn format_figure(self, f: &Figure) -> String {
        self.format(f.unit, f.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_rates_take_the_printed_unit_and_others_keep_their_own() {
        let mib = 20.0 * (1u64 << 20) as f64;
        assert_eq!(
            RateUnit::Mib.format(FigureUnit::BytesPerSec, mib),
            "20.00 MiB/s"
        );
        assert_eq!(
            RateUnit::Mb.format(FigureUnit::BytesPerSec, mib),
            "20.97 MB/s"
        );
        assert_eq!(
            RateUnit::Kb.format(FigureUnit::BytesPerSec, 5_242_880.0),
            "5243 KB/s"
        );
        assert_eq!(RateUnit::Kb.format(FigureUnit::Iops, 1500.0), "1500 IOPS");
        assert_eq!(
            RateUnit::Mib.format_difference(FigureUnit::BytesPerSec, -mib / 2.0),
            "-10.00 MiB/s"
        );
        assert_eq!(RateUnit::Kb.name_for(FigureUnit::BytesPerSec), Some("KB/s"));
        assert_eq!(RateUnit::Mib.of_bytes_per_sec(mib), 20.0);
        assert_eq!(RateUnit::Kb.name_for(FigureUnit::Nanos), None);
    }
}
