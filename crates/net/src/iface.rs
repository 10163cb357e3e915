//! The local network interface behind a connection, from sysfs: name,
//! driver and link speed, so a stored run says which adapter it measured.

use std::net::IpAddr;
use std::path::Path;

use iomark_model::net::NetInterface;

use crate::sys;

/// The interface that holds `local`, with its driver and speed when sysfs
/// reports them (virtual interfaces report no speed).
pub fn describe(local: IpAddr) -> Option<NetInterface> {
    let name = sys::interface_of(local)?;
    let base = Path::new("/sys/class/net").join(&name);
    let driver = std::fs::read_link(base.join("device/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| {
            // Virtual devices have no `device`; their kind is in uevent (veth, bridge).
            let uevent = std::fs::read_to_string(base.join("uevent")).ok()?;
            uevent
                .lines()
                .find_map(|l| l.strip_prefix("DEVTYPE=").map(str::to_owned))
        });
    let speed_mbit = std::fs::read_to_string(base.join("speed"))
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .filter(|&s| s > 0)
        .map(|s| s as u64);
    Some(NetInterface {
        name,
        driver,
        speed_mbit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_found() {
        let lo = describe("127.0.0.1".parse().unwrap()).expect("127.0.0.1 is on an interface");
        assert_eq!(lo.name, "lo");
    }
}
