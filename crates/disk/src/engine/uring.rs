//! io_uring: a real queue depth from one thread.
//!
//! Each thread owns a ring sized to its depth. Units are pushed to the
//! submission queue as they are queued and handed to the kernel by
//! `commit` (one `io_uring_enter` per batch; the runner decides the batch)
//! or by the next `reap`, which also waits for completions. The target is
//! a registered file, and the pool's buffers are registered too when the
//! kernel allows, so the kernel does not pin pages for every I/O.
//!
//! Who keeps what alive, by ownership rather than by care:
//!
//! * Registered buffers: [`Registration`] owns the ring and a
//!   [`BufferHold`] on every buffer it registered, and drops the ring
//!   first. The runner may drop its units whenever it likes (it drops the
//!   free ones when a job ends, before the engine); their memory stays
//!   mapped until the ring is gone.
//! * I/Os in flight: a unit handed to the kernel sits in `in_flight[slot]`
//!   until its completion is reaped, so its buffer lives and stays put
//!   while the kernel may touch it, and `Drop` reaps every unit still in
//!   flight (a job that ends early, fails, or is stopped by Ctrl-C drops its
//!   engine with I/Os in flight). The wait is retried when a signal
//!   interrupts it, and it cannot be refused for the wrong thread: `Uring`
//!   is not `Send`, so it is dropped on the thread whose ring it is (a
//!   single-issuer ring with deferred task running can only be waited on
//!   from there).
//!
//! Invariant behind every `unsafe` here: memory the kernel was given stays
//! mapped while the kernel may use it, by the two rules above.

use std::marker::PhantomData;
use std::os::fd::AsRawFd;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use super::{Dir, Done, Engine, EngineSetup, IoUnit, Queued};
use crate::buffer::BufferHold;
use crate::DiskError;

/// Whether this kernel and process may use io_uring; the error says why not.
pub fn io_uring_available() -> Result<(), String> {
    IoUring::<squeue::Entry, cqueue::Entry>::new(2)
        .map(|_| ())
        .map_err(|e| format!("io_uring is not available here ({e})"))
}

/// A ring and the buffer memory registered with it, which the ring may use
/// until it is gone.
///
/// The fields drop in the order they are declared, and that order is the
/// point of this type: first `ring` (closing it ends this process's use of
/// the registration; the kernel keeps its own pin on the pages for
/// whatever it still has in flight), then `buffers`, whose holds are what
/// keep the registered memory mapped. No `Drop` impl of its own, so the
/// fields are never moved out of it in another order.
struct Registration {
    /// Declared first: dropped first.
    ring: IoUring,
    /// Declared after the ring: dropped after it.
    buffers: Vec<BufferHold>,
    /// The thread's own description of the target, registered as file 0;
    /// dropped after the ring.
    _file: std::fs::File,
}

/// One ring per thread.
pub(crate) struct Uring {
    reg: Registration,
    in_flight: Vec<Option<IoUnit>>,
    fixed_buffers: bool,
    to_submit: usize,
    /// Not `Send`: `Drop` must wait on the ring, and a single-issuer ring
    /// with deferred task running refuses (`EEXIST`) a wait from any thread
    /// but the one that made it.
    _same_thread: PhantomData<*const ()>,
}

impl std::fmt::Debug for Uring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uring")
            .field("depth", &self.in_flight.len())
            .field("fixed_buffers", &self.fixed_buffers)
            .finish()
    }
}

fn engine_error(message: String) -> DiskError {
    DiskError::Engine {
        engine: "io_uring",
        message,
    }
}

impl Uring {
    /// A ring for `setup.depth` I/Os with the target (a description of this
    /// thread's own) registered as file 0.
    pub(crate) fn new(setup: &EngineSetup) -> Result<Self, DiskError> {
        let file = setup.file.own()?;
        let entries = setup.depth.max(1).next_power_of_two();
        let ring = build_ring(entries)
            .map_err(|e| engine_error(format!("cannot create a ring of {entries}: {e}")))?;
        ring.submitter()
            .register_files(&[file.as_raw_fd()])
            .map_err(|e| engine_error(format!("cannot register the target file: {e}")))?;
        let mut in_flight = Vec::new();
        in_flight.resize_with(setup.depth as usize, || None);
        Ok(Uring {
            reg: Registration {
                ring,
                buffers: Vec::new(),
                _file: file,
            },
            in_flight,
            fixed_buffers: false,
            to_submit: 0,
            _same_thread: PhantomData,
        })
    }

    fn in_flight_count(&self) -> usize {
        self.in_flight.iter().filter(|u| u.is_some()).count()
    }

    fn submit_and_wait(&mut self, want: usize) -> Result<(), DiskError> {
        match self.reg.ring.submit_and_wait(want) {
            Ok(n) => {
                self.to_submit = self.to_submit.saturating_sub(n);
                Ok(())
            }
            // A signal (Ctrl-C) or a full completion queue: return and let
            // the caller reap and look at its stop flag.
            Err(e) if transient(&e) => Ok(()),
            Err(e) => Err(engine_error(format!("io_uring_enter failed: {e}"))),
        }
    }

    fn drain_completions(&mut self, out: &mut Vec<Done>) -> usize {
        let mut n = 0;
        for cqe in self.reg.ring.completion() {
            let slot = cqe.user_data() as usize;
            if let Some(unit) = self.in_flight.get_mut(slot).and_then(Option::take) {
                let res = cqe.result();
                let result = if res < 0 { Err(-res) } else { Ok(res as u32) };
                out.push(Done { unit, result });
                n += 1;
            }
        }
        n
    }
}

impl Engine for Uring {
    fn register_buffers(&mut self, units: &mut [IoUnit]) -> Result<(), DiskError> {
        // Held before they are registered, for as long as the ring lives
        // (Registration drops the ring first).
        self.reg.buffers.extend(units.iter().map(|u| u.buf.hold()));
        let iovecs: Vec<libc::iovec> = units
            .iter_mut()
            .map(|u| libc::iovec {
                iov_base: u.buf.as_mut_ptr().cast(),
                iov_len: u.buf.len(),
            })
            .collect();
        // SAFETY: each iovec points to a live AlignedBuf of the pool, and
        // self.reg.buffers holds every one of those mappings until after the
        // ring is dropped, whatever becomes of the units. A fixed read or
        // write names a buffer by its slot and the kernel checks the address
        // against that slot's registered range, so the kernel never writes
        // memory outside the buffers registered here.
        let registered = unsafe { self.reg.ring.submitter().register_buffers(&iovecs) };
        // Registration can fail for lack of locked memory on older kernels;
        // plain reads and writes still work, only slower.
        self.fixed_buffers = registered.is_ok();
        Ok(())
    }

    fn queue(&mut self, mut unit: IoUnit) -> Result<Queued, DiskError> {
        let slot = unit.slot as usize;
        if slot >= self.in_flight.len() || self.in_flight[slot].is_some() {
            return Err(engine_error(format!(
                "unit slot {slot} is already in flight"
            )));
        }
        let file = types::Fixed(0);
        let ptr = unit.buf.as_mut_ptr();
        // A fixed read or write names its registered buffer by the slot.
        let (len, index) = (unit.len, unit.slot as u16);
        // The four opcodes are distinct types with the same offset setter.
        macro_rules! at_offset {
            ($op:expr) => {
                $op.offset(unit.offset).build()
            };
        }
        let entry = match (unit.dir, self.fixed_buffers) {
            (Dir::Read, true) => at_offset!(opcode::ReadFixed::new(file, ptr, len, index)),
            (Dir::Read, false) => at_offset!(opcode::Read::new(file, ptr, len)),
            (Dir::Write, true) => at_offset!(opcode::WriteFixed::new(file, ptr, len, index)),
            (Dir::Write, false) => at_offset!(opcode::Write::new(file, ptr, len)),
        }
        .user_data(slot as u64);
        self.in_flight[slot] = Some(unit);
        loop {
            // SAFETY: the entry points into the buffer of the unit now held
            // in in_flight[slot], which stays there until its completion is
            // reaped, Drop included (module invariant).
            let pushed = unsafe { self.reg.ring.submission().push(&entry) };
            if pushed.is_ok() {
                break;
            }
            // The submission queue is full: hand the batch to the kernel.
            if let Err(e) = self.submit_and_wait(0) {
                // This entry never reached the queue: the unit is not in
                // flight, and Drop must not wait for it.
                self.in_flight[slot] = None;
                return Err(e);
            }
        }
        self.to_submit += 1;
        Ok(Queued::InFlight)
    }

    fn commit(&mut self) -> Result<usize, DiskError> {
        if self.to_submit == 0 {
            return Ok(0);
        }
        // Without GETEVENTS a ring with deferred task running posts only
        // what completed inline: exactly the I/Os finished within the call.
        let before = self.reg.ring.completion().len();
        self.submit_and_wait(0)?;
        Ok(self.reg.ring.completion().len().saturating_sub(before))
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Done>) -> Result<usize, DiskError> {
        let mut got = self.drain_completions(out);
        if got >= min && self.to_submit == 0 {
            return Ok(got);
        }
        let want = min.saturating_sub(got).min(self.in_flight_count());
        self.submit_and_wait(want)?;
        got += self.drain_completions(out);
        Ok(got)
    }
}

/// A ring of `entries` set up as t/io_uring sets up its own: one thread
/// owns it, so the kernel may skip locking (single issuer); completions
/// wait for our next io_uring_enter instead of interrupting us (deferred,
/// cooperative task running); no indirection array between the
/// submission queue and its entries. Older kernels reject the newer flags
/// one by one (deferred task running needs 6.1, no array 6.6), so they are
/// dropped newest first.
fn build_ring(entries: u32) -> std::io::Result<IoUring> {
    // How many of the flags, oldest first, the kernel is asked for.
    for flags in (1..=3).rev() {
        let mut builder = IoUring::builder();
        builder.setup_single_issuer().setup_coop_taskrun();
        if flags >= 2 {
            builder.setup_defer_taskrun();
        }
        if flags >= 3 {
            builder.setup_no_sqarray();
        }
        if let Ok(ring) = builder.build(entries) {
            return Ok(ring);
        }
    }
    IoUring::new(entries)
}

/// Errors after which waiting on the ring again may succeed: a signal
/// (Ctrl-C), or a completion queue or allocation that was full for now.
fn transient(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY)
    )
}

impl Drop for Uring {
    fn drop(&mut self) {
        // Wait for the kernel to finish with every unit in flight before the
        // units (and so their buffers) go; the fields drop after this.
        let mut sink = Vec::new();
        while self.in_flight_count() > 0 {
            match self.reg.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if transient(&e) => {}
                Err(_) if self.fixed_buffers => {
                    // Not expected from the thread that owns the ring. Every
                    // I/O in flight names a registered buffer, which the
                    // kernel reaches through its own pin on the pages, never
                    // through our mapping, and whose mapping Registration
                    // keeps until the ring is closed: dropping is safe.
                    break;
                }
                Err(e) => {
                    // Not expected from the thread that owns the ring; but
                    // plain reads and writes reach their buffers through
                    // this process's mappings, which must not go while the
                    // kernel may still use them. Stop here rather than free.
                    eprintln!(
                        "iomark: cannot wait for io_uring I/Os in flight ({e}); \
                         aborting rather than freeing their buffers"
                    );
                    std::process::abort();
                }
            }
            self.drain_completions(&mut sink);
            sink.clear();
        }
        // The ring's reference to the target goes now, not when the kernel
        // gets round to tearing the ring down after the process is gone: a
        // block device opened O_EXCL stays claimed while any reference
        // lives, and the next run on it (a verify read phase right after
        // the write phase) would find it busy. Best effort: a failure only
        // leaves the reference to the teardown.
        let _ = self.reg.ring.submitter().unregister_files();
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::Write;
    use std::os::fd::OwnedFd;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::buffer::AlignedBuf;
    use crate::target::TargetFile;

    const LEN: usize = 4096;

    /// A ring over the read end of an empty pipe, with two registered
    /// units: a read stays in flight until the pipe is written.
    fn ring_over_a_pipe() -> Option<(Uring, Vec<IoUnit>, std::io::PipeWriter)> {
        if let Err(why) = io_uring_available() {
            iomark_testrig::skipped(&why.to_string());
            return None;
        }
        let (rx, tx) = std::io::pipe().unwrap();
        let setup = EngineSetup {
            file: TargetFile::new(Arc::new(File::from(OwnedFd::from(rx)))).unwrap(),
            region: 2 * LEN as u64,
            depth: 2,
            writable: false,
            random: false,
        };
        let mut eng = Uring::new(&setup).unwrap();
        let mut units: Vec<IoUnit> = (0..2)
            .map(|slot| IoUnit {
                buf: AlignedBuf::new(LEN, 4096),
                offset: 0,
                len: LEN as u32,
                dir: Dir::Read,
                slot,
                issued: Instant::now(),
            })
            .collect();
        eng.register_buffers(&mut units).unwrap();
        Some((eng, units, tx))
    }

    /// Drops `eng` with slot 0 in flight and slot 1's unit already gone (as
    /// the runner drops its free units before its engine when a job ends
    /// early, fails or is stopped); `meanwhile` runs on another thread and
    /// must end by writing the pipe. Returns how long the drop took.
    fn drop_in_flight(
        eng: Uring,
        mut units: Vec<IoUnit>,
        meanwhile: impl FnOnce() + Send + 'static,
    ) -> Duration {
        let holds: Vec<BufferHold> = units.iter().map(|u| u.buf.hold()).collect();
        let mut eng = eng;
        let free = units.pop().unwrap();
        assert!(matches!(
            eng.queue(units.pop().unwrap()).unwrap(),
            Queued::InFlight
        ));
        eng.commit().unwrap();
        drop(free);
        assert_eq!(
            holds[1].owners(),
            2,
            "the registration keeps a freed unit's buffer"
        );
        assert_eq!(
            holds[0].owners(),
            3,
            "in flight: the unit and the registration"
        );
        let other = std::thread::spawn(meanwhile);
        let t = Instant::now();
        drop(eng);
        let took = t.elapsed();
        other.join().unwrap();
        // Nothing leaked: the unit was reaped, the ring and its holds gone.
        assert_eq!(holds[0].owners(), 1);
        assert_eq!(holds[1].owners(), 1);
        took
    }

    #[test]
    fn dropping_with_an_io_in_flight_waits_for_it_then_releases_the_buffers() {
        let Some((eng, units, mut tx)) = ring_over_a_pipe() else {
            return;
        };
        let took = drop_in_flight(eng, units, move || {
            std::thread::sleep(Duration::from_millis(300));
            tx.write_all(&[7; 2 * LEN]).unwrap();
        });
        assert!(
            took >= Duration::from_millis(250),
            "the drop waited: {took:?}"
        );
    }

    extern "C" fn ignore(_: libc::c_int) {}

    #[test]
    fn a_signal_during_the_drop_does_not_cut_the_wait_short() {
        let Some((eng, units, mut tx)) = ring_over_a_pipe() else {
            return;
        };
        // SAFETY: installs a handler that does nothing, without SA_RESTART,
        // so a wait it interrupts fails with EINTR as under Ctrl-C; the
        // zeroed sigaction is a valid empty mask and flag set.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = ignore as extern "C" fn(libc::c_int) as libc::sighandler_t;
            assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
        }
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as usize;
        let took = drop_in_flight(eng, units, move || {
            std::thread::sleep(Duration::from_millis(150));
            // SAFETY: `me` is the test's thread, alive until this thread
            // is joined.
            let sent = unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR1) };
            assert_eq!(sent, 0);
            std::thread::sleep(Duration::from_millis(150));
            tx.write_all(&[7; 2 * LEN]).unwrap();
        });
        assert!(
            took >= Duration::from_millis(250),
            "the drop waited: {took:?}"
        );
    }
}
