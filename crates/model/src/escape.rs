//! Control characters shown, not sent: stored text (names, labels, notes,
//! imported files) and what a network peer sends are printed through these,
//! so a title sequence or a cursor move in a result never reaches the
//! terminal as one, a U+202E never turns `exe.jpg` into `gpj.exe` on a
//! page, and a U+2028 never splits a line of JSON for a reader that breaks
//! lines as Python's `str.splitlines()` does. Here, at the bottom of the
//! crates, so that every crate that takes text from outside (text, report,
//! net) and every place that writes JSON shares the one judgement,
//! [`spoof_class`].

use std::borrow::Cow;
use std::fmt::Write;

use serde::Serialize;

/// What a character can do to what is shown, if it is sent as it is
/// rather than shown as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpoofClass {
    /// Reorders the text around it: the bidirectional marks, embeddings,
    /// overrides and isolates (U+061C, U+200E, U+200F, U+202A to U+202E,
    /// U+2066 to U+2069). U+202E shows `exe.\u{202e}gpj` as `exe.jpg`.
    Bidi,
    /// Ends a line for some reader: `\n` and `\r`, and those Python's
    /// `str.splitlines()` honours besides (U+000B, U+000C, U+001C to
    /// U+001E, U+0085, U+2028, U+2029), which a JSON line may hold raw.
    LineBreak,
    /// Any other control a terminal may act on: the rest of C0 (ESC, BEL,
    /// tab, ...), DEL and the rest of C1 (CSI, U+009B, ...).
    Control,
}

/// Which [`SpoofClass`] `c` is in, if any: the one list of what iomark
/// never sends as it is to a terminal, a page, an SVG or a JSON reader.
pub fn spoof_class(c: char) -> Option<SpoofClass> {
    match c {
        '\n'
        | '\r'
        | '\u{b}'
        | '\u{c}'
        | '\u{1c}'..='\u{1e}'
        | '\u{85}'
        | '\u{2028}'
        | '\u{2029}' => Some(SpoofClass::LineBreak),
        '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
            Some(SpoofClass::Bidi)
        }
        '\0'..='\x1f' | '\x7f'..='\u{9f}' => Some(SpoofClass::Control),
        _ => None,
    }
}

fn is_control(c: char) -> bool {
    spoof_class(c).is_some()
}

/// `c` as readable text: `\n`, `\t`, `\r`, else `\x1b`-style hex.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) <= 0xff => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// Stored or imported text made safe to print on one line: every character
/// of a [`SpoofClass`] (C0 with tab and newline, DEL, C1, so also ESC; the
/// line separators; the bidirectional controls) shown as `\x1b`, `\n`,
/// `\t`, `\u{2028}`, `\u{202e}` instead of reaching the terminal, where
/// an `ESC ]0;...` would retitle the window or worse.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    escape_where(s, is_control)
}

/// [`escape_controls`] for a rendered block of lines: newlines (and tabs)
/// keep their place in the layout, every other control is shown escaped.
pub fn escape_controls_keep_lines(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| is_control(c) && c != '\n' && c != '\t')
}

/// Text from outside made fit for a Markdown table cell (or a line under
/// the table): control characters shown as [`escape_controls`] shows them,
/// newlines too (a cell cannot span lines); `|`, which would end the cell,
/// and the backslash that escapes are backslash-escaped, so are `[`, `]`
/// and `` ` ``, which would make a link or a code span of a label; `<`, `>`
/// and `&` become entities, so no HTML (`<img onerror=...>`) reaches a
/// renderer that passes it.
pub fn escape_markdown(s: &str) -> String {
    let shown = escape_controls(s);
    let mut out = String::with_capacity(shown.len() + 8);
    for c in shown.chars() {
        match c {
            '|' | '\\' | '[' | ']' | '`' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(&escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escape(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// serde_json's text of a document with every [`SpoofClass`] character it
/// leaves raw written as a `\u2028`-style escape: serde_json escapes C0
/// itself but writes DEL, C1 (U+0085), U+2028, U+2029 and the
/// bidirectional controls as they are, so a reader that splits lines as
/// Python's `str.splitlines()` cut a `--json-stream` line in pieces, and a
/// `cat` of the output reordered what it showed. The value read back is
/// the same: only its spelling changes. Every such character in JSON text
/// is inside a string (JSON's whitespace is space, tab, `\n` and `\r`),
/// so each one can be replaced where it stands.
pub fn json_escaped(json: String) -> String {
    let raw = |c: char| c > '\x7e' && is_control(c);
    if !json.chars().any(raw) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if raw(c) {
            // Every class lies in the Basic Multilingual Plane: one escape.
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// `v` as compact JSON (one line), through [`json_escaped`]: what every
/// JSON line iomark prints (`--json-stream`, the live API) is made of.
pub fn to_json<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    serde_json::to_string(v).map(json_escaped)
}

/// `v` as pretty JSON, through [`json_escaped`]: what every JSON document
/// iomark prints (`--json`, `results ... --json`, the API) is made of.
pub fn to_json_pretty<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(v).map(json_escaped)
}

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(
            escape_controls("a\x1b]0;owned\x07b"),
            "a\\x1b]0;owned\\x07b"
        );
        assert_eq!(escape_controls("tab\there\nnl\r"), "tab\\there\\nnl\\r");
        assert_eq!(
            escape_controls("del\x7f c1\u{9b}31m"),
            "del\\x7f c1\\x9b31m"
        );
        assert_eq!(escape_controls("\0"), "\\x00");
        // Plain text, accents and symbols pass untouched, without a copy.
        let plain = "Ümlaut µs – 67.20 MB/s ✓ \\path";
        assert!(matches!(escape_controls(plain), Cow::Borrowed(p) if p == plain));
        assert_eq!(escape_controls("\u{a0}nbsp"), "\u{a0}nbsp");
        assert_eq!(escape_controls("exe.\u{202e}gpj"), "exe.\\u{202e}gpj");
        assert_eq!(escape_controls("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
    }

    /// One of each class's characters, and a few that are none.
    const BIDI: [char; 11] = [
        '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}',
        '\u{202e}', '\u{2066}', '\u{2067}', '\u{2069}',
    ];
    /// Every line boundary of Python's `str.splitlines()`.
    const LINE_BREAKS: [char; 10] = [
        '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
        '\u{2029}',
    ];
    const CONTROLS: [char; 8] = [
        '\0', '\x07', '\t', '\x1b', '\x1f', '\x7f', '\u{80}', '\u{9b}',
    ];

    #[test]
    fn each_class_is_named() {
        for c in BIDI {
            assert_eq!(spoof_class(c), Some(SpoofClass::Bidi), "{c:?}");
        }
        for c in LINE_BREAKS {
            assert_eq!(spoof_class(c), Some(SpoofClass::LineBreak), "{c:?}");
        }
        for c in CONTROLS {
            assert_eq!(spoof_class(c), Some(SpoofClass::Control), "{c:?}");
        }
        // Every C0 and C1 character is in one class or another.
        for c in ('\0'..='\x1f').chain('\x7f'..='\u{9f}') {
            assert!(spoof_class(c).is_some(), "{c:?}");
        }
        // Text, spaces and joiners that show nothing false pass.
        for c in [
            'a', ' ', '~', '\u{a0}', '\u{a1}', 'µ', '\u{200b}', '\u{200d}', '\u{2027}', '\u{202f}',
            '\u{2065}', '\u{206a}', '✓',
        ] {
            assert_eq!(spoof_class(c), None, "{c:?}");
        }
    }

    #[test]
    fn each_class_is_shown_escaped() {
        assert_eq!(
            escape_controls("a\u{2028}b\u{2029}c"),
            "a\\u{2028}b\\u{2029}c"
        );
        assert_eq!(
            escape_controls("a\u{85}b\u{b}\u{c}\u{1c}"),
            "a\\x85b\\x0b\\x0c\\x1c"
        );
        assert_eq!(escape_controls("\u{61c}\u{200f}"), "\\u{61c}\\u{200f}");
        for c in BIDI.iter().chain(&LINE_BREAKS).chain(&CONTROLS) {
            let s = format!("x{c}y");
            let shown = escape_controls(&s);
            assert!(shown.chars().all(|c| spoof_class(c).is_none()), "{shown:?}");
            assert!(
                shown.starts_with("x\\") && shown.ends_with('y'),
                "{shown:?}"
            );
        }
        // A block keeps its newlines and tabs, never a U+2028.
        assert_eq!(
            escape_controls_keep_lines("a\n\tb\u{2028}\u{85}"),
            "a\n\tb\\u{2028}\\x85"
        );
    }

    /// Python's `str.splitlines()`, for the JSON tests.
    fn python_splitlines(s: &str) -> Vec<String> {
        let mut lines = vec![];
        let mut line = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if LINE_BREAKS.contains(&c) {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut line));
            } else {
                line.push(c);
            }
        }
        if !line.is_empty() {
            lines.push(line);
        }
        lines
    }

    #[test]
    fn json_text_holds_every_class_escaped_and_reads_back_the_same() {
        let all: String = BIDI.iter().chain(&LINE_BREAKS).chain(&CONTROLS).collect();
        let title = format!("t{all}e");
        let doc = serde_json::json!({ "title": title, "list": [title.clone(), 1] });
        // serde_json alone leaves U+2028 raw, and a splitlines() cuts it.
        let plain = serde_json::to_string(&doc).unwrap();
        assert!(plain.contains('\u{2028}') && python_splitlines(&plain).len() > 1);

        let line = to_json(&doc).unwrap();
        assert!(line.is_ascii(), "{line}");
        assert!(line.contains("\\u2028") && line.contains("\\u202e") && line.contains("\\u0085"));
        assert_eq!(python_splitlines(&line), vec![line.clone()]);
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back, doc);

        // Pretty: one line per key as ever, each of them JSON's own.
        let pretty = to_json_pretty(&doc).unwrap();
        assert_eq!(
            python_splitlines(&pretty),
            pretty.lines().collect::<Vec<_>>()
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&pretty).unwrap(),
            doc
        );
        // Text without any passes as it was.
        assert_eq!(json_escaped("{\"a\":\"µ✓\"}".into()), "{\"a\":\"µ✓\"}");
    }

    #[test]
    fn markdown_cells_hold_any_text_as_text() {
        assert_eq!(escape_markdown("a|b"), "a\\|b");
        assert_eq!(escape_markdown("C:\\dir\\|x"), "C:\\\\dir\\\\\\|x");
        assert_eq!(
            escape_markdown("<img src=x onerror=alert(1)>"),
            "&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(escape_markdown("R&D"), "R&amp;D");
        assert_eq!(escape_markdown("&lt;"), "&amp;lt;");
        assert_eq!(
            escape_markdown("[click](javascript:x) `code`"),
            "\\[click\\](javascript:x) \\`code\\`"
        );
        // Newlines and controls are shown, and the backslash that shows
        // them is escaped in turn, so a renderer shows `\n`, `\x1b`.
        assert_eq!(escape_markdown("one\ntwo\r"), "one\\\\ntwo\\\\r");
        assert_eq!(escape_markdown("\x1b[31m\u{9b}"), "\\\\x1b\\[31m\\\\x9b");
        // What a test name or a device holds passes as it is.
        let plain = "read 1MiB QD8 T1, io_uring, direct, random data, 1GiB – 67.20 MB/s µs";
        assert_eq!(escape_markdown(plain), plain);
        for evil in ["a|b\nc", "\\|", "x\x07|<b>&", "|||"] {
            let cell = escape_markdown(evil);
            assert!(!cell.contains('\n') && !cell.contains('<'), "{cell}");
            // Every `|` left is escaped: preceded by an odd run of backslashes.
            for (i, _) in cell.match_indices('|') {
                let run = cell[..i].chars().rev().take_while(|&c| c == '\\').count();
                assert!(run % 2 == 1, "unescaped | in {cell:?}");
            }
        }
    }

    #[test]
    fn rendered_blocks_keep_their_lines() {
        assert_eq!(
            escape_controls_keep_lines("one\x1b[2J\n\ttwo\r\n"),
            "one\\x1b[2J\n\ttwo\\r\n"
        );
        for s in [
            escape_controls("\x1b\u{9b}\x7f\x00\n").into_owned(),
            escape_controls_keep_lines("\x1b\u{9b}\x7f\x00").into_owned(),
        ] {
            assert!(!s.chars().any(is_control), "{s:?}");
        }
    }
}
