//! `iomark serve` as the tests run it: on a free loopback port (port 0,
//! the address read from its first line), killed on drop; and a plain
//! HTTP/1.0 GET, so a test sees the status and headers as they are sent.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::{iomark_cmd, Proc};

/// A running `iomark serve`.
pub struct Served {
    pub proc: Proc,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Served {
    /// `iomark serve --db DB --bind 127.0.0.1:0 EXTRA...`, once it listens.
    pub fn start(db: &str, extra: &[&str]) -> Served {
        let mut args = vec!["serve", "--db", db, "--bind", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        Served::spawn(&mut iomark_cmd(&args))
    }

    /// `cmd`, a `serve --bind 127.0.0.1:0` however started (under
    /// `prlimit`, say), once it listens.
    pub fn spawn(cmd: &mut std::process::Command) -> Served {
        let mut proc = Proc::spawn(cmd);
        proc.wait_stderr("(Ctrl-C stops)", Duration::from_secs(20));
        let err = proc.stderr_so_far();
        let addr = err
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in: {err}"))
            .to_string();
        Served { proc, addr }
    }

    /// `http://ADDR` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// GET `path` with these extra request headers.
    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> HttpResponse {
        http_get(&self.addr, path, headers)
    }

    /// GET `path`.
    pub fn get(&self, path: &str) -> HttpResponse {
        self.get_with(path, &[])
    }
}

/// What a server answered.
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    /// Header names in lower case, values as sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One HTTP/1.0 GET of `path` at `addr`, read to the end.
pub fn http_get(addr: &str, path: &str, headers: &[(&str, &str)]) -> HttpResponse {
    let mut s = TcpStream::connect(addr).expect("connect to iomark serve");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!("GET {path} HTTP/1.0\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req += &format!("Host: {addr}\r\n");
    }
    for (k, v) in headers {
        req += &format!("{k}: {v}\r\n");
    }
    req += "\r\n";
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the response");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {head}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    HttpResponse {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}
