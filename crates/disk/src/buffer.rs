//! Buffers aligned for O_DIRECT.
//!
//! O_DIRECT wants the buffer address, the length and the file offset aligned
//! to the device's logical block size; aligning buffers to the page size
//! (4096) satisfies every logical block size up to a page, and larger
//! alignments are honoured when asked.
//!
//! Each buffer is its own anonymous mapping rather than a heap allocation,
//! so it has no pages until first touched, and it reads as zeroes. That
//! lets the caller leave the first touch to the kernel: `runner::prepare`
//! registers the buffers with io_uring before filling them, and never fills
//! those of a read-only job. Pages the kernel faults in while pinning an
//! untouched range come out in physically contiguous runs far more often
//! than pages the program touches one by one (runs of 4.3 pages on average
//! in the median try, against 1.0, on the test VM), and fewer physical
//! segments per request let a virtio disk without indirect descriptors hold
//! several 1 MiB requests in its ring instead of one. fio gets the same by
//! registering its buffer untouched; docs/architecture.md has the figures.
//! A heap allocation could hand back pages an earlier test touched.

use std::ptr::NonNull;

use rustix::mm::{MapFlags, ProtFlags};

/// A zero-initialised buffer with a chosen alignment, backed by its own
/// anonymous mapping.
pub struct AlignedBuf {
    /// Start of the aligned buffer, inside the mapping.
    ptr: NonNull<u8>,
    len: usize,
    align: usize,
    /// The whole mapping, which is larger than the buffer when the alignment
    /// exceeds a page.
    map: NonNull<u8>,
    map_len: usize,
}

// SAFETY: AlignedBuf owns its mapping exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

const PAGE: usize = 4096;

impl AlignedBuf {
    /// A buffer of `len` bytes aligned to `align`, at least page aligned.
    /// Panics on a zero length or an alignment that is not a power of two,
    /// and aborts when memory runs out, as `Vec` does.
    pub fn new(len: usize, align: usize) -> Self {
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
            map,
            map_len,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: zero-length buffers are not made.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Start of the buffer, for handing to the kernel.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes (an anonymous
        // mapping reads as zeroes) and borrowed shared for the lifetime of
        // &self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in as_slice, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: map and map_len are exactly what mmap returned, and no
        // slice of the buffer outlives self. An munmap error (impossible for
        // a mapping we made) would only leak it.
        let _ = unsafe { rustix::mm::munmap(self.map.as_ptr().cast(), self.map_len) };
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
}
