//! SIGBUS from a file mapping whose file shrank, turned into an error.
//!
//! When another process truncates a file while iomark has it mapped, the
//! next access to a page past the new end raises SIGBUS, whose default
//! action kills the process silently (exit 135), leaving the test file
//! behind and the figures unprinted. A [`Watch`] registers a mapping; the
//! process-wide handler, installed on the first registration, checks that
//! the faulting address lies inside a registered mapping, maps a zero page
//! over the faulting page so the interrupted copy can finish, and raises
//! that mapping's flag, which its owner checks after each access and turns
//! into an error that propagates like any other (so destructors run).
//!
//! A SIGBUS anywhere else is none of ours: it goes to the handler that was
//! there before (Rust's stack-overflow handler, usually), or else to the
//! default action, by restoring it and returning so the access faults again.
//!
//! Why not `catch_unwind` or `siglongjmp`: unwinding out of a signal handler
//! is undefined behaviour in Rust, while replacing the page is one system
//! call and lets the faulting instruction complete normally.
//!
//! This module holds all the `unsafe` of the scheme. Async-signal safety:
//! the handler only reads atomics, walks a list whose nodes are never freed,
//! and calls `mmap` and `sigaction`, both plain system calls (`mmap` is not
//! on POSIX's list, but glibc's is a bare syscall wrapper).

use std::io;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// One registered mapping. Nodes are leaked and reused, never freed, so the
/// handler can walk the list at any moment without a lock.
struct Slot {
    /// First byte of the mapping; 0 when free, [`CLAIMED`] while being set.
    start: AtomicUsize,
    /// One past the last byte of the mapping.
    end: AtomicUsize,
    /// Raised by the handler when it replaced a page of this mapping.
    shrank: AtomicBool,
    /// The next node; set once, before the node is published.
    next: AtomicPtr<Slot>,
}

/// A `start` value no mapping has (page 0 is never mapped), so the handler
/// ignores a slot while its bounds are being written.
const CLAIMED: usize = 1;

static HEAD: AtomicPtr<Slot> = AtomicPtr::new(ptr::null_mut());
static PAGE: AtomicUsize = AtomicUsize::new(4096);
/// The action that was installed before ours, to hand foreign faults to.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
/// Whether our handler is installed (or the errno that prevented it).
static INSTALLED: OnceLock<Result<(), i32>> = OnceLock::new();

/// A mapping watched for its file shrinking under it; unregistered on drop,
/// which must happen before the mapping is unmapped.
#[derive(Debug)]
pub struct Watch {
    slot: &'static Slot,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("start", &self.start.load(Ordering::Relaxed))
            .field("end", &self.end.load(Ordering::Relaxed))
            .field("shrank", &self.shrank.load(Ordering::Relaxed))
            .finish()
    }
}

impl Watch {
    /// Watch the mapping of `len` bytes at address `start`, installing the
    /// handler on first use.
    pub fn new(start: usize, len: usize) -> io::Result<Watch> {
        install()?;
        let slot = claim();
        slot.shrank.store(false, Ordering::SeqCst);
        slot.end.store(start.saturating_add(len), Ordering::SeqCst);
        slot.start.store(start.max(CLAIMED + 1), Ordering::SeqCst);
        Ok(Watch { slot })
    }

    /// Whether a page of the mapping was found beyond the end of its file
    /// (and replaced by zeroes): what was read or written there is void.
    pub fn shrank(&self) -> bool {
        self.slot.shrank.load(Ordering::SeqCst)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // `end` first, so the handler never sees the old start with a
        // bound that is being rewritten.
        self.slot.end.store(0, Ordering::SeqCst);
        self.slot.start.store(0, Ordering::SeqCst);
    }
}

/// A free slot, marked [`CLAIMED`]: a released one, or a new one pushed on
/// the list.
fn claim() -> &'static Slot {
    let mut at = HEAD.load(Ordering::Acquire);
    while !at.is_null() {
        // SAFETY: every pointer on the list comes from Box::leak below and
        // is never freed, so it is valid for 'static.
        let slot: &'static Slot = unsafe { &*at };
        if slot
            .start
            .compare_exchange(0, CLAIMED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return slot;
        }
        at = slot.next.load(Ordering::Acquire);
    }
    let slot: &'static Slot = Box::leak(Box::new(Slot {
        start: AtomicUsize::new(CLAIMED),
        end: AtomicUsize::new(0),
        shrank: AtomicBool::new(false),
        next: AtomicPtr::new(ptr::null_mut()),
    }));
    let new = ptr::from_ref(slot).cast_mut();
    let mut head = HEAD.load(Ordering::Acquire);
    loop {
        slot.next.store(head, Ordering::Release);
        match HEAD.compare_exchange(head, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return slot,
            Err(now) => head = now,
        }
    }
}

/// The registered mapping holding `addr`, if any. Async-signal-safe.
fn find(addr: usize) -> Option<&'static Slot> {
    let mut at = HEAD.load(Ordering::Acquire);
    while !at.is_null() {
        // SAFETY: as in `claim`, list nodes are leaked and never freed.
        let slot: &'static Slot = unsafe { &*at };
        let start = slot.start.load(Ordering::SeqCst);
        let end = slot.end.load(Ordering::SeqCst);
        if start > CLAIMED && (start..end).contains(&addr) {
            return Some(slot);
        }
        at = slot.next.load(Ordering::Acquire);
    }
    None
}

fn install() -> io::Result<()> {
    let done = INSTALLED.get_or_init(|| {
        PAGE.store(rustix::param::page_size(), Ordering::SeqCst);
        // SAFETY: sigaction with a null new action only reads the current
        // one into `old`, a zeroed plain-data struct it may overwrite.
        let old = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, ptr::null(), &mut old) != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
            }
            old
        };
        // Stored before the handler goes in, so it can always chain.
        let _ = PREVIOUS.set(old);
        // SAFETY: `on_sigbus` has the SA_SIGINFO signature and only does
        // async-signal-safe work; the mask is initialised by sigemptyset
        // before use. SA_ONSTACK keeps the chained stack-overflow handler
        // working on its alternate stack.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            libc::sigemptyset(&mut new.sa_mask);
            new.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            if libc::sigaction(libc::SIGBUS, &new, ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
            }
        }
        Ok(())
    });
    done.map_err(io::Error::from_raw_os_error)
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: with SA_SIGINFO the kernel passes a valid siginfo_t, and for
    // SIGBUS si_addr is the faulting address.
    let addr = unsafe { (*info).si_addr() } as usize;
    if let Some(slot) = find(addr) {
        let page = PAGE.load(Ordering::Relaxed);
        let at = addr & !(page - 1);
        // SAFETY: the page lies inside a mapping its owner registered and
        // keeps mapped until it unregisters; replacing it with a private
        // zero page touches nothing outside that mapping, and the owner
        // reads the flag and discards what the page held.
        let mapped = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if mapped != libc::MAP_FAILED {
            slot.shrank.store(true, Ordering::SeqCst);
            return;
        }
    }
    chain(sig, info, ctx);
}

/// Hand a SIGBUS that is not ours to the previous handler, or to the default
/// action.
fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if let Some(prev) = PREVIOUS.get() {
        let handler = prev.sa_sigaction;
        if handler != libc::SIG_DFL && handler != libc::SIG_IGN {
            if prev.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: a handler installed with SA_SIGINFO has this
                // signature; it gets exactly what the kernel gave us.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(handler) };
                f(sig, info, ctx);
            } else {
                // SAFETY: a handler installed without SA_SIGINFO takes the
                // signal number only.
                let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
                f(sig);
            }
            return;
        }
    }
    // SAFETY: sigaction is async-signal-safe; restoring the default action
    // makes the access fault again on return and the kernel end the process
    // as it would have without us.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        libc::sigemptyset(&mut dfl.sa_mask);
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &dfl, ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Truncate a mapped file and read past the new end: the read completes
    /// with zeroes and the watch reports it, instead of the process dying.
    #[test]
    fn a_read_past_a_truncated_end_is_caught() {
        let page = rustix::param::page_size();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; 4 * page]).unwrap();
        // SAFETY: a fresh shared mapping of a file only this test uses.
        let map = unsafe {
            rustix::mm::mmap(
                ptr::null_mut(),
                4 * page,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::SHARED,
                &f,
                0,
            )
        }
        .unwrap();
        let watch = Watch::new(map as usize, 4 * page).unwrap();
        let other = Watch::new(1 << 40, page).unwrap();
        f.set_len(page as u64).unwrap();
        let mut buf = vec![1u8; page];
        // SAFETY: the range is inside the mapping; the page past the end is
        // replaced by the handler before the copy resumes.
        unsafe {
            ptr::copy_nonoverlapping(map.cast::<u8>(), buf.as_mut_ptr(), page);
            assert!(buf.iter().all(|&b| b == 7), "the page still in the file");
            assert!(!watch.shrank());
            ptr::copy_nonoverlapping(map.cast::<u8>().add(2 * page), buf.as_mut_ptr(), page);
        }
        assert!(buf.iter().all(|&b| b == 0), "the replaced page reads zero");
        assert!(watch.shrank());
        assert!(!other.shrank(), "only the faulting mapping is flagged");
        drop(watch);
        drop(other);
        // SAFETY: exactly the mapping made above, unmapped once.
        unsafe { rustix::mm::munmap(map, 4 * page).unwrap() };
    }

    #[test]
    fn only_registered_ranges_are_found() {
        let a = Watch::new(1 << 41, 4096).unwrap();
        let b = Watch::new(1 << 42, 4096).unwrap();
        drop(a);
        assert!(find((1 << 41) + 1).is_none(), "released");
        assert!(find((1 << 42) + 4095).is_some());
        assert!(find((1 << 42) + 4096).is_none(), "one past the end");
        drop(b);
    }
}
