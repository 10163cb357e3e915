//! Storing a live run: the `--db`, `--no-store`, `--label` and `--note`
//! flags every benchmark command shares, and the [`Recorder`] that writes
//! the run as it goes.
//!
//! A disk run goes through [`StoreSink`], the disk lifecycle's
//! [`RunSink`]; the memory and network commands begin a [`Recorder`] and
//! finish it with their run. Both are the store's [`LiveRun`] with its
//! notices on stderr: the store never costs a result, and a run that
//! measured but could not be stored (in full) makes the command exit
//! with code 4 ("measured, not stored", [`a_run_was_lost`]) instead of 0.

use std::sync::atomic::{AtomicBool, Ordering};

use iomark_disk::lifecycle::RunSink;
use iomark_model::live::LiveSample;
use iomark_model::RunDocument;
use iomark_store::live::{LiveHooks, LiveNotice, LiveRun, StopSignals};
use iomark_store::{DeviceMemory, RunId};

mod args;

pub use args::{check_user_text, command_line, parse_label, StoreArgs};

/// Set once any recorder of this process has given up on its store.
static LOST: AtomicBool = AtomicBool::new(false);

/// Whether a run of this process measured but could not be stored (in
/// full): the command's success becomes exit code 4.
pub fn a_run_was_lost() -> bool {
    LOST.load(Ordering::Relaxed)
}

/// A disk run's sink ([`RunSink`]): the store `args` name, through a
/// [`Recorder`] begun when the lifecycle begins the run; dropped
/// unfinished (an error midway), the run is stored as failed.
pub struct StoreSink<'a> {
    args: &'a StoreArgs,
    recorder: Option<Recorder>,
}

impl<'a> StoreSink<'a> {
    /// The sink of a run stored as `args` say.
    pub fn new(args: &'a StoreArgs) -> Self {
        StoreSink {
            args,
            recorder: None,
        }
    }
}

impl RunSink for StoreSink<'_> {
    fn begin(&mut self, doc: &mut RunDocument) {
        self.recorder = Some(Recorder::begin(self.args, doc));
    }

    fn checkpoint_due(&self) -> bool {
        self.recorder.as_ref().is_some_and(|r| r.0.checkpoint_due())
    }

    fn checkpoint(&mut self, doc: &RunDocument) {
        if let Some(r) = &mut self.recorder {
            r.0.update(doc);
        }
    }

    fn finish(&mut self, doc: &mut RunDocument) -> Option<RunId> {
        self.args.apply(doc);
        self.recorder.take()?.finish(doc)
    }

    fn run_id(&self) -> Option<RunId> {
        self.recorder.as_ref()?.0.id()
    }

    fn recall(&mut self, key: &str) -> Option<DeviceMemory> {
        self.recorder.as_mut()?.0.device(key)
    }

    fn remember(&mut self, memory: &DeviceMemory) {
        if let Some(r) = &mut self.recorder {
            r.0.remember(memory);
        }
    }

    fn sample(&mut self, sample: &LiveSample) {
        if let Some(r) = &mut self.recorder {
            r.0.sample(sample);
        }
    }
}

/// Writes one live run to the store ([`LiveRun`]), its notices on stderr.
pub struct Recorder(LiveRun);

impl Recorder {
    /// Apply `args` to `doc`, open the store and record the run as started
    /// (it reads back as interrupted until [`finish`](Recorder::finish)).
    pub fn begin(args: &StoreArgs, doc: &mut RunDocument) -> Recorder {
        args.apply(doc);
        let hooks = LiveHooks {
            notice: say,
            stop: StopSignals {
                flag: crate::signals::stop_flag().ok(),
                received: crate::signals::stop_signals_received,
            },
        };
        Recorder(LiveRun::begin(args.db.clone(), args.no_store, doc, hooks))
    }

    /// Store a second of the run as it goes.
    pub fn sample(&mut self, sample: &LiveSample) {
        self.0.sample(sample);
    }

    /// Store the final document with its status, and say where it went.
    pub fn finish(self, doc: &RunDocument) -> Option<RunId> {
        self.0.finish(doc)
    }
}

/// A live run's notice, on stderr; a lost run is remembered for the exit
/// code.
fn say(notice: LiveNotice) {
    match notice {
        LiveNotice::Lost(msg) => {
            LOST.store(true, Ordering::Relaxed);
            warn(&msg);
        }
        LiveNotice::Warning(msg) => warn(&msg),
        LiveNotice::Stored { id, location } => {
            eprintln!("stored as run {id} in {location} (iomark results show {id})");
        }
    }
}

fn warn(msg: &str) {
    eprintln!("iomark: warning: results not stored: {msg}");
}

#[cfg(test)]
mod tests;
