//! What a disk's own sysfs directory says of it: its identity, its request
//! queue, a loop device's backing file; and the device numbers that lead
//! there.

use std::path::Path;

use iomark_model::device::{
    BlockCache, BlockLayer, DevNo, DiskIdentity, LoopBacking, QueueInfo, Transport,
};
use iomark_model::Bytes;

use crate::read::{base, flag, num, text};

pub(super) fn loop_backing(disk: &Path) -> Option<LoopBacking> {
    let l = disk.join("loop");
    let backing_file = text(&l.join("backing_file"))?;
    Some(LoopBacking {
        backing_served_by: served_by(Path::new(&backing_file)).map(str::to_owned),
        backing_file,
        offset: Bytes(num(&l.join("offset")).unwrap_or(0)),
        size_limit: Bytes(num(&l.join("sizelimit")).unwrap_or(0)),
        direct_io: flag(&l.join("dio")).unwrap_or(false),
    })
}

/// A block cache in front of the disk at `disk` (its sysfs directory),
/// over the layers `lower` it sits on:
///
/// - bcache: its own `bcache/` directory, the mode in brackets in
///   `cache_mode` and whether a cache device is attached in `state`;
/// - an LVM cache: the kernel keeps a dm device's table (its target type)
///   out of sysfs, but LVM names a cached volume's hidden parts, and a dm
///   device over one named `*_corig` is a dm-cache volume, over `*_wcorig`
///   a dm-writecache one (lvmcache(7)). A cache made with dmsetup alone,
///   under other names, is not seen.
pub(super) fn block_cache(disk: &Path, lower: &[BlockLayer]) -> Option<BlockCache> {
    let bcache = disk.join("bcache");
    if let Some(modes) = text(&bcache.join("cache_mode")) {
        let mode = selected_choice(&modes);
        let state = text(&bcache.join("state"));
        let name = base(disk);
        return Some(BlockCache {
            kind: "bcache".into(),
            evidence: format!(
                "/sys/block/{name}/bcache/cache_mode says {}, state says {}",
                mode.as_deref().unwrap_or("nothing"),
                state.as_deref().unwrap_or("nothing")
            ),
            mode,
            state,
        });
    }
    lower.iter().find_map(|l| {
        let part = l.dm_name.as_deref()?;
        let kind = if part.ends_with("_wcorig") {
            "dm-writecache"
        } else if part.ends_with("_corig") {
            "dm-cache"
        } else {
            return None;
        };
        Some(BlockCache {
            kind: kind.into(),
            mode: None,
            state: None,
            evidence: format!(
                "it sits on {} named {part}, LVM's name for a {kind} volume's origin",
                l.name
            ),
        })
    })
}

/// statfs(2)'s `f_type` of the file system holding `path`: its magic
/// number (linux/magic.h).
fn fs_magic(path: &Path) -> Option<u32> {
    // f_type's C type differs between architectures; the magic numbers
    // are 32 bits wide.
    #[allow(clippy::unnecessary_cast)]
    rustix::fs::statfs(path).ok().map(|st| st.f_type as u32)
}

/// What answers for the file at `path` when a daemon or a server does: a
/// FUSE daemon or a network file system's server, each with a cache of
/// its own behind the kernel's.
fn served_by(path: &Path) -> Option<&'static str> {
    // From linux/magic.h and the file systems' own headers (virtiofs is
    // FUSE; CIFS and SMB2 share SMB's name).
    const SERVED: [(u32, &str); 7] = [
        (0x6573_5546, "FUSE"),
        (0x6969, "NFS"),
        (0x517b, "SMB"),
        (0xff53_4d42, "SMB"),
        (0xfe53_4d42, "SMB"),
        (0x0102_1997, "9P"),
        (0x00c3_6400, "Ceph"),
    ];
    let kind = fs_magic(path)?;
    SERVED.iter().find(|(m, _)| *m == kind).map(|(_, n)| *n)
}

/// Whether `path` is on a file system whose pages are memory (tmpfs,
/// ramfs).
pub(super) fn in_memory(path: &Path) -> bool {
    const TMPFS_MAGIC: u32 = 0x0102_1994;
    const RAMFS_MAGIC: u32 = 0x8584_58f6;
    matches!(fs_magic(path), Some(TMPFS_MAGIC | RAMFS_MAGIC))
}

/// The device holding a file, by `st_dev`.
pub(super) fn backing_devno(path: &Path) -> Option<DevNo> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(devno_of(m.dev()))
}

pub(crate) fn devno_of(dev: u64) -> DevNo {
    DevNo {
        major: rustix::fs::major(dev),
        minor: rustix::fs::minor(dev),
    }
}

pub(super) fn identity(disk: &Path, transport: Transport) -> DiskIdentity {
    let dev = disk.join("device");
    let mut id = DiskIdentity::default();
    match transport {
        Transport::Virtio => {
            // device/vendor is the virtio vendor id (0x1af4), not a disk maker.
            id.serial = text(&disk.join("serial"));
        }
        Transport::Nvme => {
            id.model = text(&dev.join("model"));
            id.serial = text(&dev.join("serial"));
            id.firmware = text(&dev.join("firmware_rev"));
            id.wwn = text(&disk.join("wwid"));
        }
        Transport::Mmc => {
            id.model = text(&dev.join("name"));
            id.vendor = text(&dev.join("manfid"));
            id.serial = text(&dev.join("serial"));
            id.firmware = text(&dev.join("fwrev"));
        }
        Transport::Sata | Transport::Usb | Transport::Scsi => {
            id.vendor = text(&dev.join("vendor"));
            id.model = text(&dev.join("model"));
            id.firmware = text(&dev.join("rev"));
            id.wwn = text(&dev.join("wwid"));
            id.serial = vpd_serial(&dev.join("vpd_pg80"));
        }
        _ => {}
    }
    id
}

/// The unit serial number from the binary VPD page 0x80: a 4-byte header
/// whose last byte is the length, then the ASCII serial.
fn vpd_serial(path: &Path) -> Option<String> {
    let raw = std::fs::read(path).ok()?;
    let len = usize::from(*raw.get(3)?);
    let body = raw.get(4..4 + len).or_else(|| raw.get(4..))?;
    let s = String::from_utf8_lossy(body);
    let t = s.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    (!t.is_empty()).then(|| t.to_string())
}

pub(super) fn queue(disk: &Path) -> QueueInfo {
    let q = disk.join("queue");
    QueueInfo {
        rotational: flag(&q.join("rotational")),
        logical_block_size: num(&q.join("logical_block_size")),
        physical_block_size: num(&q.join("physical_block_size")),
        scheduler: text(&q.join("scheduler")).and_then(|s| selected_choice(&s)),
        nr_requests: num(&q.join("nr_requests")),
        max_sectors_kb: num(&q.join("max_sectors_kb")),
        write_cache: text(&q.join("write_cache")),
    }
}

/// The selected word of a sysfs choice list, in brackets: a queue's
/// scheduler (`none [mq-deadline] kyber bfq` → `mq-deadline`; a lone
/// `none` stays), bcache's `cache_mode`.
pub(crate) fn selected_choice(s: &str) -> Option<String> {
    if let (Some(a), Some(b)) = (s.find('['), s.find(']')) {
        if a < b {
            return Some(s[a + 1..b].to_string());
        }
    }
    let t = s.trim();
    (!t.is_empty() && !t.contains(' ')).then(|| t.to_string())
}
