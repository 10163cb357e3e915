//! io_uring: a real queue depth from one thread.
//!
//! Each thread owns a ring sized to its depth. Units are pushed to the
//! submission queue as they are queued and handed to the kernel by
//! `commit` (one `io_uring_enter` per batch; the runner decides the batch)
//! or by the next `reap`, which also waits for completions. The target is
//! a registered file, and the pool's buffers are registered too when the
//! kernel allows, so the kernel does not pin pages for every I/O.
//!
//! Invariant behind every `unsafe` here: a unit handed to the kernel sits in
//! `in_flight[slot]` until its completion is reaped, so its buffer lives and
//! stays put while the kernel may touch it; `Drop` reaps every unit still in
//! flight before the buffers can be freed.

use std::os::fd::AsRawFd;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use super::{Dir, Done, Engine, EngineSetup, IoUnit, Queued};
use crate::DiskError;

/// Whether this kernel and process may use io_uring; the error says why not.
pub fn io_uring_available() -> Result<(), String> {
    IoUring::<squeue::Entry, cqueue::Entry>::new(2)
        .map(|_| ())
        .map_err(|e| format!("io_uring is not available here ({e})"))
}

/// One ring per thread.
pub struct Uring {
    ring: IoUring,
    in_flight: Vec<Option<IoUnit>>,
    fixed_buffers: bool,
    to_submit: usize,
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
    /// A ring for `setup.depth` I/Os with the target registered as file 0.
    pub fn new(setup: &EngineSetup) -> Result<Self, DiskError> {
        let entries = setup.depth.max(1).next_power_of_two();
        // One thread owns the ring, so the kernel may skip locking (single
        // issuer), and completions can wait for our next io_uring_enter
        // instead of interrupting us (deferred, cooperative task running),
        // as fio sets up its rings. Older kernels reject the flags one by
        // one (deferred task running needs 6.1), so fall back step by step.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_coop_taskrun()
            .build(entries)
            .or_else(|_| {
                IoUring::builder()
                    .setup_single_issuer()
                    .setup_coop_taskrun()
                    .build(entries)
            })
            .or_else(|_| IoUring::new(entries))
            .map_err(|e| engine_error(format!("cannot create a ring of {entries}: {e}")))?;
        ring.submitter()
            .register_files(&[setup.file.as_raw_fd()])
            .map_err(|e| engine_error(format!("cannot register the target file: {e}")))?;
        let mut in_flight = Vec::new();
        in_flight.resize_with(setup.depth as usize, || None);
        Ok(Uring {
            ring,
            in_flight,
            fixed_buffers: false,
            to_submit: 0,
        })
    }

    fn in_flight_count(&self) -> usize {
        self.in_flight.iter().filter(|u| u.is_some()).count()
    }

    fn submit_and_wait(&mut self, want: usize) -> Result<(), DiskError> {
        match self.ring.submit_and_wait(want) {
            Ok(n) => {
                self.to_submit = self.to_submit.saturating_sub(n);
                Ok(())
            }
            // A signal (Ctrl-C) or a full completion queue: return and let
            // the caller reap and look at its stop flag.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(engine_error(format!("io_uring_enter failed: {e}"))),
        }
    }

    fn drain_completions(&mut self, out: &mut Vec<Done>) -> usize {
        let mut n = 0;
        for cqe in self.ring.completion() {
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
        let iovecs: Vec<libc::iovec> = units
            .iter_mut()
            .map(|u| libc::iovec {
                iov_base: u.buf.as_mut_ptr().cast(),
                iov_len: u.buf.len(),
            })
            .collect();
        // SAFETY: each iovec points to a live AlignedBuf of the pool. The
        // kernel pins those pages until the ring is dropped; a fixed read or
        // write names a buffer by its slot, and a unit is only queued with
        // its own slot's buffer, so the kernel never writes memory we do not
        // hand it.
        let registered = unsafe { self.ring.submitter().register_buffers(&iovecs) };
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
        let entry = match (unit.dir, self.fixed_buffers) {
            (Dir::Read, true) => opcode::ReadFixed::new(file, ptr, unit.len, unit.slot as u16)
                .offset(unit.offset)
                .build(),
            (Dir::Read, false) => opcode::Read::new(file, ptr, unit.len)
                .offset(unit.offset)
                .build(),
            (Dir::Write, true) => opcode::WriteFixed::new(file, ptr, unit.len, unit.slot as u16)
                .offset(unit.offset)
                .build(),
            (Dir::Write, false) => opcode::Write::new(file, ptr, unit.len)
                .offset(unit.offset)
                .build(),
        }
        .user_data(slot as u64);
        self.in_flight[slot] = Some(unit);
        loop {
            // SAFETY: the entry points into the buffer of the unit now held
            // in in_flight[slot], which stays there until its completion is
            // reaped (module invariant).
            let pushed = unsafe { self.ring.submission().push(&entry) };
            if pushed.is_ok() {
                break;
            }
            // The submission queue is full: hand the batch to the kernel.
            self.submit_and_wait(0)?;
        }
        self.to_submit += 1;
        Ok(Queued::InFlight)
    }

    fn commit(&mut self) -> Result<(), DiskError> {
        if self.to_submit > 0 {
            self.submit_and_wait(0)?;
        }
        Ok(())
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

impl Drop for Uring {
    fn drop(&mut self) {
        // Wait for the kernel to finish with every buffer before they go.
        let mut sink = Vec::new();
        while self.in_flight_count() > 0 {
            if self.ring.submit_and_wait(1).is_err() {
                // A ring that cannot wait cannot be drained; leaking the
                // buffers is the only safe choice left.
                for unit in self.in_flight.iter_mut().filter_map(Option::take) {
                    std::mem::forget(unit);
                }
                return;
            }
            self.drain_completions(&mut sink);
            sink.clear();
        }
    }
}
