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
use crate::disk::{DirectionResult, DiskJobResult, DiskJobSpec, DiskRun, IntervalSample, RwMode};
use crate::mem::{Advice, KernelResult, MemJobSpec, MemKernelSpec, MemOutcome, MemRun};
use crate::net::{NetDirection, NetInterface, NetProtocol, NetRun};
use crate::profile::{ArtefactsResult, CdmResult, GnomeResult, ProfileResult, TestDir};
use crate::run::{RunBody, RunDocument};
use crate::sustained::SustainedResult;
use crate::units::Bytes;

mod device;
pub mod disk;
pub mod mem;
pub mod net;
pub mod sustained;
#[cfg(test)]
mod tests;

pub use device::device_link;
pub use disk::{
    cdm_figures, disk_figures, disk_job_test_name, disk_test_name, gnome_figures, size_label,
};
pub use mem::{mem_figures, mem_spec_test_name, mem_test_name};
pub use net::{net_figures, net_test_name};

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

    fn push(&mut self, metric: &str, unit: FigureUnit, value: f64, spread: Option<(f64, f64)>) {
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
            spread,
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

/// The lowest and highest of at least two values.
pub fn min_max(vals: &[f64]) -> Option<(f64, f64)> {
    if vals.len() < 2 {
        return None;
    }
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((lo, hi))
}
