//! Storing a live run: the `--db`, `--no-store`, `--label` and `--note`
//! flags every benchmark command shares, and the [`StoreSink`] that writes
//! the run as it goes.
//!
//! Every run, disk, mem or net, goes through a [`StoreSink`], the
//! pipeline's [`RunSink`]: the store's [`LiveRun`] with its notices on
//! stderr. The store never costs a result, and a run that measured but
//! could not be stored (in full) makes the command exit with code 4
//! ("measured, not stored", [`a_run_was_lost`]) instead of 0.

use std::sync::atomic::{AtomicBool, Ordering};

use iomark_model::live::LiveSample;
use iomark_model::RunDocument;
use iomark_pipeline::RunSink;
use iomark_store::live::{LiveHooks, LiveNotice, LiveRun, StopSignals};
use iomark_store::{DeviceMemory, RunId};

mod args;

pub use args::{check_user_text, command_line, parse_label, StoreArgs};

/// Set once any sink of this process has given up on its store.
static LOST: AtomicBool = AtomicBool::new(false);

/// Whether a run of this process measured but could not be stored (in
/// full): the command's success becomes exit code 4.
pub fn a_run_was_lost() -> bool {
    LOST.load(Ordering::Relaxed)
}

/// A run's sink ([`RunSink`]): the store `args` name, opened when the run
/// begins; dropped unfinished (an error midway), the run is stored as
/// failed.
pub struct StoreSink<'a> {
    args: &'a StoreArgs,
    run: Option<LiveRun>,
}

impl<'a> StoreSink<'a> {
    /// The sink of a run stored as `args` say.
    pub fn new(args: &'a StoreArgs) -> Self {
        StoreSink { args, run: None }
    }
}

impl RunSink for StoreSink<'_> {
    /// Apply the flags to `doc`, open the store and record the run as
    /// started (it reads back as interrupted until finished).
    fn begin(&mut self, doc: &mut RunDocument) {
        self.args.apply(doc);
        let hooks = LiveHooks {
            notice: say,
            stop: StopSignals {
                flag: crate::signals::stop_flag().ok(),
                received: crate::signals::stop_signals_received,
            },
        };
        self.run = Some(LiveRun::begin(
            self.args.db.clone(),
            self.args.no_store,
            doc,
            hooks,
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
        self.args.apply(doc);
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

/// A live run's notice, on stderr; a lost run is remembered for the exit
/// code.
fn say(notice: LiveNotice) {
    match notice {
        LiveNotice::Lost(msg) => {
            LOST.store(true, Ordering::Relaxed);
            warn(&msg);
        }
        LiveNotice::Warning(msg) => warn(&msg),
        LiveNotice::Sharing(msg) => eprint_fitted(&format!(
            "iomark: warning: {msg} too: each run's I/O will be in the other's figures"
        )),
        LiveNotice::Stored { id, location } => {
            eprintln!("stored as run {id} in {location} (iomark results show {id})");
        }
    }
}

fn warn(msg: &str) {
    eprintln!("iomark: warning: results not stored: {msg}");
}

/// A warning on stderr, wrapped to the terminal's width (80 in a pipe) as
/// a run's own text is (issue 48: another run on the device was named in
/// 98 columns).
pub(crate) fn eprint_fitted(line: &str) {
    let width = iomark_text::terminal::text_width();
    eprintln!("{}", iomark_text::fit_prose(line, width));
}

#[cfg(test)]
mod tests;
