//! The CPU time this process has used: the one `getrusage` call of the
//! workspace, behind which the disk runner and the network streams read
//! their CPU use, and its per-thread twin (RUSAGE_THREAD).

use std::mem::MaybeUninit;
use std::time::Duration;

/// User and system CPU time of this process, all threads together; zero
/// for both if the kernel refuses (it does not, for the calling process).
pub fn process_cpu_time() -> (Duration, Duration) {
    let mut ru = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` points to writable memory the size of a `rusage`, which
    // is all getrusage writes.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
    if rc != 0 {
        return (Duration::ZERO, Duration::ZERO);
    }
    // SAFETY: zeroed, then filled by the kernel; a rusage is plain integers,
    // so every bit pattern is a valid one.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// User plus system CPU time of the calling thread alone; zero if the
/// kernel refuses (it does not, for the calling thread).
pub fn thread_cpu_time() -> Duration {
    let mut ru = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: as in `process_cpu_time`: `ru` is writable and rusage-sized.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) };
    if rc != 0 {
        return Duration::ZERO;
    }
    // SAFETY: zeroed, then filled by the kernel; plain integers.
    let ru = unsafe { ru.assume_init() };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(ru.ru_utime) + tv(ru.ru_stime)
}
