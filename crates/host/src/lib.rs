//! Facts about the machine and about the storage behind a path.
//!
//! This crate owns the walk from a path to its file system, block device,
//! disk and links (`/proc/self/mountinfo` and `/sys`), the table of link
//! ceilings, the check that flags figures above them, the "is it mounted
//! or held" questions the disk engine asks before it writes to a device, and
//! the memory cgroups that hold a run to a memory limit ([`cgroup`]). It
//! knows nothing about benchmarks, the store or output: it returns
//! [`iomark_model::device`] data and [`Warning`](iomark_model::Warning)s.
//!
//! Devices are identified by device number and sysfs hops, never by name:
//! `/sys/dev/block/MAJ:MIN` is canonicalised and its parents are walked up
//! (block → scsi → usb interface → usb device → pci, or block → nvme → pci).
//! The ceiling of the chain is the minimum over every hop; a chain with no
//! known ceiling (virtio, loop over a RAM file, zram, tmpfs) stays
//! *unknown* and is never flagged.
//!
//! ```no_run
//! use iomark_host::{check_ceiling, DeviceChain, HostInfoExt};
//! use iomark_model::{device::HostInfo, BytesPerSec};
//!
//! let host = HostInfo::collect();
//! let chain = DeviceChain::for_path("/").unwrap();
//! println!("{} on {:?}", host.kernel_release, chain.report().device.as_ref().map(|d| &d.name));
//! if let Some(w) = check_ceiling(&chain, BytesPerSec(612e6), "read") {
//!     eprintln!("{w}");
//! }
//! ```
#![deny(missing_docs)]

mod blockstat;
mod ceiling;
pub mod cgroup;
mod chain;
mod cpu;
mod hostinfo;
mod in_use;
pub mod machine;
mod mounts;
mod nic;
mod read;
pub mod sigbus;
mod sysfs;
pub mod test_files;

use std::path::PathBuf;

pub use blockstat::{parse_counters, BlockCounters, BlockStat, DirectionCounters, StallWatch};
pub use ceiling::{check_against, pcie_ceiling, sata_ceiling, usb_ceiling, SUSPICIOUS_FACTOR};
pub use chain::{
    check_ceiling, holders_of_device, logical_block_size_for, logical_block_size_of,
    mount_points_of_device, DeviceChain,
};
pub use cpu::{
    children_cpu_time, process_cpu_time, thread_cpu_time, thread_run_and_wait, CpuSampler,
    StatTicks,
};
pub use hostinfo::HostInfoExt;
pub use in_use::{holders_anywhere, route_to, users_of, Route, WriteObject};
pub use nic::{nic_chain, nic_warnings};
pub use sysfs::Sysfs;

/// Bytes of memory the kernel could hand out now (`MemAvailable` of
/// `/proc/meminfo`); none where the kernel does not say.
pub fn mem_available() -> Option<iomark_model::Bytes> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(iomark_model::Bytes(kib.checked_mul(1024)?))
}

/// Why the chain behind a path could not be found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The path does not exist or cannot be read.
    #[error("cannot read '{path}': {cause}; give an existing file, directory or block device")]
    Path {
        /// The path as given.
        path: PathBuf,
        /// What the kernel said (part of the message, so not a `source`).
        cause: std::io::Error,
    },
    /// `/proc/self/mountinfo` could not be read.
    #[error("cannot read /proc/self/mountinfo: {0}; is /proc mounted?")]
    MountInfo(std::io::Error),
}
