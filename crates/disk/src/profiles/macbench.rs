//! MacBench 5.0's disk test: sequential and random reads and writes of
//! 1024 KiB at queue depth 1, reported in KB/s (10^3 bytes/s), the mean
//! over the run.

use std::sync::atomic::AtomicBool;

use iomark_model::disk::{DiskJobSpec, EngineKind, RwMode};
use iomark_model::profile::{MacbenchResult, MacbenchTest, ProfileResult};
use iomark_model::units::{Bytes, Nanos};

use super::common::{run_points, shortened, PointOptions};
use super::settings::{ProfileSettings, Setting};
use super::{ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// The tests, in the order run.
pub(crate) const TESTS: [(&str, RwMode); 4] = [
    ("Sequential read", RwMode::Read),
    ("Random read", RwMode::RandRead),
    ("Sequential write", RwMode::Write),
    ("Random write", RwMode::RandWrite),
];

/// Bytes per transfer.
pub(crate) const TRANSFER: u64 = 1024 * 1024;
/// Default measured time per test.
const DEFAULT_RUNTIME: Nanos = Nanos::from_secs(10);
/// `--quick` measured time per test.
const QUICK_RUNTIME: Nanos = Nanos::from_secs(2);

/// How to run the test.
#[derive(Debug, Clone, PartialEq)]
pub struct MacbenchOptions {
    /// The engine (synchronous psync unless asked).
    engine: EngineKind,
    /// Runtime per test, data, seed, cache (no ramp): as every
    /// point-by-point profile.
    pub(crate) common: PointOptions,
}

impl MacbenchOptions {
    /// The defaults, or the `--quick` ones.
    fn defaults(quick: bool) -> Self {
        MacbenchOptions {
            engine: EngineKind::Psync,
            common: PointOptions::defaults(
                quick,
                Nanos(0),
                if quick {
                    QUICK_RUNTIME
                } else {
                    DEFAULT_RUNTIME
                },
            ),
        }
    }
}

/// The job of one test.
fn test_spec(name: &str, rw: RwMode, opts: &MacbenchOptions, target: &OpenTarget) -> DiskJobSpec {
    opts.common
        .spec(opts.engine)
        .job(name.into(), rw, Bytes(TRANSFER), target)
}

/// The settings MacBench's test takes.
pub(crate) const SETTINGS: &[Setting] = &[Setting::Runtime, Setting::Engine];

/// The test's options from the user's settings.
pub(crate) fn plan(s: &ProfileSettings) -> Result<MacbenchOptions, DiskError> {
    let mut o = MacbenchOptions::defaults(s.quick);
    o.engine = s.engine.unwrap_or(o.engine);
    o.common = o.common.given(s);
    Ok(o)
}

/// Run the test on `target`.
pub(crate) fn run(
    opts: &MacbenchOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let warnings = shortened(opts.common.quick, || {
        format!(
            "{} per test instead of {}",
            opts.common.runtime, DEFAULT_RUNTIME
        )
    });
    // Each job is named after its test, and measured under that name.
    let specs = TESTS.map(|(name, rw)| (name, test_spec(name, rw, opts, target)));
    let run = run_points(
        target,
        opts.common.keep_cache,
        stop,
        obs,
        specs,
        |name, job, index| MacbenchTest {
            name: name.into(),
            bw: job.total_bw(),
            job: index,
        },
    )?;
    Ok(run.into_outcome(warnings, |tests| {
        ProfileResult::Macbench(MacbenchResult {
            runtime: opts.common.runtime,
            tests,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_match_profiles_md() {
        let modes: Vec<RwMode> = TESTS.iter().map(|t| t.1).collect();
        assert_eq!(
            modes,
            [
                RwMode::Read,
                RwMode::RandRead,
                RwMode::Write,
                RwMode::RandWrite
            ]
        );
        assert_eq!(TRANSFER, 1024 * 1024);
        let d = MacbenchOptions::defaults(false);
        assert!(d.engine.is_synchronous());
    }
}
