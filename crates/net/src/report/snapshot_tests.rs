//! Golden-output tests of finished reports: iperf3's text, iperf3's `-J`
//! JSON, and the conversion to iomark's model, each checked byte for byte
//! against a snapshot in `crates/net/src/snapshots/`.
//!
//! Scripts written for iperf3 parse this output, so it must only change on
//! purpose, and this check has to run where no iperf3 is installed (the
//! interop tests skip there). The reports are synthetic, with fixed figures,
//! addresses and timestamps, so the output is the same on every machine;
//! only the host description (`system_info`) and iomark's version come from
//! the build machine, and they are replaced by placeholders.

use std::net::SocketAddr;
use std::time::{Duration, UNIX_EPOCH};

use iomark_model::net::{CpuUtilization, NetDirection};

use super::*;
use crate::proto::{Params, Protocol, Results, StreamResults};
use crate::stream::Snapshot;
use crate::sys::TcpInfo;

/// Sat, 21 Nov 2026 20:57:32 GMT.
const STARTED: u64 = 1_795_294_652;

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("the fixtures' addresses are valid")
}

fn stream(
    id: u32,
    fd: i32,
    local: &str,
    remote: &str,
    sending: bool,
    direction: NetDirection,
) -> StreamInfo {
    StreamInfo {
        id,
        fd,
        local: addr(local),
        remote: addr(remote),
        sending,
        direction,
    }
}

fn cpu(total: f64, user: f64, system: f64) -> CpuUtilization {
    CpuUtilization {
        total_percent: total,
        user_percent: user,
        system_percent: system,
    }
}

fn tcp_info(cwnd: u64, rtt: u64) -> Option<TcpInfo> {
    Some(TcpInfo {
        total_retrans: 0,
        snd_cwnd_bytes: cwnd,
        rtt_us: rtt,
        rttvar_us: rtt / 4,
        pmtu: 1500,
        snd_wnd: 4 * cwnd,
        reordering: 3,
        last_heard_ms: 0,
    })
}

/// One stream's share of an interval: bytes, then the TCP retransmits or
/// the UDP packets, loss and jitter.
fn share(index: usize, delta: Snapshot, tcp: Option<TcpInfo>) -> IntervalStream {
    IntervalStream { index, delta, tcp }
}

fn bytes(b: u64, retransmits: u64) -> Snapshot {
    Snapshot {
        bytes: b,
        retransmits,
        ..Snapshot::default()
    }
}

fn datagrams(b: u64, packets: u64, lost: i64, jitter: f64) -> Snapshot {
    Snapshot {
        bytes: b,
        packets,
        lost,
        jitter,
        ..Snapshot::default()
    }
}

fn interval(start: f64, end: f64, omitted: bool, streams: Vec<IntervalStream>) -> IntervalRecord {
    IntervalRecord {
        start,
        end,
        omitted,
        streams,
        cpu: 0.0,
    }
}

fn peer_stream(id: i64, bytes: u64, retransmits: i64, packets: i64, end: f64) -> StreamResults {
    StreamResults {
        id,
        bytes,
        retransmits,
        jitter: 0.0,
        errors: 0,
        packets,
        omitted_errors: Some(0),
        omitted_packets: Some(0),
        start_time: Some(0.0),
        end_time: Some(end),
    }
}

/// A report with the fields every fixture shares; each fixture sets the
/// rest.
fn base(role: Role, params: Params, streams: Vec<StreamInfo>) -> TestReport {
    let started = UNIX_EPOCH + Duration::from_secs(STARTED);
    TestReport {
        peering: Peering {
            role,
            cookie: "mvzq4kxjbk7bqjw5r2kdqzp3yq6t7n4hgs2a".into(),
            peer_host: "198.51.100.7".into(),
            peer_port: 5201,
            control_local: addr("192.0.2.1:40000"),
            tcp_mss: Some(1448),
        },
        params,
        started,
        finished: started + Duration::from_secs(3),
        sndbuf_actual: 16_384,
        rcvbuf_actual: 131_072,
        congestion: None,
        streams,
        intervals: Vec::new(),
        totals: Vec::new(),
        cpu_local: CpuUtilization::default(),
        host_cpu_local: None,
        throttle_local: None,
        quota_unchecked_local: None,
        remote: None,
        interval_secs: 1.0,
        interrupted: false,
        rate_format: Default::default(),
        rtt_probe: Default::default(),
    }
}

/// A client's report of a two-stream (`-P 2`) upload; the streams' file
/// descriptors are `fds`.
fn client_upload_pair(params: Params, fds: [i32; 2]) -> TestReport {
    let up = NetDirection::Upload;
    base(
        Role::Client,
        Params {
            parallel: 2,
            ..params
        },
        vec![
            stream(1, fds[0], "192.0.2.1:40001", "198.51.100.7:5201", true, up),
            stream(3, fds[1], "192.0.2.1:40002", "198.51.100.7:5201", true, up),
        ],
    )
}

/// A sending TCP stream's totals: retransmits, the largest congestion
/// window and the round-trip times (min, max, mean).
fn tcp_sent(
    bytes: u64,
    seconds: f64,
    retransmits: u64,
    max_cwnd: u64,
    [min, max, mean]: [u64; 3],
) -> StreamTotals {
    StreamTotals {
        bytes,
        seconds,
        retransmits: Some(retransmits),
        max_cwnd,
        max_snd_wnd: 4 * max_cwnd,
        reorder: 3,
        min_rtt: Some(min),
        max_rtt: Some(max),
        mean_rtt: Some(mean),
        ..StreamTotals::default()
    }
}

/// The peer's results message: its CPU (total, user, system), whether it
/// sent with retransmits, its congestion control and its streams.
fn peer_results(
    [total, user, system]: [f64; 3],
    sender_has_retransmits: i64,
    congestion_used: Option<&str>,
    streams: Vec<StreamResults>,
) -> Option<Results> {
    Some(Results {
        cpu_util_total: total,
        cpu_util_user: user,
        cpu_util_system: system,
        sender_has_retransmits,
        congestion_used: congestion_used.map(Into::into),
        iomark_host_cpu: None,
        iomark_cpu_intervals: None,
        iomark_interface: None,
        iomark_cpu_throttle: None,
        iomark_cpu_quota_unchecked: None,
        server_output_text: None,
        server_output_json: None,
        streams,
    })
}

/// `-P 2 -O 1 -t 2` upload, seen from the client: an omitted interval,
/// per-stream and `[SUM]` lines, retransmits, congestion windows and RTTs.
fn tcp_parallel_upload() -> TestReport {
    let params = Params {
        protocol: Protocol::Tcp,
        omit: 1,
        time: 2,
        ..Params::default()
    };
    let mut r = client_upload_pair(params, [5, 7]);
    r.congestion = Some("cubic".into());
    r.intervals = vec![
        interval(
            0.0,
            1.0,
            true,
            vec![
                share(0, bytes(1_100_000_000, 3), tcp_info(1_958_400, 180)),
                share(1, bytes(1_050_000_000, 0), tcp_info(1_802_240, 175)),
            ],
        ),
        interval(
            0.0,
            1.0,
            false,
            vec![
                share(0, bytes(1_180_000_000, 1), tcp_info(2_506_752, 120)),
                share(1, bytes(1_170_000_000, 2), tcp_info(2_412_544, 131)),
            ],
        ),
        interval(
            1.0,
            2.000_312,
            false,
            vec![
                share(0, bytes(1_175_000_000, 0), tcp_info(2_506_752, 118)),
                share(1, bytes(1_160_000_000, 0), tcp_info(2_412_544, 140)),
            ],
        ),
    ];
    r.totals = vec![
        tcp_sent(2_355_000_000, 2.000_312, 1, 2_506_752, [118, 120, 119]),
        tcp_sent(2_330_000_000, 2.000_312, 2, 2_412_544, [131, 140, 135]),
    ];
    r.cpu_local = cpu(23.4, 1.1, 22.3);
    r.remote = peer_results(
        [4.5, 0.3, 4.2],
        -1,
        None,
        vec![
            peer_stream(1, 2_354_871_296, -1, 0, 2.000_4),
            peer_stream(3, 2_329_804_800, -1, 0, 2.000_4),
        ],
    );
    r
}

/// `-u -R -b 1M -l 1460 -S 16 -w 4M -T lab --extra-data`, seen from the
/// client, which receives: jitter, loss past the warning threshold, and
/// the title and extra data carried into `-J`.
fn udp_reverse_download() -> TestReport {
    let params = Params {
        protocol: Protocol::Udp,
        time: 2,
        reverse: true,
        len: 1460,
        bandwidth: 1_000_000,
        window: Some(4_194_304),
        tos: Some(16),
        title: Some("lab".into()),
        extra_data: Some("rack 7, port 3".into()),
        ..Params::default()
    };
    let mut r = base(
        Role::Client,
        params,
        vec![stream(
            1,
            5,
            "192.0.2.1:40001",
            "198.51.100.7:5201",
            false,
            NetDirection::Download,
        )],
    );
    r.sndbuf_actual = 8_388_608;
    r.rcvbuf_actual = 8_388_608;
    r.intervals = vec![
        interval(
            0.0,
            1.0,
            false,
            vec![share(0, datagrams(125_560, 86, 2, 0.000_231), None)],
        ),
        interval(
            1.0,
            2.0,
            false,
            vec![share(0, datagrams(124_100, 85, 2, 0.000_198), None)],
        ),
    ];
    r.totals = vec![StreamTotals {
        bytes: 249_660,
        seconds: 2.0,
        retransmits: None,
        packets: 171,
        lost: 4,
        out_of_order: 1,
        jitter: 0.000_198,
        ..StreamTotals::default()
    }];
    r.cpu_local = cpu(1.2, 0.4, 0.8);
    r.remote = peer_results(
        [1.5, 0.5, 1.0],
        0,
        None,
        vec![peer_stream(1, 254_040, -1, 174, 2.0)],
    );
    r
}

/// `--bidir` seen from the server: `[TX-S]`/`[RX-S]` tags, iperf3's
/// `sum_bidir_reverse`, a short last interval, `accepted_connection`.
fn tcp_bidir_server() -> TestReport {
    let params = Params {
        protocol: Protocol::Tcp,
        time: 1,
        bidirectional: true,
        ..Params::default()
    };
    let mut r = base(
        Role::Server,
        params,
        vec![
            stream(
                1,
                8,
                "203.0.113.5:5201",
                "198.51.100.7:40011",
                false,
                NetDirection::Upload,
            ),
            stream(
                3,
                9,
                "203.0.113.5:5201",
                "198.51.100.7:40012",
                true,
                NetDirection::Download,
            ),
        ],
    );
    r.peering.peer_port = 40010;
    r.peering.control_local = addr("203.0.113.5:5201");
    r.congestion = Some("bbr".into());
    r.intervals = vec![
        interval(
            0.0,
            1.0,
            false,
            vec![
                share(0, bytes(900_000_000, 0), None),
                share(1, bytes(800_000_000, 5), tcp_info(3_100_000, 410)),
            ],
        ),
        interval(
            1.0,
            1.05,
            false,
            vec![
                share(0, bytes(40_000_000, 0), None),
                share(1, bytes(38_000_000, 0), tcp_info(3_000_000, 250)),
            ],
        ),
    ];
    r.totals = vec![
        StreamTotals {
            bytes: 940_000_000,
            seconds: 1.05,
            retransmits: None,
            ..StreamTotals::default()
        },
        tcp_sent(838_000_000, 1.05, 5, 3_100_000, [250, 410, 330]),
    ];
    r.cpu_local = cpu(28.0, 1.5, 26.5);
    r.remote = peer_results(
        [35.0, 2.0, 33.0],
        1,
        Some("bbr"),
        vec![
            peer_stream(1, 941_000_000, 7, 0, 1.05),
            peer_stream(3, 837_500_000, -1, 0, 1.05),
        ],
    );
    r
}

/// `-u -P 2 -n 10M -i 0.5` stopped by Ctrl-C before the results exchange:
/// the peer's figures are missing, UDP `[SUM]` lines.
fn udp_parallel_interrupted() -> TestReport {
    let params = Params {
        protocol: Protocol::Udp,
        time: 0,
        num: 10_000_000,
        len: 1250,
        bandwidth: 1_000_000,
        ..Params::default()
    };
    let mut r = client_upload_pair(params, [5, 6]);
    r.interval_secs = 0.5;
    r.interrupted = true;
    r.intervals = vec![interval(
        0.0,
        0.5,
        false,
        vec![
            share(0, datagrams(62_500, 50, 0, 0.0), None),
            share(1, datagrams(62_500, 50, 0, 0.0), None),
        ],
    )];
    r.totals = (0..2)
        .map(|_| StreamTotals {
            bytes: 75_000,
            seconds: 0.6,
            packets: 60,
            ..StreamTotals::default()
        })
        .collect();
    r.cpu_local = cpu(0.9, 0.2, 0.7);
    r
}

/// The text as the client and server print it, in the order they print
/// it; the end marker makes a lost or doubled last newline visible, which
/// the snapshot comparison would otherwise forgive.
fn text(r: &TestReport) -> String {
    let mut o = r.header_text();
    for (i, rec) in r.intervals.iter().enumerate() {
        o.push_str(&r.interval_text(rec, i == 0));
    }
    o.push_str(&r.summary_text());
    o.push_str("<end of output>");
    o
}

/// Replace the value of `key` on its line with `placeholder`, keeping the
/// indentation and any trailing comma, and say whether the key was there.
fn redact(line: &str, key: &str, placeholder: &str) -> Option<String> {
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    let prefix = format!("\"{key}\": ");
    body.starts_with(&prefix).then(|| {
        let comma = if body.ends_with(',') { "," } else { "" };
        format!("{indent}{prefix}\"{placeholder}\"{comma}")
    })
}

/// `-J` with the two build-machine values replaced.
fn json(r: &TestReport) -> String {
    let out = r.to_iperf3_json();
    let version = format!("\"iomark {}\"", env!("CARGO_PKG_VERSION"));
    let (mut host, mut ver) = (0, 0);
    let lines: Vec<String> = out
        .split('\n')
        .map(|line| {
            if let Some(l) = redact(line, "system_info", "[this host]") {
                host += 1;
                l
            } else if line.trim_start().starts_with("\"version\": ") {
                assert!(line.contains(&version), "version line: {line}");
                ver += 1;
                redact(line, "version", "iomark [version]").unwrap_or_default()
            } else {
                line.to_string()
            }
        })
        .collect();
    assert_eq!((host, ver), (1, 1), "one system_info and one version key");
    lines.join("\n")
}

fn net_run(r: &TestReport) -> String {
    serde_json::to_string_pretty(&r.to_net_run(None)).expect("a NetRun serialises")
}

/// Compare with `crates/net/src/snapshots/<name>.snap`.
fn check(name: &str, value: String) {
    insta::with_settings!({
        snapshot_path => "../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, value);
    });
}

fn check_all(name: &str, r: &TestReport) {
    check(&format!("{name}__text"), text(r));
    check(&format!("{name}__json"), json(r));
    check(&format!("{name}__net_run"), net_run(r));
}

#[test]
fn tcp_parallel_upload_output() {
    check_all("tcp_parallel_upload", &tcp_parallel_upload());
}

#[test]
fn udp_reverse_download_output() {
    check_all("udp_reverse_download", &udp_reverse_download());
}

#[test]
fn tcp_bidir_server_output() {
    check_all("tcp_bidir_server", &tcp_bidir_server());
}

#[test]
fn udp_parallel_interrupted_output() {
    check_all("udp_parallel_interrupted", &udp_parallel_interrupted());
}
