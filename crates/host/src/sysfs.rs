//! The sysfs walk: from a device number to the disk, its stack and its links.

use std::path::{Path, PathBuf};

use iomark_model::device::{
    BlockLayer, DevNo, Hop, LinkCeiling, PcieLink, SataLink, Transport, UsbLink,
};
use iomark_model::Bytes;

use crate::ceiling::{pcie_ceiling, sata_ceiling, usb_ceiling};
use crate::read::{base, entries, flag, link_name, num, text};

mod disk_attrs;
use disk_attrs::{backing_devno, block_cache, identity, in_memory, loop_backing, queue};
pub(crate) use disk_attrs::{devno_of, selected_choice};

/// Deeper stacks than this are taken as a loop in the data (a loop device
/// whose backing file lives on itself cannot exist, but sysfs is not trusted).
const MAX_DEPTH: usize = 8;

/// Where sysfs is mounted. `/sys` on a real system; tests point it at a
/// directory tree that mimics one.
#[derive(Debug, Clone)]
pub struct Sysfs {
    root: PathBuf,
}

impl Default for Sysfs {
    fn default() -> Self {
        Sysfs::system()
    }
}

impl Sysfs {
    /// The running system's `/sys`.
    pub fn system() -> Self {
        Sysfs::at("/sys")
    }

    /// A sysfs tree rooted elsewhere (a fake one in tests).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Sysfs { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The canonical sysfs directory of a block device, if the kernel has
    /// one (anonymous devices such as tmpfs's `0:N` have none).
    pub fn block_dir(&self, devno: DevNo) -> Option<PathBuf> {
        self.root
            .join("dev/block")
            .join(devno.to_string())
            .canonicalize()
            .ok()
    }

    /// The whole-disk directory for a block directory: its parent when it is
    /// a partition (a partition directory has a `partition` file and sits
    /// inside its disk's directory).
    pub fn whole_disk_dir(&self, dir: &Path) -> PathBuf {
        if dir.join("partition").exists() {
            if let Some(parent) = dir.parent() {
                return parent.to_path_buf();
            }
        }
        dir.to_path_buf()
    }

    /// The device numbers of a block device and of every partition on it.
    pub fn with_partitions(&self, devno: DevNo) -> Vec<DevNo> {
        let mut out = vec![devno];
        if let Some(dir) = self.block_dir(devno) {
            for name in entries(&dir) {
                let child = dir.join(&name);
                if child.join("partition").exists() {
                    if let Some(d) = text(&child.join("dev")).and_then(|s| parse_devno(&s)) {
                        out.push(d);
                    }
                }
            }
        }
        out
    }

    /// The backing file of a loop device at or under the block device
    /// `devno` (through partitions, stacked devices and loop devices over
    /// files on other loop devices) whose file is in memory: on tmpfs or
    /// ramfs. A swap area there can deadlock the kernel: the loop device's
    /// own pages can be swapped out into it, and swapping them back in
    /// then waits on the loop device that waits for them (seen on this
    /// project's VM, a swap file on ext4 on a loop device over /dev/shm).
    pub fn memory_backed_loop(&self, devno: DevNo) -> Option<PathBuf> {
        self.memory_backed_loop_at_depth(devno, 0)
    }

    fn memory_backed_loop_at_depth(&self, devno: DevNo, depth: usize) -> Option<PathBuf> {
        if depth >= MAX_DEPTH {
            return None;
        }
        let disk = self.whole_disk_dir(&self.block_dir(devno)?);
        if let Some(lb) = loop_backing(&disk) {
            let file = PathBuf::from(lb.backing_file);
            if in_memory(&file) {
                return Some(file);
            }
            if let Some(d) = backing_devno(&file).filter(|d| d.major != 0) {
                if let Some(found) = self.memory_backed_loop_at_depth(d, depth + 1) {
                    return Some(found);
                }
            }
        }
        entries(&disk.join("slaves")).into_iter().find_map(|slave| {
            let d = text(&disk.join("slaves").join(&slave).join("dev"))
                .and_then(|s| parse_devno(&s))?;
            self.memory_backed_loop_at_depth(d, depth + 1)
        })
    }

    /// The block device with `devno` and everything under it; none when
    /// sysfs has no such block device.
    pub fn layer(&self, devno: DevNo) -> Option<BlockLayer> {
        self.layer_at_depth(devno, 0)
    }

    fn layer_at_depth(&self, devno: DevNo, depth: usize) -> Option<BlockLayer> {
        let dir = self.block_dir(devno)?;
        let disk = self.whole_disk_dir(&dir);
        let is_part = disk != dir;
        let name = base(&dir);
        let disk_name = base(&disk);

        let hops = self.hops(&disk);
        let mut facts = self.link_facts(&disk, &hops);
        let virtual_kind = virtual_transport(&disk_name);
        if facts.transport == Transport::Unknown {
            if let Some(t) = virtual_kind {
                facts.transport = t;
            }
        }

        let loop_backing = (facts.transport == Transport::Loop)
            .then(|| loop_backing(&disk))
            .flatten();
        let mut lower = Vec::new();
        let mut notes = Vec::new();
        if depth < MAX_DEPTH {
            if let Some(lb) = &loop_backing {
                match backing_devno(Path::new(&lb.backing_file)) {
                    Some(d) if d.major != 0 => lower.extend(self.layer_at_depth(d, depth + 1)),
                    Some(_) => notes.push(
                        "the backing file is on a file system without a block device (tmpfs, NFS, ...)"
                            .to_string(),
                    ),
                    None => notes.push("the backing file cannot be read".to_string()),
                }
            }
            for slave in entries(&disk.join("slaves")) {
                let d = text(&disk.join("slaves").join(&slave).join("dev"))
                    .and_then(|s| parse_devno(&s));
                if let Some(d) = d {
                    lower.extend(self.layer_at_depth(d, depth + 1));
                }
            }
        }

        match facts.transport {
            Transport::Virtio => notes.push(
                "virtio-blk (paravirtual): the link ceiling is unknown; the host's storage decides".into(),
            ),
            Transport::Zram => notes.push(
                "RAM (compressed): the ceiling is memory bandwidth; results depend on the data pattern"
                    .into(),
            ),
            _ => {}
        }
        if let Some(lb) = &loop_backing {
            if !lb.direct_io {
                notes.push(
                    "dio off: the loop device reads its backing file through the page cache, even with O_DIRECT"
                        .into(),
                );
            }
        }
        if let Some(u) = &facts.usb {
            if let (Some(v), Some(s)) = (&u.version, u.speed_mbps) {
                if v.starts_with('3') && s < 5000.0 {
                    notes.push(format!("a USB {v} device on a {s} Mb/s link"));
                }
            }
        }

        let cache = block_cache(&disk, &lower);
        let size = num::<u64>(&dir.join("size")).unwrap_or(0) * 512;
        Some(BlockLayer {
            name,
            devno,
            partition_of: is_part.then(|| disk_name.clone()),
            partition: if is_part {
                num(&dir.join("partition"))
            } else {
                None
            },
            size: Bytes(size),
            read_only: flag(&dir.join("ro")).unwrap_or(false),
            removable: flag(&disk.join("removable")).unwrap_or(false),
            transport: facts.transport,
            identity: identity(&disk, facts.transport),
            queue: queue(&disk),
            sysfs_path: dir.to_string_lossy().into_owned(),
            // Plain grouping directories (`block`, `nvme`) carry nothing.
            hops: hops
                .into_iter()
                .map(|(_, h)| h)
                .filter(|h| h.subsystem.is_some() || h.name.starts_with("ata"))
                .collect(),
            usb: facts.usb,
            sata: facts.sata,
            pcie: facts.pcie,
            ceilings: facts.ceilings,
            loop_backing,
            dm_name: text(&disk.join("dm/name")),
            cache,
            holders: entries(&dir.join("holders")),
            lower,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        })
    }

    /// The directories from `start` up to (not including) `<root>/devices`,
    /// each as a hop.
    pub(crate) fn hops(&self, start: &Path) -> Vec<(PathBuf, Hop)> {
        let stop = self.root.join("devices");
        let mut out = Vec::new();
        let mut cur = Some(start);
        while let Some(dir) = cur {
            if dir == stop || !dir.starts_with(&stop) {
                break;
            }
            out.push((
                dir.to_path_buf(),
                Hop {
                    name: base(dir),
                    subsystem: link_name(&dir.join("subsystem")),
                    driver: link_name(&dir.join("driver")),
                },
            ));
            cur = dir.parent();
        }
        out
    }

    /// Reads the transport and the links off the hops, nearest first.
    pub(crate) fn link_facts(&self, disk: &Path, hops: &[(PathBuf, Hop)]) -> LinkFacts {
        let mut f = LinkFacts {
            transport: Transport::Unknown,
            usb: None,
            sata: None,
            pcie: Vec::new(),
            ceilings: Vec::new(),
        };
        let mut seen_scsi = false;
        let mut usb_driver: Option<String> = None;
        let mut pci_walked = false;
        for (dir, hop) in hops {
            let subsystem = hop.subsystem.as_deref();
            match subsystem {
                Some("usb") if dir.join("bInterfaceClass").exists() => {
                    usb_driver = usb_driver.or_else(|| hop.driver.clone());
                }
                Some("usb") if f.usb.is_none() && dir.join("speed").exists() => {
                    f.usb = Some(usb_link(dir, &hop.name, usb_driver.clone()));
                }
                Some("pci") => {
                    pci_walked = true;
                    if let Some(p) = pcie_link(dir, hop) {
                        f.pcie.push(p);
                    }
                }
                Some("nvme") => f.transport = f.transport.or(Transport::Nvme),
                Some("virtio") => f.transport = f.transport.or(Transport::Virtio),
                Some("mmc") => f.transport = f.transport.or(Transport::Mmc),
                Some("scsi") => {
                    seen_scsi = true;
                    if hop.name.starts_with("host") {
                        let proc_name = text(
                            &self
                                .root
                                .join("class/scsi_host")
                                .join(&hop.name)
                                .join("proc_name"),
                        );
                        if let Some(p) = proc_name {
                            if p.starts_with("ahci") || p.starts_with("sata") {
                                f.transport = f.transport.or(Transport::Sata);
                            }
                        }
                    }
                }
                _ => {}
            }
            if let Some(n) = hop.name.strip_prefix("ata") {
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && f.sata.is_none() {
                    f.sata = Some(SataLink {
                        port: hop.name.clone(),
                        speed_gbps: sata_speed(
                            &self.root.join("class/ata_link").join(format!("link{n}")),
                        ),
                    });
                }
            }
            // Native NVMe multipath puts the disk under a virtual subsystem;
            // each controller link in it leads to a PCIe function.
            if hop.name.starts_with("nvme-subsys") && !pci_walked {
                for ctrl in entries(dir).into_iter().filter(|n| is_nvme_ctrl(n)) {
                    if let Ok(c) = dir.join(&ctrl).canonicalize() {
                        for (d, h) in self.hops(&c) {
                            if h.subsystem.as_deref() == Some("pci") {
                                f.pcie.extend(pcie_link(&d, &h));
                            }
                        }
                        break;
                    }
                }
            }
        }
        if f.usb.is_some() {
            f.transport = Transport::Usb;
        } else if f.sata.is_some() {
            f.transport = f.transport.or(Transport::Sata);
        } else if seen_scsi {
            f.transport = f.transport.or(Transport::Scsi);
        }
        if f.transport == Transport::Unknown && base(disk).starts_with("nvme") {
            f.transport = Transport::Nvme;
        }

        // Ceilings, nearest link first: USB or SATA, then every PCIe hop.
        if let Some(u) = &f.usb {
            if let Some(s) = u.speed_mbps {
                f.ceilings
                    .extend(usb_ceiling(s, u.lanes, u.driver.as_deref()));
            }
        }
        if let Some(s) = f.sata.as_ref().and_then(|s| s.speed_gbps) {
            f.ceilings.extend(sata_ceiling(s));
        }
        for p in &f.pcie {
            f.ceilings.extend(pcie_ceiling(p.speed_gts, p.width));
        }
        f
    }
}

pub(crate) struct LinkFacts {
    pub(crate) transport: Transport,
    pub(crate) usb: Option<UsbLink>,
    pub(crate) sata: Option<SataLink>,
    pub(crate) pcie: Vec<PcieLink>,
    pub(crate) ceilings: Vec<LinkCeiling>,
}

trait OrTransport {
    fn or(self, t: Transport) -> Transport;
}

impl OrTransport for Transport {
    /// Keeps the first transport found nearest the disk.
    fn or(self, t: Transport) -> Transport {
        if self == Transport::Unknown {
            t
        } else {
            self
        }
    }
}

fn is_nvme_ctrl(name: &str) -> bool {
    name.strip_prefix("nvme")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

pub(crate) fn parse_devno(s: &str) -> Option<DevNo> {
    let (a, b) = s.trim().split_once(':')?;
    Some(DevNo {
        major: a.parse().ok()?,
        minor: b.parse().ok()?,
    })
}

fn virtual_transport(disk_name: &str) -> Option<Transport> {
    let t = if disk_name.starts_with("loop") {
        Transport::Loop
    } else if disk_name.starts_with("zram") {
        Transport::Zram
    } else if disk_name.starts_with("dm-") {
        Transport::DeviceMapper
    } else if disk_name.starts_with("md") {
        Transport::Md
    } else if disk_name.starts_with("vd") {
        Transport::Virtio
    } else if disk_name.starts_with("mmcblk") {
        Transport::Mmc
    } else {
        return None;
    };
    Some(t)
}

fn usb_link(dir: &Path, name: &str, driver: Option<String>) -> UsbLink {
    let id = match (text(&dir.join("idVendor")), text(&dir.join("idProduct"))) {
        (Some(v), Some(p)) => Some(format!("{v}:{p}")),
        _ => None,
    };
    UsbLink {
        device: name.to_string(),
        speed_mbps: num(&dir.join("speed")),
        version: text(&dir.join("version")),
        lanes: num(&dir.join("rx_lanes")),
        driver,
        id,
        manufacturer: text(&dir.join("manufacturer")),
        product: text(&dir.join("product")),
    }
}

/// `6.0 Gbps` → 6.0; `<unknown>` → none.
fn sata_speed(link_dir: &Path) -> Option<f64> {
    text(&link_dir.join("sata_spd"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `8.0 GT/s PCIe` (or `8 GT/s` on older kernels) → 8.0.
fn gts(s: &str) -> Option<f64> {
    s.split_whitespace().next()?.parse().ok()
}

fn pcie_link(dir: &Path, hop: &Hop) -> Option<PcieLink> {
    let speed = gts(&text(&dir.join("current_link_speed"))?)?;
    let width: u32 = num(&dir.join("current_link_width"))?;
    if width == 0 {
        return None;
    }
    Some(PcieLink {
        address: hop.name.clone(),
        driver: hop.driver.clone(),
        speed_gts: speed,
        width,
        max_speed_gts: text(&dir.join("max_link_speed")).and_then(|s| gts(&s)),
        max_width: num(&dir.join("max_link_width")),
    })
}

#[cfg(test)]
#[path = "sysfs_tests.rs"]
mod tests;
