//! Pure math for iomark: latency histograms, percentiles, comparisons, the
//! verdict a CI gate acts on and where a queue-depth sweep stops gaining
//! ([`knee`]).
//!
//! Nothing here knows about storage or output; callers hand numbers in and
//! get numbers out, so every view of a result computes it the same way. The
//! one reader of runs is [`lineup`]: stored runs (the model's records) lined
//! up against a baseline and judged, which the table, the JSON and the CI
//! gate all draw from.
//!
//! ```
//! use iomark_stats::histogram::LatencyHistogram;
//! let mut h = LatencyHistogram::new();
//! for ns in 1..=1000u64 {
//!     h.record(ns * 1000);
//! }
//! let p50 = h.value_at_percentile(50.0);
//! assert!((p50 as f64 - 500_000.0).abs() / 500_000.0 < 0.01);
//! ```
#![deny(missing_docs)]

pub mod cliff;
pub mod compare;
#[doc(hidden)]
pub mod example;
pub mod gate;
pub mod histogram;
pub mod interval_latency;
pub mod knee;
pub mod lineup;
pub mod steady;
