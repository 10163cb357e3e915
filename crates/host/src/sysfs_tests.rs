//! The sysfs walk on fake trees that mimic real machines' `/sys`.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::*;
use crate::chain::effective_ceiling;

/// A temporary directory laid out like `/sys`, with the same relative
/// `subsystem`, `driver` and `/sys/dev/block` links the kernel makes.
struct FakeSys {
    dir: tempfile::TempDir,
}

impl FakeSys {
    fn new() -> Self {
        FakeSys {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn sysfs(&self) -> Sysfs {
        Sysfs::at(self.root())
    }

    /// Writes `rel` (relative to the root) with `content`.
    fn file(&self, rel: &str, content: &str) -> &Self {
        let p = self.root().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
        self
    }

    /// A device directory on `bus_or_class` (e.g. `bus/usb`, `class/block`),
    /// optionally bound to a driver.
    fn dev(&self, rel: &str, subsystem: &str, driver: Option<&str>) -> &Self {
        let p = self.root().join(rel);
        fs::create_dir_all(&p).unwrap();
        let sub = self.root().join(subsystem);
        fs::create_dir_all(&sub).unwrap();
        symlink(rel_to(&p, &sub), p.join("subsystem")).unwrap();
        if let Some(d) = driver {
            let drv = sub.join("drivers").join(d);
            fs::create_dir_all(&drv).unwrap();
            symlink(rel_to(&p, &drv), p.join("driver")).unwrap();
        }
        self
    }

    /// A block device (disk or partition) at `rel` with its `/sys/dev/block` link.
    fn block(&self, rel: &str, devno: &str, sectors: u64) -> &Self {
        self.dev(rel, "class/block", None);
        self.file(&format!("{rel}/dev"), devno);
        self.file(&format!("{rel}/size"), &format!("{sectors}\n"));
        let link_dir = self.root().join("dev/block");
        fs::create_dir_all(&link_dir).unwrap();
        symlink(
            rel_to(&link_dir.join("x"), &self.root().join(rel)),
            link_dir.join(devno),
        )
        .unwrap();
        self
    }

    /// A PCI device at `rel` bound to `driver`, its link trained at `gts`
    /// (e.g. `5.0 GT/s PCIe`) and `width` lanes.
    fn pci_link(&self, rel: &str, driver: &str, gts: &str, width: u8) -> &Self {
        self.dev(rel, "bus/pci", Some(driver))
            .file(&format!("{rel}/current_link_speed"), &format!("{gts}\n"))
            .file(&format!("{rel}/current_link_width"), &format!("{width}\n"))
    }

    fn queue(&self, disk: &str, lbs: u32, pbs: u32, sched: &str, rot: u8) -> &Self {
        self.file(
            &format!("{disk}/queue/logical_block_size"),
            &format!("{lbs}\n"),
        )
        .file(
            &format!("{disk}/queue/physical_block_size"),
            &format!("{pbs}\n"),
        )
        .file(&format!("{disk}/queue/scheduler"), sched)
        .file(&format!("{disk}/queue/rotational"), &format!("{rot}\n"))
        .file(&format!("{disk}/queue/nr_requests"), "64\n")
        .file(&format!("{disk}/queue/max_sectors_kb"), "240\n")
    }

    fn layer(&self, devno: &str) -> BlockLayer {
        self.sysfs()
            .layer(parse_devno(devno).unwrap())
            .expect("the fake tree has this device")
    }
}

/// `target` relative to the directory holding `from`, like sysfs links.
fn rel_to(from: &Path, target: &Path) -> PathBuf {
    let from_dir = from.parent().unwrap();
    let common = from_dir
        .ancestors()
        .find(|a| target.starts_with(a))
        .unwrap();
    let ups = from_dir.strip_prefix(common).unwrap().components().count();
    let mut p = PathBuf::new();
    for _ in 0..ups {
        p.push("..");
    }
    p.join(target.strip_prefix(common).unwrap())
}

const XHCI: &str = "devices/pci0000:00/0000:00:14.0";

/// A USB disk on bus 1 port 1 with its SCSI stack, `sdb` with one partition.
fn usb_disk(fake: &FakeSys, speed: &str, version: &str, driver: &str, protocol: &str) {
    let dev = format!("{XHCI}/usb1/1-1");
    let intf = format!("{dev}/1-1:1.0");
    let sdev = format!("{intf}/host6/target6:0:0/6:0:0:0");
    let disk = format!("{sdev}/block/sdb");
    fake.dev(
        "devices/pci0000:00/0000:00:14.0",
        "bus/pci",
        Some("xhci_hcd"),
    )
    .dev(&format!("{XHCI}/usb1"), "bus/usb", Some("usb"))
    .file(&format!("{XHCI}/usb1/speed"), "480\n")
    .file(&format!("{XHCI}/usb1/version"), " 2.00\n")
    .dev(&dev, "bus/usb", Some("usb"))
    .file(&format!("{dev}/speed"), speed)
    .file(&format!("{dev}/version"), version)
    .file(&format!("{dev}/rx_lanes"), "1\n")
    .file(&format!("{dev}/idVendor"), "152d\n")
    .file(&format!("{dev}/idProduct"), "0578\n")
    .file(&format!("{dev}/manufacturer"), "JMicron\n")
    .file(&format!("{dev}/product"), "USB to ATA/ATAPI Bridge\n")
    .dev(&intf, "bus/usb", Some(driver))
    .file(&format!("{intf}/bInterfaceClass"), "08\n")
    .file(&format!("{intf}/bInterfaceProtocol"), protocol)
    .dev(&format!("{intf}/host6"), "bus/scsi", None)
    .file("class/scsi_host/host6/proc_name", driver)
    .dev(&format!("{intf}/host6/target6:0:0"), "bus/scsi", None)
    .dev(&sdev, "bus/scsi", Some("sd"))
    .file(&format!("{sdev}/vendor"), "JMicron \n")
    .file(&format!("{sdev}/model"), "Generic         \n")
    .file(&format!("{sdev}/rev"), "0508\n")
    .block(&disk, "8:16", 1_953_525_168)
    .queue(&disk, 512, 4096, "none [mq-deadline]", 1)
    .file(&format!("{disk}/removable"), "0\n")
    .block(&format!("{disk}/sdb1"), "8:17", 1_953_523_120)
    .file(&format!("{disk}/sdb1/partition"), "1\n");
    // The kernel links a SCSI disk's `device` to its SCSI device.
    symlink("../../../6:0:0:0", fake.root().join(&disk).join("device")).unwrap();
}

#[test]
fn usb2_bot_disk_partition_resolves_to_the_usb_link() {
    let fake = FakeSys::new();
    usb_disk(&fake, "480\n", " 2.00\n", "usb-storage", "50\n");
    let l = fake.layer("8:17");
    assert_eq!(l.name, "sdb1");
    assert_eq!(l.partition_of.as_deref(), Some("sdb"));
    assert_eq!(l.partition, Some(1));
    assert_eq!(l.size.get(), 1_953_523_120 * 512);
    assert_eq!(l.transport, Transport::Usb);
    let u = l.usb.as_ref().unwrap();
    assert_eq!(u.device, "1-1");
    assert_eq!(u.speed_mbps, Some(480.0));
    assert_eq!(u.version.as_deref(), Some("2.00"));
    assert_eq!(u.driver.as_deref(), Some("usb-storage"));
    assert_eq!(u.protocol(), Some("BOT"));
    assert_eq!(u.id.as_deref(), Some("152d:0578"));
    assert_eq!(l.identity.vendor.as_deref(), Some("JMicron"));
    assert_eq!(l.identity.model.as_deref(), Some("Generic"));
    assert_eq!(l.identity.firmware.as_deref(), Some("0508"));
    // Queue facts come from the whole disk.
    assert_eq!(l.queue.logical_block_size, Some(512));
    assert_eq!(l.queue.physical_block_size, Some(4096));
    assert_eq!(l.queue.scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!(l.queue.rotational, Some(true));
    let subsystems: Vec<_> = l
        .hops
        .iter()
        .filter_map(|h| h.subsystem.as_deref())
        .collect();
    assert_eq!(
        subsystems,
        ["block", "scsi", "scsi", "scsi", "usb", "usb", "usb", "pci"]
    );
    let c = effective_ceiling(&l).unwrap();
    assert_eq!(c.name, "USB 2.0");
    assert!((c.hard.mb_per_sec() - 53.248).abs() < 1e-9);
    assert_eq!(c.typical.unwrap().mb_per_sec(), 40.0);
}

#[test]
fn usb3_uasp_disk_in_a_usb2_port_is_held_to_usb2() {
    let fake = FakeSys::new();
    usb_disk(&fake, "480\n", " 3.20\n", "uas", "62\n");
    let l = fake.layer("8:16");
    assert_eq!(l.partition_of, None);
    let u = l.usb.as_ref().unwrap();
    assert_eq!(u.version.as_deref(), Some("3.20"));
    assert_eq!(u.protocol(), Some("UASP"));
    assert_eq!(effective_ceiling(&l).unwrap().name, "USB 2.0");
    let note = l.note.unwrap();
    assert!(
        note.contains("a USB 3.20 device on a 480 Mb/s link"),
        "{note}"
    );
}

#[test]
fn usb3_uasp_disk_on_a_5gbps_port_gets_the_gen1_ceiling() {
    let fake = FakeSys::new();
    usb_disk(&fake, "5000\n", " 3.20\n", "uas", "62\n");
    let l = fake.layer("8:16");
    let c = effective_ceiling(&l).unwrap();
    assert_eq!(c.name, "USB 3.2 Gen 1 (5 Gb/s)");
    assert_eq!(c.hard.mb_per_sec(), 500.0);
    assert_eq!(c.typical.unwrap().mb_per_sec(), 450.0);
    assert_eq!(l.note, None);
}

#[test]
fn sata_disk_behind_ahci_on_a_pcie2_x1_card_is_held_to_the_pcie_link() {
    let fake = FakeSys::new();
    let bridge = "devices/pci0000:00/0000:00:1c.0";
    let ahci = format!("{bridge}/0000:02:00.0");
    let sdev = format!("{ahci}/ata3/host2/target2:0:0/2:0:0:0");
    let disk = format!("{sdev}/block/sda");
    fake.pci_link(bridge, "pcieport", "5.0 GT/s PCIe", 1)
        .pci_link(&ahci, "ahci", "5.0 GT/s PCIe", 1)
        .file(&format!("{ahci}/max_link_speed"), "5.0 GT/s PCIe\n")
        .file(&format!("{ahci}/max_link_width"), "1\n")
        .file(&format!("{ahci}/ata3/power/control"), "auto\n")
        .dev(&format!("{ahci}/ata3/host2"), "bus/scsi", None)
        .file("class/scsi_host/host2/proc_name", "ahci\n")
        .file("class/ata_link/link3/sata_spd", "6.0 Gbps\n")
        .dev(&format!("{ahci}/ata3/host2/target2:0:0"), "bus/scsi", None)
        .dev(&sdev, "bus/scsi", Some("sd"))
        .file(&format!("{sdev}/vendor"), "ATA     \n")
        .file(&format!("{sdev}/model"), "Samsung SSD 870 \n")
        .file(&format!("{sdev}/rev"), "2B6Q\n")
        .file(&format!("{sdev}/wwid"), "naa.5002538f0000abcd\n")
        .block(&disk, "8:0", 976_773_168)
        .queue(&disk, 512, 512, "[mq-deadline] none", 0);
    symlink("../../../2:0:0:0", fake.root().join(&disk).join("device")).unwrap();
    // VPD page 0x80: a 4-byte header ending in the length, then the serial.
    fs::write(
        fake.root().join(&sdev).join("vpd_pg80"),
        b"\x00\x80\x00\x08S5Y1NX0R",
    )
    .unwrap();
    let l = fake.layer("8:0");
    assert_eq!(l.transport, Transport::Sata);
    let s = l.sata.as_ref().unwrap();
    assert_eq!(s.port, "ata3");
    assert_eq!(s.speed_gbps, Some(6.0));
    assert_eq!(l.pcie.len(), 2);
    assert_eq!(l.pcie[0].address, "0000:02:00.0");
    assert_eq!(l.pcie[0].driver.as_deref(), Some("ahci"));
    assert_eq!((l.pcie[0].speed_gts, l.pcie[0].width), (5.0, 1));
    assert_eq!(l.identity.vendor.as_deref(), Some("ATA"));
    assert_eq!(l.identity.model.as_deref(), Some("Samsung SSD 870"));
    assert_eq!(l.identity.serial.as_deref(), Some("S5Y1NX0R"));
    assert_eq!(l.identity.wwn.as_deref(), Some("naa.5002538f0000abcd"));
    assert_eq!(l.queue.rotational, Some(false));
    let names: Vec<_> = l.ceilings.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["SATA III (6 Gb/s)", "PCIe 2.0 x1", "PCIe 2.0 x1"]);
    let c = effective_ceiling(&l).unwrap();
    assert_eq!(c.name, "PCIe 2.0 x1");
    assert_eq!(c.hard.mb_per_sec(), 500.0);
}

#[test]
fn nvme_disk_on_pcie3_x4() {
    let fake = FakeSys::new();
    let port = "devices/pci0000:00/0000:00:01.1";
    let ep = format!("{port}/0000:01:00.0");
    let ctrl = format!("{ep}/nvme/nvme0");
    let disk = format!("{ctrl}/nvme0n1");
    fake.pci_link(port, "pcieport", "8.0 GT/s PCIe", 4)
        .pci_link(&ep, "nvme", "8.0 GT/s PCIe", 4)
        .dev(&ctrl, "class/nvme", None)
        .file(
            &format!("{ctrl}/model"),
            "WDC WDS500G2B0C-00PXH0                  \n",
        )
        .file(&format!("{ctrl}/serial"), "20263M800123        \n")
        .file(&format!("{ctrl}/firmware_rev"), "211070WD\n")
        .block(&disk, "259:0", 976_773_168)
        .queue(&disk, 512, 512, "[none] mq-deadline", 0)
        .file(
            &format!("{disk}/wwid"),
            "eui.e8238fa6bf530001001b448b4a1b2c3d\n",
        );
    // The kernel links `device` to the controller.
    symlink("../../nvme0", fake.root().join(&disk).join("device")).unwrap();
    let l = fake.layer("259:0");
    assert_eq!(l.transport, Transport::Nvme);
    assert_eq!(l.identity.model.as_deref(), Some("WDC WDS500G2B0C-00PXH0"));
    assert_eq!(l.identity.serial.as_deref(), Some("20263M800123"));
    assert_eq!(l.identity.firmware.as_deref(), Some("211070WD"));
    assert!(l.identity.wwn.as_deref().unwrap().starts_with("eui."));
    assert_eq!(l.queue.scheduler.as_deref(), Some("none"));
    let c = effective_ceiling(&l).unwrap();
    assert_eq!(c.name, "PCIe 3.0 x4");
    assert!((c.hard.mb_per_sec() - 3938.46).abs() < 0.01);
}

#[test]
fn virtio_and_zram_have_unknown_ceilings() {
    let fake = FakeSys::new();
    let vpci = "devices/pci0000:00/0000:00:02.0";
    let vdev = format!("{vpci}/virtio1");
    fake.dev(vpci, "bus/pci", Some("virtio-pci"))
        .dev(&vdev, "bus/virtio", Some("virtio_blk"))
        .block(&format!("{vdev}/block/vda"), "254:0", 536_870_912)
        .file(&format!("{vdev}/block/vda/serial"), "overlayblk")
        .queue(
            &format!("{vdev}/block/vda"),
            512,
            4096,
            "none [mq-deadline] kyber bfq",
            1,
        )
        .block("devices/virtual/block/zram0", "253:0", 524_288)
        .file(
            "devices/virtual/block/zram0/queue/logical_block_size",
            "4096\n",
        );
    let vda = fake.layer("254:0");
    assert_eq!(vda.transport, Transport::Virtio);
    assert_eq!(vda.identity.serial.as_deref(), Some("overlayblk"));
    assert_eq!(vda.identity.vendor, None);
    assert!(vda.note.as_deref().unwrap().contains("virtio-blk"));
    assert_eq!(effective_ceiling(&vda), None);
    let z = fake.layer("253:0");
    assert_eq!(z.transport, Transport::Zram);
    assert_eq!(z.queue.scheduler, None);
    assert_eq!(z.queue.nr_requests, None);
    assert_eq!(z.queue.logical_block_size, Some(4096));
    assert_eq!(effective_ceiling(&z), None);
}

/// A real file `name` in the fake root, whose device number (the real file
/// system's) leads to `block` (`sdb` or `sdb/sdb1`) of a fake USB 2.0 disk;
/// `Err`, for `require!`, where the temp dir has no block device.
fn real_file_on_fake_usb2(fake: &FakeSys, name: &str, block: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let file = fake.root().join(name);
    fs::write(&file, b"x").unwrap();
    let d = devno_of(fs::metadata(&file).unwrap().dev());
    if d.major == 0 {
        return Err("the temp dir is on a file system without a block device".into());
    }
    usb_disk(fake, "480\n", " 2.00\n", "usb-storage", "50\n");
    let link = fake.root().join("dev/block").join(d.to_string());
    let _ = fs::remove_file(&link);
    symlink(
        fake.root().join(format!(
            "{XHCI}/usb1/1-1/1-1:1.0/host6/target6:0:0/6:0:0:0/block/{block}"
        )),
        &link,
    )
    .unwrap();
    Ok(file)
}

#[test]
fn loop_device_follows_its_backing_file_to_the_disk_under_it() {
    let fake = FakeSys::new();
    // The backing file is real, so its st_dev is real: point that devno at a
    // fake USB 2.0 disk and the loop device must inherit the USB ceiling.
    let backing = iomark_testrig::require!(real_file_on_fake_usb2(&fake, "backing.img", "sdb"));
    fake.block("devices/virtual/block/loop3", "7:3", 2048)
        .file(
            "devices/virtual/block/loop3/loop/backing_file",
            &format!("{}\n", backing.display()),
        )
        .file("devices/virtual/block/loop3/loop/offset", "0\n")
        .file("devices/virtual/block/loop3/loop/dio", "0\n");
    let l = fake.layer("7:3");
    assert_eq!(l.transport, Transport::Loop);
    let lb = l.loop_backing.as_ref().unwrap();
    assert_eq!(Path::new(&lb.backing_file), backing);
    assert!(!lb.direct_io);
    assert!(l.note.as_deref().unwrap().contains("page cache"));
    assert_eq!(l.lower.len(), 1);
    assert_eq!(l.lower[0].name, "sdb");
    assert_eq!(l.lower[0].transport, Transport::Usb);
    assert_eq!(effective_ceiling(&l).unwrap().name, "USB 2.0");
}

/// A virtual block device `name` at `devno` over the virtual devices
/// `slaves`, with the files `files` (relative to its directory).
fn stacked(fake: &FakeSys, name: &str, devno: &str, slaves: &[&str], files: &[(&str, &str)]) {
    let dir = format!("devices/virtual/block/{name}");
    fake.block(&dir, devno, 1024);
    for (rel, content) in files {
        fake.file(&format!("{dir}/{rel}"), content);
    }
    let links = fake.root().join(format!("{dir}/slaves"));
    fs::create_dir_all(&links).unwrap();
    for slave in slaves {
        let target = fake.root().join(format!("devices/virtual/block/{slave}"));
        symlink(rel_to(&links.join("x"), &target), links.join(slave)).unwrap();
    }
}

#[test]
fn a_bcache_device_and_an_lvm_cache_volume_name_their_cache() {
    let fake = FakeSys::new();
    // Two bcache devices over loop disks: one with a cache device
    // attached in writeback, one whose cache was detached.
    fake.block("devices/virtual/block/loop1", "7:1", 1024)
        .block("devices/virtual/block/loop2", "7:2", 1024);
    stacked(
        &fake,
        "bcache0",
        "252:0",
        &["loop1"],
        &[
            (
                "bcache/cache_mode",
                "writethrough [writeback] writearound none\n",
            ),
            ("bcache/state", "dirty\n"),
        ],
    );
    stacked(
        &fake,
        "bcache1",
        "252:128",
        &["loop2"],
        &[
            (
                "bcache/cache_mode",
                "[writethrough] writeback writearound none\n",
            ),
            ("bcache/state", "no cache\n"),
        ],
    );
    let cached = fake.layer("252:0").cache.expect("bcache0's cache");
    assert_eq!(cached.kind, "bcache");
    assert_eq!(cached.mode.as_deref(), Some("writeback"));
    assert_eq!(cached.state.as_deref(), Some("dirty"));
    assert!(cached.in_use());
    assert_eq!(
        cached.evidence,
        "/sys/block/bcache0/bcache/cache_mode says writeback, state says dirty"
    );
    let detached = fake
        .layer("252:128")
        .cache
        .expect("bcache1 is still bcache");
    assert!(!detached.in_use(), "{detached:?}");

    // LVM's cached volume: vg-lv over its origin vg-lv_corig and the
    // pool's data and metadata; a plain volume over a disk has no cache.
    stacked(&fake, "dm-1", "253:1", &[], &[("dm/name", "vg-lv_corig\n")]);
    stacked(
        &fake,
        "dm-2",
        "253:2",
        &[],
        &[("dm/name", "vg-cpool_cdata\n")],
    );
    stacked(
        &fake,
        "dm-3",
        "253:3",
        &["dm-1", "dm-2"],
        &[("dm/name", "vg-lv\n")],
    );
    stacked(&fake, "dm-4", "253:4", &["dm-1"], &[("dm/name", "vg-wc\n")]);
    stacked(
        &fake,
        "dm-5",
        "253:5",
        &["loop1"],
        &[("dm/name", "vg-plain\n")],
    );
    let lv = fake.layer("253:3").cache.expect("vg-lv is cached");
    assert_eq!(lv.kind, "dm-cache");
    assert!(lv.in_use());
    assert!(
        lv.evidence.contains("dm-1 named vg-lv_corig"),
        "{}",
        lv.evidence
    );
    fs::write(
        fake.root().join("devices/virtual/block/dm-1/dm/name"),
        "vg-wc_wcorig\n",
    )
    .unwrap();
    assert_eq!(fake.layer("253:4").cache.unwrap().kind, "dm-writecache");
    assert_eq!(fake.layer("253:5").cache, None);
    assert_eq!(fake.layer("7:1").cache, None);
}

#[test]
fn dm_over_two_disks_adds_their_ceilings() {
    let fake = FakeSys::new();
    usb_disk(&fake, "480\n", " 2.00\n", "usb-storage", "50\n");
    let vpci = "devices/pci0000:00/0000:00:1f.2";
    let sdev = format!("{vpci}/ata1/host0/target0:0:0/0:0:0:0");
    fake.dev(vpci, "bus/pci", Some("ahci"))
        .file("class/ata_link/link1/sata_spd", "3.0 Gbps\n")
        .dev(&sdev, "bus/scsi", Some("sd"))
        .block(&format!("{sdev}/block/sda"), "8:0", 100)
        .block("devices/virtual/block/dm-0", "252:0", 100)
        .file("devices/virtual/block/dm-0/dm/name", "vg-data\n");
    let slaves = fake.root().join("devices/virtual/block/dm-0/slaves");
    fs::create_dir_all(&slaves).unwrap();
    symlink(
        fake.root().join(format!("{sdev}/block/sda")),
        slaves.join("sda"),
    )
    .unwrap();
    symlink(
        fake.root().join(format!(
            "{XHCI}/usb1/1-1/1-1:1.0/host6/target6:0:0/6:0:0:0/block/sdb"
        )),
        slaves.join("sdb"),
    )
    .unwrap();
    let l = fake.layer("252:0");
    assert_eq!(l.transport, Transport::DeviceMapper);
    assert_eq!(l.dm_name.as_deref(), Some("vg-data"));
    assert_eq!(l.lower.len(), 2);
    let c = effective_ceiling(&l).unwrap();
    assert_eq!(c.name, "SATA II (3 Gb/s) + USB 2.0");
    assert!((c.hard.mb_per_sec() - 353.248).abs() < 1e-9);
}

#[test]
fn with_partitions_lists_the_disk_and_its_partitions() {
    let fake = FakeSys::new();
    usb_disk(&fake, "480\n", " 2.00\n", "usb-storage", "50\n");
    let all = fake.sysfs().with_partitions(parse_devno("8:16").unwrap());
    assert_eq!(
        all,
        [parse_devno("8:16").unwrap(), parse_devno("8:17").unwrap()]
    );
}

#[test]
fn scheduler_takes_the_bracketed_name() {
    assert_eq!(
        selected_choice("none [mq-deadline] kyber bfq").as_deref(),
        Some("mq-deadline")
    );
    assert_eq!(selected_choice("none").as_deref(), Some("none"));
    assert_eq!(selected_choice("a b"), None);
}

#[test]
fn a_file_on_a_fake_usb2_partition_gets_the_usb2_check() {
    use crate::{check_ceiling, DeviceChain};
    use iomark_model::device::TargetKind;
    use iomark_model::BytesPerSec;
    let fake = FakeSys::new();
    let file = iomark_testrig::require!(real_file_on_fake_usb2(&fake, "data.bin", "sdb/sdb1"));
    let chain = DeviceChain::for_path_in(&file, &fake.sysfs()).unwrap();
    let r = chain.report();
    assert_eq!(r.target, TargetKind::File);
    assert!(r.filesystem.is_some());
    assert_eq!(r.device.as_ref().unwrap().name, "sdb1");
    assert_eq!(chain.ceiling().unwrap().name, "USB 2.0");
    let w = check_ceiling(&chain, BytesPerSec(612e6), "read").unwrap();
    assert_eq!(
        w.message,
        "read 612 MB/s is above the USB 2.0 ceiling of about 40 MB/s: the page cache or compression is being measured"
    );
    assert!(check_ceiling(&chain, BytesPerSec(33e6), "read").is_none());
}

/// A network interface `name` under the device at `dev` (its `device`
/// link), reporting `speed` Mb/s, with the `/sys/class/net` link.
fn netdev(fake: &FakeSys, dev: &str, name: &str, speed: &str) {
    let net = format!("{dev}/net/{name}");
    fake.dev(&net, "class/net", None)
        .file(&format!("{net}/speed"), speed)
        .file(&format!("{net}/duplex"), "full\n")
        .file(&format!("{net}/operstate"), "up\n")
        .file(&format!("{net}/type"), "1\n");
    symlink("../..", fake.root().join(&net).join("device")).unwrap();
    let class = fake.root().join("class/net");
    fs::create_dir_all(&class).unwrap();
    symlink(
        rel_to(&class.join(name), &fake.root().join(&net)),
        class.join(name),
    )
    .unwrap();
}

/// A 2.5 Gb/s RTL8156 adapter (r8152) on a USB port at `usb_speed` Mb/s.
fn usb_nic(fake: &FakeSys, usb_speed: &str, version: &str) {
    let dev = format!("{XHCI}/usb1/1-2");
    let intf = format!("{dev}/1-2:1.0");
    fake.dev(XHCI, "bus/pci", Some("xhci_hcd"))
        .file(&format!("{XHCI}/current_link_speed"), "8.0 GT/s PCIe\n")
        .file(&format!("{XHCI}/current_link_width"), "1\n")
        .dev(&format!("{XHCI}/usb1"), "bus/usb", Some("usb"))
        .dev(&dev, "bus/usb", Some("usb"))
        .file(&format!("{dev}/speed"), usb_speed)
        .file(&format!("{dev}/version"), version)
        .file(&format!("{dev}/idVendor"), "0bda\n")
        .file(&format!("{dev}/idProduct"), "8156\n")
        .file(&format!("{dev}/product"), "USB 10/100/1G/2.5G LAN\n")
        .dev(&intf, "bus/usb", Some("r8152"))
        .file(&format!("{intf}/bInterfaceClass"), "ff\n")
        .file("module/r8152/version", "v1.12.13\n");
    netdev(fake, &intf, "enx00e04c680001", "2500\n");
}

#[test]
fn usb_nic_on_a_usb2_port_is_capped_by_the_port() {
    let fake = FakeSys::new();
    usb_nic(&fake, "480\n", " 3.20\n");
    let nic = fake
        .sysfs()
        .nic("enx00e04c680001")
        .expect("the fake tree has it");
    assert_eq!(nic.driver.as_deref(), Some("r8152"));
    assert_eq!(nic.driver_version.as_deref(), Some("v1.12.13"));
    assert_eq!(nic.speed_mbit, Some(2500));
    assert_eq!(nic.duplex.as_deref(), Some("full"));
    assert_eq!(nic.virtual_kind, None);
    let usb = nic.usb.as_ref().expect("a USB link under the adapter");
    assert_eq!((usb.device.as_str(), usb.speed_mbps), ("1-2", Some(480.0)));
    assert_eq!(nic.pcie.len(), 1, "the xHCI controller's PCIe link");
    let slowest = nic.slowest().unwrap();
    assert_eq!(slowest.name, "USB 2.0");
    let w = crate::nic_warnings(&nic, "this host's", Some(300e6));
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].kind, iomark_model::WarningKind::BusCapsLink);
    assert!(
        w[0].message
            .contains("a 2.5 Gb/s adapter on a 480 Mb/s USB 2.0 port"),
        "{}",
        w[0].message
    );
}

#[test]
fn usb_nic_on_a_5gbps_port_has_the_ethernet_link_as_its_ceiling() {
    let fake = FakeSys::new();
    usb_nic(&fake, "5000\n", " 3.20\n");
    let nic = fake.sysfs().nic("enx00e04c680001").unwrap();
    assert_eq!(nic.slowest().unwrap().name, "Ethernet 2.5 Gb/s");
    assert!(crate::nic_warnings(&nic, "this host's", Some(2.35e9)).is_empty());
}

/// An Intel I225 (igc) at `width` lanes of PCIe 2.0 behind a root port.
fn pcie_nic(fake: &FakeSys, speed: &str, width: u8) -> &'static str {
    let port = "devices/pci0000:00/0000:00:1c.0";
    let nic = "devices/pci0000:00/0000:00:1c.0/0000:03:00.0";
    fake.pci_link(port, "pcieport", "5.0 GT/s PCIe", 1)
        .pci_link(nic, "igc", "5.0 GT/s PCIe", width)
        .file("module/igc/version", "6.1.0\n");
    netdev(fake, nic, "enp3s0", speed);
    nic
}

#[test]
fn pcie_nic_shows_its_links_and_driver_version() {
    let fake = FakeSys::new();
    pcie_nic(&fake, "2500\n", 1);
    let nic = fake.sysfs().nic("enp3s0").unwrap();
    assert_eq!(nic.driver.as_deref(), Some("igc"));
    assert_eq!(nic.driver_version.as_deref(), Some("6.1.0"));
    let addrs: Vec<&str> = nic.pcie.iter().map(|p| p.address.as_str()).collect();
    assert_eq!(addrs, ["0000:03:00.0", "0000:00:1c.0"]);
    assert_eq!(nic.bus_ceilings[0].name, "PCIe 2.0 x1");
    // PCIe 2.0 x1 carries 500 MB/s = 4 Gb/s: the 2.5 Gb/s link is slower.
    assert_eq!(nic.slowest().unwrap().name, "Ethernet 2.5 Gb/s");
    assert!(crate::nic_warnings(&nic, "this host's", Some(2.3e9)).is_empty());
}

#[test]
fn a_nic_reporting_less_than_it_carries_is_misreported() {
    // The review's case: 1000 Mb/s reported for a 2.5 Gb/s link.
    let fake = FakeSys::new();
    pcie_nic(&fake, "1000\n", 1);
    let nic = fake.sysfs().nic("enp3s0").unwrap();
    let w = crate::nic_warnings(&nic, "this host's", Some(2.35e9));
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].kind, iomark_model::WarningKind::LinkSpeedWrong);
    assert!(
        w[0].message
            .contains("reports 1 Gb/s, measured 2.35 Gb/s: the reported link speed is wrong"),
        "{}",
        w[0].message
    );
    // Within the reported speed: nothing to say.
    assert!(crate::nic_warnings(&nic, "this host's", Some(0.94e9)).is_empty());
}

#[test]
fn a_virtual_interface_is_virtual_not_misreported() {
    let fake = FakeSys::new();
    fake.dev("devices/virtual/net/veth0", "class/net", None)
        .file("devices/virtual/net/veth0/speed", "10000\n")
        .file(
            "devices/virtual/net/veth0/uevent",
            "INTERFACE=veth0\nIFINDEX=7\n",
        )
        .file("devices/virtual/net/veth0/type", "1\n");
    // veth names no DEVTYPE; the bridge does.
    fake.dev("devices/virtual/net/br0", "class/net", None).file(
        "devices/virtual/net/br0/uevent",
        "DEVTYPE=bridge\nINTERFACE=br0\n",
    );
    let class = fake.root().join("class/net");
    symlink("../../devices/virtual/net/veth0", class.join("veth0")).unwrap();
    symlink("../../devices/virtual/net/br0", class.join("br0")).unwrap();
    let veth = fake.sysfs().nic("veth0").unwrap();
    assert_eq!(veth.virtual_kind.as_deref(), Some("virtual"));
    assert_eq!(veth.speed_mbit, Some(10000));
    assert!(veth.slowest().is_none() && veth.hops.is_empty());
    let w = crate::nic_warnings(&veth, "this host's", Some(25e9));
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].kind, iomark_model::WarningKind::VirtualLink);
    assert!(w[0].message.contains("is virtual"), "{}", w[0].message);
    let br = fake.sysfs().nic("br0").unwrap();
    assert_eq!(br.virtual_kind.as_deref(), Some("bridge"));
    assert_eq!(br.speed_mbit, None);
    assert!(fake.sysfs().nic("eth9").is_none());
}

#[test]
fn a_loop_device_over_a_file_in_memory_is_found_under_a_partition_and_a_stack() {
    let fake = FakeSys::new();
    // The backing files are real, so their file systems are real: one in
    // /dev/shm (tmpfs), one on the disk the tests run from.
    let shm = Path::new("/dev/shm");
    iomark_testrig::require!(shm.is_dir(), "no /dev/shm");
    let in_memory = tempfile::NamedTempFile::new_in(shm).unwrap();
    let on_disk = tempfile::NamedTempFile::new_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    for (dir, devno, file) in [
        ("loop4", "7:4", in_memory.path()),
        ("loop5", "7:5", on_disk.path()),
    ] {
        fake.block(&format!("devices/virtual/block/{dir}"), devno, 2048)
            .file(
                &format!("devices/virtual/block/{dir}/loop/backing_file"),
                &format!("{}\n", file.display()),
            );
    }
    // loop4p1, a partition of the loop device in memory.
    fake.block("devices/virtual/block/loop4/loop4p1", "259:1", 1024)
        .file("devices/virtual/block/loop4/loop4p1/partition", "1\n");
    // dm-0 stacked on loop4p1; dm-1 on loop5.
    for (dm, devno, under) in [
        ("dm-0", "253:0", "loop4/loop4p1"),
        ("dm-1", "253:1", "loop5"),
    ] {
        fake.block(&format!("devices/virtual/block/{dm}"), devno, 1024);
        let slaves = fake
            .root()
            .join(format!("devices/virtual/block/{dm}/slaves"));
        fs::create_dir_all(&slaves).unwrap();
        let target = fake.root().join(format!("devices/virtual/block/{under}"));
        let name = Path::new(under).file_name().unwrap();
        symlink(rel_to(&slaves.join("x"), &target), slaves.join(name)).unwrap();
    }
    let sys = fake.sysfs();
    let dev = |s: &str| parse_devno(s).unwrap();
    for found in ["7:4", "259:1", "253:0"] {
        assert_eq!(
            sys.memory_backed_loop(dev(found)).as_deref(),
            Some(in_memory.path()),
            "{found}"
        );
    }
    for clean in ["7:5", "253:1"] {
        assert_eq!(sys.memory_backed_loop(dev(clean)), None, "{clean}");
    }
}
