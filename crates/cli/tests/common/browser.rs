//! A real headless Chromium for the pages the tests make: the page's DOM
//! after it loaded, its console errors (a Content-Security-Policy
//! violation is one), and whether a screenshot of it shows anything.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Chromium's binary on the PATH, if any.
pub fn find_chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH")?
                .to_str()?
                .split(':')
                .map(|d| Path::new(d).join(name))
                .find(|p| p.is_file())
        })
}

/// Chromium, headless, with a profile of the test's own, loading `url`.
pub fn chromium(bin: &Path, profile: &Path, extra: &[&str], url: &str) -> Output {
    Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium")
}

/// What Chromium logged as a console error, an uncaught exception, a
/// failed load or a Content-Security-Policy violation (which it logs at
/// INFO level, without the word error).
pub fn console_errors(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| {
            l.contains("Uncaught")
                || l.contains("ERROR:CONSOLE")
                || (l.contains("CONSOLE") && l.to_lowercase().contains("error"))
                || l.contains("net::ERR_")
                || l.contains("Content Security Policy")
        })
        .map(str::to_string)
        .collect()
}

/// The page at `url` after it loaded, failing the test on a console
/// error.
pub fn dom_of(bin: &Path, profile: &Path, url: &str) -> String {
    let dom = chromium(bin, profile, &["--dump-dom"], url);
    assert!(dom.status.success(), "chromium --dump-dom {url} failed");
    assert_eq!(console_errors(&dom.stderr), Vec::<String>::new(), "{url}");
    String::from_utf8(dom.stdout).unwrap()
}

/// A screenshot of `url` (1280 px wide, `height` tall) written to `shot`
/// shows more than 50 colours: something was drawn. No console error
/// either.
pub fn assert_drawn(bin: &Path, profile: &Path, url: &str, shot: &Path, height: u32) {
    let s = chromium(
        bin,
        profile,
        &[
            &format!("--screenshot={}", shot.display()),
            &format!("--window-size=1280,{height}"),
            "--hide-scrollbars",
        ],
        url,
    );
    assert!(s.status.success(), "chromium --screenshot {url} failed");
    assert_eq!(console_errors(&s.stderr), Vec::<String>::new(), "{url}");
    let mut reader = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(shot).unwrap()))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let colours: HashSet<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    assert!(
        colours.len() > 50,
        "{url}: screenshot has {} colours",
        colours.len()
    );
}

/// The Python that drives Chromium over its DevTools protocol
/// (testrig's `rigs/watch_page.py`), or why it cannot (for `require!`).
pub fn devtools_python() -> Result<&'static str, &'static str> {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import websocket"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some("/usr/bin/python3")
        .ok_or("needs python3-websocket (scripts/test installs it)")
}

/// What a person would see wrong with `url` in a `width` x `height`
/// window, as testrig's `rigs/layout_check.js` finds it once the page
/// and its images have loaded: the page wider than the window, an element
/// past its edge outside a box that scrolls, block siblings drawn over
/// each other, a chart's text cut at its edge; and any console error.
pub fn layout_problems(
    bin: &Path,
    python: &str,
    url: &str,
    width: u32,
    height: u32,
) -> Vec<String> {
    let profile = tempfile::tempdir().unwrap();
    let rigs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testrig/rigs");
    let check = std::fs::read_to_string(rigs.join("layout_check.js")).unwrap();
    let out = Command::new(python)
        .arg(rigs.join("watch_page.py"))
        .arg(bin)
        .arg(profile.path())
        .arg(url)
        .arg(check)
        .arg("layout:")
        .arg("60")
        .arg(format!("{width},{height}"))
        .output()
        .expect("watch_page.py runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut problems = Vec::new();
    let mut ended = false;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(e) = event["error"].as_str() {
            problems.push(format!("console: {e}"));
        }
        if let Some(found) = event["value"]
            .as_str()
            .and_then(|v| v.strip_prefix("layout:"))
        {
            let found: Vec<String> = serde_json::from_str(found).unwrap();
            problems.extend(found);
        }
        ended |= event["end"] == "until";
    }
    if !ended {
        problems.push("the page did not finish loading in 60 s".into());
    }
    problems
}
