//! Plain data shared by every iomark crate: unit newtypes, job specs,
//! results, warnings and the versioned result document.
//!
//! This crate does no I/O. Measurement crates (`disk`, `mem`, `net`) fill
//! these types; the store persists them; the report renders them. Keeping
//! them here is what lets those crates stay ignorant of each other.
//!
//! ```
//! use iomark_model::units::{Bytes, BytesPerSec, Nanos};
//! let bs: Bytes = "4k".parse().unwrap();
//! let rate = BytesPerSec::over(Bytes(bs.get() * 250), Nanos::from_secs(1));
//! assert_eq!(format!("{:.3}", rate.mb_per_sec()), "1.024");
//! ```
#![deny(missing_docs)]

pub mod artefact;
pub mod blockio;
pub mod cgroup;
pub mod cluster;
pub mod cpu;
pub mod device;
pub mod disk;
pub mod escape;
pub mod figure;
pub mod knee;
pub mod live;
pub mod mem;
pub mod net;
pub mod profile;
pub mod pts;
pub mod run;
mod scoped_warnings;
pub mod steady;
pub mod stored;
pub mod sustained;
pub mod units;
#[cfg(feature = "clap")]
pub mod values;
pub mod verify;
pub mod warning;
pub mod workload;

pub use run::{
    epoch_ms, now_ms, RunBody, RunDocument, RunStatus, MAX_LABEL_BYTES, MAX_NOTE_BYTES,
    SCHEMA_VERSION,
};
pub use units::{Bytes, BytesPerSec, Iops, Nanos, ParseUnitError};
pub use warning::{Warning, WarningKind};
