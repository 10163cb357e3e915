//! iperf3's spellings under `iomark net`: a test on loopback between
//! `iomark net -s` and `iomark net -c`, both with iperf3's `-V`.

use std::time::Duration;

use crate::common::*;
use crate::net_common::*;

#[test]
fn dash_s_serves_dash_c_runs_and_dash_v_adds_the_cookie_and_parameters() {
    let port = free_port();
    let p = port.to_string();
    let server = Proc::spawn(&mut iomark_cmd(&[
        "net",
        "-s",
        "-1",
        "-V",
        "-B",
        "127.0.0.1",
        "-p",
        &p,
    ]));
    wait_listening(port);
    let client = Proc::spawn(&mut iomark_cmd(&[
        "net",
        "-c",
        "127.0.0.1",
        "-p",
        &p,
        "-t",
        "1",
        "-P",
        "2",
        "-V",
        "--no-store",
    ]))
    .finish(Duration::from_secs(60));
    let text = ok(&client);
    let server = server.finish(Duration::from_secs(30));
    let served = ok(&server);

    for (who, out) in [("client", &text), ("server", &served)] {
        assert!(
            out.contains(
                "Starting Test: protocol: TCP, 2 streams, 131072 byte blocks, \
                 omitting 0 seconds, 1 second test, tos 0"
            ),
            "{who}: {out}"
        );
        assert!(
            out.contains("Test Complete. Summary Results:"),
            "{who}: {out}"
        );
    }
    assert!(text.contains("client: 127.0.0.1:"), "the settings: {text}");
    assert!(served.contains("server: port "), "the settings: {served}");
    assert!(
        text.contains("sender: max cwnd"),
        "per-stream details: {text}"
    );
    assert!(text.contains("iperf Done."), "{text}");
    // Both ends print the same test's cookie.
    let cookie = |t: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix("Cookie: "))
            .map(str::to_string)
    };
    let c = cookie(&text).expect("the client prints the cookie");
    assert_eq!(c.len(), 36, "{c}");
    assert_eq!(cookie(&served), Some(c));
}

#[test]
fn without_dash_v_the_output_is_iperf3s_plain_one() {
    let port = free_port();
    let _server = iomark_server(port, &["-1", "-B", "127.0.0.1"]);
    let out = iomark_client(port, &["-t", "1", "--no-store"]);
    let text = ok(&out);
    assert!(!text.contains("Cookie:"), "{text}");
    assert!(!text.contains("Starting Test:"), "{text}");
    assert!(text.contains("iperf Done."), "{text}");
}

#[test]
fn dash_v_is_still_the_version_on_top() {
    let out = ok(&iomark_ok(&["-V"]));
    assert!(out.starts_with("iomark "), "{out}");
    let out = iomark(&["net", "-V"]);
    assert_eq!(out.status.code(), Some(2), "net alone takes -s or -c first");
}
