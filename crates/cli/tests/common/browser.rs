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
