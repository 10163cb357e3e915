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

/// The calling thread's time on a CPU and its time runnable but waiting
/// for one, from `/proc/thread-self/schedstat` (the scheduler's own
/// accounting, in nanoseconds); without it (a kernel without
/// CONFIG_SCHED_INFO), its user plus system time and no wait.
///
/// Their sum is the time the thread did not sleep: on a loaded machine a
/// thread that never waits for I/O still gets only part of a CPU, and only
/// the sum shows that it was the limit.
pub fn thread_run_and_wait() -> (Duration, Duration) {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok();
    match stat.as_deref().and_then(parse_schedstat) {
        Some(t) => t,
        None => (thread_cpu_time(), Duration::ZERO),
    }
}

fn parse_schedstat(s: &str) -> Option<(Duration, Duration)> {
    let mut f = s.split_whitespace().map(|n| n.parse::<u64>().ok());
    let run = f.next()??;
    let wait = f.next()??;
    Some((Duration::from_nanos(run), Duration::from_nanos(wait)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_is_run_then_wait_in_nanoseconds() {
        assert_eq!(
            parse_schedstat("368791 81356 2\n"),
            Some((Duration::from_nanos(368_791), Duration::from_nanos(81_356)))
        );
        assert_eq!(parse_schedstat("12"), None);
    }
}
