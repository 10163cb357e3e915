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

/// The block throttle's time slice: blk-throttle (cgroup v1 blkio and v2
/// io.max alike) grants a group its bytes and I/Os a slice at a time, and
/// rounds the time elapsed in a slice up to a whole slice, so at any
/// moment it may have let through one slice's worth ahead of the rate.
/// 100 ms is the kernel's `DFLT_THROTL_SLICE_HD`, the slice of every
/// throttle that sets no `.low` limit, which is every rig's.
pub const THROTTLE_SLICE: Duration = Duration::from_millis(100);

/// How a measured window starts, which sets how much the throttle can have
/// granted ahead of its rate within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowStart {
    /// Inside a stream of I/O already queued at the throttle (after a
    /// ramp, or a sample that follows another without a pause): one slice,
    /// from the slice's elapsed time rounded up.
    Streaming,
    /// On a throttle that was idle (a pass or job that starts after a
    /// pause): two slices, the rounding up and the credit an idle group
    /// keeps until its slice ends (`slice_end` lies up to a slice ahead).
    FromIdle,
}

impl WindowStart {
    fn slices_ahead(self) -> u32 {
        match self {
            WindowStart::Streaming => 1,
            WindowStart::FromIdle => 2,
        }
    }
}

/// How far a figure measured over `window` may land from a throttled rig's
/// limit, as fractions of the limit.
///
/// Above: the most the throttle can pass in `window` is the limit's
/// bytes (or I/Os) for the window plus what it granted ahead
/// ([`THROTTLE_SLICE`] once or twice, [`WindowStart`]), so `limit * (1 +
/// slices / window)`: a 3 s window after a ramp can read 3.3% over the
/// limit with nothing wrong (fio-seq-read was seen at +3.33%). On top of
/// that ceiling 3% is allowed for the measurement itself, and no more:
/// above it is a measurement error or a cache artefact, whatever the
/// load. Below: by default up to 25%. A throttled device is a fair
/// yardstick only while the host keeps its queue fed, and a loaded 2-core
/// machine sometimes cannot (fio misses the same way), so the 3% accuracy
/// below the limit is a benchmark's claim: `bench/rig-accuracy` runs the
/// rig tests on a quiet machine with `IOMARK_RIG_SLACK=0.03` and quotes
/// each error.
pub fn throttle_band(window: Duration, start: WindowStart) -> (f64, f64) {
    let below = env_f64(RIG_SLACK).unwrap_or(0.25);
    let ahead = THROTTLE_SLICE * start.slices_ahead();
    let granted_ahead = ahead.as_secs_f64() / window.as_secs_f64();
    (1.0 - below, 1.0 + granted_ahead + 0.03)
}

/// How far below a rig's limit a figure may land, as a fraction of the
/// limit ([`RIG_SLACK`]): the lower end of [`throttle_band`], for tests
/// that compare two tools on the same rig.
pub fn rig_slack() -> f64 {
    1.0 - throttle_band(Duration::MAX, WindowStart::Streaming).0
}

/// Fails the test unless `measured`, a rate over `window`, is in
/// [`throttle_band`] around the throttled rig's `limit`, printing the
/// error either way as a `rig-accuracy:` line.
pub fn assert_at_the_throttle(
    what: &str,
    measured: f64,
    limit: f64,
    window: Duration,
    start: WindowStart,
) {
    assert_at_the_throttle_but_for_stalls(what, measured, limit, window, start, Duration::ZERO);
}

/// [`assert_at_the_throttle`] for a job whose device held its requests
/// and completed none for `stalled` of the window: iomark's own
/// `device_io.stalled` (`iomark_device_stalled_ms` in fio's format), a
/// lower bound of the stall from looks ten times a second. The throttle
/// grants nothing while the requests it let through sit in the device
/// (the loop device's worker, on a loaded 2-core machine, was seen to
/// hold them for 0.7 s), and what it did not grant then it does not grant
/// later, so the lower end applies to the time the device served:
/// `window - stalled`. The upper end stays the whole window's.
pub fn assert_at_the_throttle_but_for_stalls(
    what: &str,
    measured: f64,
    limit: f64,
    window: Duration,
    start: WindowStart,
    stalled: Duration,
) {
    let err = measured / limit - 1.0;
    let (lo, hi) = throttle_band(window, start);
    let served = window.saturating_sub(stalled).as_secs_f64() / window.as_secs_f64();
    let lo = lo * served;
    eprintln!(
        "rig-accuracy: {what}: measured {measured:.1}, limit {limit:.1}, error {:+.2}% \
         (band {:+.1}%..{:+.1}%, {window:?} {start:?}, device stalled {stalled:?})",
        err * 100.0,
        (lo - 1.0) * 100.0,
        (hi - 1.0) * 100.0
    );
    assert!(
        (lo..=hi).contains(&(measured / limit)),
        "{what}: {measured:.1} vs limit {limit:.1} ({:+.2}%), outside {:+.1}%..{:+.1}% \
         (above: what the throttle grants ahead over {window:?} {start:?}, plus 3%; \
         below: {RIG_SLACK} of the {stalled:?} the device did not stall)",
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
