//! The frame every page shares: the shell with the style sheets this
//! server serves (nothing inline, so the Content-Security-Policy can
//! forbid it), the site's navigation, and pages that only say something.

use std::fmt::Write;

pub(crate) use iomark_report::svg::esc;

use crate::http::{Response, HTML};

/// The report's style sheet, served as a file.
const REPORT_CSS: &str = "/static/report.css";
/// The server's own style sheet.
const SERVE_CSS: &str = "/static/serve.css";

/// The sections in the navigation: (path, name).
const NAV: [(&str, &str); 3] = [("/", "Runs"), ("/devices", "Devices"), ("/live", "Live")];

/// A whole page: `title` in the tab, `body` (HTML, escaped by whoever made
/// it) under the navigation.
pub(crate) fn page(title: &str, body: &str) -> String {
    let mut o = String::with_capacity(body.len() + 1024);
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · iomark</title>\
         <link rel=\"icon\" href=\"data:,\">\
         <link rel=\"stylesheet\" href=\"{REPORT_CSS}\"><link rel=\"stylesheet\" href=\"{SERVE_CSS}\">\
         </head><body><nav class=\"site\"><span class=\"name\">iomark</span>",
        esc(title)
    );
    for (href, name) in NAV {
        let _ = write!(o, "<a href=\"{href}\">{name}</a>");
    }
    o.push_str("</nav><main>");
    o.push_str(body);
    o.push_str("</main></body></html>");
    o
}

/// A page that only says `message` under `title`.
pub(crate) fn message_page(title: &str, message: &str) -> String {
    page(
        title,
        &format!(
            "<h1>{}</h1><p class=\"error\">{}</p><p><a href=\"/\">All runs</a></p>",
            esc(title),
            esc(message)
        ),
    )
}

/// An HTML page answering with `status`.
pub(crate) fn html(status: u16, body: String) -> Response {
    Response::new(status, HTML, body)
}

/// `2026-11-21 22:55 UTC` from milliseconds since the epoch.
pub(crate) fn date(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| format!("{ms} ms"))
}

/// A query string from pairs, encoded as a form encodes it.
pub(crate) fn query_string<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_escape_what_they_are_given_and_link_their_styles() {
        let p = message_page("<script>", "a & \"b\"");
        assert!(p.contains("<title>&lt;script&gt; · iomark</title>"), "{p}");
        assert!(p.contains("a &amp; &quot;b&quot;"), "{p}");
        assert!(!p.contains("<style") && !p.contains("<script"), "{p}");
        assert!(p.contains(REPORT_CSS) && p.contains(SERVE_CSS));
    }

    #[test]
    fn dates_read_in_utc() {
        assert_eq!(date(1_793_491_200_000), "2026-11-01 00:00:00 UTC");
    }
}
