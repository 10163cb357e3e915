//! `iomark info` as text: the machine, then the chain from the path to its
//! file system, devices, links and ceilings, one indented block per layer.

use std::fmt::Write as _;

use iomark_model::device::{
    BlockLayer, DeviceReport, Hop, HostInfo, LinkCeiling, PcieLink, TargetKind, UsbLink,
};
use iomark_model::disk::EngineKind;
use iomark_model::net::{mbit_label, NicChain};

const W: usize = 13;

/// One labelled line. Every value is one line, and much of it comes from
/// outside (a path, a mount point, a device's serial, a loop device's file
/// name): its control characters, newlines included, are shown escaped.
fn line(out: &mut String, indent: usize, label: &str, value: &str) {
    let pad = " ".repeat(indent * 2);
    let w = W.saturating_sub(indent * 2).max(label.chars().count() + 1);
    let value = iomark_model::escape::escape_controls(value);
    let _ = writeln!(out, "{pad}{label:<w$}{value}");
}

/// The machine, and the file system, devices, links and ceilings behind a
/// path, as `iomark info` prints them, fitted to `width` columns (a long
/// value wraps under itself).
pub fn device_info(host: &HostInfo, r: &DeviceReport, width: usize) -> String {
    crate::fit_fields(&device_info_lines(host, r), width)
}

fn device_info_lines(host: &HostInfo, r: &DeviceReport) -> String {
    let mut out = String::new();
    host_lines(&mut out, host);
    let kind = match r.target {
        TargetKind::File => "file",
        TargetKind::Directory => "directory",
        TargetKind::BlockDevice => "block device",
        _ => "special file",
    };
    line(&mut out, 0, "path", &format!("{} ({kind})", r.path));
    if let Some(fs) = &r.filesystem {
        line(
            &mut out,
            0,
            "file system",
            &format!(
                "{} from {}, mounted at {}",
                fs.fs_type, fs.source, fs.mount_point
            ),
        );
        line(
            &mut out,
            1,
            "options",
            &format!("{} · {}", fs.mount_options, fs.super_options),
        );
    }
    if r.target == TargetKind::BlockDevice {
        let m = if r.mounted_at.is_empty() {
            "not mounted, no active swap".to_string()
        } else {
            r.mounted_at.join(", ")
        };
        line(&mut out, 0, "mounted at", &m);
    }
    match &r.device {
        Some(d) => layer(&mut out, d, 0, "device"),
        None => line(&mut out, 0, "device", "none"),
    }
    for n in &r.notes {
        line(&mut out, 0, "note", n);
    }
    match &r.slowest {
        Some(c) => line(
            &mut out,
            0,
            "ceiling",
            &format!("{} (slowest link)", ceiling(c)),
        ),
        None => line(
            &mut out,
            0,
            "ceiling",
            "unknown: nothing on this path is flagged",
        ),
    }
    out
}

fn host_lines(out: &mut String, host: &HostInfo) {
    let os = host.os.as_deref().unwrap_or("Linux");
    line(
        out,
        0,
        "host",
        &format!(
            "{} · {os} · kernel {} {}",
            host.hostname, host.kernel_release, host.arch
        ),
    );
    line(
        out,
        0,
        "cpu",
        &format!(
            "{} × {} · memory {} · swap {}",
            host.cpu_count, host.cpu_model, host.memory_total, host.swap_total
        ),
    );
}

fn mbs(v: f64) -> String {
    format!("{:.0} MB/s", v / 1e6)
}

fn ceiling(c: &LinkCeiling) -> String {
    match c.typical {
        Some(t) => format!(
            "{}: at most {}, about {} in practice",
            c.name,
            mbs(c.hard.0),
            mbs(t.0)
        ),
        None => format!("{}: at most {}", c.name, mbs(c.hard.0)),
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|x| x.to_string())
        .unwrap_or_else(|| "-".into())
}

fn layer(out: &mut String, d: &BlockLayer, indent: usize, title: &str) {
    let mut head = format!("{}  {}  {}  {}", d.name, d.devno, d.size, d.transport);
    if let Some(p) = &d.partition_of {
        let _ = write!(head, "  (partition {} of {p})", opt(&d.partition));
    }
    if let Some(n) = &d.dm_name {
        let _ = write!(head, "  ({n})");
    }
    if d.read_only {
        head.push_str("  read-only");
    }
    if d.removable {
        head.push_str("  removable");
    }
    line(out, indent, title, &head);
    let i = indent + 1;

    let id = &d.identity;
    let parts: Vec<String> = [
        ("vendor", &id.vendor),
        ("model", &id.model),
        ("serial", &id.serial),
        ("firmware", &id.firmware),
        ("wwn", &id.wwn),
    ]
    .iter()
    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
    .collect();
    if !parts.is_empty() {
        line(out, i, "identity", &parts.join(" · "));
    }

    let q = &d.queue;
    let rot = match q.rotational {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    line(
        out,
        i,
        "queue",
        &format!(
            "rotational {rot} · logical {} B · physical {} B · scheduler {} · nr_requests {} · max_sectors_kb {}{}",
            opt(&q.logical_block_size),
            opt(&q.physical_block_size),
            q.scheduler.as_deref().unwrap_or("none (bio-based)"),
            opt(&q.nr_requests),
            opt(&q.max_sectors_kb),
            q.write_cache.as_ref().map(|w| format!(" · {w}")).unwrap_or_default(),
        ),
    );
    if let Some(lb) = &d.loop_backing {
        line(
            out,
            i,
            "backing file",
            &format!(
                "{} (offset {}, size limit {}, direct I/O {})",
                lb.backing_file,
                lb.offset.get(),
                lb.size_limit.get(),
                if lb.direct_io { "on" } else { "off" }
            ),
        );
    }
    if let Some(c) = &d.cache {
        let state = if c.in_use() { "in use" } else { "not in use" };
        line(
            out,
            i,
            "cache",
            &format!("{}, {state}: {}", c.kind, c.evidence),
        );
    }
    links(out, i, &d.hops, d.usb.as_ref(), &[], &[]);
    if let Some(s) = &d.sata {
        let speed = s
            .speed_gbps
            .map(|g| format!("{g:.1} Gb/s"))
            .unwrap_or_else(|| "speed unknown".into());
        line(out, i, "sata", &format!("{} at {speed}", s.port));
    }
    links(out, i, &[], None, &d.pcie, &d.ceilings);
    if !d.holders.is_empty() {
        line(out, i, "holders", &d.holders.join(", "));
    }
    if let Some(n) = &d.note {
        line(out, i, "note", n);
    }
    for l in &d.lower {
        layer(out, l, i, "on");
    }
}

/// The sysfs chain, the USB link, the PCIe links and their ceilings, as a
/// disk's and a network adapter's blocks both show them.
fn links(
    out: &mut String,
    i: usize,
    hops: &[Hop],
    usb: Option<&UsbLink>,
    pcie: &[PcieLink],
    ceilings: &[LinkCeiling],
) {
    if !hops.is_empty() {
        let chain: Vec<String> = hops
            .iter()
            .map(|h| {
                let tags: Vec<&str> = [h.subsystem.as_deref(), h.driver.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect();
                if tags.is_empty() {
                    h.name.clone()
                } else {
                    format!("{} ({})", h.name, tags.join(", "))
                }
            })
            .collect();
        line(out, i, "chain", &chain.join(" → "));
    }
    if let Some(u) = usb {
        let mut s = match u.speed_mbps {
            Some(v) => format!("{v} Mb/s"),
            None => "speed unknown".into(),
        };
        if let Some(v) = &u.version {
            let _ = write!(s, " · device claims USB {v}");
        }
        if let Some(l) = u.lanes.filter(|&l| l > 1) {
            let _ = write!(s, " · {l} lanes");
        }
        if let Some(drv) = &u.driver {
            let _ = write!(s, " · {drv}");
            if let Some(p) = u.protocol() {
                let _ = write!(s, " ({p})");
            }
        }
        let name: Vec<&str> = [u.manufacturer.as_deref(), u.product.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        if !name.is_empty() {
            let _ = write!(s, " · {}", name.join(" "));
        }
        if let Some(id) = &u.id {
            let _ = write!(s, " [{id}]");
        }
        line(out, i, "usb", &format!("{} {s}", u.device));
    }
    for p in pcie {
        let max = match (p.max_speed_gts, p.max_width) {
            (Some(s), Some(w)) => format!(" (max {s:.1} GT/s x{w})"),
            _ => String::new(),
        };
        line(
            out,
            i,
            "pcie",
            &format!(
                "{} ({}) {:.1} GT/s x{}{max}",
                p.address,
                p.driver.as_deref().unwrap_or("no driver"),
                p.speed_gts,
                p.width
            ),
        );
    }
    for c in ceilings {
        line(out, i, "link", &ceiling(c));
    }
}

/// The machine and one network interface with the links under it, as
/// `iomark info IFACE` prints them.
pub fn nic_info(host: &HostInfo, n: &NicChain, width: usize) -> String {
    crate::fit_fields(&nic_info_lines(host, n), width)
}

fn nic_info_lines(host: &HostInfo, n: &NicChain) -> String {
    let mut out = String::new();
    host_lines(&mut out, host);
    let mut head = n.name.clone();
    if let Some(k) = &n.virtual_kind {
        let _ = write!(head, "  virtual ({k}): no adapter, no link under it");
    }
    line(&mut out, 0, "interface", &head);
    let driver = [
        n.driver.clone(),
        n.driver_version.as_ref().map(|v| format!("version {v}")),
        n.firmware_version.as_ref().map(|v| format!("firmware {v}")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>();
    if !driver.is_empty() {
        line(&mut out, 1, "driver", &driver.join(" · "));
    }
    let speed = match n.speed_mbit {
        Some(m) => mbit_label(m),
        None => "not reported".into(),
    };
    let mut link = format!("{speed} · duplex {}", opt(&n.duplex));
    if let Some(o) = &n.operstate {
        let _ = write!(link, " · {o}");
    }
    if n.virtual_kind.is_some() && n.speed_mbit.is_some() {
        link.push_str(" (a number the driver reports, not a ceiling)");
    }
    line(&mut out, 1, "link", &link);
    links(
        &mut out,
        1,
        &n.hops,
        n.usb.as_ref(),
        &n.pcie,
        &n.bus_ceilings,
    );
    match n.slowest() {
        Some(c) => line(
            &mut out,
            0,
            "ceiling",
            &format!("{} (slowest link)", ceiling(&c)),
        ),
        None if n.virtual_kind.is_some() => line(
            &mut out,
            0,
            "ceiling",
            "none: a virtual link carries what the CPUs and memory can",
        ),
        None => line(
            &mut out,
            0,
            "ceiling",
            "unknown: the link speed is not reported",
        ),
    }
    out
}

/// `iomark engines`: one line per engine, its name, what it does and, when
/// it cannot run here, why.
pub fn engine_list(engines: &[(EngineKind, Result<(), String>)]) -> String {
    let mut out = String::new();
    for (e, available) in engines {
        let note = match available {
            Err(why) => format!(" [{why}]"),
            Ok(()) => String::new(),
        };
        let _ = writeln!(out, "{:<11} {}{note}", e.as_str(), e.description());
    }
    out
}
