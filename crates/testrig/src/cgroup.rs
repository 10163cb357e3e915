//! The cgroup rigs: a block-I/O group throttling devices to known rates
//! ([`Throttle`]), the same limits for everyone ([`DeviceThrottle`]), and a
//! CPU-starved group ([`CpuQuota`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{unique_name, WorkersFirst};

/// Limits for one device; `None` leaves that one unlimited.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// Read bytes per second.
    pub read_bps: Option<u64>,
    /// Write bytes per second.
    pub write_bps: Option<u64>,
    /// Read I/Os per second.
    pub read_iops: Option<u64>,
    /// Write I/Os per second.
    pub write_iops: Option<u64>,
}

impl Limits {
    /// Each limit with its names: the cgroup v1 file (`blkio.throttle.*`)
    /// and the cgroup v2 `io.max` key.
    fn named(&self) -> [(&'static str, &'static str, Option<u64>); 4] {
        [
            ("blkio.throttle.read_bps_device", "rbps", self.read_bps),
            ("blkio.throttle.write_bps_device", "wbps", self.write_bps),
            ("blkio.throttle.read_iops_device", "riops", self.read_iops),
            ("blkio.throttle.write_iops_device", "wiops", self.write_iops),
        ]
    }
}

/// A cgroup a rig made under `parent`: commands run inside it, and it is
/// removed when dropped (its processes have exited by then; a group goes
/// with rmdir, never with rm -r).
#[derive(Debug)]
struct RigGroup {
    dir: PathBuf,
}

impl RigGroup {
    fn create(parent: &Path, what: &str) -> Result<RigGroup, String> {
        let dir = parent.join(unique_name(what));
        fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(RigGroup { dir })
    }

    fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&self.dir)
            .arg(program)
            .args(args);
        cmd
    }
}

impl Drop for RigGroup {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.dir);
    }
}

/// A block-I/O cgroup (v1 blkio, or v2 io.max) throttling one device or
/// several, each to the same limits.
#[derive(Debug)]
pub struct Throttle {
    group: RigGroup,
    _workers: WorkersFirst,
}

impl Throttle {
    /// Throttle the device `majmin` to `limits`.
    pub fn new(majmin: &str, limits: Limits) -> Result<Self, String> {
        Throttle::each(&[majmin], limits)
    }

    /// Throttle each of the devices `majmins` to `limits` in one group:
    /// commands in it see every device at the same rate (two ports of one
    /// kind, say).
    pub fn each(majmins: &[&str], limits: Limits) -> Result<Self, String> {
        let v1 = Path::new("/sys/fs/cgroup/blkio");
        if v1.join("blkio.throttle.read_bps_device").exists() {
            let rig = Throttle {
                group: RigGroup::create(v1, "rig")?,
                _workers: WorkersFirst::hold()?,
            };
            // Each write sets one device's rule.
            for majmin in majmins {
                for (file, _, value) in limits.named() {
                    if let Some(v) = value {
                        fs::write(rig.group.dir.join(file), format!("{majmin} {v}"))
                            .map_err(|e| format!("{file}: {e}"))?;
                    }
                }
            }
            return Ok(rig);
        }
        let v2 = Path::new("/sys/fs/cgroup");
        if v2.join("cgroup.controllers").exists() {
            let _ = fs::write(v2.join("cgroup.subtree_control"), "+io");
            let rig = Throttle {
                group: RigGroup::create(v2, "rig")?,
                _workers: WorkersFirst::hold()?,
            };
            for majmin in majmins {
                let mut line = majmin.to_string();
                for (_, key, value) in limits.named() {
                    if let Some(v) = value {
                        line.push_str(&format!(" {key}={v}"));
                    }
                }
                fs::write(rig.group.dir.join("io.max"), line)
                    .map_err(|e| format!("io.max: {e}"))?;
            }
            return Ok(rig);
        }
        Err("no block-I/O cgroup controller (blkio or io) on this machine".into())
    }

    /// A command that runs `program` with `args` inside the throttled group.
    pub fn command(&self, program: impl AsRef<Path>, args: &[&str]) -> Command {
        self.group.command(program.as_ref(), args)
    }
}

/// A cpu cgroup held to a share of one CPU by the CFS quota (cgroup v1's
/// `cpu.cfs_quota_us`, v2's `cpu.max`): a CPU-starved process, as a
/// container with a small CPU limit makes one.
#[derive(Debug)]
pub struct CpuQuota {
    group: RigGroup,
}

impl CpuQuota {
    /// A group allowed `percent` of one CPU, in 100 ms periods.
    pub fn new(percent: u32) -> Result<Self, String> {
        const PERIOD_US: u64 = 100_000;
        let quota = PERIOD_US * u64::from(percent.max(1)) / 100;
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        if v1.join("cpu.cfs_quota_us").exists() {
            let rig = CpuQuota {
                group: RigGroup::create(v1, "cpu")?,
            };
            fs::write(
                rig.group.dir.join("cpu.cfs_period_us"),
                PERIOD_US.to_string(),
            )
            .map_err(|e| format!("cpu.cfs_period_us: {e}"))?;
            fs::write(rig.group.dir.join("cpu.cfs_quota_us"), quota.to_string())
                .map_err(|e| format!("cpu.cfs_quota_us: {e}"))?;
            return Ok(rig);
        }
        let v2 = Path::new("/sys/fs/cgroup");
        if v2.join("cgroup.controllers").exists() {
            let _ = fs::write(v2.join("cgroup.subtree_control"), "+cpu");
            let rig = CpuQuota {
                group: RigGroup::create(v2, "cpu")?,
            };
            fs::write(
                rig.group.dir.join("cpu.max"),
                format!("{quota} {PERIOD_US}"),
            )
            .map_err(|e| format!("cpu.max: {e}"))?;
            return Ok(rig);
        }
        Err("no cpu cgroup controller (v1 cpu or v2 cpu.max) on this machine".into())
    }

    /// The group as `/proc/PID/cgroup` names it: `/iomark-cpu-...`.
    pub fn name(&self) -> String {
        format!(
            "/{}",
            self.group
                .dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        )
    }

    /// A command that runs `program` with `args` inside the group.
    pub fn command(&self, program: impl AsRef<Path>, args: &[&str]) -> Command {
        self.group.command(program.as_ref(), args)
    }

    /// The group's `cpu.stat` on one line (periods, throttled periods and
    /// time, usage where the version has it): what a test that expects the
    /// quota to be named shows when it is not.
    pub fn stat(&self) -> String {
        let read = |f: &str| fs::read_to_string(self.group.dir.join(f)).unwrap_or_default();
        let mut line = read("cpu.stat")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let usage = read("cpuacct.usage");
        if !usage.trim().is_empty() {
            line.push_str(&format!(" cpuacct.usage {}", usage.trim()));
        }
        line
    }
}

/// Limits on one device for everyone, set in cgroup v1's root blkio group:
/// bios a file system submits from its worker threads (btrfs compression,
/// writeback) are throttled as well as the test's own.
#[derive(Debug)]
pub struct DeviceThrottle {
    majmin: String,
    limits: Limits,
    _workers: WorkersFirst,
}

const V1_ROOT: &str = "/sys/fs/cgroup/blkio";

impl DeviceThrottle {
    /// Throttle the device `majmin` to `limits` for every process.
    pub fn new(majmin: &str, limits: Limits) -> Result<Self, String> {
        let root = Path::new(V1_ROOT);
        if !root.join("blkio.throttle.read_bps_device").exists() {
            return Err(
                "needs cgroup v1 blkio (a device-wide throttle is set in its root group)".into(),
            );
        }
        let rig = DeviceThrottle {
            majmin: majmin.to_string(),
            limits,
            _workers: WorkersFirst::hold()?,
        };
        for (file, _, value) in limits.named() {
            if let Some(v) = value {
                fs::write(root.join(file), format!("{majmin} {v}"))
                    .map_err(|e| format!("{file}: {e}"))?;
            }
        }
        Ok(rig)
    }
}

impl Drop for DeviceThrottle {
    fn drop(&mut self) {
        // 0 removes a rule.
        for (file, _, value) in self.limits.named() {
            if value.is_some() {
                let _ = fs::write(Path::new(V1_ROOT).join(file), format!("{} 0", self.majmin));
            }
        }
    }
}
