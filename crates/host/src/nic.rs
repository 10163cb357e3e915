//! A network interface's chain, as a disk's: driver and firmware, the link
//! speed it reports, the bus under the adapter (USB port, PCIe links) and
//! their ceilings; and the checks of a measured goodput against them.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use iomark_model::net::{mbit_label, NicChain};
use iomark_model::{Warning, WarningKind};

use crate::read::{link_name, num, text};
use crate::sysfs::Sysfs;

impl Sysfs {
    /// The interface `name` and the links under it; none when
    /// `<root>/class/net/<name>` does not exist.
    pub fn nic(&self, name: &str) -> Option<NicChain> {
        let base = self.root().join("class/net").join(name);
        if !base.exists() {
            return None;
        }
        // A physical adapter has a `device`; veth, bridges, tun and lo do not.
        let device = base.join("device").canonicalize().ok();
        let (hops, facts, driver, virtual_kind) = match &device {
            Some(dev) => {
                let hops = self.hops(dev);
                let facts = self.link_facts(dev, &hops);
                let hops = hops.into_iter().map(|(_, h)| h).collect();
                (hops, Some(facts), link_name(&dev.join("driver")), None)
            }
            None => {
                let kind = devtype(&base).unwrap_or_else(|| {
                    if num::<u32>(&base.join("type")) == Some(772) {
                        "loopback".into()
                    } else {
                        "virtual".into()
                    }
                });
                (Vec::new(), None, Some(kind.clone()), Some(kind))
            }
        };
        let driver_version = device
            .as_ref()
            .and_then(|d| text(&d.join("driver/module/version")))
            .or_else(|| {
                let d = driver.as_deref()?;
                text(&self.root().join("module").join(d).join("version"))
            });
        // `speed` reads -1 or fails (EINVAL) when the link is down.
        let speed_mbit = text(&base.join("speed"))
            .and_then(|s| s.parse::<i64>().ok())
            .filter(|&s| s > 0)
            .map(|s| s as u64);
        let (usb, pcie, bus_ceilings) = match facts {
            Some(f) => (f.usb, f.pcie, f.ceilings),
            None => (None, Vec::new(), Vec::new()),
        };
        Some(NicChain {
            name: name.to_string(),
            driver,
            driver_version,
            firmware_version: None,
            speed_mbit,
            duplex: text(&base.join("duplex")).filter(|d| d != "unknown"),
            operstate: text(&base.join("operstate")),
            virtual_kind,
            hops: hops.into_iter().filter(|h| h.subsystem.is_some()).collect(),
            usb,
            pcie,
            bus_ceilings,
        })
    }
}

fn devtype(base: &Path) -> Option<String> {
    text(&base.join("uevent"))?
        .lines()
        .find_map(|l| l.strip_prefix("DEVTYPE=").map(str::to_owned))
}

/// The chain of interface `name` on this machine: sysfs, then what the
/// driver itself says through the ethtool ioctl (its version and the
/// adapter's firmware, which sysfs does not carry).
pub fn nic_chain(name: &str) -> Option<NicChain> {
    let mut nic = Sysfs::system().nic(name)?;
    if let Some(info) = ethtool_drvinfo(name) {
        // veth names no DEVTYPE in sysfs; its driver says what it is.
        if nic.virtual_kind.as_deref() == Some("virtual") && info.driver.is_some() {
            nic.virtual_kind.clone_from(&info.driver);
            nic.driver.clone_from(&info.driver);
        }
        nic.driver = nic.driver.or(info.driver);
        // The driver's own answer is the one ethtool -i shows.
        nic.driver_version = info.version.or(nic.driver_version);
        nic.firmware_version = info.firmware;
    }
    Some(nic)
}

/// What `ETHTOOL_GDRVINFO` returns, empty strings as none.
#[derive(Debug, Default)]
struct DrvInfo {
    driver: Option<String>,
    version: Option<String>,
    firmware: Option<String>,
}

/// `struct ethtool_drvinfo` of linux/ethtool.h.
#[repr(C)]
struct EthtoolDrvinfo {
    cmd: u32,
    driver: [u8; 32],
    version: [u8; 32],
    fw_version: [u8; 32],
    bus_info: [u8; 32],
    erom_version: [u8; 32],
    reserved2: [u8; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

const ETHTOOL_GDRVINFO: u32 = 0x0000_0003;

fn ethtool_drvinfo(name: &str) -> Option<DrvInfo> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return None;
    }
    // SAFETY: plain socket(2); the fd is owned right below.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` is a fresh descriptor nobody else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: both are plain C structs of integers and byte arrays (and a
    // pointer in the ifreq union, set below), for which zero is valid.
    let mut info: EthtoolDrvinfo = unsafe { std::mem::zeroed() };
    info.cmd = ETHTOOL_GDRVINFO;
    // SAFETY: as above.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    ifr.ifr_ifru.ifru_data = (&mut info as *mut EthtoolDrvinfo).cast();
    // SAFETY: SIOCETHTOOL with ETHTOOL_GDRVINFO reads the name from `ifr`
    // and writes at most one ethtool_drvinfo through `ifru_data`, which
    // points to `info`, alive and writable for the whole call.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCETHTOOL, &mut ifr) };
    if rc != 0 {
        return None;
    }
    let s = |b: &[u8]| {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        let t = String::from_utf8_lossy(&b[..end]).trim().to_string();
        (!t.is_empty() && t != "N/A").then_some(t)
    };
    Some(DrvInfo {
        driver: s(&info.driver),
        version: s(&info.version),
        firmware: s(&info.fw_version),
    })
}

/// Doubts about an interface that carried `goodput_bits` (bits per second,
/// the fastest direction), `end` naming it in the message (`this host's`,
/// `the peer's`):
///
/// - a bus under the adapter slower than its link (a 2.5 Gb/s adapter on a
///   480 Mb/s USB 2.0 port): the bus sets the pace;
/// - goodput above the reported speed of a physical link: the reported
///   speed is wrong (payload cannot beat the wire);
/// - the same on a virtual interface: its speed is a number the driver
///   picked, not a link, so nothing is misreported.
pub fn nic_warnings(nic: &NicChain, end: &str, goodput_bits: Option<f64>) -> Vec<Warning> {
    let mut out = Vec::new();
    let name = &nic.name;
    if let (Some(link), Some(bus)) = (nic.link_ceiling(), nic.slowest()) {
        if bus.hard.0 < link.hard.0 {
            let port = match nic.usb.as_ref().and_then(|u| u.speed_mbps) {
                Some(s) => format!("a {} {} port", mbit_label(s as u64), bus.name),
                None => format!("a {} link", bus.name),
            };
            out.push(Warning::new(
                WarningKind::BusCapsLink,
                format!(
                    "{end} interface {name}: a {} adapter on {port}: the bus caps it at about {}; \
                     plug it into a faster port",
                    mbit_label(nic.speed_mbit.unwrap_or(0)),
                    bits(bus.hard.0 * 8.0)
                ),
            ));
        }
    }
    let (Some(mbit), Some(measured)) = (nic.speed_mbit, goodput_bits) else {
        return out;
    };
    let reported = mbit as f64 * 1e6;
    // 1 % for the two ends' clocks and interval edges.
    if measured <= reported * 1.01 {
        return out;
    }
    let msg = match &nic.virtual_kind {
        Some(kind) => Warning::new(
            WarningKind::VirtualLink,
            format!(
                "{end} interface {name} is virtual ({kind}): it reports {}, measured {}; \
                 its speed is a number the driver reports, not a link, so the figure \
                 measures the CPUs and memory of this machine",
                mbit_label(mbit),
                bits(measured)
            ),
        ),
        None => Warning::new(
            WarningKind::LinkSpeedWrong,
            format!(
                "{end} interface {name} reports {}, measured {}: the reported link speed is \
                 wrong; check the link with `ethtool {name}` and trust the measured figure",
                mbit_label(mbit),
                bits(measured)
            ),
        ),
    };
    out.push(msg);
    out
}

/// `2.35 Gb/s`, `425 Mb/s`.
fn bits(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2} Gb/s", v / 1e9)
    } else {
        format!("{:.0} Mb/s", v / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_virtual_and_ethtool_does_not_break_it() {
        let lo = nic_chain("lo").expect("every Linux machine has lo");
        assert_eq!(lo.virtual_kind.as_deref(), Some("loopback"));
        assert!(lo.slowest().is_none());
        assert!(nic_chain("no-such-if0").is_none());
        assert!(ethtool_drvinfo("a-name-far-too-long-for-linux").is_none());
    }
}
