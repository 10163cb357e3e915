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

/// iperf3's options iomark does not take name the option and say why, on
/// either end, instead of clap's bare "unexpected argument".
#[test]
fn iperf3_options_iomark_lacks_are_refused_with_the_reason() {
    for (args, flag, why) in [
        (&["-c", "127.0.0.1", "--gsro"][..], "--gsro", "GSO/GRO"),
        (&["-c", "127.0.0.1", "--sctp"], "--sctp", "SCTP"),
        (&["-c", "127.0.0.1", "-L", "5"], "-L", "flow labels"),
        (
            &["-c", "127.0.0.1", "--skip-rx-copy"],
            "--skip-rx-copy",
            "MSG_TRUNC",
        ),
        (&["-s", "-D"], "-D", "does not daemonize"),
        (&["-s", "--pidfile", "/tmp/x"], "--pidfile", "no pid file"),
        (
            &["-s", "--idle-timeout", "5"],
            "--idle-timeout",
            "--max-duration",
        ),
    ] {
        let mut full = vec!["net"];
        full.extend_from_slice(args);
        let out = iomark(&full);
        let err = fails_with(&out, &format!("iperf3's {flag} is not supported: "));
        assert!(err.contains(why), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // Not one of iperf3's: clap's own line.
    fails_with(
        &iomark(&["net", "-c", "h", "--frobnicate"]),
        "unexpected argument",
    );
}
