use super::*;
use clap::Parser;
use iomark_net::proto::Protocol;
use iomark_net::{ClientConfig, ServerConfig};
use std::time::Duration;

#[derive(Parser)]
struct T {
    #[command(subcommand)]
    net: NetCommand,
}

fn parse(side: &str, args: &[&str]) -> anyhow::Result<NetCommand> {
    let mut v = vec!["t", side];
    v.extend_from_slice(args);
    Ok(T::try_parse_from(v)?.net)
}

fn client(args: &[&str]) -> anyhow::Result<ClientConfig> {
    let NetCommand::Client(a) = parse("client", args)? else {
        unreachable!("parsed a client")
    };
    Ok(a.settings.build()?)
}

fn server(args: &[&str]) -> anyhow::Result<ServerConfig> {
    let NetCommand::Server(a) = parse("server", args)? else {
        unreachable!("parsed a server")
    };
    Ok(a.settings.build()?)
}

fn argv(args: &[&str]) -> NetCommand {
    let mut v = vec!["t"];
    v.extend_from_slice(args);
    T::try_parse_from(v).unwrap().net
}

/// `-s` and `-c HOST` are iperf3's spellings of the two subcommands:
/// the same flags give the same settings.
#[test]
fn iperf3_spellings_parse_to_the_same_settings() {
    let (NetCommand::Server(a), NetCommand::Server(b)) = (
        argv(&[
            "server",
            "-p",
            "5300",
            "-1",
            "-i",
            "2",
            "--rcv-timeout",
            "5s",
        ]),
        argv(&["-s", "-p", "5300", "-1", "-i", "2", "--rcv-timeout", "5s"]),
    ) else {
        panic!("both are servers")
    };
    assert_eq!(format!("{:?}", a.settings), format!("{:?}", b.settings));
    let (NetCommand::Client(a), NetCommand::Client(b)) = (
        argv(&["client", "h", "-P", "4", "-R", "-t", "3", "-J"]),
        argv(&["-c", "h", "-P", "4", "-R", "-t", "3", "-J"]),
    ) else {
        panic!("both are clients")
    };
    assert_eq!(format!("{:?}", a.settings), format!("{:?}", b.settings));
    assert_eq!(b.settings.host, "h");
    assert!(matches!(argv(&["--server"]), NetCommand::Server(_)));
    assert!(matches!(argv(&["--client", "h"]), NetCommand::Client(_)));
}

/// Under net, -V is iperf3's --verbose, never the version.
#[test]
fn dash_v_is_verbose_under_net() {
    let NetCommand::Client(c) = argv(&["-c", "h", "-V"]) else {
        panic!("a client")
    };
    assert!(c.settings.build().unwrap().verbose);
    let NetCommand::Server(s) = argv(&["-s", "-V"]) else {
        panic!("a server")
    };
    let cfg = s.settings.build().unwrap();
    assert!(cfg.verbose);
    let line = cfg.settings_line();
    assert!(
        line.contains("port 5201") && line.contains("receive timeout 120s"),
        "{line}"
    );
    let NetCommand::Client(c) = argv(&["client", "h"]) else {
        panic!("a client")
    };
    assert!(!c.settings.build().unwrap().verbose);
}

#[test]
fn server_limits_default_to_iperf3s_and_parse_durations() {
    let d = server(&[]).unwrap();
    assert_eq!(d.rcv_timeout, Duration::from_secs(120));
    assert_eq!(d.max_duration, Duration::from_secs(86400));
    let s = server(&["--rcv-timeout", "2s", "--max-duration", "10m"]).unwrap();
    assert_eq!(s.rcv_timeout, Duration::from_secs(2));
    assert_eq!(s.max_duration, Duration::from_secs(600));
    let e = server(&["--rcv-timeout", "0"]).unwrap_err().to_string();
    assert!(e.contains("at least 100ms"), "{e}");
    let e = server(&["--max-duration", "500ms"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least 1s"), "{e}");
}

#[test]
fn iperf3_flags_parse() {
    let c = client(&[
        "h", "-P", "4", "-R", "-t", "3", "-l", "64K", "-w", "4M", "-N",
    ])
    .unwrap();
    assert_eq!(
        (c.params.parallel, c.params.reverse, c.params.time),
        (4, true, 3)
    );
    assert_eq!(c.params.len, 65536);
    assert_eq!(c.params.window, Some(4 << 20));
    assert!(c.params.nodelay);
    let u = client(&["h", "-u", "-b", "50M"]).unwrap();
    assert_eq!(u.params.protocol, Protocol::Udp);
    assert_eq!(u.params.bandwidth, 50_000_000);
}

#[test]
fn bad_values_name_the_fix() {
    let e = client(&["h", "-P", "0"]).unwrap_err().to_string();
    assert!(e.contains("1 to 128"), "{e}");
    let e = client(&["h", "-u", "-l", "8"]).unwrap_err().to_string();
    assert!(e.contains("16 to 65507"), "{e}");
    let e = client(&["h", "-b", "5Q"]).unwrap_err().to_string();
    assert!(e.contains("k, M, G"), "{e}");
    assert!(client(&["h", "-R", "--bidir"]).is_err());
    let e = client(&["h", "-i", "100"]).unwrap_err().to_string();
    assert!(e.contains("0.1 to 60"), "{e}");
}
