//! Where a run's record goes: the [`RunSink`] seam a run writes through.
//! Tests use `MemorySink` (feature `test-support`), which keeps everything
//! in memory so a whole run can be tested without a database.
//!
//! The binary's sink is the results store on a thread of its own
//! (`iomark_store::StoreSink`): a store error there becomes a warning and the
//! run goes on, so no sink call returns an error the run must handle.

use iomark_model::live::LiveSample;
use iomark_model::stored::{DeviceMemory, RunId};
use iomark_model::RunDocument;

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
