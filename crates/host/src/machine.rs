//! What the machine did to a measurement: a CPU quota that held iomark's
//! cgroup back (`cpu.stat`'s `nr_throttled`), and other processes that kept
//! every CPU busy. Either makes a figure the machine's, not the device's or
//! the link's (issue 33: a network client held to 1.5% of a CPU reached 435
//! Mbit/s on a 984 Mbit/s link, with no word about it).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use iomark_model::cpu::{CpuThrottle, CpuUsage, HostCpu};
use iomark_model::units::Nanos;
use iomark_model::{Warning, WarningKind};

/// Where the cpu controller's hierarchy is mounted, v1 then v2.
const V1_ROOTS: [&str; 2] = ["/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"];
const V2_ROOT: &str = "/sys/fs/cgroup";

/// A throttled share of the periods (or of the wall time) from which the
/// quota, not the work, set the pace.
const THROTTLED_SHARE: f64 = 0.05;
/// All CPUs together at least this busy, percent, is a saturated machine.
const SATURATED_PCT: f64 = 90.0;
/// Other processes' share of all CPUs, percent, from which they, not
/// iomark, saturated it.
const OTHERS_PCT: f64 = 25.0;

/// `cpu.stat`'s throttling counters of one cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Counts {
    periods: u64,
    throttled: u64,
    time: Duration,
}

impl Counts {
    /// `nr_periods`, `nr_throttled` and `throttled_time` (v1, ns) or
    /// `throttled_usec` (v2).
    fn parse(text: &str) -> Option<Counts> {
        let mut c = Counts::default();
        let mut seen = false;
        for line in text.lines() {
            let mut kv = line.split_whitespace();
            let (Some(k), Some(v)) = (kv.next(), kv.next()) else {
                continue;
            };
            let Ok(v) = v.parse::<u64>() else { continue };
            match k {
                "nr_periods" => c.periods = v,
                "nr_throttled" => {
                    c.throttled = v;
                    seen = true;
                }
                "throttled_time" => c.time = Duration::from_nanos(v),
                "throttled_usec" => c.time = Duration::from_micros(v),
                _ => {}
            }
        }
        seen.then_some(c)
    }
}

/// The throttling counters of this process's cpu cgroup and each of its
/// ancestors (a quota set on a parent holds the children), read at the
/// start of a measurement; or, where no hierarchy is mounted to read them
/// from, how long each thread waited for a CPU.
#[derive(Debug, Clone)]
pub struct CpuQuotaWatch(Watching);

/// What a [`CpuQuotaWatch`] watches.
#[derive(Debug, Clone)]
enum Watching {
    /// `cpu.stat` of the cgroup and of each ancestor that has one.
    Counters(Vec<(PathBuf, Counts)>),
    /// The threads' waits, where no `cpu.stat` can be read.
    Waits(WaitWatch),
    /// Why neither can be read: the check cannot look, and says so rather
    /// than pass for a clean bill (issue 46).
    Blind(String),
}

/// A cgroup whose `cpu.stat` cannot be read here: `ip netns exec` runs its
/// command in a mount namespace with a fresh /sys and no cgroup file
/// system under it, and a container may have none. The quota binds all the
/// same (a client starved to 0.32x of its rate so went unnamed, issue 46).
/// A throttled thread stays queued for a CPU, so the kernel's per-thread
/// wait (`/proc/self/task/*/schedstat`, run delay) shows it instead.
#[derive(Debug, Clone)]
struct WaitWatch {
    cgroup: String,
    started: std::time::Instant,
    times: Vec<(u32, Duration, Duration)>,
}

/// A thread's wait for a CPU from this share of the wall time up can be a
/// quota's ...
const WAITED_SHARE: f64 = 0.1;
/// ... when it waited this many times as long as it ran. A thread held to
/// 1% of a CPU waits about 99 times its run; on a saturated machine other
/// processes make it wait about as long as it runs for each runnable
/// thread per CPU beyond the first (two busy loops a CPU: 1x), so this
/// reads a quota even beside busy loops, which a share of the wall time
/// alone did not.
const WAIT_OVER_RUN: f64 = 20.0;

/// How long each of this process's threads has run and waited for a CPU.
fn thread_times() -> Vec<(u32, Duration, Duration)> {
    let Ok(tasks) = fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| {
            let tid = t.file_name().to_str()?.parse().ok()?;
            let stat = fs::read_to_string(t.path().join("schedstat")).ok()?;
            let mut f = stat.split_whitespace().map(|n| n.parse::<u64>().ok());
            let (run, wait) = (f.next()??, f.next()??);
            Some((tid, Duration::from_nanos(run), Duration::from_nanos(wait)))
        })
        .collect()
}

impl WaitWatch {
    /// The longest any living thread waited since the start (a thread born
    /// since counts from its birth) with what it ran meanwhile, and the
    /// wall time since the start. A thread that has ended is not seen.
    fn longest_wait(&self) -> (Duration, Duration, Duration) {
        let (run, waited) = thread_times()
            .into_iter()
            .map(|(tid, run, wait)| {
                let (run0, wait0) = self
                    .times
                    .iter()
                    .find(|(t, ..)| *t == tid)
                    .map_or((Duration::ZERO, Duration::ZERO), |(_, r, w)| (*r, *w));
                (run.saturating_sub(run0), wait.saturating_sub(wait0))
            })
            .max_by_key(|(_, wait)| *wait)
            .unwrap_or_default();
        (waited, run, self.started.elapsed())
    }
}

impl CpuQuotaWatch {
    /// Start watching; none where there is nothing to watch: this process
    /// is in the root of a mounted cpu hierarchy (which no quota holds), or
    /// in no cpu hierarchy at all (cgroup v1 without the cpu controller).
    /// Where the counters cannot be read the threads' waits are watched
    /// instead, and where those cannot be read either the watch is blind
    /// and says why ([`unchecked`](Self::unchecked)).
    pub fn start() -> Option<CpuQuotaWatch> {
        let Ok(cgroup) = fs::read_to_string("/proc/self/cgroup") else {
            return Some(CpuQuotaWatch(Watching::Blind(
                "/proc/self/cgroup cannot be read (no /proc?)".into(),
            )));
        };
        let views = views();
        let views: Vec<&Path> = views.iter().map(PathBuf::as_path).collect();
        CpuQuotaWatch::start_in(&cgroup, &views, thread_times)
    }

    /// [`start`](Self::start) from `proc_cgroup` (this process's
    /// `/proc/self/cgroup`), with the hierarchies looked for under `views`
    /// and the threads' times read by `times` (empty: schedstat cannot be
    /// read) only where the counters cannot be.
    fn start_in(
        proc_cgroup: &str,
        views: &[&Path],
        times: impl FnOnce() -> Vec<(u32, Duration, Duration)>,
    ) -> Option<CpuQuotaWatch> {
        let mounted = views
            .iter()
            .find_map(|view| own_cpu_cgroup_in(proc_cgroup, view));
        let seen = mounted.is_some();
        if let Some((root, relative)) = mounted {
            let mut levels = Vec::new();
            let mut dir = root.join(relative.trim_start_matches('/'));
            loop {
                if let Some(c) = read_counts(&dir) {
                    levels.push((dir.clone(), c));
                }
                if dir == root || !dir.pop() {
                    break;
                }
            }
            if !levels.is_empty() {
                return Some(CpuQuotaWatch(Watching::Counters(levels)));
            }
            // The hierarchy's root has no throttling counters (cgroup v2's
            // never has) and no quota holds it.
            if relative == "/" {
                return None;
            }
        }
        // Not mounted where this process can look (`ip netns exec`'s
        // fresh /sys, a container), or mounted with the counters out of
        // reach: the cgroup may still hold a quota.
        let path = cpu_cgroup_path(proc_cgroup)?;
        if path == "/" && !seen {
            // `/` with no hierarchy in any view: a host's root (no quota)
            // and a container's root without its cgroup file system (a
            // quota unseen) read the same, and the threads' waits cannot
            // tell a quota from a busy host. Said, not passed (issue 46).
            // Under `ip netns exec` on a host an ancestor's view finds the
            // hierarchy, and its root is not watched (above).
            return Some(CpuQuotaWatch(Watching::Blind(
                "iomark's cgroup reads as / and no cgroup file system is mounted in a view \
                 it can read (its own, its parents', PID 1's), so a container's quota \
                 would be unseen"
                    .into(),
            )));
        }
        let times = times();
        Some(CpuQuotaWatch(if times.is_empty() {
            Watching::Blind(format!(
                "neither the cpu.stat of cgroup {path} nor this process's threads' \
                 schedstat can be read here"
            ))
        } else {
            Watching::Waits(WaitWatch {
                cgroup: path,
                started: std::time::Instant::now(),
                times,
            })
        }))
    }

    /// Why the quota could not be checked, when it could not.
    pub fn unchecked(&self) -> Option<&str> {
        match &self.0 {
            Watching::Blind(why) => Some(why),
            _ => None,
        }
    }

    /// The level throttled longest since the start, when any was. Where
    /// `cpu.stat` cannot be read, a thread that waited for a CPU at least
    /// half the time is reported with no periods (`periods` 0) and the
    /// wait as the throttled time.
    pub fn throttled(&self) -> Option<CpuThrottle> {
        let levels = match &self.0 {
            Watching::Counters(levels) => levels,
            Watching::Blind(_) => return None,
            Watching::Waits(w) => {
                let (waited, ran, wall) = w.longest_wait();
                let quota = waited.as_secs_f64() >= WAITED_SHARE * wall.as_secs_f64()
                    && waited.as_secs_f64() >= WAIT_OVER_RUN * ran.as_secs_f64()
                    && !wall.is_zero();
                return quota.then(|| CpuThrottle {
                    cgroup: w.cgroup.clone(),
                    periods: 0,
                    throttled: 0,
                    throttled_time: Nanos::from_duration(waited),
                });
            }
        };
        let mut worst: Option<CpuThrottle> = None;
        for (dir, then) in levels {
            let Some(now) = read_counts(dir) else {
                continue;
            };
            let t = CpuThrottle {
                cgroup: cgroup_name(dir),
                periods: now.periods.saturating_sub(then.periods),
                throttled: now.throttled.saturating_sub(then.throttled),
                throttled_time: Nanos::from_duration(now.time.saturating_sub(then.time)),
            };
            if t.throttled > 0
                && worst
                    .as_ref()
                    .is_none_or(|w| t.throttled_time > w.throttled_time)
            {
                worst = Some(t);
            }
        }
        worst
    }
}

/// Where the cgroup hierarchies are looked for: as this process sees the
/// file system, then as each of its ancestors sees it, then as PID 1 does.
/// `ip netns exec` runs its command in a mount namespace of its own with a
/// fresh /sys, in which no cgroup file system is mounted: the quota still
/// holds the process, and a client starved to 0.32x of its rate there was
/// not named (issue 46). `/proc/PID/root` is that process's root in its
/// own mount namespace; the one who ran `ip netns exec` is in the host's,
/// where the hierarchies are mounted. PID 1's is not always open to root
/// (a VM's init that is not dumpable refuses it), an ancestor's is. Only
/// processes in this process's cgroup namespace are looked through: a
/// path in /proc/self/cgroup names the same group there.
fn views() -> Vec<PathBuf> {
    let mut views = vec![PathBuf::from("/")];
    let own_ns = fs::read_link("/proc/self/ns/cgroup").ok();
    let mut pid = std::process::id();
    for _ in 0..64 {
        let Some(parent) = parent_of(pid).filter(|p| *p > 0) else {
            break;
        };
        let ns = fs::read_link(format!("/proc/{parent}/ns/cgroup")).ok();
        if ns.is_some() && ns == own_ns {
            views.push(PathBuf::from(format!("/proc/{parent}/root")));
        }
        if parent == 1 {
            break;
        }
        pid = parent;
    }
    views
}

/// A process's parent, from `/proc/PID/stat` (the field after the
/// parenthesised name, which may itself hold spaces and parentheses).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// `dir` with a `/proc/PID/root` view taken off: as the host names it.
fn outside_view(dir: &Path) -> PathBuf {
    let mut parts = dir.components();
    let (Some(root), Some(proc), Some(pid), Some(r)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return dir.to_path_buf();
    };
    let is_view = root == std::path::Component::RootDir
        && proc.as_os_str() == "proc"
        && pid
            .as_os_str()
            .to_str()
            .is_some_and(|p| p.parse::<u32>().is_ok())
        && r.as_os_str() == "root";
    if is_view {
        Path::new("/").join(parts.as_path())
    } else {
        dir.to_path_buf()
    }
}

/// This process's line for the cpu controller in `/proc/self/cgroup`:
/// cgroup v1's `cpu` hierarchy when it has one (`4:cpu,cpuacct:/a`), else
/// v2's one line (`0::/a`); whether it is v1's, and the path in it.
fn cpu_line(proc_cgroup: &str) -> Option<(bool, &str)> {
    let lines = proc_cgroup.lines().filter_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        Some((controllers, path))
    });
    let mut v2 = None;
    for (controllers, path) in lines {
        if controllers.split(',').any(|c| c == "cpu") {
            return Some((true, path));
        }
        if controllers.is_empty() {
            v2.get_or_insert(path);
        }
    }
    v2.map(|path| (false, path))
}

/// This process's cgroup in the cpu hierarchy, whether or not the
/// hierarchy is mounted here.
fn cpu_cgroup_path(proc_cgroup: &str) -> Option<String> {
    cpu_line(proc_cgroup).map(|(_, path)| path.to_string())
}

/// The cpu hierarchy's root under `view` and this process's path in it,
/// when the hierarchy is mounted there.
fn own_cpu_cgroup_in(proc_cgroup: &str, view: &Path) -> Option<(PathBuf, String)> {
    let under = |root: &str| view.join(root.trim_start_matches('/'));
    let (v1, path) = cpu_line(proc_cgroup)?;
    let root = if v1 {
        V1_ROOTS.iter().map(|r| under(r)).find(|r| r.is_dir())?
    } else {
        Some(under(V2_ROOT)).filter(|r| r.join("cgroup.controllers").exists())?
    };
    Some((root, path.to_string()))
}

fn read_counts(dir: &Path) -> Option<Counts> {
    Counts::parse(&fs::read_to_string(dir.join("cpu.stat")).ok()?)
}

/// A cgroup directory as the hierarchy names it: `/` for the root.
fn cgroup_name(dir: &Path) -> String {
    let dir = outside_view(dir);
    let roots = V1_ROOTS.iter().chain(std::iter::once(&V2_ROOT));
    for root in roots {
        if let Ok(rel) = dir.strip_prefix(root) {
            return format!("/{}", rel.display());
        }
    }
    dir.display().to_string()
}

/// What held `what` back over `wall` (`""` when the warning is kept with
/// the job it is about, whose name is shown with it), each a warning with
/// its evidence: a CPU quota that throttled iomark's cgroup (or why that
/// could not be checked, `unchecked`), and other processes keeping every
/// CPU busy (iomark's own use, `process`, is taken out: a page-cache
/// run that fills the machine itself is not flagged). The cgroup's name is
/// escaped: a peer's may come over the network.
pub fn machine_warnings(
    what: &str,
    wall: Duration,
    process: CpuUsage,
    host: Option<&HostCpu>,
    throttled: Option<&CpuThrottle>,
    unchecked: Option<&str>,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let what = if what.is_empty() {
        String::new()
    } else {
        format!("{what}: ")
    };
    // A check that cannot look says so: its silence would read as no
    // quota (issue 46).
    if let Some(why) = unchecked {
        out.push(Warning::new(
            WarningKind::Unchecked,
            format!(
                "{what}could not check CPU throttling: {}; a CPU quota on iomark's cgroup would \
                 go unnamed (run where /proc and the cgroup file system can be read, e.g. \
                 outside the container or with nsenter --net= instead of ip netns exec)",
                iomark_model::escape::escape_controls(why)
            ),
        ));
    }
    // Seen in a thread's wait: cpu.stat was out of reach (the watch
    // decided, from the wait against the thread's own run).
    if let Some(t) = throttled.filter(|t| t.periods == 0) {
        out.push(Warning::new(
            WarningKind::CpuThrottled,
            format!(
                "{what}the CPU quota of cgroup {} throttled iomark: a thread of it waited for a \
                 CPU {:.2} s of {:.2} s, far longer than it ran (the cgroup's \
                 cpu.stat cannot be read in this mount namespace, as under ip netns exec; the \
                 wait is the kernel's schedstat): the figures are the quota's, not the \
                 hardware's; raise cpu.cfs_quota_us / cpu.max or run outside that cgroup",
                iomark_model::escape::escape_controls(&t.cgroup),
                t.throttled_time.as_secs_f64(),
                wall.as_secs_f64()
            ),
        ));
    }
    if let Some(t) = throttled.filter(|t| t.periods > 0) {
        let time = t.throttled_time.as_secs_f64();
        let by_periods = t.periods > 0 && t.throttled as f64 >= THROTTLED_SHARE * t.periods as f64;
        let by_time = time >= THROTTLED_SHARE * wall.as_secs_f64();
        if by_periods || by_time {
            out.push(Warning::new(
                WarningKind::CpuThrottled,
                format!(
                    "{what}the CPU quota of cgroup {} throttled iomark in {} of {} periods \
                     ({:.2} s throttled, summed over CPUs, in {:.2} s): the figures are the quota's, not the hardware's; \
                     raise cpu.cfs_quota_us / cpu.max or run outside that cgroup",
                    iomark_model::escape::escape_controls(&t.cgroup),
                    t.throttled,
                    t.periods,
                    time,
                    wall.as_secs_f64()
                ),
            ));
        }
    }
    if let Some(h) = host {
        let busy = 100.0 - h.idle_pct - h.iowait_pct;
        let own = process.total_pct() / f64::from(h.cpus.max(1));
        let others = (busy - own).max(0.0);
        if busy >= SATURATED_PCT && others >= OTHERS_PCT {
            out.push(Warning::new(
                WarningKind::HostBusy,
                format!(
                    "{what}the machine's {} CPU{} were {busy:.0}% busy, {others:.0}% of it \
                     other processes' (iomark used {own:.0}%): figures that need a CPU may be \
                     low; run again on a quiet machine",
                    h.cpus,
                    if h.cpus == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_stat_of_both_versions() {
        let v1 = "nr_periods 120\nnr_throttled 97\nthrottled_time 1845000000\n";
        assert_eq!(
            Counts::parse(v1),
            Some(Counts {
                periods: 120,
                throttled: 97,
                time: Duration::from_millis(1845)
            })
        );
        let v2 = "usage_usec 5\nuser_usec 3\nsystem_usec 2\nnr_periods 10\nnr_throttled 4\n\
                  throttled_usec 250000\nnr_bursts 0\nburst_usec 0\n";
        assert_eq!(
            Counts::parse(v2),
            Some(Counts {
                periods: 10,
                throttled: 4,
                time: Duration::from_millis(250)
            })
        );
        // A cpuacct-only stat has no throttling.
        assert_eq!(Counts::parse("usage 5\n"), None);
    }

    #[test]
    fn the_cpu_line_of_proc_self_cgroup() {
        let v1 = "12:pids:/x\n4:cpu,cpuacct:/iomark/client\n1:name=systemd:/\n";
        if let Some((root, path)) = own_cpu_cgroup_in(v1, Path::new("/")) {
            assert!(V1_ROOTS.iter().any(|r| Path::new(r) == root));
            assert_eq!(path, "/iomark/client");
        }
    }

    #[test]
    fn the_hierarchy_is_found_in_another_view_and_named_as_there() {
        // A view with cgroup v1's cpu hierarchy mounted, as /proc/1/root
        // shows it from inside `ip netns exec`.
        let view = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(view.path().join("sys/fs/cgroup/cpu/iomark/client")).unwrap();
        let v1 = "4:cpu,cpuacct:/iomark/client\n";
        let (root, path) = own_cpu_cgroup_in(v1, view.path()).unwrap();
        assert_eq!(root, view.path().join("sys/fs/cgroup/cpu"));
        assert_eq!(path, "/iomark/client");
        // This process's own view finds the hierarchy at its absolute
        // path, not relative to the working directory.
        if let Some((root, _)) = own_cpu_cgroup_in(v1, Path::new("/")) {
            assert!(root.is_absolute(), "{}", root.display());
        }
        // An empty view (a fresh sysfs) has none.
        let bare = tempfile::tempdir().unwrap();
        assert_eq!(own_cpu_cgroup_in(v1, bare.path()), None);
        // Named by the hierarchy, not by the view it was read through.
        assert_eq!(
            cgroup_name(Path::new("/proc/1/root/sys/fs/cgroup/cpu/iomark/client")),
            "/iomark/client"
        );
        assert_eq!(
            cgroup_name(Path::new("/proc/4242/root/sys/fs/cgroup/cpu/iomark/client")),
            "/iomark/client"
        );
        assert_eq!(cgroup_name(Path::new("/sys/fs/cgroup/cpu,cpuacct/a")), "/a");
        assert_eq!(
            outside_view(Path::new("/proc/self/root/x")),
            Path::new("/proc/self/root/x")
        );
    }

    #[test]
    fn the_views_are_this_process_then_its_ancestors() {
        // The test harness has a parent (cargo, a shell), in the same
        // cgroup namespace: its root is looked through second.
        let v = views();
        assert_eq!(v[0], Path::new("/"));
        let parent = parent_of(std::process::id()).unwrap();
        assert!(parent > 0);
        assert_eq!(v[1], Path::new(&format!("/proc/{parent}/root")), "{v:?}");
        assert_eq!(parent_of(1), Some(0));
    }

    #[test]
    fn a_quota_seen_only_in_the_threads_wait_is_named_unless_the_machine_was_busy() {
        assert_eq!(
            cpu_cgroup_path("4:cpu,cpuacct:/iomark/client\n").as_deref(),
            Some("/iomark/client")
        );
        assert_eq!(
            cpu_cgroup_path("0::/user.slice\n").as_deref(),
            Some("/user.slice")
        );
        let waited = CpuThrottle {
            cgroup: "/client".into(),
            periods: 0,
            throttled: 0,
            throttled_time: Nanos(980_000_000),
        };
        let wall = Duration::from_secs(1);
        let w = machine_warnings(
            "",
            wall,
            CpuUsage::default(),
            Some(&host(10.0, 2)),
            Some(&waited),
            None,
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind, WarningKind::CpuThrottled);
        assert!(
            w[0].message.contains(
                "cgroup /client throttled iomark: a thread of it waited for a CPU 0.98 s of 1.00 s"
            ),
            "{}",
            w[0]
        );
        assert!(w[0].message.contains("cannot be read"), "{}", w[0]);
        // The watch decides; a wait-based throttle is named on a busy
        // machine too, beside the busy-machine warning.
        let busy = host(99.0, 2);
        let w = machine_warnings(
            "",
            wall,
            CpuUsage::default(),
            Some(&busy),
            Some(&waited),
            None,
        );
        assert!(
            w.iter().any(|w| w.kind == WarningKind::CpuThrottled),
            "{w:?}"
        );
        assert!(w.iter().any(|w| w.kind == WarningKind::HostBusy), "{w:?}");
    }

    fn host(busy_user: f64, cpus: u32) -> HostCpu {
        HostCpu {
            cpus,
            user_pct: busy_user,
            idle_pct: 100.0 - busy_user,
            ..HostCpu::default()
        }
    }

    #[test]
    fn a_throttled_quota_and_a_busy_machine_are_named_and_iomarks_own_load_is_not() {
        let wall = Duration::from_secs(2);
        let t = CpuThrottle {
            cgroup: "/client".into(),
            periods: 20,
            throttled: 19,
            throttled_time: Nanos(1_900_000_000),
        };
        let w = machine_warnings(
            "tcp client",
            wall,
            CpuUsage::default(),
            None,
            Some(&t),
            None,
        );
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].kind, WarningKind::CpuThrottled);
        assert!(w[0]
            .message
            .contains("cgroup /client throttled iomark in 19 of 20 periods"));
        // One throttled period of a hundred is not the quota's doing.
        let light = CpuThrottle {
            throttled: 1,
            periods: 100,
            throttled_time: Nanos(2_000_000),
            ..t
        };
        assert!(
            machine_warnings("x", wall, CpuUsage::default(), None, Some(&light), None).is_empty()
        );
        // Two CPUs at 100%, iomark using one of them: others used 50%.
        let iomark_one_cpu = CpuUsage {
            user_pct: 100.0,
            system_pct: 0.0,
        };
        let w = machine_warnings(
            "job",
            wall,
            iomark_one_cpu,
            Some(&host(100.0, 2)),
            None,
            None,
        );
        assert_eq!(w[0].kind, WarningKind::HostBusy);
        assert!(
            w[0].message
                .contains("100% busy, 50% of it other processes'"),
            "{}",
            w[0]
        );
        // iomark filling both CPUs itself: no warning.
        let iomark_two = CpuUsage {
            user_pct: 120.0,
            system_pct: 80.0,
        };
        assert!(
            machine_warnings("job", wall, iomark_two, Some(&host(100.0, 2)), None, None).is_empty()
        );
        // A machine with room: none.
        assert!(machine_warnings(
            "job",
            wall,
            iomark_one_cpu,
            Some(&host(60.0, 2)),
            None,
            None
        )
        .is_empty());
    }

    #[test]
    fn a_quota_that_cannot_be_read_is_watched_another_way_or_said_to_be_unchecked() {
        let v1 = "4:cpu,cpuacct:/iomark/client\n";
        let times = vec![(1, Duration::from_millis(5), Duration::ZERO)];
        // Mounted, with the counters out of reach (no cpu.stat at any
        // level): the threads' waits are watched instead.
        let view = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(view.path().join("sys/fs/cgroup/cpu/iomark/client")).unwrap();
        let w = CpuQuotaWatch::start_in(v1, &[view.path()], || times.clone()).unwrap();
        assert!(matches!(w.0, Watching::Waits(_)), "{w:?}");
        // Readable counters are read.
        std::fs::write(
            view.path().join("sys/fs/cgroup/cpu/iomark/client/cpu.stat"),
            "nr_periods 3\nnr_throttled 0\nthrottled_time 0\n",
        )
        .unwrap();
        let w = CpuQuotaWatch::start_in(v1, &[view.path()], || times.clone()).unwrap();
        assert!(
            matches!(&w.0, Watching::Counters(l) if l.len() == 1),
            "{w:?}"
        );
        // Not mounted, no schedstat: blind, and saying which cgroup.
        let bare = tempfile::tempdir().unwrap();
        let w = CpuQuotaWatch::start_in(v1, &[bare.path()], Vec::new).unwrap();
        assert!(w.throttled().is_none());
        let why = w.unchecked().unwrap();
        assert!(why.contains("cgroup /iomark/client"), "{why}");
        // `/` with no hierarchy in any view: a host's root and a
        // container's without its cgroup file system read the same, so it
        // is said to be unchecked rather than passed.
        let root = CpuQuotaWatch::start_in("0::/\n", &[bare.path()], || times.clone()).unwrap();
        assert!(
            root.unchecked()
                .unwrap()
                .contains("no cgroup file system is mounted"),
            "{root:?}"
        );
        // The root of a mounted v2 hierarchy has no counters and no quota:
        // nothing to watch. Nor in v1 without the cpu controller.
        let v2_root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(v2_root.path().join("sys/fs/cgroup")).unwrap();
        std::fs::write(
            v2_root.path().join("sys/fs/cgroup/cgroup.controllers"),
            "cpu io",
        )
        .unwrap();
        assert!(CpuQuotaWatch::start_in("0::/\n", &[v2_root.path()], || times.clone()).is_none());
        assert!(CpuQuotaWatch::start_in("3:pids:/x\n", &[bare.path()], || times).is_none());
        // The warning names the reason and the remedy.
        let w = machine_warnings(
            "tcp client",
            Duration::from_secs(1),
            CpuUsage::default(),
            None,
            None,
            Some(why),
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind, WarningKind::Unchecked);
        assert!(
            w[0].message
                .starts_with("tcp client: could not check CPU throttling: neither the cpu.stat"),
            "{}",
            w[0]
        );
    }
}
