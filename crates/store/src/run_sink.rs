//! The results store as a run's sink ([`StoreSink`], the pipeline's
//! [`RunSink`]): every run, disk, mem or net, is stored as it goes
//! through one, opened when the run begins, with the labels and note the
//! user gave it ([`Storing`]). What it has to say (a run lost, another run
//! on the device, where the run was stored) goes to the command's
//! [`LiveHooks`].

use iomark_model::live::LiveSample;
use iomark_model::RunDocument;
use iomark_pipeline::RunSink;

use crate::live::{LiveHooks, LiveRun};
use crate::{DeviceMemory, RunId};

/// Where and whether a run is stored, and what with: a command's `--db`,
/// `--no-store`, `--label` and `--note`.
#[derive(Debug, Clone, Default)]
pub struct Storing {
    /// The store (`--db`); `None`: the default one.
    pub db: Option<String>,
    /// Store nothing (`--no-store`): the run is still begun and finished,
    /// so its document carries the labels and note.
    pub off: bool,
    /// The run's labels, in the order given.
    pub labels: Vec<String>,
    /// A free note.
    pub note: Option<String>,
}

impl Storing {
    /// Copy the labels and note into the document, so what is printed and
    /// what is stored agree.
    pub fn apply(&self, doc: &mut RunDocument) {
        for l in &self.labels {
            if !doc.labels.contains(l) {
                doc.labels.push(l.clone());
            }
        }
        if self.note.is_some() {
            doc.note.clone_from(&self.note);
        }
    }
}

/// A run's sink: the store [`Storing`] names, opened when the run begins;
/// dropped unfinished (an error midway), the run is stored as failed.
pub struct StoreSink {
    storing: Storing,
    hooks: LiveHooks,
    run: Option<LiveRun>,
}

impl StoreSink {
    /// The sink of a run stored as `storing` says, telling `hooks`.
    pub fn new(storing: Storing, hooks: LiveHooks) -> Self {
        StoreSink {
            storing,
            hooks,
            run: None,
        }
    }
}

impl RunSink for StoreSink {
    /// Apply the labels and note to `doc`, open the store and record the
    /// run as started (it reads back as interrupted until finished).
    fn begin(&mut self, doc: &mut RunDocument) {
        self.storing.apply(doc);
        self.run = Some(LiveRun::begin(
            self.storing.db.clone(),
            self.storing.off,
            doc,
            self.hooks,
        ));
    }

    fn checkpoint_due(&self) -> bool {
        self.run.as_ref().is_some_and(LiveRun::checkpoint_due)
    }

    fn checkpoint(&mut self, doc: &RunDocument) {
        if let Some(r) = &mut self.run {
            r.update(doc);
        }
    }

    fn finish(&mut self, doc: &mut RunDocument) -> Option<RunId> {
        self.storing.apply(doc);
        self.run.take()?.finish(doc)
    }

    fn run_id(&self) -> Option<RunId> {
        self.run.as_ref()?.id()
    }

    fn recall(&mut self, key: &str) -> Option<DeviceMemory> {
        self.run.as_mut()?.device(key)
    }

    fn remember(&mut self, memory: &DeviceMemory) {
        if let Some(r) = &mut self.run {
            r.remember(memory);
        }
    }

    fn sample(&mut self, sample: &LiveSample) {
        if let Some(r) = &mut self.run {
            r.sample(sample);
        }
    }
}
