//! [`FakeDisk`]: a loop device over a FUSE file that lies about its size,
//! drops writes, fails or stalls, for the verify tests and the device's
//! own doubts.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{require_root, run, unique_name};

/// How a [`FakeDisk`] misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fake {
    /// It claims more than it holds: offsets at and beyond `real` bytes map
    /// back to the start (offset modulo `real`), as a fake-capacity stick.
    Wrap {
        /// Bytes it really holds.
        real: u64,
    },
    /// Writes to bytes `from..to` are acknowledged and dropped; reads there
    /// return zeros.
    Lost {
        /// First byte dropped.
        from: u64,
        /// Byte after the last one dropped.
        to: u64,
    },
    /// Reads and writes that reach byte `from` or beyond fail with EIO: a
    /// drive failing in mid-run.
    Failing {
        /// The first byte that fails.
        from: u64,
    },
}

/// A loop device over a file served by a small FUSE file system
/// (`rigs/fake_disk.py`, python3-fusepy) that wraps around or drops
/// writes: a fake or failing flash drive for the verify tests. The loop
/// device is buffered (the FUSE file is mounted `direct_io`, so no page
/// cache hides what the file system does). Drop detaches the loop device,
/// unmounts and waits for the file system's process.
#[derive(Debug)]
pub struct FakeDisk {
    /// `/dev/loopN`.
    pub dev: PathBuf,
    mountpoint: PathBuf,
    server: std::process::Child,
}

/// The Python that has Debian's python3-fusepy.
const PYTHON: &str = "/usr/bin/python3";

/// `Err(reason)` when a [`FakeDisk`] cannot be made here.
pub fn require_fake_disk() -> Result<(), String> {
    require_root()?;
    if !Path::new("/dev/fuse").exists() {
        return Err("needs /dev/fuse (the kernel's FUSE)".into());
    }
    let fusepy = Command::new(PYTHON)
        .args(["-c", "import fusepy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !fusepy {
        return Err(
            "needs python3-fusepy (apt-get install python3-fusepy; scripts/test installs it)"
                .into(),
        );
    }
    Ok(())
}

impl FakeDisk {
    /// A device claiming `size` bytes that misbehaves as `fake` says.
    pub fn new(size: u64, fake: Fake) -> Result<Self, String> {
        require_fake_disk()?;
        let mountpoint = std::env::temp_dir().join(unique_name("fuse"));
        fs::create_dir(&mountpoint).map_err(|e| e.to_string())?;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("rigs/fake_disk.py");
        let mut cmd = Command::new(PYTHON);
        cmd.arg(&script)
            .arg(&mountpoint)
            .arg(format!("--size={size}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        match fake {
            Fake::Wrap { real } => cmd.arg(format!("--real={real}")),
            Fake::Lost { from, to } => cmd.arg(format!("--mode=lost:{from}-{to}")),
            Fake::Failing { from } => cmd.arg(format!("--mode=eio:{from}")),
        };
        let server = match cmd.spawn() {
            Ok(s) => s,
            Err(e) => {
                let _ = fs::remove_dir(&mountpoint);
                return Err(format!("{PYTHON} {}: {e}", script.display()));
            }
        };
        // From here on Drop cleans up whatever came to be.
        let mut disk = FakeDisk {
            dev: PathBuf::new(),
            mountpoint,
            server,
        };
        let image = disk.mountpoint.join("disk.img");
        let start = std::time::Instant::now();
        while !image.exists() {
            if start.elapsed() > std::time::Duration::from_secs(10) {
                return Err("the FUSE file system did not come up in 10 s".into());
            }
            if let Ok(Some(status)) = disk.server.try_wait() {
                return Err(format!("the FUSE file system exited: {status}"));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        disk.dev = PathBuf::from(run(Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&image))?);
        Ok(disk)
    }
}

impl FakeDisk {
    /// The FUSE file under the loop device, for tests of a file target on
    /// a file system a daemon answers for.
    pub fn image(&self) -> PathBuf {
        self.mountpoint.join("disk.img")
    }

    /// Holds the file system still for `hold` (its daemon stopped, then
    /// continued): the loop device's requests wait meanwhile, as on a
    /// drive that stalls.
    pub fn stall_for(&self, hold: std::time::Duration) -> Result<(), String> {
        let pid = self.server.id().to_string();
        run(Command::new("kill").args(["-STOP", &pid]))?;
        std::thread::sleep(hold);
        run(Command::new("kill").args(["-CONT", &pid])).map(drop)
    }
}

impl Drop for FakeDisk {
    fn drop(&mut self) {
        if !self.dev.as_os_str().is_empty() {
            let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        }
        // The loop device lets go of the file asynchronously: retry the
        // unmount for a while before leaving it lazily.
        let mut unmounted = false;
        for _ in 0..50 {
            if Command::new("umount")
                .arg(&self.mountpoint)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
            {
                unmounted = true;
                break;
            }
            if matches!(self.server.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if !unmounted {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(&self.mountpoint)
                .status();
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
        let _ = fs::remove_dir(&self.mountpoint);
    }
}
