//! An existing regular file or block device: read freely; written only when
//! `--allow-write` names the same object, opened `O_EXCL` (devices) for
//! the whole run, and refused while the same bytes are reachable through
//! something mounted, swapped on or held.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;

use iomark_model::disk::{DiskTarget, TargetKind};
use iomark_model::units::Bytes;
use iomark_model::Warning;
use rustix::fs::{FileType, OFlags, SeekFrom};

use super::identity::{explain_open, reopen, Identity};
use super::{check_io_sizes, no_direct_warning, DirectMode, OpenTarget, TargetRequest};
use crate::DiskError;

pub(super) fn open_existing(
    req: &TargetRequest,
    resolved: &Path,
    handle: &OwnedFd,
    identity: Identity,
    allowed: &[Identity],
    kind: TargetKind,
) -> Result<OpenTarget, DiskError> {
    let noun = match kind {
        TargetKind::BlockDevice => "device",
        _ => "file",
    };
    if req.write && !allowed.iter().any(|a| a.allows(&identity)) {
        return Err(DiskError::Refused(format!(
            "{} is an existing {noun} and the job writes: its data would be overwritten. \
             Add --allow-write {} if that is what you want, or name a directory to test \
             on a test file",
            req.path.display(),
            resolved.display()
        )));
    }
    let exclusive = kind == TargetKind::BlockDevice && req.write;
    let (file, direct, warnings) = open_with_mode(
        handle, &identity, resolved, req.write, req.direct, exclusive,
    )?;
    let route = if req.write {
        // After the exclusive open: nobody can mount the device meanwhile.
        refuse_if_in_use(resolved, &identity)?
    } else {
        iomark_host::Route::default()
    };
    let lbs = iomark_host::logical_block_size_of(&file).unwrap_or(512);
    if direct {
        check_io_sizes(req, u64::from(lbs), resolved)?;
    }
    let full = rustix::fs::seek(&file, SeekFrom::End(0))
        .map_err(|e| DiskError::target(resolved, format!("cannot read its size: {e}")))?;
    let size = match req.size {
        Some(s) if s.get() > full => {
            return Err(DiskError::Invalid(format!(
                "--size {s} is larger than {} ({}): lower --size",
                resolved.display(),
                Bytes(full)
            )))
        }
        Some(s) => s.get(),
        None => full,
    };
    Ok(OpenTarget {
        file: Arc::new(file),
        info: DiskTarget {
            given: req.path.display().to_string(),
            path: resolved.display().to_string(),
            kind,
            size: Bytes(size),
            logical_block_size: lbs,
            size_from_device: req.size.is_none(),
        },
        direct,
        writable: req.write,
        warnings,
        removed_stale: Vec::new(),
        region_base: Bytes(0),
        identity,
        _test_file: None,
        _route: route,
    })
}

/// The route to the bytes `identity` holds, with its other block devices
/// claimed; refused when any door to them is in use, in any namespace.
fn refuse_if_in_use(path: &Path, identity: &Identity) -> Result<iomark_host::Route, DiskError> {
    let route = iomark_host::route_to(identity.write_object());
    let users = &route.users;
    if users.is_empty() {
        return Ok(route);
    }
    let what = if identity.kind == FileType::BlockDevice {
        "unmount it (and swapoff, and stop what is stacked on it) before writing to it"
    } else {
        "unmount the file system on it (and detach the loop device, or swapoff) before writing to it"
    };
    Err(DiskError::Refused(format!(
        "{} is in use: {}. The same bytes would be written under it: {what}",
        path.display(),
        users.join("; ")
    )))
}

/// Open the object behind `handle` read-only or read-write, with O_DIRECT
/// as asked, through `/proc/self/fd`.
fn open_with_mode(
    handle: &OwnedFd,
    identity: &Identity,
    path: &Path,
    write: bool,
    mode: DirectMode,
    exclusive: bool,
) -> Result<(File, bool, Vec<Warning>), DiskError> {
    let open = |direct: bool| {
        let mut flags = if write { OFlags::RDWR } else { OFlags::RDONLY };
        if direct {
            flags |= OFlags::DIRECT;
        }
        if exclusive {
            flags |= OFlags::EXCL;
        }
        reopen(handle, identity, flags).map(File::from)
    };
    let explain = |e: io::Error| {
        let busy = e.raw_os_error() == Some(libc::EBUSY);
        if busy && identity.kind == FileType::BlockDevice {
            // Mounted in another mount namespace, or held open exclusively:
            // say by whom where /proc shows it.
            let who = iomark_host::holders_anywhere(identity.devno());
            if !who.is_empty() {
                return DiskError::Refused(format!(
                    "{} is in use: {}: stop using it before writing to it",
                    path.display(),
                    who.join(", ")
                ));
            }
        }
        explain_open(path, write, e)
    };
    match mode {
        DirectMode::Buffered => Ok((open(false).map_err(explain)?, false, Vec::new())),
        DirectMode::Direct | DirectMode::Auto => match open(true) {
            Ok(f) => Ok((f, true, Vec::new())),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                if mode == DirectMode::Direct {
                    return Err(DiskError::NoDirectIo(path.to_path_buf()));
                }
                let f = open(false).map_err(explain)?;
                Ok((f, false, vec![no_direct_warning(path)]))
            }
            Err(e) => Err(explain(e)),
        },
    }
}
