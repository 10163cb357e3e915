//! Test rigs whose true speed is known, for iomark's own tests.
//!
//! * [`LoopDevice`]: a loop device over a filled image file (a sparse one
//!   would read holes at memory speed).
//! * [`Throttle`]: a block-I/O cgroup that limits one device to known
//!   bytes and I/Os per second; commands are started inside it.
//! * [`DeviceThrottle`]: the same limits for every process and kernel
//!   thread, so a file system's own workers (btrfs compresses in them) are
//!   held to it too.
//! * [`MountedFs`]: a small ext4 or btrfs file system on a loop device,
//!   mounted.
//! * [`Zram`]: `/dev/zram0` reset to a size, and reset again afterwards.
//! * [`ThrottleCliff`]: a write cache that runs out, on a loop device: the
//!   write throttle lowered once a known number of bytes is written
//!   (docs/rigs.md).
//! * [`FakeDisk`]: a loop device over a FUSE file that wraps around past
//!   its real size, drops writes in a range (the verify tests) or fails
//!   with EIO past a point (a failure in mid-run).
//!
//! * [`free_port`]: a loopback port for a server a test starts.
//!
//! Everything a rig creates is removed by its `Drop`, also when a test
//! fails. Rigs need root; [`require_root`] says why a test skips, and
//! [`require!`] is how it skips (or fails, where rigs are required).
#![deny(missing_docs)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// `Err(reason)` when the rigs cannot run here (not root, no losetup).
pub fn require_root() -> Result<(), String> {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid_line = status.lines().find(|l| l.starts_with("Uid:")).unwrap_or("");
    let euid = uid_line.split_whitespace().nth(2).unwrap_or("1");
    if euid != "0" {
        return Err("needs root (loop devices and cgroups)".into());
    }
    if Command::new("losetup").arg("--version").output().is_err() {
        return Err("needs losetup (util-linux)".into());
    }
    Ok(())
}

mod bounds;
pub use bounds::{
    assert_at_the_throttle, assert_at_the_throttle_but_for_stalls, assert_near, assert_within,
    rig_slack, throttle_band, time_bound, WindowStart, RIG_SLACK, THROTTLE_SLICE, TIME_SCALE,
};
mod locks;
pub use locks::{kernel_locks, KernelLock};
mod ports;
pub use ports::{free_port, free_ports_in_a_row};
mod skip;
pub use skip::{rigs_required, skipped, skipped_for_want_of_source, REQUIRE_RIGS, SKIP_LOG};

/// The value of an `Ok`, or else the current test is skipped: the one skip
/// of the workspace's tests. `require!(result)` takes a `Result` whose
/// error says what is missing; `require!(condition, "why {}", x)` takes a
/// `bool`. A skip is printed, written to `$IOMARK_SKIP_LOG` (scripts/test
/// counts them), and is a failure instead under `IOMARK_REQUIRE_RIGS=1`,
/// which scripts/test sets as root, where every rig should be there.
#[macro_export]
macro_rules! require {
    ($cond:expr) => {
        match $cond {
            Ok(value) => value,
            Err(reason) => {
                $crate::skipped(&reason.to_string());
                return;
            }
        }
    };
    ($cond:expr, $($why:tt)+) => {
        if !$cond {
            $crate::skipped(&format!($($why)+));
            return;
        }
    };
}

mod cgroup;
mod cliff;
mod fake_disk;
mod workers;
pub use cgroup::{CpuQuota, DeviceThrottle, Limits, Throttle};
pub use cliff::{AlternatingThrottle, CacheShape, Served, ThrottleCliff};
pub use fake_disk::{require_fake_disk, Fake, FakeDisk};
pub use workers::WorkersFirst;

static SEQ: AtomicU32 = AtomicU32::new(0);

/// A name unique to this process and call, for cgroups and images.
pub fn unique_name(what: &str) -> String {
    format!(
        "iomark-{what}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A loop device over an image file filled with random data.
#[derive(Debug)]
pub struct LoopDevice {
    /// `/dev/loopN`.
    pub dev: PathBuf,
    image: PathBuf,
}

impl LoopDevice {
    /// An image of `size` bytes in `/dev/shm`, filled with random data and
    /// attached. The image is in memory so that the rig's own limit (a
    /// throttle, a file system) is what a test measures: an image on the
    /// machine's disk shared that disk with whatever else ran, and a build
    /// writing beside a 4 KiB random-read test slowed it to a quarter of
    /// its throttle.
    pub fn new(size: u64) -> Result<Self, String> {
        let image = Path::new("/dev/shm").join(format!("{}.img", unique_name("loop")));
        fill_random(&image, size).map_err(|e| format!("{}: {e}", image.display()))?;
        Self::attach(image, &["--direct-io=on"])
    }

    /// An empty (sparse) image of `size` bytes in `/dev/shm`, attached
    /// with direct I/O: for rigs that only write, where the backing store
    /// must never be the bottleneck and a fill would cost time for nothing.
    pub fn blank_in_memory(size: u64) -> Result<Self, String> {
        Self::attach(blank_image("/dev/shm", size)?, &["--direct-io=on"])
    }

    /// An empty (sparse) image of `size` bytes on the machine's disk
    /// (`/var/tmp`), attached: for a swap area, which must never be in
    /// memory. Pages of an image in `/dev/shm` can themselves be swapped
    /// out, into the very area on it, and the kernel deadlocks (seen on
    /// this project's VM; docs/rigs.md).
    pub fn blank_on_disk(size: u64) -> Result<Self, String> {
        Self::attach(blank_image("/var/tmp", size)?, &[])
    }

    /// Attach `image` with `losetup` and `options`; the image is removed
    /// when that fails.
    fn attach(image: PathBuf, options: &[&str]) -> Result<Self, String> {
        match run(Command::new("losetup")
            .args(["-f", "--show"])
            .args(options)
            .arg(&image))
        {
            Ok(dev) => Ok(LoopDevice {
                dev: PathBuf::from(dev),
                image,
            }),
            Err(e) => {
                let _ = fs::remove_file(&image);
                Err(e)
            }
        }
    }

    /// The image file behind the device, for tests that change what the
    /// device holds behind its back (the verify profile's corruption test).
    pub fn image(&self) -> &Path {
        &self.image
    }

    /// `MAJ:MIN` of the device, as cgroups want it.
    pub fn majmin(&self) -> Result<String, String> {
        let name = self.dev.file_name().and_then(|n| n.to_str()).unwrap_or("");
        fs::read_to_string(format!("/sys/block/{name}/dev"))
            .map(|s| s.trim().to_string())
            .map_err(|e| format!("{name}: {e}"))
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        let _ = fs::remove_file(&self.image);
    }
}

/// A new sparse image of `size` bytes in `dir`.
fn blank_image(dir: &str, size: u64) -> Result<PathBuf, String> {
    let image = Path::new(dir).join(format!("{}.img", unique_name("loop")));
    fs::File::create(&image)
        .and_then(|f| f.set_len(size))
        .map_err(|e| format!("{}: {e}", image.display()))?;
    Ok(image)
}

fn fill_random(path: &Path, size: u64) -> std::io::Result<()> {
    use rand::RngCore;
    let mut f = fs::File::create(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut rng = rand::rng();
    let mut left = size;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        rng.fill_bytes(&mut buf[..n]);
        f.write_all(&buf[..n])?;
        left -= n as u64;
    }
    f.sync_all()
}

/// `/dev/zram0` reset and sized for a test; reset again (freeing its
/// memory) when dropped. Tests using it must not run at the same time.
#[derive(Debug)]
pub struct Zram {
    /// `/dev/zram0`.
    pub dev: PathBuf,
}

impl Zram {
    /// zram0 reset to an empty device of `size` bytes; an error when the
    /// module is not loaded or the device is in use (swap, mounted).
    pub fn new(size: u64) -> Result<Self, String> {
        let sys = Path::new("/sys/block/zram0");
        if !sys.exists() {
            return Err("/dev/zram0 is absent (modprobe zram)".into());
        }
        fs::write(sys.join("reset"), "1").map_err(|e| format!("zram0 is in use ({e})"))?;
        let zram = Zram {
            dev: PathBuf::from("/dev/zram0"),
        };
        fs::write(sys.join("disksize"), size.to_string())
            .map_err(|e| format!("zram0 disksize: {e}"))?;
        Ok(zram)
    }

    /// `mm_stat`'s first two fields: bytes stored and bytes they take
    /// compressed (incompressible pages count at full size).
    pub fn stored_and_compressed(&self) -> Result<(u64, u64), String> {
        let text = fs::read_to_string("/sys/block/zram0/mm_stat").map_err(|e| e.to_string())?;
        let f: Vec<u64> = text
            .split_whitespace()
            .take(2)
            .filter_map(|v| v.parse().ok())
            .collect();
        match f[..] {
            [orig, compr] => Ok((orig, compr)),
            _ => Err(format!("mm_stat: '{}'", text.trim())),
        }
    }

    /// `MAJ:MIN` of the device.
    pub fn majmin(&self) -> Result<String, String> {
        fs::read_to_string("/sys/block/zram0/dev")
            .map(|s| s.trim().to_string())
            .map_err(|e| e.to_string())
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = fs::write("/sys/block/zram0/reset", "1");
    }
}

/// A small file system on its own loop device, mounted.
#[derive(Debug)]
pub struct MountedFs {
    /// Where it is mounted.
    pub mountpoint: PathBuf,
    /// The loop device under it.
    pub device: LoopDevice,
}

impl MountedFs {
    /// `size` bytes of ext4, mounted on a fresh directory. Its inode
    /// tables and journal are written by mkfs, not later by the kernel's
    /// lazy init, so no write of the file system's own reaches the device
    /// while a test measures it.
    pub fn ext4(size: u64) -> Result<Self, String> {
        Self::make(
            LoopDevice::new(size)?,
            &[
                "mkfs.ext4",
                "-q",
                "-F",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
            ],
            "defaults",
        )
    }

    /// `size` bytes of ext4 on the machine's disk, for swap files: see
    /// [`LoopDevice::blank_on_disk`].
    pub fn ext4_for_swap(size: u64) -> Result<Self, String> {
        Self::make(
            LoopDevice::blank_on_disk(size)?,
            &["mkfs.ext4", "-q", "-F"],
            "defaults",
        )
    }

    /// `size` bytes of btrfs (btrfs-progs), mounted with `options` (e.g.
    /// `compress=zstd`).
    pub fn btrfs(size: u64, options: &str) -> Result<Self, String> {
        if Command::new("mkfs.btrfs")
            .arg("--version")
            .output()
            .is_err()
        {
            return Err("needs mkfs.btrfs (apt-get install btrfs-progs)".into());
        }
        Self::make(LoopDevice::new(size)?, &["mkfs.btrfs", "-q", "-f"], options)
    }

    fn make(device: LoopDevice, mkfs: &[&str], options: &str) -> Result<Self, String> {
        run(Command::new(mkfs[0]).args(&mkfs[1..]).arg(&device.dev))?;
        let mountpoint = std::env::temp_dir().join(unique_name("mnt"));
        fs::create_dir(&mountpoint).map_err(|e| e.to_string())?;
        if let Err(e) = run(Command::new("mount")
            .args(["-o", options])
            .arg(&device.dev)
            .arg(&mountpoint))
        {
            let _ = fs::remove_dir(&mountpoint);
            return Err(e);
        }
        Ok(MountedFs { mountpoint, device })
    }
}

impl Drop for MountedFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mountpoint).status();
        let _ = fs::remove_dir(&self.mountpoint);
    }
}
