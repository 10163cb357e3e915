//! What a memory cgroup recorded about a run. Cgroups hold disk runs
//! (`iomark disk --mem-limit`) and memory runs alike, so their record
//! belongs to neither.

use serde::{Deserialize, Serialize};

use crate::units::Bytes;

/// What the memory cgroup recorded about the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupUsage {
    /// `v1` or `v2`.
    pub version: String,
    /// The limit set.
    pub limit: Bytes,
    /// Peak usage (`memory.max_usage_in_bytes` or `memory.peak`), if offered.
    pub peak: Option<Bytes>,
    /// OOM kills inside the group during the run.
    pub oom_kills: u64,
    /// Times the limit was hit (`memory.failcnt`, or `memory.events` max).
    pub limit_hits: Option<u64>,
    /// Major faults of the group (`memory.stat` pgmajfault), if offered.
    pub major_faults: Option<u64>,
}
