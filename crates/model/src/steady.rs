//! Steady-state criteria as fio's `ss=` option gives them (`iops:10%`,
//! `bw_slope:1%`), and the settings a job ends on them with (`ss_dur`,
//! `ss_ramp`). The judging is `iomark_stats::steady`'s.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::units::{Bytes, Nanos};

/// What a steady-state criterion watches: fio's `iops`, `bw` and `lat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// I/Os a second.
    Iops,
    /// Bytes a second.
    Bandwidth,
    /// Mean completion latency, ns.
    Latency,
}

impl Metric {
    /// fio's name for it.
    pub fn fio_name(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Bandwidth => "bw",
            Metric::Latency => "lat",
        }
    }
}

/// How the window is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    /// The largest distance of a sample from the window's mean.
    Deviation,
    /// The least-squares slope of the samples against their index (per
    /// check interval).
    Slope,
}

/// The bound a [`Measure`] has to fall under.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// A percentage of the window's mean.
    Percent(f64),
    /// In the metric's own unit: I/Os a second, bytes a second, ns.
    Absolute(f64),
}

/// A steady-state criterion as fio's `ss=` gives it; stored in fio's form.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Criterion {
    /// What is watched.
    pub metric: Metric,
    /// How the window is judged.
    pub measure: Measure,
    /// What it has to fall under.
    pub limit: Limit,
}

/// An error in a criterion's text, saying what would be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("steady-state criterion {input:?}: {why} (e.g. iops:10%, bw_slope:1%, lat:500us)")]
pub struct ParseCriterionError {
    input: String,
    why: String,
}

impl FromStr for Criterion {
    type Err = ParseCriterionError;

    /// fio's form: `iops`, `bw` or `lat`, `_slope` for the slope, a colon,
    /// then the limit: a percentage of the mean (`10%`, `.1%`) or a value
    /// in fio's units (I/Os a second; bytes a second with fio's 1024-based
    /// suffixes; a time, µs when it has no unit, as fio reads it).
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let fail = |why: &str| ParseCriterionError {
            input: input.to_string(),
            why: why.to_string(),
        };
        let (name, limit) = input
            .split_once(':')
            .ok_or_else(|| fail("the limit is missing after a colon"))?;
        let (metric, measure) = match name.trim().to_ascii_lowercase().as_str() {
            "iops" => (Metric::Iops, Measure::Deviation),
            "iops_slope" => (Metric::Iops, Measure::Slope),
            "bw" => (Metric::Bandwidth, Measure::Deviation),
            "bw_slope" => (Metric::Bandwidth, Measure::Slope),
            "lat" => (Metric::Latency, Measure::Deviation),
            "lat_slope" => (Metric::Latency, Measure::Slope),
            _ => {
                return Err(fail(
                    "it starts with iops, bw or lat, or one of them with _slope",
                ))
            }
        };
        let limit = limit.trim();
        let limit = if let Some(pct) = limit.strip_suffix('%') {
            Limit::Percent(
                pct.trim()
                    .parse()
                    .map_err(|_| fail("the percentage is not a number"))?,
            )
        } else {
            match metric {
                Metric::Iops => Limit::Absolute(
                    limit
                        .parse()
                        .map_err(|_| fail("the IOPS limit is not a number"))?,
                ),
                Metric::Bandwidth => Limit::Absolute(
                    limit
                        .parse::<Bytes>()
                        .map_err(|e| fail(&e.to_string()))?
                        .get() as f64,
                ),
                Metric::Latency => {
                    let with_unit = if limit.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                        format!("{limit}us")
                    } else {
                        limit.to_string()
                    };
                    Limit::Absolute(
                        with_unit
                            .parse::<Nanos>()
                            .map_err(|e| fail(&e.to_string()))?
                            .get() as f64,
                    )
                }
            }
        };
        match limit {
            Limit::Percent(v) | Limit::Absolute(v) if !v.is_finite() || v <= 0.0 => {
                Err(fail("the limit must be above 0"))
            }
            _ => Ok(Criterion {
                metric,
                measure,
                limit,
            }),
        }
    }
}

impl fmt::Display for Criterion {
    /// As a person writes it, and as it reads back: `iops_slope:0.1%`,
    /// `bw:1048576`, `lat:500000ns` (a bare latency would read as µs).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (value, unit) = match (self.limit, self.metric) {
            (Limit::Percent(v), _) => (v, "%"),
            (Limit::Absolute(v), Metric::Latency) => (v, "ns"),
            (Limit::Absolute(v), _) => (v, ""),
        };
        write!(f, "{}:{value}{unit}", self.name())
    }
}

impl Criterion {
    /// fio's name for the criterion: `iops`, `bw_slope`, ….
    pub fn name(&self) -> String {
        let slope = match self.measure {
            Measure::Deviation => "",
            Measure::Slope => "_slope",
        };
        format!("{}{slope}", self.metric.fio_name())
    }

    /// As fio's JSON writes `ss`: `iops_slope:0.100000%`,
    /// `bw:1048576.000000`.
    pub fn fio_form(&self) -> String {
        let (value, pct) = match self.limit {
            Limit::Percent(v) => (v, "%"),
            Limit::Absolute(v) => (v, ""),
        };
        format!("{}:{value:.6}{pct}", self.name())
    }
}

impl Criterion {
    /// fio's default when only `ss_dur` is given: `iops_slope:0.01%`.
    pub const FIO_DEFAULT: Criterion = Criterion {
        metric: Metric::Iops,
        measure: Measure::Slope,
        limit: Limit::Percent(0.01),
    };
}

impl From<Criterion> for String {
    fn from(c: Criterion) -> String {
        c.to_string()
    }
}

impl TryFrom<String> for Criterion {
    type Error = ParseCriterionError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

/// A job that ends once steady (fio's `ss`, `ss_dur` and `ss_ramp`): the
/// criterion is judged, once a second, on the window of the last
/// `window`'s one-second samples, from `ramp` after the measured start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateSpec {
    /// What is judged.
    pub criterion: Criterion,
    /// The window: its samples are one a second.
    pub window: Nanos,
    /// Time after the measured start before samples are collected.
    pub ramp: Nanos,
}

/// How a job with a [`SteadyStateSpec`] ended: fio's JSON `steadystate`
/// block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateOutcome {
    /// What was asked for.
    pub spec: SteadyStateSpec,
    /// Whether the criterion was met, which ended the job.
    pub attained: bool,
    /// When it was met, after the measured start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attained_at: Option<Nanos>,
    /// The figure held to the limit in the last window judged (a
    /// percentage of its mean when the limit is one); none when the job
    /// ended before a window filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criterion: Option<f64>,
    /// The largest distance of a sample from the window's mean.
    pub max_deviation: f64,
    /// The least-squares slope, per sample.
    pub slope: f64,
    /// The window's samples, oldest first: I/Os a second.
    pub iops: Vec<f64>,
    /// The same seconds' bytes a second.
    pub bw: Vec<f64>,
    /// The same seconds' mean completion latency, ns.
    pub lat_ns: Vec<f64>,
}
