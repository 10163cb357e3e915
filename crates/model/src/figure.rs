//! Figures: the flat, comparable numbers a run boils down to.
//!
//! A run document is deep (jobs, directions, samples, percentiles). To list
//! and compare runs quickly, and to line up an imported fio run with one of
//! iomark's own, every body flattens into [`Figure`]s keyed by `test` and
//! `metric`. The store keeps them as rows next to the full document.
//!
//! A test is named by everything that changes its result, not by its
//! label, so the same work lines up whoever ran it and different work never
//! does: `read 1MiB QD8 T1, io_uring, direct, random data, 1GiB` is fio's
//! `rw=read bs=1M iodepth=8 numjobs=1` on that file as much as
//! CrystalDiskMark's `SEQ1M Q8T1` read ([`disk`], [`mem`], [`net`]; the
//! rules are in docs/result-schema.md).

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::cpu::{CpuUsage, HostCpu};
use crate::device::{BlockLayer, DeviceReport};
use crate::disk::{
    DirectionResult, DiskJobResult, DiskJobSpec, DiskRun, DiskTarget, IntervalSample, RwMode,
};
use crate::mem::{Advice, KernelResult, MemJobSpec, MemKernelSpec, MemOutcome, MemRun};
use crate::net::{NetDirection, NetInterface, NetProtocol, NetRun, NetSpec};
use crate::profile::{ArtefactsResult, CdmResult, GnomeResult, ProfileResult, TestDir};
use crate::run::{RunBody, RunDocument};
use crate::sustained::SustainedResult;
use crate::units::Bytes;

mod classic;
mod device;
pub mod disk;
mod disk_names;
pub mod evidence;
pub mod mem;
pub mod net;
mod own_names;
pub mod printed;
pub mod pts;
pub mod sustained;
#[cfg(test)]
mod tests;

pub use device::device_link;
pub use disk::{
    cdm_figures, disk_figures, disk_job_test_name, disk_job_test_name_on, disk_test_name,
    gnome_figures, profile_test_names, size_label,
};
pub use evidence::Sampled;
pub use mem::{mem_figures, mem_spec_test_name, mem_test_name};
pub use net::{net_figures, net_spec_name, net_test_name};
pub use own_names::own_test_names;
pub use printed::RateUnit;

/// The unit a figure's value is in. Values are always in base units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FigureUnit {
    /// Bytes per second.
    #[serde(rename = "B/s")]
    BytesPerSec,
    /// Bits per second (network links are rated in bits).
    #[serde(rename = "bit/s")]
    BitsPerSec,
    /// Operations per second.
    #[serde(rename = "IOPS")]
    Iops,
    /// Nanoseconds.
    #[serde(rename = "ns")]
    Nanos,
    /// A percentage.
    #[serde(rename = "%")]
    Percent,
    /// A plain count.
    #[serde(rename = "count")]
    Count,
    /// Millions of floating-point operations per second.
    #[serde(rename = "MFLOPS")]
    Mflops,
    /// An amount of data (a write cache's size, a capacity).
    #[serde(rename = "B")]
    Bytes,
    /// A time over a reference time (a sweep point's relative execution
    /// time: 1 is as fast as all in memory).
    #[serde(rename = "ratio")]
    Ratio,
}

impl FigureUnit {
    /// Every unit.
    pub const ALL: [FigureUnit; 9] = [
        FigureUnit::BytesPerSec,
        FigureUnit::BitsPerSec,
        FigureUnit::Iops,
        FigureUnit::Nanos,
        FigureUnit::Percent,
        FigureUnit::Count,
        FigureUnit::Mflops,
        FigureUnit::Bytes,
        FigureUnit::Ratio,
    ];

    /// The name used in the store and in exports.
    pub fn as_str(self) -> &'static str {
        match self {
            FigureUnit::BytesPerSec => "B/s",
            FigureUnit::BitsPerSec => "bit/s",
            FigureUnit::Iops => "IOPS",
            FigureUnit::Nanos => "ns",
            FigureUnit::Percent => "%",
            FigureUnit::Count => "count",
            FigureUnit::Mflops => "MFLOPS",
            FigureUnit::Bytes => "B",
            FigureUnit::Ratio => "ratio",
        }
    }

    /// The unit with this stored name.
    pub fn from_name(s: &str) -> Option<FigureUnit> {
        FigureUnit::ALL.into_iter().find(|u| u.as_str() == s)
    }

    /// Which way is better for a figure in this unit. Only rates and
    /// times have one: whether more CPU, a deeper queue reached, more UDP
    /// loss or more retransmits is worse depends on what was asked, so
    /// comparisons show those figures but never judge them. Nor is an
    /// amount of data judged: a larger write cache is better, but not a
    /// larger amount written before a stop.
    pub fn direction(self) -> Direction {
        match self {
            FigureUnit::BytesPerSec
            | FigureUnit::BitsPerSec
            | FigureUnit::Iops
            | FigureUnit::Mflops => Direction::HigherIsBetter,
            FigureUnit::Nanos | FigureUnit::Ratio => Direction::LowerIsBetter,
            FigureUnit::Percent | FigureUnit::Count | FigureUnit::Bytes => Direction::Unknown,
        }
    }

    /// A value in this unit for a person: `612.35 MB/s`, `94.1 µs`.
    pub fn format(self, v: f64) -> String {
        match self {
            FigureUnit::BytesPerSec => format!("{:.2} MB/s", v / 1e6),
            FigureUnit::BitsPerSec => {
                if v >= 1e9 {
                    format!("{:.2} Gbit/s", v / 1e9)
                } else {
                    format!("{:.2} Mbit/s", v / 1e6)
                }
            }
            FigureUnit::Iops => {
                if v >= 100.0 {
                    format!("{v:.0} IOPS")
                } else {
                    format!("{v:.2} IOPS")
                }
            }
            FigureUnit::Nanos => {
                if v < 1e3 {
                    format!("{v:.0} ns")
                } else if v < 1e6 {
                    format!("{:.1} µs", v / 1e3)
                } else if v < 1e9 {
                    format!("{:.2} ms", v / 1e6)
                } else {
                    format!("{:.2} s", v / 1e9)
                }
            }
            FigureUnit::Percent => format!("{v:.2} %"),
            FigureUnit::Count => format!("{v:.0}"),
            FigureUnit::Mflops => format!("{v:.1} MFLOPS"),
            FigureUnit::Bytes => crate::units::Bytes(v as u64).to_string(),
            FigureUnit::Ratio => format!("{v:.2}x"),
        }
    }
}

impl FigureUnit {
    /// A difference between two figures in this unit, signed: `+27.20
    /// MB/s`, `-1.5 µs`, `+0.40 %` (percentage points).
    pub fn format_difference(self, d: f64) -> String {
        let sign = if d < 0.0 { '-' } else { '+' };
        format!("{sign}{}", self.format(d.abs()))
    }
}

/// Which way a figure gets better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Bandwidth, IOPS, MFLOPS: more is better.
    HigherIsBetter,
    /// Latency and time: less is better.
    LowerIsBetter,
    /// Counts and percentages (CPU, depth reached, loss): not judged.
    Unknown,
}

impl Direction {
    /// The name in JSON layouts: `higher_is_better`, `lower_is_better`,
    /// `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::HigherIsBetter => "higher_is_better",
            Direction::LowerIsBetter => "lower_is_better",
            Direction::Unknown => "unknown",
        }
    }
}

impl fmt::Display for FigureUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One comparable number of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What was run, named by its shape: `read 1M Q8T1`, `tcp 1 stream`.
    pub test: String,
    /// What was measured: `read bw`, `read lat p99`.
    pub metric: String,
    /// The unit of `value` and `spread`.
    pub unit: FigureUnit,
    /// The figure, in base units.
    pub value: f64,
    /// The lowest and highest value over the passes or intervals the figure
    /// summarises, when there were at least two.
    pub spread: Option<(f64, f64)>,
    /// The band a difference must leave to be real: `spread` widened to the
    /// 95% confidence interval of the samples' mean ([`noise_band`]). The
    /// same as `spread` where only the range is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<(f64, f64)>,
    /// What the samples say about their mean, which comparisons judge
    /// ([`evidence`]). Not stored with the figure, nor in its JSON: a
    /// stored run's is derived again from its document.
    #[serde(skip)]
    pub sampled: Option<Sampled>,
}

impl Figure {
    /// `value` formatted for a person in its unit.
    pub fn display_value(&self) -> String {
        self.unit.format(self.value)
    }

    /// Which way this figure gets better (by its unit).
    pub fn direction(&self) -> Direction {
        self.unit.direction()
    }
}

impl RunBody {
    /// Every figure of the run, in a stable order.
    pub fn figures(&self) -> Vec<Figure> {
        match self {
            RunBody::Disk(run) => disk_figures(run),
            RunBody::Mem(run) => mem_figures(run),
            RunBody::Net(run) => net_figures(run),
        }
    }
}

/// Where the figures of one test go, each metric named `{prefix} {metric}`
/// (just `metric` with an empty prefix).
struct TestFigures<'a> {
    out: &'a mut Vec<Figure>,
    test: &'a str,
    prefix: &'a str,
}

impl<'a> TestFigures<'a> {
    fn new(out: &'a mut Vec<Figure>, test: &'a str, prefix: &'a str) -> Self {
        TestFigures { out, test, prefix }
    }

    fn push(&mut self, metric: &str, unit: FigureUnit, value: f64, spread: impl Into<Spread>) {
        let spread = spread.into();
        let metric = if self.prefix.is_empty() {
            metric.to_string()
        } else {
            format!("{} {metric}", self.prefix)
        };
        self.out.push(Figure {
            test: self.test.to_string(),
            metric,
            unit,
            value,
            spread: spread.range,
            noise: spread.noise,
            sampled: spread.sampled,
        });
    }
}

/// The CPU a test cost: the measuring process's user + system as percent
/// of one CPU (`cpu process %`, 1166 % is nearly twelve CPUs busy) with its
/// parts, and the whole machine's parts as percent of all CPUs (`cpu host
/// system %`, `cpu host softirq %`, `cpu host idle %`, ...).
fn cpu_figures(figs: &mut TestFigures, process: Option<CpuUsage>, host: Option<&HostCpu>) {
    if let Some(p) = process {
        figs.push("cpu process %", FigureUnit::Percent, p.total_pct(), None);
        figs.push("cpu process user %", FigureUnit::Percent, p.user_pct, None);
        figs.push(
            "cpu process system %",
            FigureUnit::Percent,
            p.system_pct,
            None,
        );
    }
    if let Some(h) = host {
        for (metric, v) in [
            ("cpu host user %", h.user_pct),
            ("cpu host system %", h.system_pct),
            ("cpu host iowait %", h.iowait_pct),
            ("cpu host softirq %", h.softirq_pct),
            ("cpu host idle %", h.idle_pct),
        ] {
            figs.push(metric, FigureUnit::Percent, v, None);
        }
    }
}

/// How a figure's samples (intervals, passes) scattered: their range, and
/// the band a difference must leave to be real.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    /// Lowest and highest sample.
    pub range: Option<(f64, f64)>,
    /// [`noise_band`] of the samples.
    pub noise: Option<(f64, f64)>,
    /// Their mean, scatter and worth ([`Sampled`]).
    pub sampled: Option<Sampled>,
}

impl Spread {
    /// The spread of `samples` (none for fewer than two).
    pub fn of(samples: &[f64]) -> Spread {
        Spread {
            range: min_max(samples),
            noise: noise_band(samples),
            sampled: Sampled::of(samples),
        }
    }

    /// Both bands through `f` (an increasing function: MB/s to IOPS).
    pub fn map(self, f: impl Fn(f64) -> f64) -> Spread {
        let m = |b: Option<(f64, f64)>| b.map(|(lo, hi)| (f(lo), f(hi)));
        Spread {
            range: m(self.range),
            noise: m(self.noise),
            sampled: self.sampled.map(|s| s.scaled(&f)),
        }
    }

    /// Both bands widened to take in `value` (a whole-job percentile that
    /// need not lie between its intervals').
    pub fn including(self, value: f64) -> Spread {
        let w = |b: Option<(f64, f64)>| b.map(|(lo, hi)| (lo.min(value), hi.max(value)));
        Spread {
            range: w(self.range),
            noise: w(self.noise),
            sampled: self.sampled,
        }
    }
}

impl From<Option<(f64, f64)>> for Spread {
    /// Only a range known: it is the noise band too.
    fn from(range: Option<(f64, f64)>) -> Spread {
        Spread {
            range,
            noise: range,
            sampled: None,
        }
    }
}

/// Two-sided 95% quantiles of Student's t for 1 to 30 degrees of freedom;
/// above 30, the normal's 1.96 is within 4%. One degree of freedom (two
/// samples) takes the quantile of two (4.303, not 12.706): with 12.7 a
/// run read through a throttle under load, its two seconds at 4 and 14
/// MB/s, was "within noise" of one four times faster.
const T95: [f64; 30] = [
    4.303, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The band inside which two runs' figures do not differ: the samples'
/// range, widened to the 95% confidence interval of their mean (Student's
/// t, `T95`). With many samples the range is the wider; with two or
/// three, the interval is. Two 2 s runs have two per-second samples each, whose range
/// is no measure of how far a third run may land: issue 33's gate flagged
/// 4 of 20 identical pairs on a busy machine with the range alone.
pub fn noise_band(samples: &[f64]) -> Option<(f64, f64)> {
    let (lo, hi) = min_max(samples)?;
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let var = samples.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let t = T95.get(samples.len() - 2).copied().unwrap_or(1.96);
    let half = t * (var / n).sqrt();
    Some((lo.min(mean - half), hi.max(mean + half)))
}

/// The lowest and highest of at least two values.
pub fn min_max(vals: &[f64]) -> Option<(f64, f64)> {
    if vals.len() < 2 {
        return None;
    }
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((lo, hi))
}
