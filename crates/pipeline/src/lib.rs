//! What a run goes through while it goes, whatever it measures: the
//! [`RunSink`] its record is written to, begun, a second at a time,
//! checkpointed and finished. Disk's lifecycle, mem's kernels and net's
//! tests write through it; the results store implements it (the binary's
//! sink), and [`MemorySink`] keeps a run in memory for tests and for a
//! caller that stores nothing.
//!
//! It depends on the model alone, so every measuring crate can write to
//! it and none has to know the store.

mod sink;

pub use sink::{MemorySink, RunSink};
