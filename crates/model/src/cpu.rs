//! CPU use over a measured interval: the measuring process's (percent of
//! one CPU, so 1166 % is nearly twelve CPUs busy) and the whole machine's
//! (percent of all CPUs, from `/proc/stat`), so a figure can be read next
//! to what it cost: a transfer at 74 % system and 1 % idle is CPU-bound
//! whatever the link says.

use serde::{Deserialize, Serialize};

/// CPU time the measuring process spent, as percent of one CPU over the
/// measured time (fio's `usr_cpu` / `sys_cpu`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    /// User time, percent of one CPU.
    pub user_pct: f64,
    /// System time, percent of one CPU.
    pub system_pct: f64,
}

impl CpuUsage {
    /// User plus system, percent of one CPU.
    pub fn total_pct(&self) -> f64 {
        self.user_pct + self.system_pct
    }
}

/// The whole machine's CPU time over the measured interval, each part as
/// percent of all CPUs (the parts of `/proc/stat`'s `cpu` line; they sum
/// to 100 with `steal`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCpu {
    /// CPUs online (the 100 % of the parts).
    pub cpus: u32,
    /// User and nice time.
    pub user_pct: f64,
    /// System and hard-interrupt time.
    pub system_pct: f64,
    /// Idle with I/O outstanding.
    pub iowait_pct: f64,
    /// Soft-interrupt time: most of a network receive path.
    pub softirq_pct: f64,
    /// Time a hypervisor ran something else.
    #[serde(default)]
    pub steal_pct: f64,
    /// Idle without I/O outstanding.
    pub idle_pct: f64,
}

/// How long a CPU quota (`cpu.cfs_quota_us` in cgroup v1, `cpu.max` in v2)
/// held the measuring process's cgroup back over an interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuThrottle {
    /// The cgroup whose quota did, as the hierarchy names it
    /// (`/iomark-test/client`).
    pub cgroup: String,
    /// Enforcement periods that passed (`nr_periods`); 0 where `cpu.stat`
    /// could not be read and the throttling was seen in the threads' wait
    /// for a CPU instead (`throttled_time` is then that wait).
    pub periods: u64,
    /// Of which the group was throttled in this many (`nr_throttled`).
    pub throttled: u64,
    /// Time the group spent throttled.
    pub throttled_time: crate::units::Nanos,
}

/// Both views of one interval: what the measuring process used and what
/// the whole machine did meanwhile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuRecord {
    /// The measuring process.
    pub process: CpuUsage,
    /// The machine, when `/proc/stat` could be read.
    pub host: Option<HostCpu>,
}

impl std::fmt::Display for HostCpu {
    /// `user 9.0%, system 64.0%, iowait 20.0%, softirq 5.0%, idle 2.0% of 16 CPUs`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "user {:.1}%, system {:.1}%, iowait {:.1}%, softirq {:.1}%, idle {:.1}% of {} CPU{}",
            self.user_pct,
            self.system_pct,
            self.iowait_pct,
            self.softirq_pct,
            self.idle_pct,
            self.cpus,
            if self.cpus == 1 { "" } else { "s" }
        )?;
        if self.steal_pct >= 0.05 {
            write!(f, ", steal {:.1}%", self.steal_pct)?;
        }
        Ok(())
    }
}
