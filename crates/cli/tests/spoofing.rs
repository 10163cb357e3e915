//! Text that could spoof what is shown (issue 45): a bidirectional
//! override, a line separator Python's `str.splitlines()` honours, a
//! control character, in a stored target, label and note or in the
//! directory a run measures. Every JSON iomark writes reads back the same
//! and splits into lines only at its own newlines; every page shows each
//! such character as the terminal does (`\u{202e}`), never raw.

use crate::common::*;
use iomark_model::escape::spoof_class;
use iomark_model::RunBody;
use iomark_testrig::require;
use serde_json::Value;

/// One character of every class: bidi, each line separator of
/// `splitlines()`, other C0 and C1 controls.
const SPOOF: &str = "exe.\u{202e}gpj\u{2028}a\u{2029}b\u{85}c\u{b}\u{c}\u{1c}\u{1d}\u{1e}\u{61c}\u{200e}\u{200f}\u{2066}\u{2069}\x1b[31m\x07\u{9b}\nend";

/// What a page shows for [`SPOOF`] up to its newline (kept: it is layout
/// in HTML, shown as `\n` by the text rendering).
const SHOWN: &str = "exe.\\u{202e}gpj\\u{2028}a\\u{2029}b\\x85c\\x0b\\x0c\\x1c\\x1d\\x1e\\u{61c}\\u{200e}\\u{200f}\\u{2066}\\u{2069}\\x1b[31m\\x07\\x9b";

/// Whether some string in `v` is `s`.
fn holds(v: &Value, s: &str) -> bool {
    match v {
        Value::String(t) => t == s,
        Value::Array(a) => a.iter().any(|v| holds(v, s)),
        Value::Object(m) => m.values().any(|v| holds(v, s)),
        _ => false,
    }
}

/// `text` is one JSON document whose lines are the same to `\n` and to
/// `splitlines()`, and which holds `want` as it was.
fn one_document(text: &str, want: &str, who: &str) -> Value {
    assert_eq!(
        python_splitlines(text),
        text.lines().collect::<Vec<_>>(),
        "{who}: splitlines() cuts a line"
    );
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{who}: {e}: {text}"));
    assert!(holds(&v, want), "{who}: {want:?} not read back: {text}");
    v
}

/// No character of a class reaches `text` raw but the page's own newlines
/// and tabs.
fn nothing_raw(text: &str, who: &str) {
    if let Some(c) = text
        .chars()
        .find(|&c| spoof_class(c).is_some() && c != '\n' && c != '\t')
    {
        panic!("{who}: a raw {c:?}");
    }
}

#[test]
fn stored_text_of_every_class_reads_back_from_json_and_shows_escaped_on_pages() {
    require!(have("python3"));
    let db = ScratchDb::new();
    let mut doc = read_run("lab", 100.0, 0.1, None);
    let path = format!("/mnt/{SPOOF}");
    if let RunBody::Disk(d) = &mut doc.body {
        d.target.given = path.clone();
        d.target.path = path.clone();
    }
    doc.labels = vec![format!("label {SPOOF}")];
    doc.note = Some(format!("note {SPOOF}"));
    let [id] = store(db.db(), [doc]);

    for args in [
        vec!["list", "--json"],
        vec!["show", &id, "--json"],
        vec!["export", &id, "--format", "json"],
    ] {
        let text = ok(&results(db.db(), &args));
        let v = one_document(&text, &path, &format!("results {args:?}"));
        assert!(holds(&v, &format!("note {SPOOF}")), "{text}");
        assert!(text.contains("\\u2028") && text.contains("\\u202e") && text.contains("\\u0085"));
    }

    let out = iomark_ok(&["report", &id, "--db", db.db(), "--html", "-"]);
    let html = stdout(&out);
    assert!(html.contains(SHOWN), "the report shows no escaped target");
    nothing_raw(&html, "report");

    let served = Served::start(db.db(), &[]);
    for page in ["/", &format!("/runs/{id}")] {
        let html = served.get(page).text();
        assert!(html.contains(SHOWN), "{page}: {html}");
        nothing_raw(&html, page);
    }
    for api in ["/api/runs", &format!("/api/runs/{id}")] {
        let r = served.get(api);
        assert_eq!(r.status, 200, "{api}");
        one_document(&r.text(), &path, api);
    }
}

#[test]
fn a_disk_run_on_a_directory_named_with_every_class_streams_one_object_a_line() {
    require!(have("python3"));
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join(SPOOF.replace('/', "_"));
    std::fs::create_dir(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    let job = |extra: &[&str]| {
        iomark_cmd(&[
            "disk",
            dir,
            "--rw",
            "read",
            "--bs",
            "64k",
            "--size",
            "1M",
            "--engine",
            "null",
            "--runtime",
            "1s",
            "--no-store",
        ])
        .args(extra)
        .output()
        .expect("iomark runs")
    };
    let text = ok(&job(&["--json-stream"]));
    let events = python_json_lines(&text, "disk --json-stream");
    assert_eq!(
        events.first().map(|e| &e["event"]),
        Some(&Value::from("start"))
    );
    let end = &events.last().unwrap()["data"];
    assert!(holds(end, dir), "{text}");
    assert!(text.contains("\\u2028") && text.contains("\\u202e"));

    let text = ok(&job(&["--json"]));
    one_document(&text, dir, "disk --json");
    // The terminal's text shows it escaped, as the pages do.
    let text = ok(&job(&[]));
    assert!(text.contains(SHOWN), "{text}");
    nothing_raw(&text, "disk's text");
}
