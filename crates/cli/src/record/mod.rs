//! Storing a live run: the `--db`, `--no-store`, `--label` and `--note`
//! flags every benchmark command shares, and the store's [`StoreSink`]
//! they make ([`StoreArgs::sink`]), with its notices on stderr.
//!
//! Every run, disk, mem or net, goes through a [`StoreSink`], the
//! pipeline's run sink. The store never costs a result, and a run that measured but
//! could not be stored (in full) makes the command exit with code 4
//! ("measured, not stored", [`a_run_was_lost`]) instead of 0.

use std::sync::atomic::{AtomicBool, Ordering};

use iomark_store::live::{LiveHooks, LiveNotice, StopSignals};
use iomark_store::{StoreSink, Storing};

mod args;

pub use args::{check_user_text, command_line, parse_label, StoreArgs};

/// Set once any sink of this process has given up on its store.
static LOST: AtomicBool = AtomicBool::new(false);

/// Whether a run of this process measured but could not be stored (in
/// full): the command's success becomes exit code 4.
pub fn a_run_was_lost() -> bool {
    LOST.load(Ordering::Relaxed)
}

impl StoreArgs {
    /// The sink of a run stored as the flags say, its notices on stderr.
    pub fn sink(&self) -> StoreSink {
        let storing = Storing {
            db: self.db.clone(),
            off: self.no_store,
            labels: self.labels.clone(),
            note: self.note.clone(),
        };
        let hooks = LiveHooks {
            notice: say,
            stop: StopSignals {
                flag: crate::signals::stop_flag().ok(),
                received: crate::signals::stop_signals_received,
            },
        };
        StoreSink::new(storing, hooks)
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
