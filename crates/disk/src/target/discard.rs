//! Discarding a block device's range: the purge PTS asks for first, where
//! the device can do it.

use std::os::fd::AsRawFd;

use super::OpenTarget;

/// `_IO(0x12, 125)`: discard, and make the old data unreadable.
const BLKSECDISCARD: libc::c_ulong = 0x127d;
/// `_IO(0x12, 119)`: discard.
const BLKDISCARD: libc::c_ulong = 0x1277;

impl OpenTarget {
    /// Discards `len` bytes of the target's region from its start: the
    /// secure way when the device takes it (true), else the plain one
    /// (false). Only a writable block device; the caller checks.
    pub(crate) fn discard(&self, len: u64) -> std::io::Result<bool> {
        let range: [u64; 2] = [self.region_base.get(), len];
        let fd = self.file.as_raw_fd();
        let call = |op: libc::c_ulong| {
            // SAFETY: both ioctls read two u64 (start, length) from the
            // pointer and nothing else; `range` lives across the call and
            // `fd` is the target's open descriptor, checked as the named
            // device when it was opened.
            let rc = unsafe { libc::ioctl(fd, op, range.as_ptr()) };
            if rc == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        };
        match call(BLKSECDISCARD) {
            Ok(()) => Ok(true),
            // A device without secure discard says so: the plain one.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::ENOTTY | libc::EINVAL)
                ) =>
            {
                call(BLKDISCARD).map(|()| false)
            }
            Err(e) => Err(e),
        }
    }
}
