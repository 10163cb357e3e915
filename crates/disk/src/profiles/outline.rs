//! A profile's [`Outline`]: the steps its `run` will begin, in order,
//! under the labels it begins them with (the [`ProfileObserver::begin`]
//! labels), each with its time or its bytes. The outline itself and the
//! [`Tracker`] that follows a run along it are the pipeline's, shared by
//! every kind of run.
//!
//! [`ProfileObserver::begin`]: super::ProfileObserver::begin
//! [`Tracker`]: iomark_pipeline::outline::Tracker

use iomark_model::profile::TestDir;
use iomark_model::units::Bytes;
use iomark_pipeline::outline::{Cost, Outline, Step};

use super::{artefacts, gnome, iometer, macbench, pts, sustained, sweep, verify, ProfilePlan};

impl ProfilePlan {
    /// The steps the profile will run on a target of `target_size`, as
    /// its `run` begins them.
    pub(crate) fn outline(&self, target_size: Bytes) -> Outline {
        let mut o = Outline::default();
        match self {
            ProfilePlan::Cdm(b) => {
                let (def, opts) = (&b.0, &b.1);
                let mut dirs = vec![TestDir::Read, TestDir::Write];
                if opts.mix.is_some() {
                    dirs.push(TestDir::Mix);
                }
                let mut test = 0;
                for row in &def.rows {
                    for dir in &dirs {
                        test += 1;
                        let label = format!("{} {}", row.label(), dir.as_str());
                        // cdm::run pauses before every test but the first,
                        // and a zero pause begins nothing.
                        if test > 1 && opts.interval.get() > 0 {
                            let pause = Cost::Time(opts.interval.as_duration());
                            o.push("interval".into(), test, pause, None);
                        }
                        let prep = Cost::Time(opts.prep_time.as_duration());
                        o.push(format!("{label} prep"), test, prep, Some(row.bs));
                        for pass in 1..=opts.passes {
                            let t = Cost::Time(opts.pass_time.as_duration());
                            let l = format!("{label} {pass}/{}", opts.passes);
                            o.push(l, test, t, Some(row.bs));
                        }
                    }
                }
            }
            ProfilePlan::Iometer(opts) => {
                let each =
                    Cost::Time(opts.common.ramp.as_duration() + opts.common.runtime.as_duration());
                for p in &iometer::PATTERNS {
                    for d in &opts.depths {
                        let test = o.tests() + 1;
                        o.push(format!("{} QD{d}", p.0), test, each, Some(p.2));
                    }
                }
            }
            ProfilePlan::Macbench(opts) => {
                let each = Cost::Time(opts.common.runtime.as_duration());
                for (i, (name, _)) in macbench::TESTS.iter().enumerate() {
                    let block = Some(macbench::TRANSFER);
                    o.push((*name).into(), i as u32 + 1, each, block);
                }
            }
            ProfilePlan::Sweep(opts) => {
                let each = Cost::Time(opts.common.runtime.as_duration());
                for engine in &opts.engines {
                    for (rw, bs) in sweep::points(&opts.sizes) {
                        let label = format!("{engine} {rw} {}", Bytes(bs).short_label());
                        let test = o.tests() + 1;
                        o.push(label, test, each, Some(bs));
                    }
                }
            }
            ProfilePlan::Gnome(opts) => {
                let ss = opts.sample_size.get();
                if opts.samples > 0 {
                    let bytes = Cost::Bytes(ss * u64::from(opts.samples));
                    o.push("transfer rate".into(), 1, bytes, Some(ss));
                }
                if opts.access_samples > 0 {
                    let bytes = Cost::Bytes(gnome::PAGE * u64::from(opts.access_samples));
                    let test = o.tests() + 1;
                    o.push("access time".into(), test, bytes, Some(gnome::PAGE));
                }
            }
            ProfilePlan::Artefacts(opts) => {
                let region = artefacts::region(opts, target_size).get();
                let block = Some(artefacts::BLOCK);
                for round in 1..=opts.rounds {
                    for data in artefacts::PATTERNS {
                        let test = o.tests() + 1;
                        let label = format!("round {round}/{}: {data}", opts.rounds);
                        let cost = Cost::Bytes(region);
                        o.push(format!("{label} write"), test, cost, block);
                        o.push(format!("{label} read"), test, cost, block);
                    }
                }
            }
            // Every round is listed: steady state may end it sooner.
            ProfilePlan::Pts(opts) => {
                let range = target_size.get();
                let mut left = opts
                    .precondition
                    .map_or(range.saturating_mul(2), |b| b.get());
                let block = Some(pts::PRECONDITION_BS);
                while left > 0 && range > 0 {
                    let pass = left.min(range);
                    o.push("preconditioning".into(), 1, Cost::Bytes(pass), block);
                    left -= pass;
                }
                let each =
                    Cost::Time(opts.common.ramp.as_duration() + opts.common.runtime.as_duration());
                let window = iomark_stats::steady::PtsRule::default().window;
                for round in 1..=opts.max_rounds {
                    for (k, &m) in opts.mixes.iter().enumerate() {
                        for (j, &bs) in opts.block_sizes.iter().enumerate() {
                            o.steps.push(Step {
                                label: pts::cell_label(round, m, bs),
                                test: o.tests() + 1,
                                cost: each,
                                block: Some(bs.get()),
                                // Steady state is judged as a round ends: it
                                // can skip every round after the first
                                // window's, but once a round began, all of it
                                // runs.
                                optional: round as usize > window && k == 0 && j == 0,
                            });
                        }
                    }
                }
            }
            // The whole region is the most a pass writes; --until-steady
            // and the recovery pass may stop sooner.
            ProfilePlan::Sustained(opts) => {
                let bytes = Cost::Bytes(sustained::pass_bytes(opts, target_size).get());
                let block = Some(opts.pattern.bs.get());
                let name = if opts.wsat {
                    "write saturation"
                } else {
                    "sustained write"
                };
                o.push(name.into(), 1, bytes, block);
                if let Some(idle) = opts.recover {
                    o.push("interval".into(), 2, Cost::Time(idle.as_duration()), None);
                    o.push(format!("{name} after idle"), 2, bytes, block);
                }
                if let Some(hir) = opts.hir {
                    for (test, idle) in (2..).zip(hir.idles()) {
                        for k in 1..=hir.bursts {
                            let wait = Cost::Time(idle.as_duration());
                            o.push("interval".into(), test, wait, None);
                            let label = sustained::hir_burst_label(idle, k, hir.bursts);
                            o.push(label, test, Cost::Time(hir.burst_time.as_duration()), block);
                        }
                        let back = Cost::Time(hir.return_time().as_duration());
                        o.push(sustained::hir_return_label(idle), test, back, block);
                    }
                }
            }
            ProfilePlan::Verify(opts) => {
                let region = verify::region(target_size).get();
                let group = Some(crate::verify::GROUP);
                if opts.quick {
                    let blocks = 2 * crate::verify::probe::offsets(region, 0).len() as u64;
                    let cost = Cost::Bytes(blocks * crate::verify::block::BLOCK as u64);
                    o.push(
                        "probe".into(),
                        1,
                        cost,
                        Some(crate::verify::block::BLOCK as u64),
                    );
                } else {
                    if opts.phase.writes() {
                        o.push("write".into(), 1, Cost::Bytes(region), group);
                    }
                    if opts.phase.reads() {
                        o.push("read and check".into(), 1, Cost::Bytes(region), group);
                    }
                }
            }
        }
        o
    }
}

#[cfg(test)]
#[path = "outline_tests.rs"]
mod tests;
