//! The server: a listening socket, and worker threads that each take the
//! next request (`recv`), answer it over a read-only store connection of
//! their own and take the next, until the stop flag is raised.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use iomark_store::Store;

use crate::access::Access;
use crate::http::Request;
use crate::route::handle;
use crate::ServeError;

/// How a server is to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The store (`--db`), as `iomark_store::open_read_only` takes it.
    pub db: Option<String>,
    /// Where to listen; port 0 takes a free one.
    pub bind: SocketAddr,
    /// Who may read.
    pub access: Access,
    /// Requests answered at once (one store connection each).
    pub workers: usize,
}

/// Requests answered at once by default: a page is drawn in milliseconds,
/// so four keep a browser's parallel requests and a script busy at once.
pub const WORKERS: usize = 4;

/// How often an idle worker looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);

/// A server listening, with its store connections open, not yet answering.
pub struct Listening {
    server: tiny_http::Server,
    db: Option<String>,
    addr: SocketAddr,
    stores: Vec<Box<dyn Store>>,
    access: Access,
    location: String,
}

impl Listening {
    /// Open the store (read-only, once per worker) and listen on
    /// `config.bind`; an address in use or not this machine's is
    /// [`ServeError::Bind`] naming the fix.
    pub fn start(config: Config) -> Result<Listening, ServeError> {
        let stores = (0..config.workers.max(1))
            .map(|_| iomark_store::open_read_only(config.db.as_deref()))
            .collect::<Result<Vec<_>, _>>()?;
        let location = stores[0].location();
        let bind = config.bind;
        let listener = TcpListener::bind(bind).map_err(|e| ServeError::Bind {
            bind,
            reason: match e.kind() {
                ErrorKind::AddrInUse => {
                    "the port is in use: stop what listens there, or give another --bind ADDR:PORT (port 0 takes a free one)".into()
                }
                ErrorKind::PermissionDenied => {
                    format!("{e}: ports under 1024 need root; give --bind ADDR:PORT with a port of 1024 or more")
                }
                ErrorKind::AddrNotAvailable => {
                    format!("{e}: the address is not one of this machine's; give --bind with one of its addresses")
                }
                _ => e.to_string(),
            },
        })?;
        let addr = listener.local_addr().map_err(|e| ServeError::Bind {
            bind,
            reason: e.to_string(),
        })?;
        let server =
            tiny_http::Server::from_listener(listener, None).map_err(|e| ServeError::Bind {
                bind,
                reason: e.to_string(),
            })?;
        Ok(Listening {
            server,
            db: config.db,
            addr,
            stores,
            access: config.access,
            location,
        })
    }

    /// The address listened on (with the port taken, for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The store's location, for messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Who may read.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// Answer requests until `stop` is raised; requests being answered
    /// then are finished first.
    pub fn run(self, stop: &AtomicBool) {
        let Listening {
            server,
            db,
            stores,
            access,
            ..
        } = self;
        std::thread::scope(|s| {
            for mut store in stores {
                let (server, access, db) = (&server, &access, db.as_deref());
                s.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        match server.recv_timeout(POLL) {
                            Ok(Some(rq)) => answer(rq, access, &mut store, db),
                            Ok(None) => {}
                            // The listener is gone: nothing more will come.
                            Err(_) => break,
                        }
                    }
                });
            }
        });
    }
}

/// Answer one request. A store that failed (a PostgreSQL server
/// restarted, a connection cut) is opened afresh and asked once more, so a
/// restart costs no reader an error page; if that fails too, the error is
/// the answer. A client that went away is no concern of ours.
fn answer(rq: tiny_http::Request, access: &Access, store: &mut Box<dyn Store>, db: Option<&str>) {
    let header = |name: &'static str| {
        rq.headers()
            .iter()
            .find(|h| h.field.equiv(name))
            .map(|h| h.value.as_str().to_string())
    };
    let req = Request {
        authorization: header("Authorization"),
        cookie: header("Cookie"),
        host: header("Host"),
        method: rq.method().as_str().to_string(),
        ..Request::get(rq.url())
    };
    let mut res = handle(&req, access, store.as_mut());
    if res.status >= 500 {
        if let Ok(fresh) = iomark_store::open_read_only(db) {
            *store = fresh;
            res = handle(&req, access, store.as_mut());
        }
    }
    let mut out = tiny_http::Response::from_data(res.body).with_status_code(res.status);
    let headers =
        std::iter::once(("Content-Type", res.content_type.to_string())).chain(res.headers);
    for (name, value) in headers {
        if let Ok(h) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            out.add_header(h);
        }
    }
    let _ = rq.respond(out);
}
