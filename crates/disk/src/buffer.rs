//! Buffers aligned for O_DIRECT.
//!
//! O_DIRECT wants the buffer address, the length and the file offset aligned
//! to the device's logical block size; aligning buffers to the page size
//! (4096) satisfies every logical block size up to a page, and larger
//! alignments are honoured when asked.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// A zero-initialised heap buffer with a chosen alignment.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of `len` bytes aligned to `align` (a power of two), at least
    /// page aligned. Panics on a zero length or when memory runs out, as
    /// `Vec` does.
    pub fn new(len: usize, align: usize) -> Self {
        assert!(len > 0, "AlignedBuf of zero length");
        let layout = Layout::from_size_align(len, align.max(4096))
            .expect("buffer alignment is a power of two");
        // SAFETY: the layout has a non-zero size (asserted above).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, layout }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
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
        // SAFETY: ptr is valid for layout.size() initialised bytes (zeroed at
        // allocation) and borrowed shared for the lifetime of &self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    /// The bytes, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in as_slice, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with exactly this layout and is freed once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len())
            .field("align", &self.layout.align())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_zeroed() {
        for align in [512, 4096, 65536] {
            let mut b = AlignedBuf::new(8192, align);
            assert_eq!(b.as_mut_ptr() as usize % align.max(4096), 0);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            b.as_mut_slice()[8191] = 7;
            assert_eq!(b.as_slice()[8191], 7);
        }
    }
}
