//! The server's own small request and response, so that routing and pages
//! are plain functions tested without a socket; `server` converts from and
//! to hyper's.

/// The headers every response carries: a Content-Security-Policy that lets
/// the page load only what this server serves (no inline style or script,
/// images from here or `data:`, the live page's requests to here alone), no sniffing of types, no referrer sent
/// with a link followed out, never shown in another site's frame.
pub(crate) const SECURITY_HEADERS: [(&str, &str); 4] = [
    (
        "Content-Security-Policy",
        "default-src 'none'; img-src 'self' data:; style-src 'self'; script-src 'self'; \
         connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    // Stored runs change (deleted, finished); never serve a stale page.
    ("Cache-Control", "no-store"),
];

/// A request as the routes see it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Request {
    /// `GET`, `HEAD`, `POST`, ...
    pub(crate) method: String,
    /// The path, still percent-encoded, without the query string.
    pub(crate) path: String,
    /// The query string's pairs, decoded, in order.
    pub(crate) query: Vec<(String, String)>,
    /// The `Authorization` header, if any.
    pub(crate) authorization: Option<String>,
    /// The `Cookie` header, if any.
    pub(crate) cookie: Option<String>,
    /// The `Host` header, if any.
    pub(crate) host: Option<String>,
}

impl Request {
    /// A request for `url` (a path with an optional `?query`).
    pub(crate) fn get(url: &str) -> Request {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        Request {
            method: "GET".into(),
            path: path.to_string(),
            query: form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
            authorization: None,
            cookie: None,
            host: None,
        }
    }

    /// Every value of query parameter `name`, in order.
    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.query
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// A response: status, type, body and any extra headers; the security
/// headers are added to each when it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Response {
    /// The HTTP status code.
    pub(crate) status: u16,
    /// The `Content-Type`.
    pub(crate) content_type: &'static str,
    /// The body.
    pub(crate) body: Vec<u8>,
    /// Headers beyond the type and the security headers (`Set-Cookie`,
    /// `Location`).
    pub(crate) headers: Vec<(&'static str, String)>,
    /// Why a 5xx failed, for the server's log (never sent: the page says
    /// it in words for the reader).
    pub(crate) cause: Option<String>,
}

/// HTML pages' type.
pub(crate) const HTML: &str = "text/html; charset=utf-8";
/// The JSON API's type.
pub(crate) const JSON: &str = "application/json";
/// Style sheets' type.
pub(crate) const CSS: &str = "text/css; charset=utf-8";
/// Scripts' type.
pub(crate) const JS: &str = "text/javascript; charset=utf-8";
/// Plain text's type.
pub(crate) const TEXT: &str = "text/plain; charset=utf-8";

impl Response {
    /// A response of `status` with this type and body.
    pub(crate) fn new(
        status: u16,
        content_type: &'static str,
        body: impl Into<Vec<u8>>,
    ) -> Response {
        Response {
            status,
            content_type,
            body: body.into(),
            headers: Vec::new(),
            cause: None,
        }
    }

    /// Add a header.
    pub(crate) fn with_header(mut self, name: &'static str, value: String) -> Response {
        self.headers.push((name, value));
        self
    }

    /// The body as text.
    #[cfg(test)]
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_string_is_decoded_as_a_form() {
        let r = Request::get("/compare?id=1&id=2&label=a+b&device=%2Fmnt%2Fx");
        assert_eq!(r.path, "/compare");
        assert_eq!(r.all("id"), ["1", "2"]);
        assert_eq!(r.all("label"), ["a b"]);
        assert_eq!(r.all("device"), ["/mnt/x"]);
        assert!(r.all("kind").is_empty());
    }
}
