//! IOmeter's "cycle the number of outstanding I/Os": the two access
//! patterns of a published USB 3.0 driver comparison (2 MiB sequential,
//! 4 KiB random; read and write), one point per queue depth.

use std::sync::atomic::AtomicBool;

use iomark_model::disk::{DiskJobSpec, EngineKind, RwMode};
use iomark_model::profile::{IometerPoint, IometerResult, ProfileResult};
use iomark_model::units::{Bytes, Nanos};

use super::common::{run_points, shortened, PointOptions};
use super::settings::{ProfileSettings, Setting};
use super::{ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// The patterns, in the order run: name, access pattern, block size.
pub(crate) const PATTERNS: [(&str, RwMode, u64); 4] = [
    ("2 MiB sequential read", RwMode::Read, 2 << 20),
    ("2 MiB sequential write", RwMode::Write, 2 << 20),
    ("4 KiB random read", RwMode::RandRead, 4096),
    ("4 KiB random write", RwMode::RandWrite, 4096),
];

/// Default depths.
const DEFAULT_DEPTHS: [u32; 4] = [1, 2, 4, 8];
/// Default ramp per point.
const DEFAULT_RAMP: Nanos = Nanos::from_secs(2);
/// Default measured time per point.
const DEFAULT_RUNTIME: Nanos = Nanos::from_secs(10);
/// `--quick` ramp.
const QUICK_RAMP: Nanos = Nanos(500_000_000);
/// `--quick` measured time.
const QUICK_RUNTIME: Nanos = Nanos::from_secs(2);

/// How to run the sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct IometerOptions {
    /// Queue depths, in order.
    pub(crate) depths: Vec<u32>,
    /// The engine (io_uring unless asked).
    engine: EngineKind,
    /// Ramp, runtime, data, seed, cache: as every point-by-point profile.
    pub(crate) common: PointOptions,
}

impl IometerOptions {
    /// PROFILES.md's defaults, or the `--quick` ones.
    fn defaults(quick: bool) -> Self {
        IometerOptions {
            depths: DEFAULT_DEPTHS.to_vec(),
            engine: EngineKind::IoUring,
            common: if quick {
                PointOptions::defaults(quick, QUICK_RAMP, QUICK_RUNTIME)
            } else {
                PointOptions::defaults(quick, DEFAULT_RAMP, DEFAULT_RUNTIME)
            },
        }
    }
}

/// The settings IOmeter's sweep takes.
pub(crate) const SETTINGS: &[Setting] = &[
    Setting::Qd,
    Setting::Ramp,
    Setting::Runtime,
    Setting::Engine,
];

/// The sweep's options from the user's settings.
pub(crate) fn plan(s: &ProfileSettings) -> Result<IometerOptions, DiskError> {
    let mut o = IometerOptions::defaults(s.quick);
    if let Some(q) = &s.qd {
        o.depths = q.0.clone();
    }
    o.common = o.common.given(s);
    match s.engine {
        Some(e) => o.engine = e,
        None => crate::engine::io_uring_available()
            .map_err(|e| DiskError::Invalid(format!("{e}: use --engine psync")))?,
    }
    Ok(o)
}

/// The job of one point.
fn point_spec(
    pattern: &(&str, RwMode, u64),
    depth: u32,
    opts: &IometerOptions,
    target: &OpenTarget,
) -> DiskJobSpec {
    let point = opts.common.spec(opts.engine);
    let name = format!("{} QD{depth}", pattern.0);
    DiskJobSpec {
        iodepth: depth,
        ..point.job(name, pattern.1, Bytes(pattern.2), target)
    }
}

/// Run the sweep on `target`.
pub(crate) fn run(
    opts: &IometerOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let warnings = shortened(opts.common.quick, || {
        format!(
            "{} ramp and {} per point instead of {} and {}",
            opts.common.ramp, opts.common.runtime, DEFAULT_RAMP, DEFAULT_RUNTIME
        )
    });
    let specs = PATTERNS.iter().flat_map(|pattern| {
        opts.depths
            .iter()
            .map(move |&depth| ((pattern, depth), point_spec(pattern, depth, opts, target)))
    });
    let run = run_points(
        target,
        opts.common.keep_cache,
        stop,
        obs,
        specs,
        |(pattern, depth), job, index| {
            let d = job.read.as_ref().or(job.write.as_ref());
            let (bw, iops, mean, p99) = d.map_or(Default::default(), |d| {
                (
                    d.bw,
                    d.iops,
                    d.clat.mean_ns,
                    d.clat.percentile(99.0).unwrap_or(0),
                )
            });
            IometerPoint {
                pattern: pattern.0.into(),
                rw: pattern.1,
                bs: Bytes(pattern.2),
                depth,
                achieved_depth: job.mean_depth,
                bw,
                iops,
                lat_mean_ns: mean,
                lat_p99_ns: p99,
                cpu_pct: job.cpu.user_pct + job.cpu.system_pct,
                job: index,
            }
        },
    )?;
    Ok(run.into_outcome(warnings, |points| {
        ProfileResult::Iometer(IometerResult {
            depths: opts.depths.clone(),
            ramp: opts.common.ramp,
            runtime: opts.common.runtime,
            points,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::settings::parse_depths;

    #[test]
    fn patterns_and_defaults_match_profiles_md() {
        let names: Vec<_> = PATTERNS.iter().map(|p| (p.1, p.2)).collect();
        assert_eq!(
            names,
            [
                (RwMode::Read, 2 << 20),
                (RwMode::Write, 2 << 20),
                (RwMode::RandRead, 4096),
                (RwMode::RandWrite, 4096)
            ]
        );
        let d = IometerOptions::defaults(false);
        assert_eq!(d.depths, [1, 2, 4, 8]);
        assert_eq!(
            (d.common.ramp, d.common.runtime),
            (Nanos::from_secs(2), Nanos::from_secs(10))
        );
        assert_eq!(d.engine, EngineKind::IoUring);
    }

    #[test]
    fn depths_parse_as_lists_and_ranges() {
        assert_eq!(parse_depths("1,2,4,8").unwrap(), [1, 2, 4, 8]);
        assert_eq!(parse_depths("1..32").unwrap(), [1, 2, 4, 8, 16, 32]);
        assert_eq!(parse_depths("3").unwrap(), [3]);
        for bad in ["", "0", "1,,2", "8..1", "a..b", "1..x"] {
            assert!(parse_depths(bad).is_err(), "{bad}");
        }
    }
}
