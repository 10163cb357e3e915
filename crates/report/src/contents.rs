//! The page's table of contents.

use std::fmt::Write;

use crate::svg::esc;
use crate::Chart;

/// The table of contents, and `body` with each section's heading made its
/// target: every `<h2>` in the order written, and under Charts each chart
/// listed (with many runs, a run's own charts are folded under it).
/// Headings are the report's own words, never stored text.
pub(crate) fn contents(body: &str, charts: &[&Chart]) -> (String, String) {
    let mut parts = body.split("<h2>");
    let mut out = parts.next().unwrap_or_default().to_string();
    let mut nav = String::from("<nav id=\"contents\"><b>Contents</b><ol>");
    for part in parts {
        let title = part.split("</h2>").next().unwrap_or_default();
        let slug: String = title
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        let _ = write!(out, "<h2 id=\"s-{slug}\">{part}");
        let _ = write!(nav, "<li><a href=\"#s-{slug}\">{title}</a>");
        if title == "Charts" && !charts.is_empty() {
            nav.push_str("<ol>");
            for c in charts {
                let _ = write!(
                    nav,
                    "<li><a href=\"#chart-{}\">{}</a></li>",
                    esc(&c.id),
                    esc(&c.title)
                );
            }
            nav.push_str("</ol>");
        }
        nav.push_str("</li>");
    }
    nav.push_str("</ol></nav>");
    (out, nav)
}
