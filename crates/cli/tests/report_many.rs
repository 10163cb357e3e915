//! `iomark report` of fifty runs, opened in headless Chromium: the page
//! stays within the window's width, its height is bounded, no legend entry
//! runs into another, every run is named, and nothing fails in the console.
//! (The static properties of the page are checked without a browser in
//! crates/report/tests/html.rs.)

use crate::common::*;
use crate::report_html::fixtures;

/// The window the page is measured in.
const WINDOW: (u32, u32) = (1400, 900);
/// The tallest the page of fifty runs may be: about 25 screens. (These
/// fifty measure about 12,600 px; fifty of the store's synthetic CDM-shaped
/// runs 14,500, and 112,000 before the page folded and ranked them.)
const MAX_HEIGHT: f64 = 25_000.0;

/// Appended to a copy of the page: measures it once laid out and writes
/// the figures into the DOM, which `--dump-dom` prints.
const MEASURE: &str = r#"<script>
window.addEventListener("load", () => {
  const boxes = (g) => [...g].map((e) => e.getBBox()).filter((b) => b.width > 0);
  const apart = (a, b) => a.x + a.width <= b.x || b.x + b.width <= a.x ||
    a.y + a.height <= b.y || b.y + b.height <= a.y;
  let overlaps = [];
  let cut = [];
  for (const svg of document.querySelectorAll("figure svg")) {
    const legend = boxes(svg.querySelectorAll("g.legend"));
    for (let i = 0; i < legend.length; i++)
      for (let j = i + 1; j < legend.length; j++)
        if (!apart(legend[i], legend[j])) overlaps.push(svg.id);
    const w = svg.viewBox.baseVal.width;
    for (const t of svg.querySelectorAll("g.legend text, text.row-name")) {
      const b = t.getBBox();
      if (b.width > 0 && (b.x < 0 || b.x + b.width > w)) cut.push(svg.id + ": " + t.textContent);
    }
  }
  const shown = [...document.querySelectorAll("figure svg")]
    .map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0);
  const out = document.createElement("pre");
  out.id = "measure";
  out.textContent = JSON.stringify({
    page_w: document.documentElement.scrollWidth,
    page_h: document.documentElement.scrollHeight,
    window_w: window.innerWidth,
    charts: shown.length,
    widest_chart: Math.max(...shown.map((r) => r.right)),
    overlaps, cut,
  });
  document.body.appendChild(out);
});
</script>"#;

#[test]
fn a_report_of_fifty_runs_reads_in_chromium() {
    let scratch = ScratchDb::named("results.db");
    let dir = scratch.dir.path();
    let long = "Samsung T7 Shield on the USB-C port of the dock behind the monitor, cold, 2026";
    let mut files = Vec::new();
    for i in 0..50 {
        let label = if i == 7 {
            long.to_string()
        } else {
            format!("disk{i}")
        };
        let mb = 40.0 + 37.0 * ((i * 13) % 50) as f64;
        let doc = if i % 2 == 0 {
            fixtures::cdm(&[&label], mb)
        } else {
            fixtures::custom(&[&label], mb)
        };
        let file = dir.join(format!("{i}.json"));
        std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
        files.push(file.to_str().unwrap().to_string());
    }
    let mut import = vec!["results", "import", "--db", scratch.db()];
    import.extend(files.iter().map(String::as_str));
    iomark_ok(&import);
    let ids: Vec<String> = (1..=50).map(|i| i.to_string()).collect();
    let html = dir.join("report.html");
    let mut report = vec!["report", "--baseline", "1", "--db", scratch.db()];
    report.extend(ids.iter().map(String::as_str));
    report.extend(["--html", html.to_str().unwrap()]);
    iomark_ok(&report);
    let page = std::fs::read_to_string(&html).unwrap();
    // Every run named whole in the runs table; the comparison a table per
    // test, a run per row, never fifty columns.
    for id in &ids {
        let row = format!("<tr data-run=\"{id}\"><td>{id}</td><td>run {id} (");
        assert!(page.contains(&row), "run {id} not listed");
    }
    assert!(page.contains(&format!("run 8 ({long})")));
    assert!(page.contains("<details class=\"compared-test\">"));
    let widest_row = page
        .split("<tr>")
        .map(|row| row.split("</tr>").next().unwrap().matches("<th>").count())
        .max()
        .unwrap();
    assert!(widest_row < 20, "a table {widest_row} columns wide");

    let bin = require!(
        find_chromium().ok_or("the browser checks need chromium (scripts/test installs it)")
    );
    let measured = dir.join("measured.html");
    std::fs::write(
        &measured,
        page.replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let dom = chromium(
        &bin,
        profile.path(),
        &[
            "--dump-dom",
            &format!("--window-size={},{}", WINDOW.0, WINDOW.1),
        ],
        &format!("file://{}", measured.display()),
    );
    assert!(dom.status.success(), "chromium --dump-dom failed");
    assert_eq!(console_errors(&dom.stderr), Vec::<String>::new());
    let dom = String::from_utf8(dom.stdout).unwrap();
    let json = dom
        .split("<pre id=\"measure\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .expect("the page was measured");
    let m: serde_json::Value = serde_json::from_str(&json.replace("&quot;", "\"")).unwrap();
    let num = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{k} in {m}"));
    eprintln!("fifty runs at {WINDOW:?}: {m}");
    assert!(
        num("page_w") <= num("window_w"),
        "wider than the window: {m}"
    );
    assert!(num("widest_chart") <= num("window_w"), "{m}");
    assert!(num("page_h") <= MAX_HEIGHT, "{m}");
    assert!(num("charts") >= 4.0, "{m}");
    assert_eq!(
        m["overlaps"],
        serde_json::json!([]),
        "legend entries overlap"
    );
    assert_eq!(
        m["cut"],
        serde_json::json!([]),
        "names cut at the chart's edge"
    );
}
