//! Who may read: anyone on this machine when the server listens on a
//! loopback address; with an access token, only requests that carry it.

use std::net::SocketAddr;

use subtle::ConstantTimeEq;

use crate::http::{Request, Response, HTML};
use crate::ServeError;

/// The start of the cookie's name a browser keeps the token in after
/// `?token=` once; the server's port follows (`iomark_token_8080`).
/// Cookies are not kept apart by port: every server on a host name sees
/// every cookie set for it, so two iomark servers on one host would
/// otherwise overwrite each other's token (docs/serve.md, "The token").
const COOKIE_PREFIX: &str = "iomark_token_";

/// The shortest token accepted: guessing 16 characters over a network is
/// out of reach, guessing 4 is not.
const MIN_TOKEN_LEN: usize = 16;

/// What `--token` asks for a token to be made and printed.
pub const GENERATE: &str = "generate";

/// The access rule of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    token: Option<String>,
    /// The port the server listens on, which names its cookie.
    port: u16,
}

/// What a request may do, by [`Access::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Go on to the routes.
    Admitted,
    /// Answer this instead (401; or, for `?token=` right, a redirect to
    /// the same page without it that sets the cookie).
    Answer(Response),
}

impl Access {
    /// The rule for a server on `bind` with `token` (`--token`; its value
    /// [`GENERATE`] makes one). A non-loopback address without a token,
    /// or a token that is weak or cannot travel (under 16 characters, or
    /// with a character a header or cookie cannot carry), is refused
    /// naming the fix.
    pub fn new(bind: SocketAddr, token: Option<&str>) -> Result<Access, ServeError> {
        let token = match token {
            None if bind.ip().is_loopback() => None,
            None => return Err(ServeError::NeedsToken { bind }),
            Some(GENERATE) => Some(generate()),
            Some(t) if !token_fits(t) => return Err(ServeError::WeakToken),
            Some(t) => Some(t.to_string()),
        };
        Ok(Access {
            token,
            port: bind.port(),
        })
    }

    /// The same rule for a server that listens on `port` (the port chosen
    /// for `--bind ADDR:0`), which names the cookie.
    pub(crate) fn on_port(self, port: u16) -> Access {
        Access { port, ..self }
    }

    /// The name of the cookie that keeps the token: `iomark_token_PORT`.
    fn cookie_name(&self) -> String {
        format!("{COOKIE_PREFIX}{}", self.port)
    }

    /// The token requests must carry, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Whether `req` may be answered: it carries the token as
    /// `Authorization: Bearer T`, in the cookie, or as `?token=T` (then it
    /// is answered with a redirect that sets the cookie, so the token
    /// leaves the address bar and the history).
    ///
    /// Without a token, the request must name this machine in its `Host`
    /// (`localhost` or an address): a page elsewhere whose name was made
    /// to point at 127.0.0.1 (DNS rebinding) would otherwise read the
    /// store from the visitor's browser as its own origin.
    pub(crate) fn check(&self, req: &Request) -> Admission {
        let Some(token) = &self.token else {
            return match req.host.as_deref() {
                Some(host) if !names_this_machine(host) => Admission::Answer(Response::new(
                    403,
                    HTML,
                    crate::pages::layout::message_page(
                        "Unknown host",
                        &format!(
                            "this server answers to localhost and its addresses, not to {host}: \
                             open it as http://127.0.0.1:PORT/, or give it a --token to be \
                             reached by name"
                        ),
                    ),
                )),
                _ => Admission::Admitted,
            };
        };
        let bearer = req
            .authorization
            .as_deref()
            .and_then(|a| a.strip_prefix("Bearer "))
            .map(str::trim);
        let name = self.cookie_name();
        let cookie = req.cookie.as_deref().and_then(|c| {
            c.split(';')
                .filter_map(|kv| kv.trim().split_once('='))
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v)
        });
        if bearer.into_iter().chain(cookie).any(|t| same(t, token)) {
            return Admission::Admitted;
        }
        if req.all("token").iter().any(|t| same(t, token)) {
            let rest: Vec<(&str, &str)> = req
                .query
                .iter()
                .filter(|(k, _)| k != "token")
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let location = if rest.is_empty() {
                req.path.clone()
            } else {
                let q = form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(rest)
                    .finish();
                format!("{}?{q}", req.path)
            };
            return Admission::Answer(
                Response::new(303, HTML, "")
                    .with_header("Location", location)
                    .with_header(
                        "Set-Cookie",
                        format!("{name}={token}; Path=/; HttpOnly; SameSite=Strict"),
                    ),
            );
        }
        Admission::Answer(
            Response::new(
                401,
                HTML,
                crate::pages::layout::message_page(
                    "Access token needed",
                    "This server needs its access token: open the address with ?token=TOKEN \
                     once (a cookie keeps it), or send the header Authorization: Bearer TOKEN.",
                ),
            )
            .with_header("WWW-Authenticate", "Bearer".into()),
        )
    }

    /// Anyone may read (loopback, no token).
    #[cfg(test)]
    pub(crate) fn open() -> Access {
        Access {
            token: None,
            port: 0,
        }
    }
}

/// Whether `token` may be an access token: at least [`MIN_TOKEN_LEN`]
/// characters, each a visible ASCII character a cookie can carry (no
/// space, control character, `"`, `,`, `;` or `\\`). Whitespace alone, or
/// a short token padded with it, is no secret; a space at either end
/// would be trimmed off the `Authorization` header and never match; and a
/// character a cookie cannot carry would break the browser's way in.
fn token_fits(token: &str) -> bool {
    token.len() >= MIN_TOKEN_LEN
        && token
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\'))
}

/// Whether a `Host` header names this machine by address or as
/// `localhost`, with or without a port.
fn names_this_machine(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        // [::1]:8080
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

/// Constant-time equality: how long a wrong token takes to refuse says
/// nothing about how much of it was right.
fn same(given: &str, token: &str) -> bool {
    given.as_bytes().ct_eq(token.as_bytes()).into()
}

/// A new random token: 32 hexadecimal digits (128 bits) from the
/// operating system's generator.
fn generate() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    const T: &str = "0123456789abcdef0123";

    #[test]
    fn loopback_needs_no_token_other_addresses_do() {
        assert_eq!(
            Access::new(addr("127.0.0.1:8080"), None).unwrap().token(),
            None
        );
        assert_eq!(Access::new(addr("[::1]:8080"), None).unwrap().token(), None);
        let err = Access::new(addr("0.0.0.0:8080"), None).unwrap_err();
        assert!(err.to_string().contains("--token"), "{err}");
        assert!(Access::new(addr("0.0.0.0:8080"), Some(T)).is_ok());
        let short = Access::new(addr("0.0.0.0:8080"), Some("abc")).unwrap_err();
        assert!(short.to_string().contains("16"), "{short}");
    }

    #[test]
    fn empty_blank_short_and_uncarriable_tokens_are_refused() {
        for weak in [
            "",
            " ",
            &" ".repeat(40),
            "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t",
            "123456789012345",
            "   12345678901  ",
            "0123456789abcdef 0123",
            "0123456789abcdef;0123",
            "0123456789abcdef\u{e9}0123",
            "0123456789abcdef\n0123",
        ] {
            let err = Access::new(addr("0.0.0.0:8080"), Some(weak)).unwrap_err();
            assert!(matches!(err, ServeError::WeakToken), "{weak:?}: {err}");
            assert!(!err.to_string().contains('\n'), "{err}");
        }
        assert!(Access::new(addr("0.0.0.0:8080"), Some("0123456789abcdef")).is_ok());
        assert!(Access::new(addr("0.0.0.0:8080"), Some("!#$%&'()*+-./:<=>?@[]^_`{|}~")).is_ok());
    }

    #[test]
    fn the_cookie_is_named_after_the_port_and_set_for_every_path() {
        let access = Access::new(addr("0.0.0.0:0"), Some(T))
            .unwrap()
            .on_port(8123);
        assert_eq!(access.cookie_name(), "iomark_token_8123");
        let Admission::Answer(r) = access.check(&Request::get(&format!("/runs/1?token={T}")))
        else {
            panic!("a token in the query is answered with a redirect");
        };
        let cookie = &r.headers.iter().find(|h| h.0 == "Set-Cookie").unwrap().1;
        assert_eq!(
            cookie,
            &format!("iomark_token_8123={T}; Path=/; HttpOnly; SameSite=Strict")
        );
        // Another server's cookie on the same host does not open this one.
        let other = Request {
            cookie: Some(format!("iomark_token_8124={T}")),
            ..Request::get("/")
        };
        assert!(matches!(access.check(&other), Admission::Answer(r) if r.status == 401));
        let this = Request {
            cookie: Some(format!("iomark_token_8124=x; iomark_token_8123={T}")),
            ..Request::get("/")
        };
        assert_eq!(access.check(&this), Admission::Admitted);
    }

    #[test]
    fn a_generated_token_is_long_and_new_each_time() {
        let a = Access::new(addr("0.0.0.0:1"), Some(GENERATE)).unwrap();
        let b = Access::new(addr("0.0.0.0:1"), Some(GENERATE)).unwrap();
        assert_eq!(a.token().unwrap().len(), 32);
        assert_ne!(a.token(), b.token());
    }

    #[test]
    fn the_token_is_taken_from_the_header_the_cookie_or_the_query_once() {
        let access = Access::new(addr("0.0.0.0:1"), Some(T)).unwrap();
        let mut req = Request::get("/runs/1");
        let refused = |a: Admission| matches!(a, Admission::Answer(r) if r.status == 401);
        assert!(refused(access.check(&req)));
        req.authorization = Some(format!("Bearer {T}"));
        assert_eq!(access.check(&req), Admission::Admitted);
        req.authorization = Some(format!("Bearer {T}x"));
        assert!(refused(access.check(&req)));
        req.authorization = None;
        let cookie = access.cookie_name();
        req.cookie = Some(format!("a=b; {cookie}={T}"));
        assert_eq!(access.check(&req), Admission::Admitted);
        req.cookie = Some(format!("{cookie}=wrong"));
        assert!(refused(access.check(&req)));

        let Admission::Answer(r) = access.check(&Request::get(&format!("/?kind=disk&token={T}")))
        else {
            panic!("a token in the query is answered with a redirect");
        };
        assert_eq!(r.status, 303);
        let header = |n: &str| r.headers.iter().find(|h| h.0 == n).unwrap().1.clone();
        assert_eq!(header("Location"), "/?kind=disk");
        let cookie = header("Set-Cookie");
        assert!(
            cookie.starts_with(&format!("iomark_token_1={T};")),
            "{cookie}"
        );
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
        assert!(refused(access.check(&Request::get("/?token=nope"))));
    }

    #[test]
    fn without_a_token_only_this_machine_s_names_are_answered() {
        let open = Access::open();
        let with_host = |h: &str| Request {
            host: Some(h.into()),
            ..Request::get("/")
        };
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "10.0.0.5",
        ] {
            assert_eq!(open.check(&with_host(ok)), Admission::Admitted, "{ok}");
        }
        assert_eq!(open.check(&Request::get("/")), Admission::Admitted);
        let Admission::Answer(r) = open.check(&with_host("evil.example:8080")) else {
            panic!("a rebound name is answered");
        };
        assert_eq!(r.status, 403);
        assert!(r.text().contains("evil.example"), "{}", r.text());
        // With a token the token decides, whatever the name.
        let tokened = Access::new(addr("0.0.0.0:1"), Some(T)).unwrap();
        let req = Request {
            authorization: Some(format!("Bearer {T}")),
            ..with_host("bench.example")
        };
        assert_eq!(tokened.check(&req), Admission::Admitted);
    }

    #[test]
    fn comparing_tokens_needs_every_byte() {
        assert!(same(T, T));
        assert!(!same(&T[..19], T));
        assert!(!same("", T));
    }
}
