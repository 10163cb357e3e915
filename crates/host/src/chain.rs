//! From a path to its device report, and the device questions the disk
//! engine asks before it touches a device.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use iomark_model::device::{BlockLayer, DevNo, DeviceReport, LinkCeiling, MountEntry, TargetKind};
use iomark_model::{BytesPerSec, Warning};

use crate::ceiling::check_against;
use crate::mounts::{mount_of, read_mountinfo, swaps};
use crate::read::num;
use crate::sysfs::{devno_of, Sysfs};
use crate::HostError;

/// The storage behind one path: file system, block device, stacked devices,
/// disk, links and the slowest link's ceiling.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceChain {
    report: DeviceReport,
}

impl DeviceChain {
    /// Finds the chain behind `path`: a file, a directory or a block device
    /// node; symlinks are resolved first.
    pub fn for_path(path: impl AsRef<Path>) -> Result<DeviceChain, HostError> {
        DeviceChain::for_path_in(path, &Sysfs::system())
    }

    /// As [`DeviceChain::for_path`], reading block devices from `sysfs`.
    pub fn for_path_in(path: impl AsRef<Path>, sysfs: &Sysfs) -> Result<DeviceChain, HostError> {
        let given = path.as_ref();
        let path_err = |cause| HostError::Path {
            path: given.to_path_buf(),
            cause,
        };
        let real = given.canonicalize().map_err(path_err)?;
        let meta = std::fs::metadata(&real).map_err(path_err)?;
        let ft = meta.file_type();
        let table = read_mountinfo().map_err(HostError::MountInfo)?;
        let mut notes = Vec::new();

        let (target, filesystem, devno) = if ft.is_block_device() {
            (TargetKind::BlockDevice, None, Some(devno_of(meta.rdev())))
        } else {
            let kind = if ft.is_dir() {
                TargetKind::Directory
            } else if ft.is_file() {
                TargetKind::File
            } else {
                TargetKind::Other
            };
            let st_dev = devno_of(meta.dev());
            let fs = mount_of(&real, st_dev, &table);
            let devno = if st_dev.major != 0 {
                Some(st_dev)
            } else {
                let source_dev = fs.as_ref().and_then(block_source);
                if source_dev.is_none() {
                    notes.push(no_block_device_note(fs.as_ref()));
                }
                source_dev
            };
            (kind, fs, devno)
        };

        let device = devno.and_then(|d| sysfs.layer(d));
        if devno.is_some() && device.is_none() {
            notes.push(format!(
                "device {} is not in {}/dev/block",
                devno.map(|d| d.to_string()).unwrap_or_default(),
                sysfs.root().display()
            ));
        }
        let mounted_at = if target == TargetKind::BlockDevice {
            devno
                .map(|d| mount_points_by_devno(sysfs, d, &table))
                .unwrap_or_default()
                .into_iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect()
        } else {
            Vec::new()
        };
        let slowest = device.as_ref().and_then(effective_ceiling);
        Ok(DeviceChain {
            report: DeviceReport {
                path: given.to_string_lossy().into_owned(),
                target,
                filesystem,
                mounted_at,
                device,
                slowest,
                notes,
            },
        })
    }

    /// The chain as stored data.
    pub fn report(&self) -> &DeviceReport {
        &self.report
    }

    /// Gives up the chain as stored data.
    pub fn into_report(self) -> DeviceReport {
        self.report
    }

    /// The slowest link's ceiling; none when unknown.
    pub fn ceiling(&self) -> Option<&LinkCeiling> {
        self.report.slowest.as_ref()
    }

    /// The slowest link's hard ceiling; none when unknown.
    pub fn hard_ceiling(&self) -> Option<BytesPerSec> {
        self.ceiling().map(|c| c.hard)
    }
}

impl From<DeviceReport> for DeviceChain {
    fn from(report: DeviceReport) -> Self {
        DeviceChain { report }
    }
}

fn no_block_device_note(fs: Option<&MountEntry>) -> String {
    match fs.map(|f| f.fs_type.as_str()) {
        Some("tmpfs") | Some("ramfs") => {
            "tmpfs: RAM, no storage link; the ceiling is memory bandwidth".into()
        }
        Some(
            t @ ("nfs" | "nfs4" | "cifs" | "smb3" | "9p" | "virtiofs" | "fuse" | "fuse.sshfs"),
        ) => {
            format!("{t}: a network or virtual file system; the link ceiling is unknown")
        }
        Some("overlay") => {
            "overlay: the upper directory decides; its device is not followed".into()
        }
        Some(t) => format!("{t}: no block device behind this file system"),
        None => "no mount entry for this path".into(),
    }
}

/// The block device named as a mount's source (btrfs reports an anonymous
/// `st_dev`; its source is one member device).
fn block_source(fs: &MountEntry) -> Option<DevNo> {
    if !fs.source.starts_with("/dev/") {
        return None;
    }
    let m = std::fs::metadata(&fs.source).ok()?;
    m.file_type().is_block_device().then(|| devno_of(m.rdev()))
}

/// The ceiling of a layer together with everything under it: the minimum
/// of its own links and of what it sits on; several lower devices (striping,
/// mirrors) add up, so a striped array is not flagged by mistake.
pub(crate) fn effective_ceiling(layer: &BlockLayer) -> Option<LinkCeiling> {
    let own = layer
        .ceilings
        .iter()
        .min_by(|a, b| a.hard.0.total_cmp(&b.hard.0))
        .cloned();
    let below = match layer.lower.as_slice() {
        [] => None,
        [one] => effective_ceiling(one),
        many => {
            let cs: Option<Vec<LinkCeiling>> = many.iter().map(effective_ceiling).collect();
            cs.map(|cs| {
                let typical: Option<f64> = cs.iter().map(|c| c.typical.map(|t| t.0)).sum();
                LinkCeiling {
                    name: cs
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(" + "),
                    hard: BytesPerSec(cs.iter().map(|c| c.hard.0).sum()),
                    typical: typical.map(BytesPerSec),
                }
            })
        }
    };
    match (own, below) {
        (Some(a), Some(b)) => Some(if b.hard.0 < a.hard.0 { b } else { a }),
        (a, b) => a.or(b),
    }
}

fn devno_for_path(path: &Path) -> Option<(DevNo, bool)> {
    let m = std::fs::metadata(path).ok()?;
    if m.file_type().is_block_device() {
        Some((devno_of(m.rdev()), true))
    } else {
        Some((devno_of(m.dev()), false))
    }
}

/// Compares a measured throughput with the slowest link behind `chain`.
/// Chains whose ceiling is unknown (virtio, zram, tmpfs) never warn.
pub fn check_ceiling(chain: &DeviceChain, measured: BytesPerSec, what: &str) -> Option<Warning> {
    check_against(chain.report().slowest.as_ref()?, measured, what)
}

/// The logical block size (the `O_DIRECT` alignment) of the device holding
/// a file, or of the device node itself; none when there is no block device
/// (tmpfs) or sysfs does not say.
pub fn logical_block_size_for(path: &Path) -> Option<u32> {
    // An O_PATH descriptor: nothing is read, and a device is not opened.
    let fd = rustix::fs::open(path, rustix::fs::OFlags::PATH, rustix::fs::Mode::empty()).ok()?;
    logical_block_size_of(fd)
}

/// The logical block size (the `O_DIRECT` alignment) of what an open
/// descriptor refers to: a block device itself, or the device holding a
/// file or directory. Decided on the descriptor, so a name swapped since
/// it was opened cannot change the answer; none as for
/// [`logical_block_size_for`].
pub fn logical_block_size_of(fd: impl std::os::fd::AsFd) -> Option<u32> {
    use rustix::fs::{statx, AtFlags, FileType, StatxFlags};
    let st = statx(
        &fd,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::TYPE | StatxFlags::MNT_ID,
    )
    .ok()?;
    let sysfs = Sysfs::system();
    let is_block = FileType::from_raw_mode(st.stx_mode.into()) == FileType::BlockDevice;
    let mut devno = if is_block {
        DevNo {
            major: st.stx_rdev_major,
            minor: st.stx_rdev_minor,
        }
    } else {
        DevNo {
            major: st.stx_dev_major,
            minor: st.stx_dev_minor,
        }
    };
    if devno.major == 0 {
        // Anonymous device numbers (btrfs): the mount, found by its ID,
        // names the block device.
        if st.stx_mask & StatxFlags::MNT_ID.bits() == 0 {
            return None;
        }
        let table = read_mountinfo().ok()?;
        let entry = table.iter().find(|e| e.mount_id == st.stx_mnt_id)?;
        devno = block_source(entry)?;
    }
    let dir = sysfs.block_dir(devno)?;
    num(&sysfs.whole_disk_dir(&dir).join("queue/logical_block_size"))
}

fn mount_points_by_devno(sysfs: &Sysfs, devno: DevNo, table: &[MountEntry]) -> Vec<PathBuf> {
    let all = sysfs.with_partitions(devno);
    let mut out: Vec<PathBuf> = Vec::new();
    for e in table.iter().filter(|e| all.contains(&e.devno)) {
        let p = PathBuf::from(&e.mount_point);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    for s in swaps() {
        let is_ours = std::fs::metadata(&s)
            .ok()
            .filter(|m| m.file_type().is_block_device())
            .is_some_and(|m| all.contains(&devno_of(m.rdev())));
        if is_ours && !out.iter().any(|p| p == Path::new("[SWAP]")) {
            out.push(PathBuf::from("[SWAP]"));
        }
    }
    out
}

/// Where a block device, or any partition on it, is mounted, compared by
/// device number (so `/dev/root`, symlinks and `/dev/disk/by-*` all match).
/// Active swap on it shows as `[SWAP]`, as lsblk writes it. Empty when
/// `dev` is not a block device or nothing is mounted.
pub fn mount_points_of_device(dev: &Path) -> Vec<PathBuf> {
    let Some((devno, true)) = devno_for_path(dev) else {
        return Vec::new();
    };
    let table = read_mountinfo().unwrap_or_default();
    mount_points_by_devno(&Sysfs::system(), devno, &table)
}

/// The devices stacked on a block device or on any of its partitions
/// (`holders/`: dm, md, bcache), by kernel name. Mounts do not appear here;
/// use [`mount_points_of_device`].
pub fn holders_of_device(dev: &Path) -> Vec<String> {
    let sysfs = Sysfs::system();
    let Some((devno, true)) = devno_for_path(dev) else {
        return Vec::new();
    };
    crate::in_use::holders(&sysfs, &sysfs.with_partitions(devno))
}
