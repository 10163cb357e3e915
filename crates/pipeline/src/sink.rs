//! Where a run's record goes: the [`RunSink`] seam a run writes through,
//! and [`MemorySink`], which keeps everything in memory so a whole run can
//! be tested without a database.
//!
//! The binary's sink is the results store on a thread of its own
//! (`iomark_store::StoreSink`): a store error there becomes a warning and the
//! run goes on, so no sink call returns an error the run must handle.

use std::collections::BTreeMap;

use iomark_model::live::LiveSample;
use iomark_model::stored::{DeviceMemory, RunId};
use iomark_model::{RunDocument, RunStatus};

/// The record of one run as it goes: begun, checkpointed, finished, with
/// what is remembered of devices between runs (disk runs).
pub trait RunSink {
    /// Record the run as begun; the sink adds its labels and note to `doc`
    /// first, so the printed document carries them even when nothing is
    /// stored.
    fn begin(&mut self, doc: &mut RunDocument);
    /// Whether a [`checkpoint`](Self::checkpoint) would write now; a caller
    /// that must build the document first asks, so a run of thousands of
    /// jobs does not copy them all after each one for nothing.
    fn checkpoint_due(&self) -> bool;
    /// Record the document as it is now (after a finished test).
    fn checkpoint(&mut self, doc: &RunDocument);
    /// Record the final document, labels and note added; the run's id when
    /// it was stored.
    fn finish(&mut self, doc: &mut RunDocument) -> Option<RunId>;
    /// The run's id, once it has one.
    fn run_id(&self) -> Option<RunId>;
    /// What is remembered under `key`.
    fn recall(&mut self, key: &str) -> Option<DeviceMemory>;
    /// Remember `memory` under its key, replacing what was there.
    fn remember(&mut self, memory: &DeviceMemory);
    /// Record a second of a test as it was measured, for a view of the
    /// run while it goes; it must not hold the run up.
    fn sample(&mut self, _sample: &LiveSample) {}
}

/// A sink that keeps the run and the device memory in memory: for tests,
/// and for a caller that wants the lifecycle without a store.
#[derive(Debug, Default)]
pub struct MemorySink {
    /// The document as begun, then as of the last checkpoint, then as
    /// finished; `None` before [`RunSink::begin`].
    pub doc: Option<RunDocument>,
    /// How many checkpoints were written.
    pub checkpoints: usize,
    /// Whether the run was finished (a run whose lifecycle failed is not).
    pub finished: bool,
    /// Labels the sink adds to the run.
    pub labels: Vec<String>,
    /// What is remembered, by key.
    pub devices: BTreeMap<String, DeviceMemory>,
    /// The samples, in the order they came.
    pub samples: Vec<LiveSample>,
}

impl MemorySink {
    /// The stored run's status: interrupted until finished, as in the store.
    pub fn status(&self) -> Option<RunStatus> {
        let doc = self.doc.as_ref()?;
        Some(if self.finished {
            doc.status
        } else {
            RunStatus::Interrupted
        })
    }
}

impl RunSink for MemorySink {
    fn begin(&mut self, doc: &mut RunDocument) {
        doc.labels.extend(self.labels.iter().cloned());
        self.doc = Some(doc.clone());
    }

    fn checkpoint_due(&self) -> bool {
        self.doc.is_some() && !self.finished
    }

    fn checkpoint(&mut self, doc: &RunDocument) {
        self.checkpoints += 1;
        self.doc = Some(doc.clone());
    }

    fn finish(&mut self, doc: &mut RunDocument) -> Option<RunId> {
        for l in &self.labels {
            if !doc.labels.contains(l) {
                doc.labels.push(l.clone());
            }
        }
        self.doc = Some(doc.clone());
        self.finished = true;
        self.run_id()
    }

    fn run_id(&self) -> Option<RunId> {
        self.doc.as_ref().map(|_| RunId(1))
    }

    fn recall(&mut self, key: &str) -> Option<DeviceMemory> {
        self.devices.get(key).cloned()
    }

    fn remember(&mut self, memory: &DeviceMemory) {
        self.devices.insert(memory.key.clone(), memory.clone());
    }

    fn sample(&mut self, sample: &LiveSample) {
        self.samples.push(sample.clone());
    }
}
