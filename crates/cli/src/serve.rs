//! `iomark serve`: the read-only web view of the store (`iomark_serve`),
//! until Ctrl-C.

use std::net::SocketAddr;

use std::time::Duration;

use clap::Args;
use iomark_model::units::Nanos;
use iomark_serve::{Access, Config, Limits, Listening};

use crate::exit::Exit;

/// The raw arguments of `iomark serve`.
#[derive(Debug, Args)]
#[command(
    long_about = "Serve a read-only web view of the results store: the runs (filtered, \
    paged, newest first), each run with its charts, runs compared side by side, the \
    devices with their history, and a JSON API (/api/runs, /api/runs/ID, \
    /api/compare?id=A&id=B) with the documents of `results list/show/compare --json`.\n\n\
    It listens on 127.0.0.1:8080 unless --bind says otherwise; an address other than \
    loopback needs an access token (--token), which every request must then carry \
    (Authorization: Bearer TOKEN, or ?token=TOKEN once in a browser, kept in a cookie).\n\n\
    Examples:\n  iomark serve\n  iomark serve --db postgres://bench@db/iomark --bind 127.0.0.1:9000\n  \
    iomark serve --bind 0.0.0.0:8080 --token generate"
)]
pub struct ServeArgs {
    /// Results database: a SQLite file or postgres://user@host/db, opened read-only.
    ///
    /// Default: $IOMARK_DB when set (empty is refused), else
    /// $XDG_DATA_HOME/iomark/results.db (~/.local/share/iomark/results.db).
    #[arg(long, value_name = "PATH|URL")]
    db: Option<String>,
    /// Where to listen (port 0: a free port, printed).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    bind: SocketAddr,
    /// The access token every request must carry; `generate` makes a random
    /// one and prints it. Needed for an address other than loopback.
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// How long a client may take to send a request's line and headers,
    /// from when the server is ready for it (10s, 500ms, 2m).
    #[arg(long, value_name = "TIME", default_value = "20s")]
    header_timeout: Nanos,
    /// Close a connection that has moved no byte either way for this
    /// long while no request of it is being answered (10s, 500ms, 2m).
    #[arg(long, value_name = "TIME", default_value = "10s")]
    idle_timeout: Nanos,
    /// Connections open at once; past it a new one closes the one quiet
    /// the longest, or is answered 503 if every one is busy. Default:
    /// half the descriptors the process may open (ulimit -n), at most 1024.
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
}

/// Run `iomark serve ...`.
pub fn run(args: ServeArgs) -> anyhow::Result<Exit> {
    let access = Access::new(args.bind, args.token.as_deref())?;
    // Before the socket: a stop during start-up ends it too.
    let stop = crate::signals::stop_flag()?;
    let listening = Listening::start(Config {
        db: args.db,
        bind: args.bind,
        access,
        workers: iomark_serve::WORKERS,
        limits: Limits {
            header_timeout: Duration::from_nanos(args.header_timeout.0),
            idle_timeout: Duration::from_nanos(args.idle_timeout.0),
            max_connections: args
                .max_connections
                .unwrap_or_else(iomark_serve::default_max_connections),
        },
    })?;
    let url = format!("http://{}/", listening.addr());
    let store = iomark_text::escape_controls(listening.location()).into_owned();
    match listening.access().token() {
        Some(t) if args.token.as_deref() == Some(iomark_serve::GENERATE) => eprintln!(
            "serving {store} at {url} (Ctrl-C stops); access token {t}: open {url}?token={t}"
        ),
        Some(_) => eprintln!("serving {store} at {url} (Ctrl-C stops); requests need the token"),
        None => eprintln!("serving {store} at {url} (Ctrl-C stops)"),
    }
    listening.run(stop)?;
    eprintln!("stopped serving {url}");
    Ok(Exit::Success)
}
