//! The block-size sweep of the PCIe SSD paper: random read and random
//! write at every power-of-two size from 4 KiB to 4 MiB, plus sequential
//! read and write at 1 MiB, per engine (read/write, mmap with MS_SYNC, mmap
//! with MS_ASYNC), reported in MiB/s.

use std::sync::atomic::AtomicBool;

use iomark_model::disk::{DataPattern, DiskJobSpec, EngineKind, RwMode};
use iomark_model::profile::{ProfileResult, SweepPoint, SweepResult};
use iomark_model::units::{Bytes, Nanos};

use super::common::{run_points, shortened};
use super::settings::{ProfileSettings, Setting};
use super::{powers_of_two, ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// Smallest random I/O size.
pub const MIN_BS: u64 = 4 << 10;
/// Largest random I/O size.
pub const MAX_BS: u64 = 4 << 20;
/// Size of the sequential tests.
pub const SEQ_BS: u64 = 1 << 20;
/// Default measured time per point.
pub const DEFAULT_RUNTIME: Nanos = Nanos::from_secs(5);
/// `--quick` measured time per point.
pub const QUICK_RUNTIME: Nanos = Nanos::from_secs(1);

/// The points of one engine, in the order run: every size's random read
/// and random write, then sequential read and write at 1 MiB.
pub fn points() -> Vec<(RwMode, u64)> {
    let mut out: Vec<(RwMode, u64)> = powers_of_two(MIN_BS, MAX_BS)
        .into_iter()
        .flat_map(|bs| [(RwMode::RandRead, bs), (RwMode::RandWrite, bs)])
        .collect();
    out.push((RwMode::Read, SEQ_BS));
    out.push((RwMode::Write, SEQ_BS));
    out
}

/// Parse `--engines`: a comma-separated list of engines.
pub fn parse_engines(s: &str) -> Result<Vec<EngineKind>, String> {
    let engines: Vec<EngineKind> = s
        .split(',')
        .map(|e| e.trim().parse::<EngineKind>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--engines: {e}"))?;
    if engines.is_empty() {
        return Err("--engines: name at least one engine, e.g. psync,mmap-sync".into());
    }
    Ok(engines)
}

/// The settings the block-size sweep takes.
pub const SETTINGS: &[Setting] = &[Setting::Runtime, Setting::Engines];

/// The sweep's options from the user's settings.
pub fn plan(s: &ProfileSettings) -> Result<SweepOptions, DiskError> {
    let mut o = SweepOptions::defaults(s.quick);
    if let Some(e) = &s.engines {
        o.engines = e.0.clone();
    }
    o.runtime = s.runtime.unwrap_or(o.runtime);
    o.data = s.data;
    o.seed = s.seed;
    Ok(o)
}

/// How to run the sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOptions {
    /// Engines, in order.
    pub engines: Vec<EngineKind>,
    /// Measured time per point.
    pub runtime: Nanos,
    /// Data written.
    pub data: DataPattern,
    /// Whether `--quick` shortened the points.
    pub quick: bool,
    /// Seed for offsets and data.
    pub seed: u64,
}

impl SweepOptions {
    /// The defaults (psync only), or the `--quick` ones.
    pub fn defaults(quick: bool) -> Self {
        SweepOptions {
            engines: vec![EngineKind::Psync],
            runtime: if quick {
                QUICK_RUNTIME
            } else {
                DEFAULT_RUNTIME
            },
            data: DataPattern::Random,
            quick,
            seed: 1,
        }
    }
}

/// The job of one point.
pub fn point_spec(
    engine: EngineKind,
    rw: RwMode,
    bs: u64,
    opts: &SweepOptions,
    target: &OpenTarget,
) -> DiskJobSpec {
    DiskJobSpec {
        name: format!("{engine} {rw} {}", Bytes(bs).short_label()),
        rw,
        bs: Bytes(bs),
        iodepth: 1,
        iodepth_batch: 1,
        numjobs: 1,
        size: target.info.size,
        runtime: Some(opts.runtime),
        ramp: Nanos(0),
        engine,
        direct: target.direct,
        data: opts.data,
        rwmix_read: 70,
        seed: opts.seed,
    }
}

/// Run the sweep on `target`.
pub fn run(
    opts: &SweepOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let warnings = shortened(opts.quick, || {
        format!("{} per point instead of {}", opts.runtime, DEFAULT_RUNTIME)
    });
    let specs = opts.engines.iter().flat_map(|&engine| {
        points()
            .into_iter()
            .map(move |(rw, bs)| ((engine, rw, bs), point_spec(engine, rw, bs, opts, target)))
    });
    let run = run_points(target, stop, obs, specs, |(engine, rw, bs), job, index| {
        SweepPoint {
            engine,
            rw,
            bs: Bytes(bs),
            bw: job.total_bw(),
            job: index,
        }
    })?;
    Ok(run.into_outcome(warnings, |points| {
        ProfileResult::Sweep(SweepResult {
            engines: opts.engines.clone(),
            runtime: opts.runtime,
            points,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_match_profiles_md() {
        let p = points();
        let sizes: Vec<u64> = p
            .iter()
            .filter(|(rw, _)| *rw == RwMode::RandRead)
            .map(|(_, bs)| *bs)
            .collect();
        assert_eq!(sizes.first(), Some(&4096));
        assert_eq!(sizes.last(), Some(&(4 << 20)));
        assert_eq!(sizes.len(), 11);
        assert!(sizes.windows(2).all(|w| w[1] == 2 * w[0]));
        assert_eq!(
            p.iter().filter(|(rw, _)| *rw == RwMode::RandWrite).count(),
            11
        );
        assert_eq!(
            &p[22..],
            &[(RwMode::Read, 1 << 20), (RwMode::Write, 1 << 20)]
        );
        assert_eq!(SweepOptions::defaults(false).engines, [EngineKind::Psync]);
    }

    #[test]
    fn engines_parse() {
        assert_eq!(
            parse_engines("psync,mmap-sync,mmap-async").unwrap(),
            [
                EngineKind::Psync,
                EngineKind::MmapSync,
                EngineKind::MmapAsync
            ]
        );
        assert!(parse_engines("psync,libaio").is_err());
    }
}
