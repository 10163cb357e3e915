//! Facts about the machine: kernel, CPU, memory.

use iomark_model::device::HostInfo;
use iomark_model::Bytes;

/// Collects [`HostInfo`] from `uname`, `/proc/cpuinfo`, `/proc/meminfo` and
/// `/etc/os-release` (`use iomark_host::HostInfoExt; HostInfo::collect()`).
pub trait HostInfoExt {
    /// The running machine's facts; fields that cannot be read stay empty
    /// or zero rather than failing the run.
    fn collect() -> HostInfo;
}

impl HostInfoExt for HostInfo {
    fn collect() -> HostInfo {
        let u = rustix::system::uname();
        let s = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
        let (cpu_model, listed) = parse_cpuinfo(&cpuinfo);
        let cpu_count = if listed > 0 {
            listed
        } else {
            std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(0)
        };
        HostInfo {
            hostname: s(u.nodename()),
            kernel_release: s(u.release()),
            os: parse_os_release(&os_release),
            arch: s(u.machine()),
            cpu_model,
            cpu_count,
            memory_total: meminfo_field(&meminfo, "MemTotal").unwrap_or_default(),
            swap_total: meminfo_field(&meminfo, "SwapTotal").unwrap_or_default(),
        }
    }
}

/// The model name and the number of processors listed.
fn parse_cpuinfo(text: &str) -> (String, u32) {
    let mut model = None;
    let mut count = 0;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if k == "processor" {
            count += 1;
        }
        // x86 says `model name`; some ARM kernels only `Hardware` or `cpu model`.
        if model.is_none() && matches!(k, "model name" | "cpu model" | "Hardware" | "cpu") {
            model = Some(v.to_string());
        }
    }
    (model.unwrap_or_default(), count)
}

/// A `kB` line of `/proc/meminfo`, in bytes.
fn meminfo_field(text: &str, key: &str) -> Option<Bytes> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        let kb: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(Bytes(kb * 1024))
    })
}

fn parse_os_release(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v = l.strip_prefix("PRETTY_NAME=")?;
        Some(v.trim_matches('"').to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_model_and_count() {
        let t = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(parse_cpuinfo(t), ("AMD EPYC 7B13".to_string(), 2));
    }

    #[test]
    fn meminfo_is_in_kib() {
        let t = "MemTotal:       24684096 kB\nSwapTotal:             0 kB\n";
        assert_eq!(meminfo_field(t, "MemTotal"), Some(Bytes(24684096 * 1024)));
        assert_eq!(meminfo_field(t, "SwapTotal"), Some(Bytes(0)));
        assert_eq!(meminfo_field(t, "Nope"), None);
    }

    #[test]
    fn collect_matches_this_machine() {
        let h = HostInfo::collect();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        assert_eq!(Some(h.memory_total), meminfo_field(&meminfo, "MemTotal"));
        assert!(h.memory_total.get() > 0);
        let online = std::fs::read_to_string("/proc/cpuinfo")
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count() as u32;
        assert_eq!(h.cpu_count, online);
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        assert_eq!(h.kernel_release, release.trim());
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(h.hostname, hostname.trim());
    }
}
