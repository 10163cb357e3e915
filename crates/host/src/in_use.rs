//! Who else reaches the bytes a write would change.
//!
//! A block device is not the only door to its data: a partition on it, a
//! device-mapper or md device stacked on it, a loop device over it, and for
//! a loop device the file behind it and every other loop device over the
//! same file all lead to the same bytes. Before iomark writes to an object
//! (a block device or a regular file, identified by device and inode
//! numbers taken from an open descriptor, never by name), this module
//! walks every such door and reports the ones in use: mounted, active swap
//! or held by a stacked device.
//!
//! Mount tables are per namespace: a device mounted inside a container or
//! by a service with a private mount namespace is absent from ours. So
//! every other block device on the route is also opened exclusively
//! (`O_EXCL`), which the kernel refuses (`EBUSY`) while the device is
//! mounted in any namespace, is swap, holds a stacked device or is held
//! open exclusively by any program; the claims are kept for as long as the
//! caller keeps the [`Route`], so nobody can mount those devices meanwhile.
//! The refusal names what holds the device where that can be found: mounts
//! in every mount namespace (`/proc/PID/mountinfo`, one process per
//! namespace) and processes with the device open.
//!
//! Loop devices are matched to their backing object with the kernel's own
//! record of it (`LOOP_GET_STATUS64`: the backing file's device and inode
//! numbers), not with the file name in sysfs, which goes stale when the
//! file is renamed.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

use iomark_model::device::{DevNo, MountEntry};

use crate::mounts::{read_mountinfo, swaps};
use crate::read::{entries, text};
use crate::sysfs::{devno_of, parse_devno, Sysfs};

/// Something a write lands on, by identity rather than by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteObject {
    /// A block device, by its device number (`st_rdev`).
    Block(DevNo),
    /// A regular file, by the device and inode numbers of `fstat`.
    File {
        /// `st_dev` of the file.
        dev: u64,
        /// `st_ino` of the file.
        ino: u64,
    },
}

/// A loop device and what it reads and writes through.
#[derive(Debug, Clone)]
struct LoopDevice {
    name: String,
    devno: DevNo,
    backing: WriteObject,
}

/// The doors to a write target's bytes: the ones in use, and exclusive
/// claims on the other block devices among them, held until this is
/// dropped.
#[derive(Debug, Default)]
pub struct Route {
    /// Every reason writing would change bytes that something else uses,
    /// each naming the door ("/dev/loop3 (over the same file) is mounted
    /// on /mnt/a"). Empty when writing is safe.
    pub users: Vec<String>,
    /// Exclusive opens of the block devices on the route other than the
    /// target's own (which its writer claims itself): held for their Drop.
    _claims: Vec<File>,
}

/// Every reason writing `target` would change bytes that something mounted,
/// swapped on or stacked on uses (see [`Route::users`]); the claims are let
/// go at once.
pub fn users_of(target: WriteObject) -> Vec<String> {
    route_to(target).users
}

/// Walks every door to `target`'s bytes, and claims each block device on
/// the way other than the target's own, in any mount namespace's sense:
/// see the module's documentation.
///
/// The target's own direct users count too: a mounted device is in use.
/// The target device itself and its partitions are not claimed here: a
/// writer opens the target with `O_EXCL` (so its partitions cannot be
/// claimed by anyone else either), and `swapon` claims its device.
pub fn route_to(target: WriteObject) -> Route {
    let sysfs = Sysfs::system();
    let table = read_mountinfo().unwrap_or_default();
    let swap_names = swaps();
    let loops = loop_devices(&sysfs);

    let target_family = match target {
        WriteObject::Block(devno) => sysfs.with_partitions(devno),
        WriteObject::File { .. } => Vec::new(),
    };
    let mut reasons = Vec::new();
    let mut claims = Vec::new();
    let mut seen = HashSet::new();
    // (object, how it was reached from the target)
    let mut queue = vec![(target, String::new())];
    while let Some((obj, via)) = queue.pop() {
        if !seen.insert(obj) {
            continue;
        }
        let at = |what: String| {
            if via.is_empty() {
                what
            } else {
                format!("{what} ({via})")
            }
        };
        match obj {
            WriteObject::Block(devno) => {
                let family = sysfs.with_partitions(devno);
                let name = block_name(&sysfs, devno);
                let users = users_here(&sysfs, &family, &table, &swap_names);
                reasons.extend(users.iter().map(|u| at(format!("{name} is {u}"))));
                if users.is_empty() && !target_family.contains(&devno) {
                    match claim(&sysfs, devno) {
                        Ok(Some(f)) => claims.push(f),
                        Ok(None) => {}
                        Err(()) => {
                            let who = holders_in(&family);
                            let who = if who.is_empty() {
                                "an exclusive open was refused (EBUSY): mounted in \
                                 another mount namespace or held open exclusively"
                                    .to_string()
                            } else {
                                who.join(", ")
                            };
                            reasons.push(at(format!("{name} is in use: {who}")));
                        }
                    }
                }
                for l in &loops {
                    if let WriteObject::Block(b) = l.backing {
                        if family.contains(&b) {
                            let via = format!("/dev/{} is a loop device over {name}", l.name);
                            queue.push((WriteObject::Block(l.devno), via));
                        }
                    }
                    if l.devno == devno {
                        let via = format!("{name} is a loop device over it");
                        queue.push((l.backing, via));
                    }
                }
            }
            WriteObject::File { dev, ino } => {
                if swap_names.iter().any(|s| is_file(s, dev, ino)) {
                    reasons.push(at("the file is an active swap file".to_string()));
                }
                for l in loops.iter().filter(|l| l.backing == obj) {
                    let via = format!("/dev/{} is a loop device over the same file", l.name);
                    queue.push((WriteObject::Block(l.devno), via));
                }
            }
        }
    }
    reasons.sort();
    reasons.dedup();
    if !reasons.is_empty() {
        claims.clear();
    }
    Route {
        users: reasons,
        _claims: claims,
    }
}

/// An exclusive open of block device `devno` (through its node in /dev,
/// checked to be that device): `Ok(Some)` held, `Err` refused because
/// something holds it (`EBUSY`), `Ok(None)` when it cannot be asked (no
/// node, no permission): the other checks stand alone then.
fn claim(sysfs: &Sysfs, devno: DevNo) -> Result<Option<File>, ()> {
    let Some(name) = sysfs
        .block_dir(devno)
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
    else {
        return Ok(None);
    };
    match open_node(&name, devno, libc::O_EXCL) {
        Ok(f) => Ok(f),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(()),
        Err(_) => Ok(None),
    }
}

/// `/dev/NAME` opened read-only and non-blocking with `extra` flags, and
/// checked to be block device `devno`; none when it is another object.
fn open_node(name: &str, devno: DevNo, extra: libc::c_int) -> std::io::Result<Option<File>> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(extra | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(format!("/dev/{name}"))?;
    let meta = f.metadata()?;
    let same = meta.file_type().is_block_device() && devno_of(meta.rdev()) == devno;
    Ok(same.then_some(f))
}

/// What uses any device of `family` as this namespace and sysfs show it:
/// "mounted on /mnt", "used as swap", "held by dm-0".
fn users_here(
    sysfs: &Sysfs,
    family: &[DevNo],
    table: &[MountEntry],
    swaps: &[String],
) -> Vec<String> {
    let mut out: Vec<String> = mounts_of(family, table)
        .iter()
        .map(|m| format!("mounted on {}", m.display()))
        .collect();
    if swaps.iter().any(|s| is_block_in(s, family)) {
        out.push("used as swap".to_string());
    }
    out.extend(
        holders(sysfs, family)
            .iter()
            .map(|h| format!("held by {h}")),
    );
    out
}

/// What holds block device `devno` or a partition of it, as far as /proc
/// and sysfs show it: its mounts here ("mounted on /mnt") and in every
/// other mount namespace ("mounted on /mnt in the mount namespace of pid
/// 42 (sleep)"), swap, stacked devices, and the processes other than this
/// one that have it open ("open in pid 42 (sleep)"). For the message of an
/// exclusive open that was refused.
pub fn holders_anywhere(devno: DevNo) -> Vec<String> {
    let sysfs = Sysfs::system();
    let family = sysfs.with_partitions(devno);
    let table = read_mountinfo().unwrap_or_default();
    let mut out = users_here(&sysfs, &family, &table, &swaps());
    out.extend(holders_in(&family));
    out
}

fn holders_in(family: &[DevNo]) -> Vec<String> {
    let ours = std::fs::read_link("/proc/self/ns/mnt").ok();
    let me = std::process::id().to_string();
    let mut namespaces = HashSet::new();
    let mut out = Vec::new();
    for pid in entries(std::path::Path::new("/proc")) {
        if !pid.bytes().all(|b| b.is_ascii_digit()) || pid == me {
            continue;
        }
        let proc_dir = std::path::Path::new("/proc").join(&pid);
        let comm = || text(&proc_dir.join("comm")).unwrap_or_default();
        if let Ok(ns) = std::fs::read_link(proc_dir.join("ns/mnt")) {
            if Some(&ns) != ours.as_ref() && namespaces.insert(ns) {
                let table = std::fs::read_to_string(proc_dir.join("mountinfo"))
                    .map(|t| crate::mounts::parse_mountinfo(&t))
                    .unwrap_or_default();
                // By number only: the source names a node of that
                // namespace's /dev, not necessarily ours.
                for e in table.iter().filter(|e| family.contains(&e.devno)) {
                    out.push(format!(
                        "mounted on {} in the mount namespace of pid {pid} ({})",
                        e.mount_point,
                        comm()
                    ));
                }
            }
        }
        let has_open = entries(&proc_dir.join("fd")).iter().any(|fd| {
            std::fs::metadata(proc_dir.join("fd").join(fd)).is_ok_and(|m| {
                m.file_type().is_block_device() && family.contains(&devno_of(m.rdev()))
            })
        });
        if has_open {
            out.push(format!("open in pid {pid} ({})", comm()));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The kernel name of a block device, as `/dev/NAME`, or its number.
fn block_name(sysfs: &Sysfs, devno: DevNo) -> String {
    sysfs
        .block_dir(devno)
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .map_or_else(|| format!("block device {devno}"), |n| format!("/dev/{n}"))
}

/// Mount points of any device in `family`: by the device number the
/// kernel gives the mount, or, for file systems with anonymous device
/// numbers (btrfs), by the device node named as the mount's source.
fn mounts_of(family: &[DevNo], table: &[MountEntry]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for e in table {
        let by_number = family.contains(&e.devno);
        let by_source = e.source.starts_with('/') && is_block_in(&e.source, family);
        if (by_number || by_source) && !out.iter().any(|p| p.as_os_str() == &*e.mount_point) {
            out.push(PathBuf::from(&e.mount_point));
        }
    }
    out
}

fn is_block_in(path: &str, family: &[DevNo]) -> bool {
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.file_type().is_block_device())
        .is_some_and(|m| family.contains(&devno_of(m.rdev())))
}

fn is_file(path: &str, dev: u64, ino: u64) -> bool {
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.file_type().is_file())
        .is_some_and(|m| m.dev() == dev && m.ino() == ino)
}

/// The devices stacked on any device of `family`, by kernel name.
pub(crate) fn holders(sysfs: &Sysfs, family: &[DevNo]) -> Vec<String> {
    let mut out = Vec::new();
    for d in family {
        if let Some(dir) = sysfs.block_dir(*d) {
            for h in entries(&dir.join("holders")) {
                if !out.contains(&h) {
                    out.push(h);
                }
            }
        }
    }
    out
}

/// Every attached loop device with its backing object.
fn loop_devices(sysfs: &Sysfs) -> Vec<LoopDevice> {
    let mut out = Vec::new();
    for name in entries(&sysfs.root().join("block")) {
        if !name.starts_with("loop") {
            continue;
        }
        let dir = sysfs.root().join("block").join(&name);
        // `loop/` exists only while a file is attached.
        if !dir.join("loop").is_dir() {
            continue;
        }
        let Some(devno) = text(&dir.join("dev")).and_then(|s| parse_devno(&s)) else {
            continue;
        };
        if let Some(backing) = loop_backing(&name, devno) {
            out.push(LoopDevice {
                name,
                devno,
                backing,
            });
        }
    }
    out
}

/// The object behind a loop device, as the kernel recorded it when the
/// file was attached.
fn loop_backing(name: &str, devno: DevNo) -> Option<WriteObject> {
    // Read-only and non-blocking: asking a loop device for its status
    // changes nothing, and the descriptor is checked to be that device.
    let dev = open_node(name, devno, 0).ok()??;
    let info = loop_status(&dev)?;
    Some(if info.lo_rdevice != 0 {
        WriteObject::Block(devno_of(info.lo_rdevice))
    } else {
        WriteObject::File {
            dev: info.lo_device,
            ino: info.lo_inode,
        }
    })
}

/// `struct loop_info64` of `<linux/loop.h>`.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `LOOP_GET_STATUS64` from `<linux/loop.h>`.
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

fn loop_status(dev: &File) -> Option<LoopInfo64> {
    use std::os::fd::AsRawFd;
    // SAFETY: LoopInfo64 is plain integers and byte arrays, for which all
    // zero bits is a valid value.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one `struct loop_info64`, whose
    // layout LoopInfo64 reproduces, through the pointer, which is valid and
    // exclusive for the call; the descriptor is open for its whole length.
    let rc = unsafe {
        libc::ioctl(
            dev.as_raw_fd(),
            LOOP_GET_STATUS64,
            &mut info as *mut LoopInfo64,
        )
    };
    (rc == 0).then_some(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_info_has_the_kernels_size() {
        // 5 u64, 4 u32, 64 + 64 + 32 bytes, 2 u64: 232 bytes in the uapi.
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
    }

    #[test]
    fn an_ordinary_file_is_not_in_use() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let m = f.as_file().metadata().unwrap();
        let reasons = users_of(WriteObject::File {
            dev: m.dev(),
            ino: m.ino(),
        });
        assert!(reasons.is_empty(), "{reasons:?}");
    }
}
