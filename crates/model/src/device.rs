//! The machine and the device chain behind a measured path, as stored data.
//!
//! `iomark-host` fills these from `/proc` and `/sys`; the store keeps them
//! with every run so that a comparison can say "USB 2.0, usb-storage (BOT)"
//! next to each figure. Ceilings are payload rates in bytes per second
//! (10^6 bytes = 1 MB); an absent ceiling means *unknown*, never *unlimited*.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::units::{Bytes, BytesPerSec};

/// Facts about the machine a run was measured on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// The host name (`uname -n`).
    pub hostname: String,
    /// The kernel release (`uname -r`), e.g. `6.1.0-18-amd64`.
    pub kernel_release: String,
    /// The distribution's `PRETTY_NAME` from `/etc/os-release`, when present.
    pub os: Option<String>,
    /// The machine architecture (`uname -m`), e.g. `x86_64`.
    pub arch: String,
    /// The CPU model name from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Online logical CPUs.
    pub cpu_count: u32,
    /// `MemTotal` from `/proc/meminfo`.
    pub memory_total: Bytes,
    /// `SwapTotal` from `/proc/meminfo`.
    pub swap_total: Bytes,
}

/// A block device number, `major:minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DevNo {
    /// The driver's major number (0 for anonymous devices: tmpfs, btrfs, NFS).
    pub major: u32,
    /// The minor number.
    pub minor: u32,
}

impl fmt::Display for DevNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// What the measured path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TargetKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A block device node.
    BlockDevice,
    /// Anything else (character device, socket, fifo).
    Other,
}

/// One line of `/proc/self/mountinfo`: the file system holding a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountEntry {
    /// Field 1, the mount ID (`statx` `stx_mnt_id`).
    pub mount_id: u64,
    /// The device of the file system (major 0 for tmpfs, btrfs, overlay, NFS).
    pub devno: DevNo,
    /// Where it is mounted.
    pub mount_point: String,
    /// The file system type, e.g. `ext4`, `tmpfs`.
    pub fs_type: String,
    /// The mount source, e.g. `/dev/vda`.
    pub source: String,
    /// Per-mount options, e.g. `rw,relatime`.
    pub mount_options: String,
    /// Superblock options, e.g. `rw,discard`.
    pub super_options: String,
}

/// How a block device is attached, from the hops of its sysfs chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Transport {
    /// NVMe (PCIe, or fabrics).
    Nvme,
    /// SATA or PATA through libata.
    Sata,
    /// USB mass storage (BOT or UASP).
    Usb,
    /// Other SCSI (SAS, FC, iSCSI, parallel SCSI, virtio-scsi).
    Scsi,
    /// virtio-blk, a paravirtual disk.
    Virtio,
    /// A loop device over a file.
    Loop,
    /// A compressed RAM disk.
    Zram,
    /// SD card or eMMC.
    Mmc,
    /// A device-mapper device (LVM, dm-crypt, multipath).
    DeviceMapper,
    /// A software RAID (md) device.
    Md,
    /// Nothing on the chain said.
    Unknown,
}

impl Transport {
    /// The name used in output and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Nvme => "nvme",
            Transport::Sata => "sata",
            Transport::Usb => "usb",
            Transport::Scsi => "scsi",
            Transport::Virtio => "virtio",
            Transport::Loop => "loop",
            Transport::Zram => "zram",
            Transport::Mmc => "mmc",
            Transport::DeviceMapper => "dm",
            Transport::Md => "md",
            Transport::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who made the disk, as far as sysfs tells.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskIdentity {
    /// Vendor (`ATA` behind libata; the bridge's name behind USB).
    pub vendor: Option<String>,
    /// Model (cut to 16 characters by SCSI INQUIRY).
    pub model: Option<String>,
    /// Serial number.
    pub serial: Option<String>,
    /// Firmware revision.
    pub firmware: Option<String>,
    /// World wide name or other unique id.
    pub wwn: Option<String>,
}

/// The block layer's view of the disk (`/sys/block/<disk>/queue`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueInfo {
    /// Spinning media, by the driver's (advisory) word.
    pub rotational: Option<bool>,
    /// The smallest addressable unit: the `O_DIRECT` alignment.
    pub logical_block_size: Option<u32>,
    /// The smallest unit written atomically.
    pub physical_block_size: Option<u32>,
    /// The active I/O scheduler; none for bio-based drivers such as zram.
    pub scheduler: Option<String>,
    /// The depth of the block layer's request pool.
    pub nr_requests: Option<u32>,
    /// Largest request the block layer sends, KiB.
    pub max_sectors_kb: Option<u32>,
    /// `write back` or `write through`.
    pub write_cache: Option<String>,
}

/// What a loop device reads and writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopBacking {
    /// The backing file's path, as the kernel recorded it.
    pub backing_file: String,
    /// Offset into the file.
    pub offset: Bytes,
    /// Size limit (0 = the whole file).
    pub size_limit: Bytes,
    /// Direct I/O to the backing file; off means the host page cache is in
    /// the way even for `O_DIRECT` opens of the loop device.
    pub direct_io: bool,
    /// What answers for the backing file when a daemon or a server does
    /// (`FUSE`, `NFS`, `SMB`, `9P`, `Ceph`, from the file system's magic
    /// number): its own cache is on the route whatever `direct_io` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_served_by: Option<String>,
}

/// One directory on the sysfs path from the disk up to the root, e.g.
/// `vda` (block), `virtio1` (virtio, driver virtio_blk), `0000:00:02.0` (pci).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// The sysfs directory name.
    pub name: String,
    /// Its subsystem (`block`, `scsi`, `usb`, `pci`, `nvme`, `virtio`, ...).
    pub subsystem: Option<String>,
    /// The bound driver, when one is.
    pub driver: Option<String>,
}

/// The USB link of a USB-attached disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsbLink {
    /// The usb_device's sysfs name, e.g. `2-1`.
    pub device: String,
    /// The negotiated speed of this device's link, Mb/s (1.5, 12, 480, 5000,
    /// 10000, 20000).
    pub speed_mbps: Option<f64>,
    /// The USB version the device claims (bcdUSB), e.g. `3.20`.
    pub version: Option<String>,
    /// Lanes in use (2 for USB 3.2 x2 modes).
    pub lanes: Option<u32>,
    /// The driver bound to the mass-storage interface: `uas` or `usb-storage`.
    pub driver: Option<String>,
    /// `idVendor:idProduct`.
    pub id: Option<String>,
    /// The device's manufacturer string.
    pub manufacturer: Option<String>,
    /// The device's product string.
    pub product: Option<String>,
}

impl UsbLink {
    /// The transfer protocol named by the bound driver: `UASP` or `BOT`.
    pub fn protocol(&self) -> Option<&'static str> {
        match self.driver.as_deref() {
            Some("uas") => Some("UASP"),
            Some("usb-storage") => Some("BOT"),
            _ => None,
        }
    }
}

/// The SATA (or PATA) link of a libata disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SataLink {
    /// The ATA port, e.g. `ata3`.
    pub port: String,
    /// The negotiated link speed, Gb/s (1.5, 3.0, 6.0); none for PATA or
    /// when the kernel says `<unknown>`.
    pub speed_gbps: Option<f64>,
}

/// The PCIe link of one PCI function on the chain (endpoint or bridge).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PcieLink {
    /// The PCI address, e.g. `0000:01:00.0`.
    pub address: String,
    /// The bound driver (`nvme`, `ahci`, `xhci_hcd`, `pcieport`).
    pub driver: Option<String>,
    /// Current link speed, GT/s per lane.
    pub speed_gts: f64,
    /// Current link width (lanes).
    pub width: u32,
    /// The fastest speed both ends support, GT/s.
    pub max_speed_gts: Option<f64>,
    /// The widest link the function supports.
    pub max_width: Option<u32>,
}

/// The payload ceiling of one link: the rate no transfer over it can beat
/// (`hard`) and what that protocol really achieves (`typical`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkCeiling {
    /// The link's short name, e.g. `USB 2.0`, `SATA III`, `PCIe 3.0 x4`.
    pub name: String,
    /// Signalling minus line coding: above it is impossible.
    pub hard: BytesPerSec,
    /// What real sequential transfers reach: above it is suspicious.
    pub typical: Option<BytesPerSec>,
}

/// One block device on the path, with what it sits on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockLayer {
    /// The kernel name, e.g. `sda1`, `loop3`, `vda`.
    pub name: String,
    /// Its device number.
    pub devno: DevNo,
    /// The whole disk when this is a partition.
    pub partition_of: Option<String>,
    /// The partition number when this is a partition.
    pub partition: Option<u32>,
    /// Size in bytes (sysfs counts 512-byte sectors whatever the block size).
    pub size: Bytes,
    /// Read-only.
    #[serde(default)]
    pub read_only: bool,
    /// Removable media.
    #[serde(default)]
    pub removable: bool,
    /// How it is attached.
    pub transport: Transport,
    /// Model, vendor, serial, firmware, WWN.
    #[serde(default)]
    pub identity: DiskIdentity,
    /// Queue and geometry (of the whole disk for a partition).
    #[serde(default)]
    pub queue: QueueInfo,
    /// The canonical sysfs directory.
    pub sysfs_path: String,
    /// The sysfs chain from the disk up, nearest first.
    #[serde(default)]
    pub hops: Vec<Hop>,
    /// The USB link, for USB disks.
    pub usb: Option<UsbLink>,
    /// The SATA link, for libata disks.
    pub sata: Option<SataLink>,
    /// Every PCIe link on the chain, nearest first.
    #[serde(default)]
    pub pcie: Vec<PcieLink>,
    /// The ceilings of this layer's own links, nearest first.
    #[serde(default)]
    pub ceilings: Vec<LinkCeiling>,
    /// For a loop device: its backing file.
    pub loop_backing: Option<LoopBacking>,
    /// For a device-mapper device: its name (`dm/name`).
    pub dm_name: Option<String>,
    /// A block cache in front of this device's medium (bcache, an LVM
    /// cache), as sysfs tells it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<BlockCache>,
    /// Devices stacked on top of this one (`holders/`).
    #[serde(default)]
    pub holders: Vec<String>,
    /// What this device sits on: a loop device's backing disk, the slaves of
    /// a dm or md device.
    #[serde(default)]
    pub lower: Vec<BlockLayer>,
    /// A plain-words remark, e.g. why the ceiling is unknown.
    pub note: Option<String>,
}

/// A block cache between a device and its medium: another device (an SSD)
/// that serves reads and takes writes in the medium's place, whatever
/// `O_DIRECT` asks, so the figures may be the cache's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockCache {
    /// What it is: `bcache`, `dm-cache` or `dm-writecache`.
    pub kind: String,
    /// Its mode where sysfs says (bcache's `cache_mode`: `writethrough`,
    /// `writeback`, `writearound`, `none`).
    pub mode: Option<String>,
    /// Its state where sysfs says (bcache's `state`: `clean`, `dirty`,
    /// `no cache` when no cache device is attached).
    pub state: Option<String>,
    /// What was read, in words: the file and its value, or the name.
    pub evidence: String,
}

impl BlockCache {
    /// Whether it can serve the device's I/O now: a cache device is
    /// attached and its mode is not `none`.
    pub fn in_use(&self) -> bool {
        self.state.as_deref() != Some("no cache") && self.mode.as_deref() != Some("none")
    }
}

/// Everything known about the storage behind one path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceReport {
    /// The path as given.
    pub path: String,
    /// What the path is.
    pub target: TargetKind,
    /// The file system holding the path (for files and directories).
    pub filesystem: Option<MountEntry>,
    /// Where the device is mounted (for a block device node; `[SWAP]` for
    /// active swap).
    #[serde(default)]
    pub mounted_at: Vec<String>,
    /// The block device behind the path; none for tmpfs, NFS and the like.
    pub device: Option<BlockLayer>,
    /// The slowest link on the whole chain; none when no ceiling is known.
    pub slowest: Option<LinkCeiling>,
    /// Plain-words remarks about the chain as a whole.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl DeviceReport {
    /// The key under which the store remembers the disk behind the path
    /// (its rated speed): the serial or WWN with the model when sysfs
    /// gives one, so the disk is known on any port; otherwise its kernel
    /// name (a loop device's with its backing file), or for a path on no
    /// block device (tmpfs, NFS) the file system's type and source.
    pub fn disk_key(&self) -> Option<String> {
        let Some(dev) = &self.device else {
            let fs = self.filesystem.as_ref()?;
            return Some(format!("fs:{}:{}", fs.fs_type, fs.source));
        };
        let id = &dev.identity;
        let model = id.model.as_deref().unwrap_or("").trim();
        if let Some(serial) = id.serial.as_deref().or(id.wwn.as_deref()) {
            return Some(format!("serial:{model}:{}", serial.trim()));
        }
        Some(match &dev.loop_backing {
            Some(b) => format!("dev:{}:{}", dev.name, b.backing_file),
            None => format!("dev:{}", dev.name),
        })
    }

    /// The key of what an artefacts probe measured here: the disk, the
    /// file system on it with its options for a file or directory (btrfs
    /// compresses by mount option), and whether the page cache was
    /// bypassed (a device may treat the two differently; a probe speaks
    /// for the mode it ran in).
    pub fn probe_key(&self, direct: bool) -> Option<String> {
        let mut key = self.disk_key()?;
        if let (Some(fs), Some(_)) = (&self.filesystem, &self.device) {
            key += &format!("|fs:{}:{}", fs.fs_type, fs.super_options);
        }
        key += if direct { "|direct" } else { "|buffered" };
        Some(key)
    }

    /// The disk in a few words, for the store's device table.
    pub fn describe(&self) -> String {
        let Some(dev) = &self.device else {
            return self.path.clone();
        };
        let id = &dev.identity;
        let words: Vec<&str> = [id.vendor.as_deref(), id.model.as_deref()]
            .into_iter()
            .flatten()
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect();
        if words.is_empty() {
            dev.name.clone()
        } else {
            format!("{} ({})", words.join(" "), dev.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_optional_fields_read_as_none() {
        let report: DeviceReport = serde_json::from_str(
            r#"{"path": "/dev/sdb", "target": "block_device", "device": {
                "name": "sdb", "devno": {"major": 8, "minor": 16}, "size": 0,
                "transport": "usb", "sysfs_path": "/sys/block/sdb",
                "hops": [{"name": "sdb"}],
                "usb": {"device": "2-1"},
                "pcie": [{"address": "0000:00:14.0", "speed_gts": 8.0, "width": 1}],
                "ceilings": [{"name": "USB 2.0", "hard": 40e6}]}}"#,
        )
        .unwrap();
        assert!(report.filesystem.is_none() && report.slowest.is_none());
        let dev = report.device.unwrap();
        assert_eq!(
            (dev.partition_of, dev.partition, dev.note),
            (None, None, None)
        );
        assert!(dev.sata.is_none() && dev.loop_backing.is_none() && dev.dm_name.is_none());
        assert_eq!(dev.identity, DiskIdentity::default());
        assert_eq!(dev.queue, QueueInfo::default());
        assert_eq!(
            (&dev.hops[0].subsystem, &dev.hops[0].driver),
            (&None, &None)
        );
        let usb = dev.usb.unwrap();
        assert!(usb.speed_mbps.is_none() && usb.driver.is_none() && usb.product.is_none());
        assert!(dev.pcie[0].driver.is_none() && dev.pcie[0].max_width.is_none());
        assert!(dev.ceilings[0].typical.is_none());
    }

    #[test]
    fn keys_name_the_disk_then_the_file_system_and_mode() {
        let report = |identity: &str, fs: bool| -> DeviceReport {
            let mut v: serde_json::Value = serde_json::from_str(&format!(
                r#"{{"path": "/mnt/x", "target": "directory", "device": {{
                    "name": "sdb", "devno": {{"major": 8, "minor": 16}}, "size": 0,
                    "transport": "usb", "sysfs_path": "/sys/block/sdb",
                    "identity": {identity}}}}}"#
            ))
            .unwrap();
            if fs {
                v["filesystem"] = serde_json::json!({"mount_id": 1,
                    "devno": {"major": 8, "minor": 16}, "mount_point": "/mnt/x",
                    "fs_type": "btrfs", "source": "/dev/sdb",
                    "mount_options": "rw", "super_options": "rw,compress=zstd:3"});
            }
            serde_json::from_value(v).unwrap()
        };
        let stick = report(
            r#"{"vendor": "ACME", "model": "Turbo ", "serial": "0042"}"#,
            true,
        );
        assert_eq!(stick.disk_key().unwrap(), "serial:Turbo:0042");
        assert_eq!(
            stick.probe_key(true).unwrap(),
            "serial:Turbo:0042|fs:btrfs:rw,compress=zstd:3|direct"
        );
        assert_ne!(stick.probe_key(true), stick.probe_key(false));
        assert_eq!(stick.describe(), "ACME Turbo (sdb)");
        let bare = report("{}", false);
        assert_eq!(bare.disk_key().unwrap(), "dev:sdb");
        assert_eq!(bare.probe_key(false).unwrap(), "dev:sdb|buffered");
        assert_eq!(bare.describe(), "sdb");
    }
}
