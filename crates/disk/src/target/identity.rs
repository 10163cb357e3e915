//! Where a target is and what it is: the path the user typed, resolved once
//! and opened `O_PATH` under `RESOLVE_NO_SYMLINKS`; the `fstat` identity
//! every decision is taken on; reopening through `/proc/self/fd`, checked
//! to reach the same object; and what an open failure means for the user.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use iomark_host::WriteObject;
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, CWD};
use rustix::io::Errno;

use crate::DiskError;

/// The identity of an open object: what `fstat` says of its descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Identity {
    pub(super) dev: u64,
    pub(super) ino: u64,
    pub(super) rdev: u64,
    pub(super) kind: FileType,
}

impl Identity {
    pub(super) fn of(fd: impl AsFd) -> io::Result<Self> {
        let st = rustix::fs::fstat(fd)?;
        Ok(Identity {
            dev: st.st_dev,
            ino: st.st_ino,
            rdev: st.st_rdev,
            kind: FileType::from_raw_mode(st.st_mode),
        })
    }

    /// Whether `--allow-write` naming `self` allows writing `target`: the
    /// same device number for devices (any node of the device), the same
    /// device and inode for files.
    pub(super) fn allows(&self, target: &Identity) -> bool {
        if target.kind == FileType::BlockDevice {
            self.kind == FileType::BlockDevice && self.rdev == target.rdev
        } else {
            self.same_object(target)
        }
    }

    /// The same object: device and inode, and for devices the device number.
    pub(super) fn same_object(&self, other: &Identity) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && self.kind == other.kind
            && (self.kind != FileType::BlockDevice || self.rdev == other.rdev)
    }

    /// The device number a device node stands for (`st_rdev`).
    pub(super) fn devno(&self) -> iomark_model::device::DevNo {
        iomark_model::device::DevNo {
            major: rustix::fs::major(self.rdev),
            minor: rustix::fs::minor(self.rdev),
        }
    }

    pub(super) fn write_object(&self) -> WriteObject {
        if self.kind == FileType::BlockDevice {
            WriteObject::Block(self.devno())
        } else {
            WriteObject::File {
                dev: self.dev,
                ino: self.ino,
            }
        }
    }
}

/// Open `path` with no symbolic link anywhere in it (it was resolved just
/// before, so a link there now means someone is changing it).
pub(super) fn open_no_symlinks(path: &Path, flags: OFlags) -> Result<OwnedFd, DiskError> {
    let flags = flags | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat2(CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS) {
        // Kernels before 5.6: the last component at least is not followed.
        Err(Errno::NOSYS) => rustix::fs::openat(CWD, path, flags | OFlags::NOFOLLOW, Mode::empty()),
        other => other,
    };
    fd.map_err(|e| match e {
        Errno::LOOP => changed_while_opening(path),
        Errno::NOENT => DiskError::target(
            path,
            "disappeared while it was being opened: check who is removing it, then run again",
        ),
        e => explain_open(path, false, e.into()),
    })
}

pub(super) fn changed_while_opening(path: &Path) -> DiskError {
    DiskError::Refused(format!(
        "{} changed while it was being opened (a symbolic link appeared in its path): \
         check who is changing it, then run again",
        path.display()
    ))
}

/// Open the object `fd` refers to again with `flags`, through its
/// `/proc/self/fd` entry (which leads to the object, not to a name), and
/// check that the new descriptor reached that same object.
pub(super) fn reopen(fd: impl AsFd, expected: &Identity, flags: OFlags) -> io::Result<OwnedFd> {
    let proc_path = format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd());
    let new = rustix::fs::openat(
        CWD,
        proc_path.as_str(),
        flags | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| {
        if e == Errno::NOENT {
            io::Error::other("/proc is not mounted: iomark opens targets through /proc/self/fd")
        } else {
            e.into()
        }
    })?;
    if !Identity::of(&new)?.same_object(expected) {
        return Err(io::Error::other(
            "it was replaced while it was being opened: check who is changing it, then run again",
        ));
    }
    Ok(new)
}

/// The objects `--allow-write` names, symlinks followed as the user meant
/// them; names that lead nowhere allow nothing.
pub(super) fn allowed_objects(paths: &[PathBuf]) -> Vec<Identity> {
    paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| Identity {
            dev: m.dev(),
            ino: m.ino(),
            rdev: m.rdev(),
            kind: FileType::from_raw_mode(m.mode()),
        })
        .collect()
}

pub(super) fn explain_open(path: &Path, write: bool, e: io::Error) -> DiskError {
    match e.raw_os_error() {
        Some(libc::EBUSY) => DiskError::Refused(format!(
            "{} is in use (mounted, swap, or held by another device or program): \
             stop using it before writing to it",
            path.display()
        )),
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => DiskError::target(
            path,
            format!(
                "cannot be opened for {}: {e} (run as a user with access{})",
                if write { "writing" } else { "reading" },
                if write {
                    ", or test a read-only job"
                } else {
                    ""
                }
            ),
        ),
        _ => DiskError::target(path, format!("cannot be opened: {e}")),
    }
}
