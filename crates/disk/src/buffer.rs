//! Buffers aligned for O_DIRECT.
//!
//! O_DIRECT wants the buffer address, the length and the file offset aligned
//! to the device's logical block size; aligning buffers to the page size
//! (4096) satisfies every logical block size up to a page, and larger
//! alignments are honoured when asked.
//!
//! Each buffer is its own anonymous mapping rather than a heap allocation,
//! so it has no pages until first touched, and it reads as zeroes. That
//! lets the caller leave the first touch to the kernel: the runner's
//! `prepare` (runner/worker.rs) registers the buffers with io_uring before
//! filling them, and never fills those of a read-only job. Pages the kernel faults in while pinning an
//! untouched range come out in physically contiguous runs far more often
//! than pages the program touches one by one (runs of 4.3 pages on average
//! in the median try, against 1.0, on the test VM), and fewer physical
//! segments per request let a virtio disk without indirect descriptors hold
//! several 1 MiB requests in its ring instead of one. fio gets the same by
//! registering its buffer untouched; docs/architecture.md has the figures.
//! A heap allocation could hand back pages an earlier test touched.
//!
//! A [`BufferHold`] keeps a buffer's memory mapped without giving access to
//! it: whoever hands a buffer's address to the kernel for longer than one
//! call (io_uring's registered buffers) takes a hold, and the mapping goes
//! only when the buffer and every hold on it are gone.

use std::ptr::NonNull;
use std::sync::Arc;

use rustix::mm::{MapFlags, ProtFlags};

/// A zero-initialised buffer with a chosen alignment, backed by its own
/// anonymous mapping.
pub(crate) struct AlignedBuf {
    /// Start of the aligned buffer, inside the mapping.
    ptr: NonNull<u8>,
    len: usize,
    align: usize,
    /// The whole mapping, which is larger than the buffer when the alignment
    /// exceeds a page. Shared only with [`BufferHold`]s, which never touch
    /// the bytes, so the buffer's access is exclusive like a `Box<[u8]>`'s.
    map: Arc<Mapping>,
}

// SAFETY: AlignedBuf is the only way to reach its bytes (holds cannot), so
// it owns them exclusively, like a Box<[u8]>; the Arc'd Mapping is Send.
unsafe impl Send for AlignedBuf {}

/// One anonymous mapping, unmapped when its last owner goes.
struct Mapping {
    start: NonNull<u8>,
    len: usize,
}

// SAFETY: a Mapping is only an address range to unmap once; it has no
// methods that read or write the bytes, so sharing or sending it is harmless.
unsafe impl Send for Mapping {}
// SAFETY: as for Send: &Mapping gives no access to the bytes.
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: start and len are exactly what mmap returned; this is the
        // mapping's last owner (the Arc is dropping it), so no AlignedBuf,
        // and so no slice of the buffer, is left. An munmap error
        // (impossible for a mapping we made) would only leak it.
        let _ = unsafe { rustix::mm::munmap(self.start.as_ptr().cast(), self.len) };
    }
}

/// Keeps a buffer's memory mapped while the buffer itself may be gone, and
/// grants no access to it. The kernel may go on using an address it was
/// given (a registered io_uring buffer) as long as a hold lives.
pub(crate) struct BufferHold(Arc<Mapping>);

#[cfg(test)]
impl BufferHold {
    /// How many owners the mapping has: the buffer (while it lives) and
    /// every hold, this one included.
    pub(crate) fn owners(&self) -> usize {
        Arc::strong_count(&self.0)
    }
}

impl std::fmt::Debug for BufferHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferHold")
            .field("len", &self.0.len)
            .finish()
    }
}

const PAGE: usize = 4096;

impl AlignedBuf {
    /// A buffer of `len` bytes aligned to `align`, at least page aligned.
    /// Panics on a zero length or an alignment that is not a power of two,
    /// and aborts when memory runs out, as `Vec` does.
    pub(crate) fn new(len: usize, align: usize) -> Self {
        assert!(len > 0, "AlignedBuf of zero length");
        assert!(
            align.is_power_of_two(),
            "buffer alignment is a power of two"
        );
        let align = align.max(PAGE);
        let layout = std::alloc::Layout::from_size_align(len, align)
            .expect("buffer length fits isize once aligned");
        // A mapping is page aligned; a larger alignment takes a slack of
        // `align - PAGE` bytes to find an aligned start in.
        let map_len = len
            .checked_next_multiple_of(PAGE)
            .and_then(|l| l.checked_add(align - PAGE))
            .unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        // SAFETY: an anonymous private mapping at an address of the kernel's
        // choosing aliases no existing memory; it is unmapped once, in Drop.
        let mapped = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                map_len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        };
        let map = match mapped.ok().and_then(|p| NonNull::new(p.cast::<u8>())) {
            Some(map) => map,
            None => std::alloc::handle_alloc_error(layout),
        };
        let skip = map.as_ptr().align_offset(align);
        // The mapping starts on a page, so the distance to the next multiple
        // of `align` is a whole number of pages below `align`.
        assert!(skip <= align - PAGE, "mmap returned a page-aligned start");
        // SAFETY: skip <= align - PAGE, the slack, and the mapping holds
        // len (rounded up to a page) bytes past the slack, so ptr..ptr+len
        // lies inside it.
        let ptr = unsafe { map.add(skip) };
        AlignedBuf {
            ptr,
            len,
            align,
            map: Arc::new(Mapping {
                start: map,
                len: map_len,
            }),
        }
    }

    /// A hold that keeps this buffer's memory mapped until the hold, too,
    /// is dropped.
    pub(crate) fn hold(&self) -> BufferHold {
        BufferHold(Arc::clone(&self.map))
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Start of the buffer, for handing to the kernel.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes (an anonymous
        // mapping reads as zeroes) and borrowed shared for the lifetime of
        // &self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutable.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in as_slice, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len())
            .field("align", &self.align)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_zeroed() {
        for align in [512, 4096, 65536, 1 << 21] {
            let mut b = AlignedBuf::new(8192, align);
            assert_eq!(b.as_mut_ptr() as usize % align.max(4096), 0);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            b.as_mut_slice()[8191] = 7;
            assert_eq!(b.as_slice()[8191], 7);
        }
    }

    #[test]
    fn odd_lengths_are_whole_and_zeroed() {
        let mut b = AlignedBuf::new(5000, 512);
        assert_eq!(b.len(), 5000);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice().fill(0xa5);
        assert!(b.as_slice().iter().all(|&x| x == 0xa5));
    }

    #[test]
    fn a_hold_keeps_the_memory_mapped_after_the_buffer_goes() {
        let mut b = AlignedBuf::new(8192, 4096);
        let addr = b.as_mut_ptr() as usize;
        let hold = b.hold();
        assert_eq!(hold.owners(), 2);
        drop(b);
        assert_eq!(hold.owners(), 1);
        assert!(mapped(addr), "still mapped while held");
        // (Not checked unmapped after the hold goes: a test running
        // alongside may map the same range at once.)
    }

    /// Whether the page at `addr` is mapped (mincore fails with ENOMEM on
    /// an unmapped range).
    fn mapped(addr: usize) -> bool {
        let mut vec = [0u8; 1];
        // SAFETY: mincore only writes one byte per page of the range into
        // vec, which holds one; it reads nothing at addr.
        unsafe { libc::mincore(addr as *mut libc::c_void, 4096, vec.as_mut_ptr()) == 0 }
    }
}
