//! Free loopback ports for servers the tests start (iperf3, iomark's own).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::net::{TcpListener, UdpSocket};

/// A port on 127.0.0.1 that nothing holds right now, for TCP and UDP.
///
/// It is drawn at random from outside the kernel's ephemeral range
/// (`net.ipv4.ip_local_port_range`): a port the kernel handed out for
/// `bind(0)` and then freed is the very kind it hands to the next outgoing
/// connection, so between the check and the server's bind another test's
/// client could take it. Outside that range only a server that asks for
/// the port by number can, and the random draw makes that unlikely.
pub fn free_port() -> u16 {
    let (first, last) = unclaimed_range();
    let mut draw = RandomState::new().build_hasher();
    loop {
        draw.write_u8(0);
        let port = first + (draw.finish() % u64::from(last - first + 1)) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok()
            && UdpSocket::bind(("127.0.0.1", port)).is_ok()
        {
            return port;
        }
    }
}

/// The ports below the ephemeral range (from 10000), or above it when it
/// starts too low to leave a thousand.
fn unclaimed_range() -> (u16, u16) {
    let ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| {
            let mut it = t.split_whitespace().map(|n| n.parse::<u16>().ok());
            Some((it.next()??, it.next()??))
        })
        .unwrap_or((32768, 60999));
    if ephemeral.0 > 11_024 {
        (10_000, ephemeral.0 - 1)
    } else {
        (ephemeral.1.saturating_add(1).max(1024), u16::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_port_can_be_bound_and_is_outside_the_ephemeral_range() {
        let (first, last) = unclaimed_range();
        for _ in 0..20 {
            let port = free_port();
            assert!(
                (first..=last).contains(&port),
                "{port} not in {first}..={last}"
            );
            TcpListener::bind(("127.0.0.1", port)).expect("the port is free");
        }
    }
}
