//! The CPU time this process has used: the one `getrusage` call of the
//! workspace, behind which the disk runner and the network streams read
//! their CPU use, and its per-thread twin (RUSAGE_THREAD).

use std::mem::MaybeUninit;
use std::time::{Duration, Instant};

use iomark_model::cpu::{CpuRecord, CpuUsage, HostCpu};

/// User and system CPU time of this process, all threads together; zero
/// for both if the kernel refuses (it does not, for the calling process).
pub fn process_cpu_time() -> (Duration, Duration) {
    rusage(libc::RUSAGE_SELF)
}

/// User and system CPU time of the children this process has waited for
/// (a memory job run under a cgroup limit runs in one).
pub fn children_cpu_time() -> (Duration, Duration) {
    rusage(libc::RUSAGE_CHILDREN)
}

fn rusage(who: libc::c_int) -> (Duration, Duration) {
    let mut ru = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` points to writable memory the size of a `rusage`, which
    // is all getrusage writes.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
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

/// The machine's CPU time so far, from the `cpu` line of `/proc/stat`, in
/// clock ticks (only differences mean anything).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatTicks {
    user: u64,
    nice: u64,
    system: u64,
    idle: u64,
    iowait: u64,
    irq: u64,
    softirq: u64,
    steal: u64,
    cpus: u32,
}

impl StatTicks {
    /// Reads `/proc/stat`; none when it cannot be read or parsed.
    pub fn now() -> Option<StatTicks> {
        parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    fn total(&self) -> u64 {
        // guest and guest_nice are already inside user and nice.
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// The machine's CPU between `earlier` and this reading, as percent of
    /// all CPUs; none when no tick passed (too short to say anything).
    pub fn since(&self, earlier: &StatTicks) -> Option<HostCpu> {
        let total = self.total().checked_sub(earlier.total())?;
        if total == 0 {
            return None;
        }
        let pct = |a: u64, b: u64| a.saturating_sub(b) as f64 * 100.0 / total as f64;
        Some(HostCpu {
            cpus: self.cpus,
            user_pct: pct(self.user + self.nice, earlier.user + earlier.nice),
            system_pct: pct(self.system + self.irq, earlier.system + earlier.irq),
            iowait_pct: pct(self.iowait, earlier.iowait),
            softirq_pct: pct(self.softirq, earlier.softirq),
            steal_pct: pct(self.steal, earlier.steal),
            idle_pct: pct(self.idle, earlier.idle),
        })
    }
}

fn own_cpu_time(children: bool) -> (Duration, Duration) {
    let (user, system) = process_cpu_time();
    if !children {
        return (user, system);
    }
    let (cu, cs) = children_cpu_time();
    (user + cu, system + cs)
}

/// The aggregate `cpu` line and the count of `cpuN` lines of `/proc/stat`.
/// Older kernels print fewer columns; missing ones count as zero.
fn parse_proc_stat(s: &str) -> Option<StatTicks> {
    let mut lines = s.lines();
    let first = lines.next()?;
    let mut f = first.split_whitespace();
    if f.next()? != "cpu" {
        return None;
    }
    let mut v = [0u64; 8];
    for (slot, field) in v.iter_mut().zip(f) {
        *slot = field.parse().ok()?;
    }
    let cpus = lines
        .take_while(|l| l.starts_with("cpu"))
        .filter(|l| l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some(StatTicks {
        user: v[0],
        nice: v[1],
        system: v[2],
        idle: v[3],
        iowait: v[4],
        irq: v[5],
        softirq: v[6],
        steal: v[7],
        cpus: u32::try_from(cpus).unwrap_or(u32::MAX),
    })
}

/// Measures both views of CPU over an interval: this process's time (all
/// threads) over wall time, and the machine's `/proc/stat` ticks.
#[derive(Debug, Clone, Copy)]
pub struct CpuSampler {
    children: bool,
    wall: Instant,
    user: Duration,
    system: Duration,
    stat: Option<StatTicks>,
}

impl CpuSampler {
    /// Starts measuring now.
    pub fn start() -> CpuSampler {
        CpuSampler::starting(false)
    }

    /// Starts measuring now, counting in the children the process waits for
    /// before [`CpuSampler::read`] (the work may run in one).
    pub fn start_with_children() -> CpuSampler {
        CpuSampler::starting(true)
    }

    fn starting(children: bool) -> CpuSampler {
        let (user, system) = own_cpu_time(children);
        CpuSampler {
            children,
            wall: Instant::now(),
            user,
            system,
            stat: StatTicks::now(),
        }
    }

    /// Both views since the start.
    pub fn read(&self) -> CpuRecord {
        let wall = self.wall.elapsed().as_secs_f64();
        let (user, system) = own_cpu_time(self.children);
        let host = match (StatTicks::now(), &self.stat) {
            (Some(now), Some(then)) => now.since(then),
            _ => None,
        };
        let process = if wall > 0.0 {
            CpuUsage {
                user_pct: user.saturating_sub(self.user).as_secs_f64() / wall * 100.0,
                system_pct: system.saturating_sub(self.system).as_secs_f64() / wall * 100.0,
            }
        } else {
            CpuUsage::default()
        };
        CpuRecord { process, host }
    }
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

    const STAT: &str = "cpu  100 10 50 800 20 5 15 0 0 0
cpu0 50 5 25 400 10 2 8 0 0 0
cpu1 50 5 25 400 10 3 7 0 0 0
intr 12345
ctxt 999
";

    #[test]
    fn proc_stat_counts_cpus_and_reads_the_aggregate_line() {
        let t = parse_proc_stat(STAT).unwrap();
        assert_eq!(t.cpus, 2);
        assert_eq!((t.user, t.nice, t.system, t.idle), (100, 10, 50, 800));
        assert_eq!((t.iowait, t.irq, t.softirq, t.steal), (20, 5, 15, 0));
        assert_eq!(t.total(), 1000);
        assert_eq!(parse_proc_stat("intr 1\n"), None);
    }

    #[test]
    fn proc_stat_difference_is_percent_of_all_cpus() {
        let a = parse_proc_stat(STAT).unwrap();
        // 200 ticks later: 40 user + 10 nice, 60 system + 10 irq, 20
        // softirq, 10 iowait, 50 idle.
        let later = "cpu  140 20 110 850 30 15 35 0 0 0\ncpu0 1\ncpu1 1\n";
        let b = parse_proc_stat(later).unwrap();
        let h = b.since(&a).unwrap();
        assert_eq!(h.cpus, 2);
        assert_eq!(h.user_pct, 25.0);
        assert_eq!(h.system_pct, 35.0);
        assert_eq!(h.softirq_pct, 10.0);
        assert_eq!(h.iowait_pct, 5.0);
        assert_eq!(h.idle_pct, 25.0);
        let sum = h.user_pct + h.system_pct + h.softirq_pct + h.iowait_pct + h.idle_pct;
        assert_eq!(sum, 100.0);
        assert_eq!(a.since(&a), None, "no tick passed: nothing to say");
    }

    #[test]
    fn a_busy_process_shows_in_both_views() {
        let s = CpuSampler::start();
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(200) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let r = s.read();
        assert!(r.process.total_pct() > 0.0, "{r:?}");
        let h = r.host.expect("/proc/stat is readable on Linux");
        assert!(h.cpus >= 1);
        let sum =
            h.user_pct + h.system_pct + h.iowait_pct + h.softirq_pct + h.steal_pct + h.idle_pct;
        assert!((sum - 100.0).abs() < 1.0, "{h:?}");
    }
}
