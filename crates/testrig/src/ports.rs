//! Free loopback ports for servers the tests start (iperf3, iomark's own).

use std::collections::hash_map::RandomState;
use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::net::{TcpListener, UdpSocket};
use std::sync::Mutex;

/// Every port [`free_port`] has handed out in this process.
static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// A port on 127.0.0.1 that nothing holds right now, for TCP and UDP.
///
/// It is drawn at random from outside the kernel's ephemeral range
/// (`net.ipv4.ip_local_port_range`): a port the kernel handed out for
/// `bind(0)` and then freed is the very kind it hands to the next outgoing
/// connection, so between the check and the server's bind another test's
/// client could take it. Outside that range only a server that asks for
/// the port by number can.
///
/// No port is handed out twice in one process. A test binary runs its
/// tests at once, and each asks for ports by number: a port drawn again
/// while the first test's server still listens there, or before it binds,
/// or for a test that wants a port where nothing listens, let one test's
/// client reach another's server (seen under load as "the control
/// connection closed unexpectedly"). The suite draws a few hundred of the
/// 22,768 ports below the ephemeral range, so they do not run out.
pub fn free_port() -> u16 {
    free_ports_in_a_row(1)
}

/// The first of `n` ports in a row that are each free as [`free_port`]'s,
/// for a client that numbers its streams from a port up (`--cport`).
pub fn free_ports_in_a_row(n: u16) -> u16 {
    let (first, last) = unclaimed_range();
    let mut draw = RandomState::new().build_hasher();
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    let free = |port: u16, handed_out: &BTreeSet<u16>| {
        !handed_out.contains(&port)
            && TcpListener::bind(("127.0.0.1", port)).is_ok()
            && UdpSocket::bind(("127.0.0.1", port)).is_ok()
    };
    loop {
        draw.write_u8(0);
        let start = first + (draw.finish() % u64::from(last - first + 2 - n)) as u16;
        let run = start..start + n;
        if run.clone().all(|port| free(port, &handed_out)) {
            handed_out.extend(run);
            return start;
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
            if let Err(e) = TcpListener::bind(("127.0.0.1", port)) {
                // Nothing in this process holds a port handed out, so
                // another process took it after the check: name it (a
                // server a test binary before this one left running).
                let holder = std::process::Command::new("ss")
                    .args(["-Htlnp", &format!("sport = :{port}")])
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                    .unwrap_or_else(|e| format!("(ss: {e})"));
                panic!("{port} was free when drawn and is not now ({e}); held by: {holder}");
            }
        }
    }

    #[test]
    fn no_port_is_handed_out_twice() {
        let drawn: Vec<u16> = (0..2000).map(|_| free_port()).collect();
        let distinct: BTreeSet<u16> = drawn.iter().copied().collect();
        assert_eq!(distinct.len(), drawn.len());
        let first = free_ports_in_a_row(3);
        let run = [first, first + 1, first + 2];
        assert!(run.iter().all(|p| !distinct.contains(p)), "{run:?}");
    }
}
