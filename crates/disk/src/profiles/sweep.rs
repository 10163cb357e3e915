//! The block-size sweep of the PCIe SSD paper: random read and random
//! write at every power-of-two size from 4 KiB to 4 MiB, plus sequential
//! read and write at 1 MiB, per engine (read/write, mmap with MS_SYNC, mmap
//! with MS_ASYNC), reported in MiB/s.
//!
//! `--sizes` picks the random sizes and their order (the sequential tests
//! stay at 1 MiB, last). Each point starts with the target's pages dropped
//! from the page cache (unless `--keep-cache`), so a mapped engine's point
//! reads the device the same whichever points ran before it: a sweep run
//! in the reverse order gives the same figures.

use std::sync::atomic::AtomicBool;

use iomark_model::disk::{DiskJobSpec, EngineKind, RwMode};
use iomark_model::profile::{ProfileResult, SweepPoint, SweepResult};
use iomark_model::units::{Bytes, Nanos};

use super::common::{run_points, shortened, PointOptions};
use super::settings::{ProfileSettings, Setting};
use super::{powers_of_two, ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// Smallest random I/O size.
const MIN_BS: u64 = 4 << 10;
/// Largest random I/O size.
const MAX_BS: u64 = 4 << 20;
/// Size of the sequential tests.
const SEQ_BS: u64 = iomark_model::profile::SWEEP_SEQ_BS;
/// Default measured time per point.
const DEFAULT_RUNTIME: Nanos = Nanos::from_secs(5);
/// `--quick` measured time per point.
const QUICK_RUNTIME: Nanos = Nanos::from_secs(1);

/// The default random sizes: every power of two from 4 KiB to 4 MiB.
fn default_sizes() -> Vec<u64> {
    powers_of_two(MIN_BS, MAX_BS)
}

/// The points of one engine, in the order run: each of `sizes`' random
/// read and random write, then sequential read and write at 1 MiB.
pub(crate) fn points(sizes: &[u64]) -> Vec<(RwMode, u64)> {
    let mut out: Vec<(RwMode, u64)> = sizes
        .iter()
        .flat_map(|&bs| [(RwMode::RandRead, bs), (RwMode::RandWrite, bs)])
        .collect();
    out.push((RwMode::Read, SEQ_BS));
    out.push((RwMode::Write, SEQ_BS));
    out
}

/// The settings the block-size sweep takes.
pub(crate) const SETTINGS: &[Setting] = &[Setting::Runtime, Setting::Engines, Setting::Sizes];

/// The sweep's options from the user's settings.
pub(crate) fn plan(s: &ProfileSettings) -> Result<SweepOptions, DiskError> {
    let mut o = SweepOptions::defaults(s.quick);
    if let Some(e) = &s.engines {
        o.engines = e.0.clone();
    }
    if let Some(sizes) = &s.sizes {
        o.sizes = sizes.0.iter().map(|b| b.get()).collect();
    }
    o.common = o.common.given(s);
    Ok(o)
}

/// How to run the sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOptions {
    /// Engines, in order.
    pub(crate) engines: Vec<EngineKind>,
    /// Random block sizes, in order.
    pub(crate) sizes: Vec<u64>,
    /// Runtime, data, seed, cache (no ramp): as every point-by-point
    /// profile.
    pub(crate) common: PointOptions,
}

impl SweepOptions {
    /// The defaults (psync only), or the `--quick` ones.
    fn defaults(quick: bool) -> Self {
        SweepOptions {
            engines: vec![EngineKind::Psync],
            sizes: default_sizes(),
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

/// The job of one point.
fn point_spec(
    engine: EngineKind,
    rw: RwMode,
    bs: u64,
    opts: &SweepOptions,
    target: &OpenTarget,
) -> DiskJobSpec {
    let name = format!("{engine} {rw} {}", Bytes(bs).short_label());
    opts.common.spec(engine).job(name, rw, Bytes(bs), target)
}

/// Run the sweep on `target`.
pub(crate) fn run(
    opts: &SweepOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let warnings = shortened(opts.common.quick, || {
        format!(
            "{} per point instead of {}",
            opts.common.runtime, DEFAULT_RUNTIME
        )
    });
    let specs = opts.engines.iter().flat_map(|&engine| {
        points(&opts.sizes)
            .into_iter()
            .map(move |(rw, bs)| ((engine, rw, bs), point_spec(engine, rw, bs, opts, target)))
    });
    let run = run_points(
        target,
        opts.common.keep_cache,
        stop,
        obs,
        specs,
        |(engine, rw, bs), job, index| SweepPoint {
            engine,
            rw,
            bs: Bytes(bs),
            bw: job.total_bw(),
            job: index,
        },
    )?;
    Ok(run.into_outcome(warnings, |points| {
        ProfileResult::Sweep(SweepResult {
            engines: opts.engines.clone(),
            runtime: opts.common.runtime,
            points,
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::settings::{parse_engines, parse_sizes};

    #[test]
    fn points_match_profiles_md() {
        let p = points(&default_sizes());
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

    #[test]
    fn sizes_parse_in_the_order_given() {
        assert_eq!(
            parse_sizes("1M, 4k").unwrap(),
            [Bytes(1 << 20), Bytes(4096)]
        );
        for bad in ["", "0", "4k,,8k", "4k,4k", "2G", "x"] {
            assert!(parse_sizes(bad).is_err(), "{bad}");
        }
        let s = ProfileSettings {
            sizes: Some(super::super::settings::SizeList(vec![
                Bytes(1 << 20),
                Bytes(4096),
            ])),
            ..ProfileSettings::default()
        };
        let o = plan(&s).unwrap();
        assert_eq!(o.sizes, [1 << 20, 4096]);
        assert_eq!(
            points(&o.sizes),
            [
                (RwMode::RandRead, 1 << 20),
                (RwMode::RandWrite, 1 << 20),
                (RwMode::RandRead, 4096),
                (RwMode::RandWrite, 4096),
                (RwMode::Read, SEQ_BS),
                (RwMode::Write, SEQ_BS),
            ]
        );
        assert!(!o.common.keep_cache);
    }
}
