//! A sink that keeps a run in memory (feature `test-support`): the test
//! double of the results store, so a whole run is tested without a
//! database.

use std::collections::BTreeMap;

use iomark_model::live::LiveSample;
use iomark_model::stored::{DeviceMemory, RunId};
use iomark_model::{RunDocument, RunStatus};

use crate::RunSink;

/// A sink that keeps the run and the device memory in memory.
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
