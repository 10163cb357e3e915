//! The server: a listening socket whose connections hyper serves, HTTP/1.1
//! with keep-alive, each request answered on a blocking thread over one of
//! the read-only store connections opened at the start, until the stop
//! flag is raised. Each connection is bounded in time and their number
//! is capped ([`crate::connections`]).
//!
//! hyper, not tiny_http: tiny_http serves each connection on a thread of
//! its pool for the connection's whole life, and its pool starts a thread
//! only when none is idle as the connection comes; a browser opens six
//! keep-alive connections at once, four idle threads took four of them and
//! the other two waited until a connection closed, which a browser's never
//! do: the live page's charts and script hung in Chromium one load in
//! three (docs/serve.md).

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use iomark_store::Store;

use crate::access::Access;
use crate::connections::{self, Connections, Limits, Watched};
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
    /// How long a connection may take, and how many may be open.
    pub limits: Limits,
}

/// Requests answered at once by default: a page is drawn in milliseconds,
/// so four keep a browser's parallel requests and a script busy at once.
pub const WORKERS: usize = 4;

/// How often the server looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);

/// How long accept rests after failing for want of a descriptor: long
/// enough that a process out of descriptors uses no CPU to speak of,
/// short enough that a descriptor freed is used within a blink.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// A server listening, with its store connections open, not yet answering.
pub struct Listening {
    listener: TcpListener,
    db: Option<String>,
    addr: SocketAddr,
    stores: Vec<Box<dyn Store>>,
    access: Access,
    location: String,
    limits: Limits,
}

impl Listening {
    /// Open `config.workers` read-only connections to the store, then
    /// listen on `config.bind`; the store is opened first, so a bad
    /// `--db` is refused before any port is taken.
    pub fn start(config: Config) -> Result<Listening, ServeError> {
        let limits = config.limits;
        for (flag, d) in [
            ("--header-timeout", limits.header_timeout),
            ("--idle-timeout", limits.idle_timeout),
        ] {
            if d.is_zero() {
                return Err(ServeError::Limit(format!(
                    "{flag} must be more than 0 (10s, 500ms, 2m)"
                )));
            }
        }
        if limits.max_connections == 0 {
            return Err(ServeError::Limit(
                "--max-connections must be 1 or more".into(),
            ));
        }
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
        let failed = |e: std::io::Error| ServeError::Bind {
            bind,
            reason: e.to_string(),
        };
        let addr = listener.local_addr().map_err(failed)?;
        listener.set_nonblocking(true).map_err(failed)?;
        Ok(Listening {
            listener,
            db: config.db,
            addr,
            stores,
            // The port chosen (for port 0) names the token's cookie.
            access: config.access.on_port(addr.port()),
            location,
            limits,
        })
    }

    /// The address it listens on (the port chosen, for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The store, as its messages name it.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Who may read.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// Answer requests until `stop` is raised.
    pub fn run(self, stop: &AtomicBool) -> Result<(), ServeError> {
        let bind = self.addr;
        let failed = |e: std::io::Error| ServeError::Bind {
            bind,
            reason: e.to_string(),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(self.stores.len())
            .build()
            .map_err(failed)?;
        let answering = Arc::new(Answering {
            stores: Mutex::new(self.stores),
            access: self.access,
            db: self.db,
        });
        let limits = self.limits;
        let connections = Arc::new(Connections::new(limits.max_connections));
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout);
        let http = Arc::new(http);
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::from_std(self.listener).map_err(failed)?;
            while !stop.load(Ordering::Relaxed) {
                // Accept, or look at the stop flag again after a while.
                let Ok(accepted) = tokio::time::timeout(POLL, listener.accept()).await else {
                    continue;
                };
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) if connections::out_of_room(&e) => {
                        // Out of descriptors: the connection waits in the
                        // backlog and accept would fail again at once.
                        // Close the quietest connection for it and rest.
                        connections.evict_quietest();
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                        continue;
                    }
                    // A connection that failed before it was accepted is
                    // its client's business, not the server's.
                    Err(_) => continue,
                };
                let Some((id, activity)) = connections.admit() else {
                    // Every connection is being answered: say so now,
                    // rather than hold this one for a timeout. Small
                    // enough for the socket's buffer, so never blocks.
                    let _ = stream.try_write(connections::BUSY);
                    continue;
                };
                let answering = Arc::clone(&answering);
                let connections = Arc::clone(&connections);
                let http = Arc::clone(&http);
                tokio::spawn(async move {
                    let watched = Watched {
                        stream,
                        connections: Arc::clone(&connections),
                        activity: Arc::clone(&activity),
                    };
                    let service = {
                        let (connections, activity) =
                            (Arc::clone(&connections), Arc::clone(&activity));
                        service_fn(move |req| {
                            let busy = connections.answering(&activity);
                            let answering = Arc::clone(&answering);
                            async move {
                                let res = answer(req, answering).await;
                                drop(busy);
                                res
                            }
                        })
                    };
                    let conn = http.serve_connection(TokioIo::new(watched), service);
                    let mut conn = std::pin::pin!(conn);
                    // Bounded in time: each pass waits for the idle time
                    // left, and ends the connection once none is.
                    loop {
                        let left = connections.idle_left(&activity, limits.idle_timeout);
                        if left.is_zero() {
                            break;
                        }
                        tokio::select! {
                            // A client that goes away mid-request, or
                            // one hyper's header timeout ended, is no
                            // error of the server's.
                            _ = &mut conn => break,
                            _ = activity.evicted.notified() => break,
                            _ = tokio::time::sleep(left) => {}
                        }
                    }
                    connections.gone(id);
                });
            }
            Ok(())
        })
    }
}

/// What answers requests: the store connections, shared by the blocking
/// threads (as many threads as connections, so one is always free).
struct Answering {
    stores: Mutex<Vec<Box<dyn Store>>>,
    access: Access,
    db: Option<String>,
}

/// Answer one request on a blocking thread.
async fn answer(
    rq: hyper::Request<Incoming>,
    answering: Arc<Answering>,
) -> Result<hyper::Response<Full<Bytes>>, std::convert::Infallible> {
    let header = |name: &str| {
        rq.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let url = rq
        .uri()
        .path_and_query()
        .map_or_else(|| rq.uri().path().to_string(), |pq| pq.as_str().to_string());
    let req = Request {
        authorization: header("authorization"),
        cookie: header("cookie"),
        host: header("host"),
        method: rq.method().as_str().to_string(),
        ..Request::get(&url)
    };
    let (method, path) = (req.method.clone(), req.path.clone());
    let res = tokio::task::spawn_blocking(move || answering.answer(&req))
        .await
        .unwrap_or_else(|e| {
            let failed = Request {
                method,
                path,
                ..Request::default()
            };
            log_failure(&failed, 500, &format!("the drawing thread failed: {e}"));
            crate::http::Response::new(
                500,
                crate::http::TEXT,
                "the page failed to draw: please report it",
            )
        });
    let mut out = hyper::Response::builder()
        .status(res.status)
        .header("Content-Type", res.content_type);
    for (name, value) in res.headers {
        out = out.header(name, value);
    }
    Ok(out
        .body(Full::new(Bytes::from(res.body)))
        .unwrap_or_else(|_| hyper::Response::new(Full::new(Bytes::new()))))
}

impl Answering {
    /// The response to `req` over a store connection of the pool.
    ///
    /// A request the store fails is logged (stderr) with its cause. Only a
    /// connection that is gone (a PostgreSQL server restarted, a session
    /// cut: [`Store::connection_lost`]) is replaced, and the request asked
    /// once more over the new one, so a restart shows no reader an error
    /// page. Any other failure leaves the pool as it is: a page that fails
    /// (a bad run, a bug) must not reopen the store under every other
    /// request, and reopening a SQLite file is no cure for anything.
    fn answer(&self, req: &Request) -> crate::http::Response {
        let taken = self.stores.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut store = match taken {
            Some(s) => s,
            // More requests than connections at once (the blocking pool
            // is sized to prevent it): one of its own.
            None => match iomark_store::open_read_only(self.db.as_deref()) {
                Ok(s) => s,
                Err(e) => {
                    log_failure(req, 500, &e.to_string());
                    return crate::http::Response::new(500, crate::http::TEXT, e.to_string());
                }
            },
        };
        let mut res = handle(req, &self.access, store.as_mut());
        if res.status >= 500 && store.connection_lost() {
            match iomark_store::open_read_only(self.db.as_deref()) {
                Ok(fresh) => {
                    store = fresh;
                    res = handle(req, &self.access, store.as_mut());
                }
                Err(e) => log_failure(req, res.status, &format!("reconnecting: {e}")),
            }
        }
        if res.status >= 500 {
            log_failure(
                req,
                res.status,
                res.cause.as_deref().unwrap_or("no cause given"),
            );
        }
        self.stores
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(store);
        res
    }
}

/// One line on stderr for a request answered with a server error: the
/// method and path (never the query, which may hold the token), the
/// status and why.
fn log_failure(req: &Request, status: u16, cause: &str) {
    let path = iomark_text::escape_controls(&req.path);
    let cause = iomark_text::escape_controls(cause);
    eprintln!("iomark serve: {} {path}: {status}: {cause}", req.method);
}
