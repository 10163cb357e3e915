//! The lines a limited child writes on its stdout, one JSON object each:
//! a [`ChildLine::Pass`] as each pass of its kernel run ends, then one
//! [`ChildLine::Outcome`]. Each line is written whole and flushed, so the
//! parent reads a pass while the child goes on.

use std::io::Write;

use iomark_model::mem::MemOutcome;
use serde::{Deserialize, Serialize};

use crate::observe::{MemObserver, Pass};

/// The longest part of an unreadable line an error quotes.
const QUOTED: usize = 200;

/// One line from the limited child.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ChildLine {
    /// A pass of the kernel run ended: `{"pass": {...}}`.
    Pass(Pass),
    /// The run ended, or failed with the message: `{"outcome": {"Ok": ...}}`
    /// or `{"outcome": {"Err": "..."}}`; the child's last line.
    Outcome(Result<MemOutcome, String>),
}

impl ChildLine {
    /// The line as the child writes it, without its newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("child lines serialise")
    }

    /// A line read from the child (its newline taken off), or why it is
    /// not one: the line, quoted, and what is wrong with it.
    pub fn parse(line: &[u8]) -> Result<ChildLine, String> {
        serde_json::from_slice(line).map_err(|e| format!("{}: {e}", quote(line)))
    }
}

/// `line` as text for an error: lossy UTF-8, cut at [`QUOTED`] characters.
fn quote(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut cut: String = text.chars().take(QUOTED).collect();
    if cut.len() < text.len() {
        cut.push_str("...");
    }
    format!("{cut:?}")
}

/// The child's observer: writes each pass to stdout as it ends.
pub(super) struct PassWriter;

impl MemObserver for PassWriter {
    fn pass(&mut self, p: &Pass) {
        // A parent gone has killed this child already (die_with_parent):
        // a failed write has no one to tell.
        let _ = write_line(&ChildLine::Pass(*p));
    }
}

/// Write `line` and its newline to stdout in one piece, flushed.
pub(super) fn write_line(line: &ChildLine) -> std::io::Result<()> {
    let mut text = line.to_line();
    text.push('\n');
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_a_bad_one_is_named_not_a_panic() {
        let pass = ChildLine::Pass(Pass {
            index: 2,
            counted: true,
            bytes: Some(24_000),
            seconds: 0.25,
            flops: None,
        });
        let text = pass.to_line();
        assert!(text.starts_with(r#"{"pass":{"index":2,"#), "{text}");
        assert_eq!(ChildLine::parse(text.as_bytes()), Ok(pass));
        let failed = ChildLine::Outcome(Err("no memory".into()));
        assert_eq!(failed.to_line(), r#"{"outcome":{"Err":"no memory"}}"#);
        assert_eq!(ChildLine::parse(failed.to_line().as_bytes()), Ok(failed));
        for bad in [
            &b"garbage"[..],
            b"{\"pass\":{\"index\":1}}",
            b"{\"other\":1}",
            b"{\"pass\":{\"index\":1,\"counted\":true,\"bytes\":null,\"seconds\":1,\"flops\":null},",
            b"\xff\xfe",
        ] {
            let err = ChildLine::parse(bad).unwrap_err();
            let quoted = format!("{:?}", String::from_utf8_lossy(bad));
            assert!(err.starts_with(&quoted), "{err}");
        }
        let long = vec![b'x'; 1000];
        let err = ChildLine::parse(&long).unwrap_err();
        assert!(err.len() < 400 && err.contains("x...\""), "{err}");
    }
}
