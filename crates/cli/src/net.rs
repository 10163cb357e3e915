//! `iomark net server|client`: an iperf3-compatible network tester.
//!
//! The flags mean what iperf3's mean, so `iomark net client HOST -P 4 -R`
//! runs the same test as `iperf3 -c HOST -P 4 -R`, against either server.
//! iperf3's spellings work too: `iomark net -s` and `iomark net -c HOST`
//! are the two subcommands as flags, and `-V` is verbose, as in iperf3.

use std::io::Write;

use anyhow::Context;
use clap::{Args, Subcommand};
use iomark_net::settings::{ClientSettings, ServerSettings};
use iomark_net::NetError;

use crate::exit::Exit;

mod output;
pub mod unsupported;
use output::{Output, OutputSettings};

/// `iomark net`: the subcommands.
#[derive(Debug, Args)]
pub struct NetArgs {
    #[command(subcommand)]
    command: NetCommand,
}

#[derive(Debug, Subcommand)]
enum NetCommand {
    /// Serve tests to iomark or iperf3 clients (`-s`, like `iperf3 -s`).
    // A flag as well as a word, so iperf3's command lines work unchanged.
    #[command(short_flag = 's', long_flag = "server", disable_version_flag = true)]
    Server(Box<ServerArgs>),
    /// Run a test against an iomark or iperf3 server (`-c HOST`, like `iperf3 -c HOST`).
    #[command(short_flag = 'c', long_flag = "client", disable_version_flag = true)]
    Client(Box<ClientArgs>),
}

/// `iomark net server`: the net crate's settings, and the store.
#[derive(Debug, Args)]
struct ServerArgs {
    #[command(flatten)]
    settings: ServerSettings,
    /// Each busy period (one test, or those that overlapped) is stored as a run.
    #[command(flatten)]
    store: crate::record::StoreArgs,
}

/// `iomark net client`: the net crate's settings, and the store.
#[derive(Debug, Args)]
struct ClientArgs {
    #[command(flatten)]
    settings: ClientSettings,
    #[command(flatten)]
    store: crate::record::StoreArgs,
}

/// The iperf3-shaped text has no place for them; the link checks are
/// iomark's own.
fn print_warnings(doc: &iomark_model::RunDocument) {
    if let iomark_model::RunBody::Net(run) = &doc.body {
        for w in &run.warnings {
            eprintln!("iomark: warning: {w}");
        }
    }
}

/// Run `iomark net ...`.
pub fn run(args: NetArgs) -> anyhow::Result<Exit> {
    match args.command {
        NetCommand::Server(a) => serve(*a),
        NetCommand::Client(a) => test(*a),
    }
}

fn serve(a: ServerArgs) -> anyhow::Result<Exit> {
    a.store.check()?;
    let mut cfg = a.settings.build()?;
    // Ctrl-C or SIGTERM: running tests end (SERVER_TERMINATE), what
    // ended is stored, and the server exits 0, as iperf3 3.19+.
    cfg.interrupt = Some(crate::signals::stop_flag()?);
    if cfg.verbose && cfg.text {
        crate::exit::print(&format!("{}\n", cfg.settings_line()))?;
    }
    let command_line = crate::record::command_line();
    let mut store_served = |served: Vec<iomark_net::TestReport>| {
        let Some(mut doc) = iomark_net::served_document(&served, command_line.clone()) else {
            return;
        };
        print_warnings(&doc);
        crate::record::Recorder::begin(&a.store, &mut doc).finish(&doc);
    };
    iomark_net::server::run(cfg, &mut store_served).context("net server")?;
    Ok(Exit::Success)
}

fn test(a: ClientArgs) -> anyhow::Result<Exit> {
    a.store.check()?;
    let mut cfg = a.settings.build()?;
    let s = a.settings;
    let mut out = Output::open(OutputSettings {
        logfile: s.logfile,
        timestamps: s.timestamps,
        title: s.title,
        forceflush: s.forceflush,
    })?;
    if cfg.verbose && cfg.text {
        writeln!(out, "{}", cfg.settings_line())?;
    }
    cfg.interrupt = Some(crate::signals::stop_flag()?);
    let report = match iomark_net::client::run(&cfg, &mut out) {
        Ok(r) => r,
        Err(NetError::Interrupted) => {
            eprintln!("iomark: interrupted before the test started");
            return Ok(Exit::Interrupted);
        }
        Err(e) => {
            return Err(anyhow::Error::new(e))
                .with_context(|| format!("net client to {}:{}", cfg.host, cfg.port))
        }
    };
    if s.json {
        out.raw(&format!("{}\n", report.to_iperf3_json()))?;
    }
    out.flush()?;
    let mut doc = iomark_net::run_document(&report, crate::record::command_line());
    print_warnings(&doc);
    crate::record::Recorder::begin(&a.store, &mut doc).finish(&doc);
    Ok(if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::Success
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use iomark_model::net::NetDirection;
    use iomark_model::{RunBody, RunDocument, RunStatus};
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

    #[test]
    fn run_document_holds_a_net_run_from_a_real_test() {
        let mut scfg = ServerConfig::new();
        scfg.port = 0;
        scfg.bind = Some("127.0.0.1".parse().unwrap());
        scfg.one_off = true;
        scfg.text = false;
        let server = iomark_net::server::Server::bind(scfg).unwrap();
        let port = server.local_addr().port();
        let h = std::thread::spawn(move || {
            server.serve(&mut std::io::sink(), &mut std::io::sink(), &mut |_| {})
        });
        let mut c = ClientConfig::new("127.0.0.1");
        c.port = port;
        c.params.time = 1;
        c.params.parallel = 2;
        c.text = false;
        let report = iomark_net::client::run(&c, &mut std::io::sink()).unwrap();
        h.join().unwrap().unwrap();
        let doc = iomark_net::run_document(&report, vec!["iomark".into(), "net".into()]);
        assert_eq!(doc.status, RunStatus::Complete);
        let RunBody::Net(run) = &doc.body else {
            panic!("not a net run: {:?}", doc.body)
        };
        assert_eq!(run.streams.len(), 2);
        assert_eq!(run.streams[1].id, 3, "iperf3 numbers streams 1, 3, 4...");
        let up = run.goodput(NetDirection::Upload).unwrap();
        assert!(up.0 > 0.0);
        // Both ends counted the same bytes (the client sent, the server got).
        for s in &run.streams {
            assert!(s.received.get() > 0 && s.received <= s.sent, "{s:?}");
        }
        assert_eq!(run.interface.as_ref().map(|i| i.name.as_str()), Some("lo"));
        assert!(run.cpu_remote.total_percent > 0.0);
        let json = serde_json::to_string(&doc).unwrap();
        let back: RunDocument = serde_json::from_str(&json).unwrap();
        assert_eq!(back.body, doc.body);
    }
}
