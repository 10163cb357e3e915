//! Control characters shown, not sent: stored text (names, labels, notes,
//! imported files) and what a network peer sends are printed through these,
//! so a title sequence or a cursor move in a result never reaches the
//! terminal as one. Here, at the bottom of the crates, so that every crate
//! that takes text from outside (text, report, net) shares the one path.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` is a control character a terminal may act on (C0, DEL, C1)
/// or one that reorders what is shown (the bidirectional overrides,
/// embeddings, isolates and marks: U+202E makes `gpj.exe` of `exe.jpg`).
fn is_control(c: char) -> bool {
    matches!(
        c,
        '\0'..='\x1f'
            | '\x7f'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
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

/// Stored or imported text made safe to print on one line: every control
/// character (C0 with tab and newline, DEL, C1, so also ESC) shown as
/// `\x1b`, `\n`, `\t` instead of reaching the terminal, where an
/// `ESC ]0;...` would retitle the window or worse.
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
