//! The link checks of a net run on a veth pair between two namespaces: a
//! veth reports 10000 Mb/s but is no link. Shaped below that (tc tbf), the
//! goodput stays under the reported speed and nothing is said; unshaped, on
//! a machine where it carries more than 10 Gb/s, iomark must call the link
//! virtual, never misreported. Needs root, `ip` and `tc`; skips with a
//! reason otherwise.

use std::process::Command;
use std::time::Duration;

use crate::common::*;
use crate::net_common::*;

/// An iomark server in the rig's server namespace and an iomark client in
/// its client namespace; the client's output.
fn iomark_test(rig: &Rig, secs: &str) -> std::process::Output {
    let port = free_port().to_string();
    let server = Proc::spawn(
        Command::new("ip")
            .args(["netns", "exec", &rig.server_ns])
            .args([IOMARK, "net", "server", "-1", "--no-store", "-p", &port]),
    );
    rig.wait_server_listening(&port);
    let out = Proc::spawn(
        Command::new("ip")
            .args(["netns", "exec", &rig.client_ns])
            .args([
                IOMARK,
                "net",
                "client",
                "10.201.0.2",
                "-p",
                &port,
                "-t",
                secs,
            ])
            .arg("--no-store"),
    )
    .finish(Duration::from_secs(60));
    assert_ok(&out, "iomark client in the rig");
    let _ = server.finish(Duration::from_secs(20));
    out
}

/// The client's goodput from its iperf3-shaped receiver line, bit/s.
fn receiver_bits(text: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.ends_with("receiver"))
        .unwrap_or_else(|| panic!("no receiver line in:\n{text}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.ends_with("bits/sec"))
        .expect("a rate");
    let v: f64 = words[at - 1].parse().expect("a number");
    v * match words[at] {
        "Gbits/sec" => 1e9,
        "Mbits/sec" => 1e6,
        "Kbits/sec" => 1e3,
        _ => 1.0,
    }
}

/// The rig, or why it cannot be built here (for `require!`).
fn rig(rate: Option<&str>) -> Result<Rig, String> {
    can_build_rig()?;
    Rig::up(rate).map_err(|e| format!("cannot build the network-namespace rig: {e}"))
}

#[test]
fn info_shows_a_veth_as_virtual_with_its_reported_speed() {
    let rig = require!(rig(None));
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            &rig.client_ns,
            IOMARK,
            "info",
            &rig.client_if,
        ])
        .env("COLUMNS", "400")
        .output()
        .expect("run iomark info");
    assert_ok(&out, "iomark info on a veth");
    let text = stdout(&out);
    assert!(text.contains("virtual (veth)"), "{text}");
    assert!(
        text.contains("10 Gb/s"),
        "a veth reports 10000 Mb/s:\n{text}"
    );
    assert!(text.contains("not a ceiling"), "{text}");
}

#[test]
fn a_shaped_veth_below_its_reported_speed_raises_no_link_warning() {
    let rig = require!(rig(Some("400mbit")));
    let out = iomark_test(&rig, "2");
    let bits = receiver_bits(&stdout(&out));
    // Wrapped at 80 columns in a pipe: read with its lines joined.
    let err = flat(&stderr(&out));
    println!("shaped to 400 Mbit/s: {:.0} Mbit/s\n{err}", bits / 1e6);
    assert!(bits < 10e9, "a 400 Mbit/s shaper let {bits} bit/s through");
    assert!(!err.contains("is virtual"), "{err}");
    assert!(!err.contains("link speed is wrong"), "{err}");
}

#[test]
fn an_unshaped_veth_above_its_reported_speed_is_virtual_not_misreported() {
    let rig = require!(rig(None));
    let out = iomark_test(&rig, "3");
    let bits = receiver_bits(&stdout(&out));
    // Wrapped at 80 columns in a pipe: read with its lines joined, a
    // warning at a time.
    let err = flat(&stderr(&out));
    println!("unshaped veth: {:.2} Gbit/s\n{err}", bits / 1e9);
    // Never "misreported", whatever this machine carries.
    assert!(!err.contains("link speed is wrong"), "{err}");
    if bits > 10.1e9 {
        for end in ["this host's interface", "the peer's interface"] {
            assert!(
                err.split("iomark: warning: ")
                    .any(|w| w.contains(end) && w.contains("is virtual (veth)")),
                "{end} not called virtual:\n{err}"
            );
        }
    } else {
        // This machine (loaded, or slow) carries less than the veth's
        // number: nothing to say, and nothing must be said.
        eprintln!(
            "note: the veth carried {:.2} Gbit/s, under its 10 Gb/s; the above-speed branch \
             did not run here",
            bits / 1e9
        );
        assert!(!err.contains("is virtual"), "{err}");
    }
}
