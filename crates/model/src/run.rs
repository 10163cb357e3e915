//! The result document: one run of iomark, whatever it measured.
//!
//! This is what `--json` prints and what the store keeps. Its layout is
//! documented in `docs/result-schema.md`; any change to it that a reader
//! could notice bumps [`SCHEMA_VERSION`].

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::disk::DiskRun;
use crate::warning::Warning;

/// The version of the result document's layout.
pub const SCHEMA_VERSION: u32 = 1;

/// The most bytes a label may have. Labels name runs in lists, legends and
/// every chart of a report; one of 100 KB took `iomark report --png` a
/// minute and a half to lay out, and a 5 MB one made a 245 MB page.
pub const MAX_LABEL_BYTES: usize = 1024;

/// The most bytes a note may have: a line or two about the run, shown with
/// it wherever it is listed.
pub const MAX_NOTE_BYTES: usize = 1024;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every job ran to its end.
    Complete,
    /// Stopped early (Ctrl-C or killed): the figures cover what finished.
    Interrupted,
    /// An error stopped it.
    Failed,
    /// Going now: how a stored run that has not finished reads back while
    /// its process is alive or it stored a second lately (never stored
    /// itself; the store keeps it as interrupted until it finishes).
    Running,
}

impl RunStatus {
    /// The name used in output and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Running => "running",
        }
    }
}

/// What the run measured, by domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunBody {
    /// A storage run.
    Disk(DiskRun),
    /// A memory or out-of-core run (STREAM, stencil, Himeno).
    Mem(crate::mem::MemRun),
    /// A network run (iperf3-compatible client, or a server's busy period).
    Net(crate::net::NetRun),
}

/// One run: who ran what, when, on what, and what came out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    /// Layout version of this document.
    pub schema_version: u32,
    /// `iomark`.
    pub tool: String,
    /// The version of the tool that measured.
    pub tool_version: String,
    /// The full command line.
    pub command_line: Vec<String>,
    /// Start, milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// End, milliseconds since the Unix epoch.
    pub finished_at_ms: u64,
    /// How it ended.
    pub status: RunStatus,
    /// User labels (`--label usb3`).
    #[serde(default)]
    pub labels: Vec<String>,
    /// A free note.
    pub note: Option<String>,
    /// Doubts about the run as a whole (each job carries its own too).
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// The machine the run was measured on.
    pub host: Option<crate::device::HostInfo>,
    /// The device and link chain behind the measured path.
    pub device: Option<crate::device::DeviceReport>,
    /// The measurements.
    pub body: RunBody,
}

impl RunDocument {
    /// A run `tool` (at `tool_version`) measured with `command_line`:
    /// started and finished now, complete, no labels, warnings or machine
    /// facts yet. The one constructor: set the rest with struct update
    /// syntax (`RunDocument { status, ..RunDocument::new(...) }`).
    pub fn new(
        tool: impl Into<String>,
        tool_version: impl Into<String>,
        command_line: Vec<String>,
        body: RunBody,
    ) -> Self {
        let now = now_ms();
        RunDocument {
            schema_version: SCHEMA_VERSION,
            tool: tool.into(),
            tool_version: tool_version.into(),
            command_line,
            started_at_ms: now,
            finished_at_ms: now,
            status: RunStatus::Complete,
            labels: Vec::new(),
            note: None,
            warnings: Vec::new(),
            host: None,
            device: None,
            body,
        }
    }

    /// A run of this iomark (the workspace's version) with `command_line`.
    pub fn iomark(command_line: Vec<String>, body: RunBody) -> Self {
        RunDocument::new("iomark", env!("CARGO_PKG_VERSION"), command_line, body)
    }
}

/// `t` in milliseconds since the Unix epoch, the unit of every timestamp
/// in a document (0 for times before 1970, which no clock here reports).
pub fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    epoch_ms(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_without_optional_fields_still_read() {
        let doc: RunDocument = serde_json::from_str(
            r#"{"schema_version": 1, "tool": "iomark", "tool_version": "0.1.0",
                "command_line": ["iomark"], "started_at_ms": 1, "finished_at_ms": 2,
                "status": "complete",
                "body": {"kind": "disk", "profile": "custom", "jobs": [],
                    "target": {"given": "/tmp", "path": "/tmp/x", "kind": "test_file",
                        "size": 0, "logical_block_size": 512}}}"#,
        )
        .unwrap();
        assert!(doc.labels.is_empty() && doc.warnings.is_empty());
        assert_eq!((doc.note, doc.host, doc.device), (None, None, None));
        let RunBody::Disk(disk) = doc.body else {
            panic!("not a disk run")
        };
        assert_eq!((disk.profile_result, disk.cgroup), (None, None));
    }
}
