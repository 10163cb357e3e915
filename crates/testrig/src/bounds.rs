//! The tolerances of every rig test, in one place: how far a figure may
//! land from a rig's known rate, and how long something may take before a
//! test calls it hung or slow. A test states the bound its claim needs;
//! these functions check it, print the figure either way (the benchmarks
//! collect the lines) and say which variable widens or narrows it.

use std::time::Duration;

/// The variable that sets how far below a rig's limit a figure may land,
/// as a fraction (default 0.25): `bench/rig-accuracy` sets 0.03.
pub const RIG_SLACK: &str = "IOMARK_RIG_SLACK";

/// The variable that multiplies every wall-clock bound (default 1), for a
/// machine much slower than the 2-core one the bounds were set on.
pub const TIME_SCALE: &str = "IOMARK_TIME_SCALE";

fn env_f64(name: &str) -> Option<f64> {
    std::env::var(name).ok().and_then(|s| s.parse::<f64>().ok())
}

/// How far a figure may land from a throttled rig's limit, as fractions:
/// never more than 3% above it (that would be a measurement error or a
/// cache artefact, whatever the load), and by default up to 25% below it.
/// A throttled device is a fair yardstick only while the host keeps its
/// queue fed, and a loaded 2-core machine sometimes cannot (fio misses the
/// same way), so the 3% accuracy below the limit is a benchmark's claim:
/// `bench/rig-accuracy` runs the rig tests on a quiet machine with
/// `IOMARK_RIG_SLACK=0.03` and quotes each error.
pub fn rig_band() -> (f64, f64) {
    let below = env_f64(RIG_SLACK).unwrap_or(0.25);
    (1.0 - below, 1.03)
}

/// Fails the test unless `measured` is in [`rig_band`] around the rig's
/// `limit`, printing the error either way as a `rig-accuracy:` line.
pub fn assert_at_the_limit(what: &str, measured: f64, limit: f64) {
    let err = measured / limit - 1.0;
    eprintln!(
        "rig-accuracy: {what}: measured {measured:.1}, limit {limit:.1}, error {:+.2}%",
        err * 100.0
    );
    let (lo, hi) = rig_band();
    assert!(
        (lo..=hi).contains(&(measured / limit)),
        "{what}: {measured:.1} vs limit {limit:.1} ({:+.2}%), outside {:+.0}%..{:+.0}% ({RIG_SLACK})",
        err * 100.0,
        (lo - 1.0) * 100.0,
        (hi - 1.0) * 100.0
    );
}

/// `bound` scaled by [`TIME_SCALE`].
pub fn time_bound(bound: Duration) -> Duration {
    bound.mul_f64(env_f64(TIME_SCALE).unwrap_or(1.0).max(1.0))
}

/// Fails the test unless `took` is under `bound` (scaled by
/// [`TIME_SCALE`]): what should end promptly did. Prints the time either
/// way as a `rig-time:` line.
pub fn assert_within(what: &str, took: Duration, bound: Duration) {
    let bound = time_bound(bound);
    eprintln!("rig-time: {what}: {took:?}, bound {bound:?}");
    assert!(
        took < bound,
        "{what} took {took:?}, over its bound of {bound:?} ({TIME_SCALE})"
    );
}

/// Fails the test unless `measured` is within `tolerance` (a fraction,
/// either way) of `expected`, printing the error either way as a
/// `rig-accuracy:` line. For what a rig knows exactly besides its rate
/// limit: a cache's size, a ratio between two tools.
pub fn assert_near(what: &str, measured: f64, expected: f64, tolerance: f64) {
    let err = measured / expected - 1.0;
    eprintln!(
        "rig-accuracy: {what}: measured {measured:.4}, expected {expected:.4}, error {:+.2}%",
        err * 100.0
    );
    assert!(
        err.abs() <= tolerance,
        "{what}: {measured:.4} vs {expected:.4} ({:+.2}%), outside +-{:.1}%",
        err * 100.0,
        tolerance * 100.0
    );
}
