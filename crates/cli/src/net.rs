//! `iomark net server|client`: an iperf3-compatible network tester.
//!
//! The flags mean what iperf3's mean, so `iomark net client HOST -P 4 -R`
//! runs the same test as `iperf3 -c HOST -P 4 -R`, against either server.
//! iperf3's spellings work too: `iomark net -s` and `iomark net -c HOST`
//! are the two subcommands as flags, and `-V` is verbose, as in iperf3.

use std::io::Write;

use anyhow::Context;
use clap::{Args, Subcommand};
use iomark_net::recording::{LiveClient, LiveServer};
use iomark_net::settings::{ClientSettings, ServerSettings};
use iomark_net::{output::Output, NetError};

use crate::exit::Exit;
use crate::record::command_line;

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
    /// Each busy period (one test, or those that overlapped) is stored as a
    /// run, from when its first test opens, a second per report interval.
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
    let mut live = LiveServer::new(
        Box::new(|| Box::new(a.store.sink())),
        command_line(),
        Box::new(print_warnings),
        || crate::signals::stop_signals_received() > 0,
    );
    iomark_net::server::run(cfg, &mut live).context("net server")?;
    Ok(Exit::Success)
}

fn test(a: ClientArgs) -> anyhow::Result<Exit> {
    a.store.check()?;
    let mut cfg = a.settings.build()?;
    let mut out = Output::open(a.settings.output())?;
    if cfg.verbose && cfg.text {
        writeln!(out, "{}", cfg.settings_line())?;
    }
    cfg.interrupt = Some(crate::signals::stop_flag()?);
    let mut live = LiveClient::new(Box::new(a.store.sink()), command_line());
    let report = match iomark_net::client::run_observed(&cfg, &mut out, &mut live) {
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
    if a.settings.json {
        out.raw(&format!("{}\n", report.to_iperf3_json()))?;
    }
    out.flush()?;
    let mut doc = iomark_net::run_document(&report, command_line());
    print_warnings(&doc);
    live.finish(&mut doc);
    Ok(if report.interrupted {
        Exit::Interrupted
    } else {
        Exit::Success
    })
}

#[cfg(test)]
#[path = "net_tests.rs"]
mod tests;

/// The iperf3-shaped text has no place for them; the link checks are
/// iomark's own.
fn print_warnings(doc: &iomark_model::RunDocument) {
    if let iomark_model::RunBody::Net(run) = &doc.body {
        for w in &run.warnings {
            crate::record::eprint_fitted(&format!("iomark: warning: {w}"));
        }
    }
}
