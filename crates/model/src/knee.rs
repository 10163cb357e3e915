//! Where a queue-depth sweep stops gaining, and why: the queue figures a
//! job measured ([`QueueFigures`]) and the finding built from a sweep's
//! points ([`Knee`]). The analysis itself is `iomark_stats::knee`.

use serde::{Deserialize, Serialize};

use crate::units::BytesPerSec;

/// How deep the queue really was during a job, and what the submitting
/// threads spent: the evidence for why throughput stops rising with depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueFigures {
    /// Mean I/Os in flight per thread over the measured time, weighted by
    /// how long each depth lasted (a synchronous engine: 1).
    pub engine_depth: f64,
    /// CPU time (user plus system) of the busiest submitting thread, in
    /// percent of one CPU over the measured time.
    pub busiest_thread_cpu_pct: f64,
    /// Time the busiest submitting thread spent on a CPU or runnable and
    /// waiting for one, percent of the measured time: what it did not spend
    /// asleep waiting for I/O. On a loaded machine a thread that is the
    /// limit gets only part of a CPU; this shows it still never slept.
    #[serde(default)]
    pub busiest_thread_busy_pct: f64,
    /// The block device's own view of its queue, when the target sits on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceQueue>,
}

/// A block device's queue over a job, from `/sys/block/DEV/stat` and
/// `inflight` (iostat's figures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceQueue {
    /// The kernel name, e.g. `sda1`, `loop3`.
    pub name: String,
    /// Mean requests in the device's queue, counted from when the block
    /// layer took each request to its completion (iostat's `aqu-sz`:
    /// weighted time in queue over wall time).
    pub queue_size: f64,
    /// Share of the wall time with at least one request in flight, percent
    /// (iostat's `%util`).
    pub utilization_pct: f64,
    /// Mean of `inflight` (requests started, not yet completed) sampled ten
    /// times a second.
    pub inflight: f64,
}

/// The shape of throughput over depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KneeShape {
    /// Doubling the shallowest depth already gained less than the threshold.
    FlatFromStart,
    /// Throughput rose, then stopped rising at the knee depth.
    Knee,
    /// Still gaining at least the threshold per doubling at the deepest point.
    StillRising,
}

/// Why throughput stopped rising.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KneeCause {
    /// The rate is near the ceiling of the slowest link in the chain.
    LinkBound,
    /// The achieved depth stayed below the requested one (a synchronous
    /// engine, a device that takes one command at a time).
    DepthBound,
    /// One CPU was saturated in a submitting thread.
    CpuBound,
    /// Latency grew with depth while the rate stayed: Little's law, the
    /// device (or a limit in front of it) is saturated.
    DeviceBound,
    /// None of the above was clear from what was measured.
    Undetermined,
}

impl KneeCause {
    /// `link-bound`, `depth-bound`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            KneeCause::LinkBound => "link-bound",
            KneeCause::DepthBound => "depth-bound",
            KneeCause::CpuBound => "CPU-bound",
            KneeCause::DeviceBound => "device-bound",
            KneeCause::Undetermined => "undetermined",
        }
    }
}

/// The numbers a cause was read from, taken over the plateau: from the
/// knee depth to the deepest point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KneeEvidence {
    /// The deepest depth asked for.
    pub deepest: u32,
    /// Mean I/Os in flight per thread at the deepest point (engine view).
    pub engine_depth: f64,
    /// Mean requests in flight at the device at the deepest point, when
    /// the target sits on a block device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_inflight: Option<f64>,
    /// The device's busy share at the deepest point, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_utilization_pct: Option<f64>,
    /// The slowest link's name and the rate taken as its ceiling (its
    /// typical rate when known, else its hard one), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<(String, BytesPerSec)>,
    /// The best rate of the plateau.
    pub plateau_bw: BytesPerSec,
    /// The busiest submitting thread's time on a CPU or waiting for one at
    /// the deepest point, percent, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pct: Option<f64>,
    /// Mean latency at the deepest point over that at the knee.
    pub latency_growth: f64,
    /// Achieved engine depth at the deepest point over that at the knee.
    pub depth_growth: f64,
    /// Rate at the deepest point over that at the knee, minus one.
    pub rate_gain: f64,
    /// The series is sequential I/O, whose adjacent requests the block
    /// layer merges (so few requests in flight at the device say nothing of
    /// its queue).
    #[serde(default)]
    pub sequential: bool,
    /// USB mass storage's protocol (`BOT`, `UASP`) when the device is on
    /// USB: only BOT is known to take one command at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usb_protocol: Option<String>,
}

/// Where one series of a depth sweep stops rising, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// The series: IOmeter's pattern (`4 KiB random read`) or a custom
    /// job's name.
    pub series: String,
    /// The shape of the curve.
    pub shape: KneeShape,
    /// The first depth after which doubling gains less than the threshold
    /// (the shallowest for a flat curve, the deepest when still rising).
    pub depth: u32,
    /// The gain per doubling below which throughput counts as no longer
    /// rising, percent.
    pub gain_threshold_pct: f64,
    /// Why, when it stopped rising.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<KneeCause>,
    /// The numbers behind the cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<KneeEvidence>,
}
