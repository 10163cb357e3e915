//! What a sender writes: a page-aligned buffer of random bytes, or (`-Z`)
//! an in-memory file of them sent with `sendfile`.

use std::io::Write;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

use rand::RngCore;

use super::StreamPlan;
use crate::sys;

/// Where a data buffer starts: a page boundary, as iperf3's (an `mmap`).
const BUF_ALIGN: usize = 4096;

/// A zeroed buffer of `len` bytes that starts on a page boundary.
///
/// The kernel copies every payload byte between this buffer and the socket,
/// and that copy's speed depends on where the buffer starts (a block 16
/// bytes into a page measured slower than one on a page boundary, see
/// docs/net.md). Where malloc puts a 128 KiB block depends on the thread's
/// arena; starting on a page, as iperf3's `mmap`-ed buffer does, takes that
/// out of the comparison. Over-allocating and slicing needs no `unsafe`.
pub(crate) struct AlignedBuf {
    mem: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    pub fn zeroed(len: usize) -> AlignedBuf {
        let mem = vec![0u8; len + BUF_ALIGN];
        let start = mem.as_ptr().align_offset(BUF_ALIGN).min(BUF_ALIGN);
        AlignedBuf { mem, start, len }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.mem[self.start..self.start + self.len]
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.start..self.start + self.len]
    }
}

pub(super) fn payload(len: usize) -> AlignedBuf {
    let mut buf = AlignedBuf::zeroed(len);
    rand::rng().fill_bytes(buf.bytes_mut());
    buf
}

/// Where a TCP sender's blocks come from: its buffer, written with
/// `write`, or (`-Z`) an in-memory file holding the same bytes, sent with
/// `sendfile`, so the payload never passes through user space.
pub(super) enum Blocks {
    Buffer(AlignedBuf),
    File(std::fs::File, usize),
}

impl Blocks {
    pub fn new(plan: &StreamPlan) -> Blocks {
        let buf = payload(plan.len);
        if plan.zerocopy {
            // Without a memfd (a kernel before 3.17) the copy path sends
            // the same bytes.
            if let Ok(f) = sys::memfd_with(buf.bytes()) {
                return Blocks::File(f, plan.len);
            }
        }
        Blocks::Buffer(buf)
    }

    /// Send the block's bytes from `from` on.
    pub fn send(&self, s: &mut TcpStream, from: usize) -> std::io::Result<usize> {
        match self {
            Blocks::Buffer(b) => s.write(&b.bytes()[from..]),
            Blocks::File(f, len) => {
                sys::sendfile(s.as_raw_fd(), f.as_raw_fd(), from as u64, len - from)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_start_on_a_page() {
        for len in [1, 16, 1460, 128 * 1024, 1 << 20] {
            let mut b = AlignedBuf::zeroed(len);
            assert_eq!(b.bytes().len(), len);
            assert_eq!(b.bytes().as_ptr() as usize % BUF_ALIGN, 0, "len {len}");
            assert!(b.bytes_mut().iter().all(|&x| x == 0));
        }
    }
}
