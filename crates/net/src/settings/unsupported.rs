//! iperf3 3.21's options that `iomark net` does not take, each with why and
//! what to do instead, so an iperf3 user's command line fails with a reason
//! rather than clap's bare "unexpected argument".

/// Why `flag` (as typed: `--gsro`, `-D`) is not taken, when it is one of
/// iperf3's.
pub fn why_not(flag: &str) -> Option<&'static str> {
    let name = flag.split_once('=').map_or(flag, |(n, _)| n);
    Some(match name {
        "--gsro" => "UDP GSO/GRO is not implemented: iomark sends and receives one datagram per system call",
        "--pacing-timer" => "iomark paces each UDP stream to -b on that stream's own thread; there is no timer to set",
        "--cntl-ka" => "iomark's client sets no TCP keepalive on the control connection (its server probes a UDP client by itself)",
        "--skip-rx-copy" => "receives with MSG_TRUNC are not implemented: iomark's receiver copies every byte, as iperf3 does without it",
        "--mptcp" | "-m" => "Multipath TCP is not implemented: iomark opens plain TCP streams",
        "--flowlabel" | "-L" => "IPv6 flow labels are not set by iomark",
        "--sctp" | "--nstreams" | "--xbind" | "-X" => "SCTP is not implemented: test with TCP, or UDP with -u",
        "--extra-data" => "iomark's client sends no extra data with its parameters (a title is -T)",
        "--repeating-payload" => "iomark's payload is random; a repeating one is not implemented",
        "--dont-fragment" => "setting the DF bit on UDP datagrams is not implemented",
        "--udp-counters-64bit" => "iomark's UDP header counters are not chosen by a flag",
        "--snd-timeout" => "TCP_USER_TIMEOUT is not set by iomark",
        "--rcv-timeout" => "the receive timeout is the server's (iomark net server --rcv-timeout); iomark's client ends when the test does",
        "--server-bitrate-limit" | "--idle-timeout" | "--server-max-duration" => {
            "that is an option of iperf3's server: iomark's server has --max-duration and --rcv-timeout instead"
        }
        "--daemon" | "-D" => "iomark does not daemonize: run it under a service manager (systemd) or in the background with &",
        "--pidfile" | "-I" => "iomark writes no pid file: a service manager (systemd) keeps it",
        "--bind-dev" => "bind to a device with -B %DEV (or ADDR%DEV)",
        "--debug" | "-d" => "there is no debug output; -V prints iperf3's verbose details",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf3_flags_get_a_reason_and_others_none() {
        assert!(why_not("--gsro").unwrap().contains("GSO"));
        assert!(why_not("--pidfile=/run/x").unwrap().contains("pid file"));
        assert_eq!(why_not("--frobnicate"), None);
    }
}
