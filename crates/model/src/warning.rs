//! Warnings are data: they are stored with the run, printed after the
//! results and shown again by every later view of the run.

use serde::{Deserialize, Serialize};

/// What kind of doubt a warning raises about a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningKind {
    /// Buffered I/O: the page cache may be measured instead of the device.
    BufferedIo,
    /// A synchronous engine was asked for a queue depth above 1.
    SyncEngineDepth,
    /// The achieved queue depth fell short of the requested one.
    DepthNotReached,
    /// A figure exceeds the ceiling of the slowest link on the path.
    AboveLinkCeiling,
    /// Too few samples or passes for the figure to mean much.
    FewSamples,
    /// The passes of one test disagree by more than the noise threshold.
    HighSpread,
    /// The run was shortened (`--quick`) or interrupted.
    Shortened,
    /// The data pattern is compressible, so compressing devices look faster.
    CompressibleData,
    /// STREAM-style arrays are too small compared with the last-level cache.
    ArrayFitsInCache,
    /// The device or file system compresses or deduplicates what is
    /// written (found by the artefacts probe).
    Compression,
    /// A cache, not the medium, likely served a figure: reads far above
    /// writes for the device's class, or a later pass faster than the first.
    CacheSuspected,
    /// A figure above the speed the device is rated at (`--rated`).
    AboveRated,
    /// The sustained-write test filled its region without the rate
    /// falling: a cache, if there is one, is larger than what was written.
    NoCliff,
    /// The device returned wrong data, or holds less than it claims
    /// (found by the verify profile).
    DataErrors,
    /// Goodput above the speed a physical network link reports: the
    /// reported speed is wrong.
    LinkSpeedWrong,
    /// Goodput above the speed a virtual interface (veth, loopback, bridge)
    /// reports: not a link, so not a ceiling.
    VirtualLink,
    /// The bus under a network adapter (a USB 2.0 port, a narrow PCIe
    /// link) is slower than the adapter's link.
    BusCapsLink,
    /// A job completed no I/O: its zeros are not a measurement.
    NoIo,
    /// The samples of one test spread over more than ten times: no single
    /// figure describes them.
    WideSpread,
    /// A CPU quota (`cpu.cfs_quota_us`, `cpu.max`) throttled iomark's
    /// cgroup during the measurement.
    CpuThrottled,
    /// Other processes kept the machine's CPUs busy during the measurement.
    HostBusy,
    /// A check could not look: what it reads (a cgroup's counters, the
    /// threads' schedstat) was out of reach here, so its silence is no
    /// clean bill.
    Unchecked,
    /// Anything else worth keeping with the run.
    Other,
    /// The device saw requests of another size than the direct I/Os
    /// asked for: split by a queue limit, or merged.
    RequestSizeChanged,
    /// The device's counters moved more than the job's own I/O accounts
    /// for: other I/O shared the device during the job.
    ForeignIo,
    /// The device held requests and completed none for a share of the
    /// measured time: the figure counts a stall.
    DeviceStalled,
    /// Another iomark run was going on the same block device: each run's
    /// I/O is in the other's figures.
    SharedDevice,
    /// A steady-state test's figures are not a steady-state result: the
    /// window was never reached, the device was not purged, or the target
    /// is a file.
    NotSteady,
}

/// A doubt about a result, with the remedy in its message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// What kind of doubt.
    pub kind: WarningKind,
    /// One sentence for a person, naming what to do about it.
    pub message: String,
    /// How strong its evidence is, in its kind's own measure, for the
    /// kinds that have one: the other I/O against the job's own bytes
    /// (`foreign_io`), how many times the size asked the requests were, or
    /// it theirs (`request_size_changed`). A run's line for a kind raised
    /// in several tests shows its strongest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strength: Option<f64>,
}

impl WarningKind {
    /// The kind's name as stored in JSON (`buffered_io`), taken from its
    /// serde name so the two never differ.
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

impl Warning {
    /// A warning of `kind` with a message.
    pub fn new(kind: WarningKind, message: impl Into<String>) -> Self {
        Warning {
            kind,
            message: message.into(),
            strength: None,
        }
    }

    /// The warning with its evidence's [`strength`](Warning::strength).
    pub fn with_strength(self, strength: f64) -> Self {
        Warning {
            strength: strength.is_finite().then_some(strength),
            ..self
        }
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
