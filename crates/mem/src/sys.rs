//! Memory facts of the machine: the last-level cache (sysfs), total memory
//! and the swap in use (`/proc/meminfo`, `/proc/swaps`).

use std::fs;
use std::path::Path;

use iomark_model::mem::{MemHost, SwapInfo};
use iomark_model::units::Bytes;

/// The machine's memory facts now.
pub fn host() -> MemHost {
    let info = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
    MemHost {
        llc: last_level_cache(Path::new("/sys/devices/system/cpu/cpu0/cache")),
        mem_total: meminfo_field(&info, "MemTotal").unwrap_or_default(),
        swap: swap_info(&info, &swaps),
    }
}

/// Bytes of memory the kernel thinks it could hand out now (`MemAvailable`).
pub use iomark_host::mem_available;

/// The largest (highest-level) data or unified cache listed under `dir`.
fn last_level_cache(dir: &Path) -> Option<Bytes> {
    let mut best: Option<(u32, Bytes)> = None;
    for entry in fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        let read = |f: &str| fs::read_to_string(p.join(f)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        let Ok(level) = level.trim().parse::<u32>() else {
            continue;
        };
        let Some(size) = parse_cache_size(size.trim()) else {
            continue;
        };
        let higher = match best {
            None => true,
            Some((l, _)) => level > l,
        };
        if higher {
            best = Some((level, size));
        }
    }
    best.map(|(_, s)| s)
}

/// sysfs writes cache sizes as `36608K` (1024-based).
fn parse_cache_size(s: &str) -> Option<Bytes> {
    let (num, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1u64 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| Bytes(n * mult))
}

/// A `/proc/meminfo` field (written in kB, meaning KiB).
fn meminfo_field(info: &str, name: &str) -> Option<Bytes> {
    info.lines().find_map(|l| {
        let rest = l.strip_prefix(name)?.strip_prefix(':')?;
        let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(Bytes(kib * 1024))
    })
}

fn swap_info(meminfo: &str, swaps: &str) -> SwapInfo {
    let total = meminfo_field(meminfo, "SwapTotal").unwrap_or_default();
    let free = meminfo_field(meminfo, "SwapFree").unwrap_or_default();
    let devices = swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    SwapInfo {
        total,
        used: Bytes(total.get().saturating_sub(free.get())),
        devices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_is_read_from_meminfo_and_swaps() {
        let info = "MemTotal:       24000000 kB\nSwapTotal:       2097148 kB\nSwapFree:        2097000 kB\n";
        let swaps = "Filename\tType\tSize\tUsed\tPriority\n/dev/zram0  partition 2097148 148 100\n";
        let s = swap_info(info, swaps);
        assert_eq!(s.total, Bytes(2097148 * 1024));
        assert_eq!(s.used, Bytes(148 * 1024));
        assert_eq!(s.devices, vec!["/dev/zram0".to_string()]);
        let none = swap_info("SwapTotal: 0 kB\nSwapFree: 0 kB\n", "Filename\tType\n");
        assert!(none.devices.is_empty());
        assert_eq!(none.total, Bytes(0));
    }

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("36608K"), Some(Bytes(36608 * 1024)));
        assert_eq!(parse_cache_size("2M"), Some(Bytes(2 << 20)));
        assert_eq!(parse_cache_size("x"), None);
    }
}
