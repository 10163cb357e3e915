//! What a run goes through while it goes, whatever it measures:
//!
//! - the [`RunSink`] its record is written to, begun, a second at a time,
//!   checkpointed and finished (the results store implements it;
//!   `MemorySink`, feature `test-support`, keeps a run in memory for
//!   tests);
//! - the [`RunDisplay`] that shows where it is, along the [`Outline`] of
//!   its steps, followed by a [`Tracker`] that says how long is left
//!   ([`NoDisplay`] shows nothing; the progress line on a terminal is the
//!   binary's, in `iomark_text::terminal`; a run whose report is text
//!   printed as it goes, `iomark net`'s, writes it through
//!   [`ReportLines`]);
//! - its `--json-stream` lines: [`EventLines`] writes them for every kind
//!   of run, and [`JsonStream`] is the display that streams a run told
//!   through a [`RunDisplay`].
//!
//! It depends on the model alone, so every measuring crate can write to
//! it and none has to know the store or the terminal.

mod display;
#[cfg(feature = "test-support")]
mod memory;
pub mod outline;
mod sink;
mod stream;

pub use display::{NoDisplay, ReportLines, RunDisplay};
#[cfg(feature = "test-support")]
pub use memory::MemorySink;
pub use outline::{Eta, Outline, Progress, Tracker};
pub use sink::RunSink;
pub use stream::{EventLines, JsonStream};
