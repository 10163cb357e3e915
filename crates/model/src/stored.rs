//! A run as a results store keeps it: its id, the summary row `results
//! list` shows, its figures, its scoped warnings and the document as stored.
//!
//! These are plain records so that what renders or judges stored runs (the
//! text, the report, the regression gate) reads them without the store.

use std::fmt;
use std::str::FromStr;

use crate::artefact::{ProbeVerdict, RatedSpeed};
use crate::figure::Figure;
use crate::{RunDocument, RunStatus, Warning};

/// The identifier of a stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for RunId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim_start_matches('#')
            .parse::<i64>()
            .ok()
            .filter(|n| *n > 0)
            .map(RunId)
            .ok_or_else(|| {
                format!("'{s}' is not a run id: use a number from `iomark results list`")
            })
    }
}

/// What a store's list shows of a run: everything but its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The run's id.
    pub id: RunId,
    /// The body's kind: `disk`, `mem`, `net`.
    pub kind: String,
    /// The tool that measured: `iomark`, or `fio` / `iperf3` for imports.
    pub tool: String,
    /// Its version.
    pub tool_version: String,
    /// The full command line.
    pub command_line: Vec<String>,
    /// Start, ms since the Unix epoch.
    pub started_at_ms: u64,
    /// End, ms since the Unix epoch (the last update for an unfinished run).
    pub finished_at_ms: u64,
    /// How it ended; `Interrupted` until the store finishes the run.
    pub status: RunStatus,
    /// User labels.
    pub labels: Vec<String>,
    /// The free note.
    pub note: Option<String>,
    /// What the run targeted: a path, a host.
    pub target: Option<String>,
    /// The device behind the target, when known.
    pub device: Option<String>,
    /// Number of warnings stored with the run.
    pub warning_count: u32,
    /// The profile it ran (`cdm`, `custom`), when known.
    pub profile: Option<String>,
    /// Its first figure that is not a CPU share: the answer a list of runs
    /// shows beside each (a disk test's bandwidth, a net test's goodput,
    /// a memory kernel's rate), as a lone run's Result table opens with.
    pub headline: Option<crate::figure::Figure>,
}

/// A warning stored with a run, with where in the run it was raised.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredWarning {
    /// The job or test it is about; empty for the whole run.
    pub scope: String,
    /// The warning.
    pub warning: Warning,
}

/// Everything stored about one run.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// The summary row.
    pub summary: RunSummary,
    /// Its figures, in order.
    pub figures: Vec<Figure>,
    /// Its warnings (the run's and each job's).
    pub warnings: Vec<StoredWarning>,
    /// The document as stored, JSON.
    pub document_json: String,
}

/// A stored document this version cannot read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("run {id}'s stored document cannot be read ({reason}): it was probably written by another iomark version")]
pub struct UnreadableDocument {
    /// The run.
    pub id: RunId,
    /// Why.
    pub reason: String,
}

impl StoredRun {
    /// The stored document, with the stored status (an unfinished run's
    /// document still says what its writer last set).
    pub fn document(&self) -> Result<RunDocument, UnreadableDocument> {
        let mut doc: RunDocument =
            serde_json::from_str(&self.document_json).map_err(|e| UnreadableDocument {
                id: self.summary.id,
                reason: e.to_string(),
            })?;
        doc.status = self.summary.status;
        Ok(doc)
    }
}

impl RunSummary {
    /// An example summary of run `id`, for tests: a complete iomark disk
    /// run labelled `label` on `device`, with no warnings counted.
    #[doc(hidden)]
    pub fn example(id: i64, label: &str, device: &str) -> Self {
        RunSummary {
            id: RunId(id),
            kind: "disk".into(),
            tool: "iomark".into(),
            tool_version: "0.1.0".into(),
            command_line: vec![],
            started_at_ms: 0,
            finished_at_ms: 0,
            status: RunStatus::Complete,
            labels: vec![label.into()],
            note: None,
            target: None,
            device: Some(device.into()),
            warning_count: 0,
            profile: None,
            headline: None,
        }
    }
}

/// What the store remembers about a device between runs.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceMemory {
    /// The key it is remembered under.
    pub key: String,
    /// The device in words, for people reading the table.
    pub description: String,
    /// The speed the user said it is rated at (`--rated`).
    pub rated: Option<RatedSpeed>,
    /// The artefacts probe's last verdict here.
    pub probe: Option<RememberedProbe>,
    /// The verify profile's last verdict here.
    pub verify: Option<RememberedVerify>,
}

impl DeviceMemory {
    /// Nothing remembered yet about `key`.
    pub fn new(key: &str, description: &str) -> Self {
        DeviceMemory {
            key: key.into(),
            description: description.into(),
            rated: None,
            probe: None,
            verify: None,
        }
    }
}

/// A device runs were measured on, as the store lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenDevice {
    /// The device behind the runs' target in one line, else the target
    /// (a path on tmpfs, a network host); empty when neither is known.
    pub name: String,
    /// How many runs measured it.
    pub runs: u64,
    /// The first run's start, ms since the Unix epoch.
    pub first_ms: u64,
    /// The last run's start, ms since the Unix epoch.
    pub last_ms: u64,
    /// The newest run's id.
    pub newest: RunId,
    /// A kind of run that measured it (`disk`, `mem`, `net`).
    pub kind: String,
}

/// An artefacts probe's verdict, with where and when it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct RememberedProbe {
    /// The verdict.
    pub verdict: ProbeVerdict,
    /// The run it was found in (which may since have been deleted).
    pub run: Option<RunId>,
    /// When, ms since the Unix epoch.
    pub at_ms: u64,
}

/// A verify run's verdict, with where and when it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct RememberedVerify {
    /// The verdict.
    pub verdict: crate::verify::VerifyVerdict,
    /// The run it was found in (which may since have been deleted).
    pub run: Option<RunId>,
    /// When, ms since the Unix epoch.
    pub at_ms: u64,
}
