//! The device helpers and the chain on a real loop device with a 4 KiB
//! sector size and a mounted ext4 on it. Needs root, losetup, mkfs.ext4
//! and mkswap (`require!`).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use iomark_host::{holders_of_device, logical_block_size_for, mount_points_of_device, DeviceChain};
use iomark_model::device::{TargetKind, Transport};
use iomark_testrig::require;

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `Ok` when `tool` runs here, else why not (for `require!`).
fn have(tool: &str) -> Result<(), String> {
    match Command::new(tool).arg("--version").output() {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("cannot run {tool}: {e}")),
    }
}

/// `out`, after failing the test unless `tool` succeeded.
fn succeeded(tool: &str, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{tool} failed: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    out
}

/// A loop device over an image in a temp dir, optionally with ext4 mounted
/// on it; unmounted, detached and deleted on drop, also when a test fails.
struct LoopRig {
    dir: tempfile::TempDir,
    image: PathBuf,
    dev: PathBuf,
    mount: Option<PathBuf>,
}

impl LoopRig {
    fn new(sector_size: u32) -> LoopRig {
        // On the disk, never in memory: one test makes it a swap area.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let image = dir.path().join("rig.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show", "--sector-size", &sector_size.to_string()])
            .arg(&image)
            .output()
            .unwrap();
        let out = succeeded("losetup", out);
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        LoopRig {
            dir,
            image,
            dev,
            mount: None,
        }
    }

    fn mount_ext4(&mut self) -> PathBuf {
        let mkfs = Command::new("mkfs.ext4")
            .args(["-q", "-F", "-b", "4096"])
            .arg(&self.dev)
            .output()
            .unwrap();
        succeeded("mkfs.ext4", mkfs);
        let mp = self.dir.path().join("mnt");
        std::fs::create_dir(&mp).unwrap();
        let m = Command::new("mount")
            .arg(&self.dev)
            .arg(&mp)
            .output()
            .unwrap();
        succeeded("mount", m);
        self.mount = Some(mp.clone());
        mp
    }
}

impl Drop for LoopRig {
    fn drop(&mut self) {
        if let Some(mp) = &self.mount {
            let unmounted = unmount(mp);
            if !unmounted {
                // Never leave it mounted: detach it from the tree now, the
                // kernel finishes once the last user lets go.
                let _ = Command::new("umount").arg("-l").arg(mp).status();
            }
            let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
            assert!(
                unmounted || std::thread::panicking(),
                "umount {} said busy for 10 s; unmounted lazily",
                mp.display()
            );
        } else {
            let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        }
    }
}

/// Unmounts `mp`, trying again for up to 10 s while it is busy: another
/// test of this binary that forks a child (losetup, mkfs) in the instant
/// this one closes its files lends the child those descriptors until it
/// execs, which is enough for one `umount` to see the mount busy.
fn unmount(mp: &Path) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let ok = Command::new("umount")
            .arg(mp)
            .status()
            .is_ok_and(|s| s.success());
        if ok || std::time::Instant::now() >= end {
            return ok;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The rig, or why it cannot be made here (for `require!`).
fn rig(sector_size: u32) -> Result<LoopRig, String> {
    if !is_root() {
        return Err("needs root for losetup".into());
    }
    have("losetup")?;
    Ok(LoopRig::new(sector_size))
}

#[test]
fn loop_device_node_reports_its_sector_size_and_backing_file() {
    let rig = require!(rig(4096));
    assert_eq!(logical_block_size_for(&rig.dev), Some(4096));
    assert!(mount_points_of_device(&rig.dev).is_empty());
    assert!(holders_of_device(&rig.dev).is_empty());

    let chain = DeviceChain::for_path(&rig.dev).unwrap();
    let r = chain.report();
    assert_eq!(r.target, TargetKind::BlockDevice);
    assert!(r.mounted_at.is_empty());
    let d = r.device.as_ref().unwrap();
    assert_eq!(Path::new("/dev").join(&d.name), rig.dev);
    assert_eq!(d.transport, Transport::Loop);
    assert_eq!(d.size.get(), 64 << 20);
    assert_eq!(d.queue.logical_block_size, Some(4096));
    let lb = d.loop_backing.as_ref().unwrap();
    assert_eq!(
        Path::new(&lb.backing_file),
        rig.image.canonicalize().unwrap()
    );
    // The layer under the loop device is the disk holding the image file.
    let st_dev = std::fs::metadata(&rig.image).unwrap().dev();
    if rustix::fs::major(st_dev) != 0 {
        let lower = &d.lower[0];
        assert_eq!(lower.devno.major, rustix::fs::major(st_dev));
        // The loop device is only as fast as what its file sits on.
        let dir_chain = DeviceChain::for_path(rig.dir.path()).unwrap();
        assert_eq!(chain.ceiling(), dir_chain.ceiling());
    }
}

#[test]
fn mounted_loop_device_is_found_by_devno_also_through_a_symlink() {
    let mut rig = require!(rig(4096));
    require!(have("mkfs.ext4"));
    let mp = rig.mount_ext4();
    let file = mp.join("data.bin");
    std::fs::write(&file, vec![0x5a; 8192]).unwrap();

    assert_eq!(logical_block_size_for(&file), Some(4096));
    let opened = std::fs::File::open(&file).unwrap();
    assert_eq!(iomark_host::logical_block_size_of(&opened), Some(4096));
    assert_eq!(mount_points_of_device(&rig.dev), vec![mp.clone()]);
    // Writing the device, or the image file under it, reaches the mounted
    // file system's bytes.
    let dev_meta = std::fs::metadata(&rig.dev).unwrap();
    let dev = iomark_host::WriteObject::Block(iomark_model::device::DevNo {
        major: rustix::fs::major(dev_meta.rdev()),
        minor: rustix::fs::minor(dev_meta.rdev()),
    });
    let users = iomark_host::users_of(dev);
    assert!(
        users
            .iter()
            .any(|u| u.contains(&format!("mounted on {}", mp.display()))),
        "{users:?}"
    );
    let image = std::fs::metadata(&rig.image).unwrap();
    let users = iomark_host::users_of(iomark_host::WriteObject::File {
        dev: image.dev(),
        ino: image.ino(),
    });
    assert!(
        users
            .iter()
            .any(|u| u.contains("loop device over the same file")),
        "{users:?}"
    );
    let link = rig.dir.path().join("alias");
    std::os::unix::fs::symlink(&rig.dev, &link).unwrap();
    assert_eq!(mount_points_of_device(&link), vec![mp.clone()]);
    // A regular file is not a device: nothing is "mounted" on it.
    assert!(mount_points_of_device(&file).is_empty());

    let chain = DeviceChain::for_path(&file).unwrap();
    let r = chain.report();
    assert_eq!(r.target, TargetKind::File);
    let fs = r.filesystem.as_ref().unwrap();
    assert_eq!(fs.fs_type, "ext4");
    assert_eq!(Path::new(&fs.mount_point), mp);
    assert_eq!(Path::new(&fs.source), rig.dev);
    let d = r.device.as_ref().unwrap();
    assert_eq!(d.transport, Transport::Loop);
    assert_eq!(Path::new("/dev").join(&d.name), rig.dev);

    let node = DeviceChain::for_path(&link).unwrap();
    assert_eq!(
        node.report().mounted_at,
        vec![mp.to_string_lossy().into_owned()]
    );
}

/// Turns swap off again on drop, before the rig detaches the loop device.
struct SwapOn<'a>(&'a Path);

impl Drop for SwapOn<'_> {
    fn drop(&mut self) {
        let _ = Command::new("swapoff").arg(self.0).status();
    }
}

#[test]
fn active_swap_on_a_loop_device_counts_as_mounted() {
    let rig = require!(rig(4096));
    require!(have("mkswap"));
    require!(have("swapon"));
    let mk = Command::new("mkswap").arg(&rig.dev).output().unwrap();
    succeeded("mkswap", mk);
    let on = Command::new("swapon").arg(&rig.dev).output().unwrap();
    succeeded("swapon", on);
    let _swap = SwapOn(&rig.dev);
    assert_eq!(
        mount_points_of_device(&rig.dev),
        vec![PathBuf::from("[SWAP]")]
    );
    let chain = DeviceChain::for_path(&rig.dev).unwrap();
    assert_eq!(chain.report().mounted_at, vec!["[SWAP]".to_string()]);
}
