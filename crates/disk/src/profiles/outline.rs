//! A profile's plan as a person plans with it: how many tests, how long
//! they take, and, while they run, which test is on and how long is left.
//!
//! An [`Outline`] lists the steps a profile will begin, in order, under the
//! labels it begins them with (the [`ProfileObserver::begin`] labels), each
//! with its cost: a set time (a timed pass, a pause) or a number of bytes
//! (a job bound by size, a GNOME Disks phase), whose time depends on the
//! device. A [`Tracker`] follows a run against its outline: the labels say
//! where the run is, the progress reports say how far into the step, and
//! the rates seen so far price the size-bound steps still to come.
//!
//! [`ProfileObserver::begin`]: super::ProfileObserver::begin

use std::collections::HashMap;
use std::time::Duration;

use iomark_model::disk::DiskJobSpec;
use iomark_model::profile::TestDir;
use iomark_model::units::Bytes;

use super::{artefacts, gnome, iometer, macbench, pts, sustained, sweep, verify, ProfilePlan};
use crate::runner::Progress;

/// What a step costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cost {
    /// It runs for this long, whatever the device.
    Time(Duration),
    /// It moves this many bytes; its time is the device's.
    Bytes(u64),
}

/// One step a profile begins: a job, a pass, a phase or a pause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The label the profile begins it under.
    pub label: String,
    /// The test it belongs to, from 1.
    pub test: u32,
    /// Its time or its bytes.
    pub cost: Cost,
    /// Bytes per I/O, so a rate becomes IOPS; `None` for a pause.
    pub block: Option<u64>,
    /// Whether the run may end before it: a PTS round after the first
    /// window, which steady state can make the last.
    pub optional: bool,
}

/// Every step of a run, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    /// The steps, in the order they begin.
    pub steps: Vec<Step>,
}

/// Time left, and whether it is only a lower bound (a size-bound step
/// ahead whose rate nothing measured yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eta {
    /// The time left that is known.
    pub left: Duration,
    /// Whether steps of unknown length come on top of `left`.
    pub at_least: bool,
    /// Whether `left` counts steps the run may end before (optional
    /// ones): the most it can take.
    pub at_most: bool,
}

impl std::ops::Add for Eta {
    type Output = Eta;

    fn add(self, o: Eta) -> Eta {
        Eta {
            left: self.left + o.left,
            at_least: self.at_least || o.at_least,
            at_most: self.at_most || o.at_most,
        }
    }
}

impl Outline {
    /// The outline run `n` times over (`--repeat`): the steps again, each
    /// time as tests after the last, so the progress line counts all the
    /// runs and their time left.
    pub fn repeated(self, n: u32) -> Outline {
        let tests = self.steps.iter().map(|s| s.test).max().unwrap_or(0);
        let steps = (0..n.max(1))
            .flat_map(|k| {
                self.steps.iter().map(move |s| Step {
                    test: s.test + k * tests,
                    ..s.clone()
                })
            })
            .collect();
        Outline { steps }
    }

    /// The number of tests.
    pub fn tests(&self) -> u32 {
        self.steps.iter().map(|s| s.test).max().unwrap_or(0)
    }

    /// The time of the timed steps.
    pub fn timed(&self) -> Duration {
        self.steps
            .iter()
            .map(|s| match s.cost {
                Cost::Time(d) => d,
                Cost::Bytes(_) => Duration::ZERO,
            })
            .sum()
    }

    /// The bytes of the size-bound steps.
    pub fn sized(&self) -> u64 {
        self.steps
            .iter()
            .map(|s| match s.cost {
                Cost::Bytes(b) => b,
                Cost::Time(_) => 0,
            })
            .sum()
    }

    /// The expected duration, size-bound steps at `rate` bytes per second;
    /// `None` when there are some and no rate.
    pub fn expected(&self, rate: Option<f64>) -> Option<Duration> {
        let sized = self.sized();
        if sized == 0 {
            return Some(self.timed());
        }
        let rate = rate.filter(|r| *r > 0.0)?;
        Some(self.timed() + Duration::from_secs_f64(sized as f64 / rate))
    }

    /// One custom job: a single test.
    pub fn job(spec: &DiskJobSpec) -> Outline {
        let cost = match spec.runtime {
            Some(r) => Cost::Time(r.as_duration() + spec.ramp.as_duration()),
            None => Cost::Bytes(spec.size.get() * u64::from(spec.numjobs)),
        };
        Outline {
            steps: vec![Step {
                label: spec.name.clone(),
                test: 1,
                cost,
                block: Some(spec.bs.get()),
                optional: false,
            }],
        }
    }

    /// Custom jobs run one after another (a depth sweep): one test each.
    pub fn jobs(specs: impl IntoIterator<Item = DiskJobSpec>) -> Outline {
        let mut out = Outline::default();
        for (i, spec) in specs.into_iter().enumerate() {
            for step in Outline::job(&spec).steps {
                out.steps.push(Step {
                    test: i as u32 + 1,
                    ..step
                });
            }
        }
        out
    }

    fn push(&mut self, label: String, test: u32, cost: Cost, block: Option<u64>) {
        self.steps.push(Step {
            label,
            test,
            cost,
            block,
            optional: false,
        });
    }
}

impl ProfilePlan {
    /// The steps the profile will run on a target of `target_size`, as
    /// its `run` begins them.
    pub fn outline(&self, target_size: Bytes) -> Outline {
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

/// The last progress report of the current step.
#[derive(Debug, Clone, Copy)]
struct Seen {
    elapsed: Duration,
    total: Option<Duration>,
    bytes: u64,
    bytes_total: Option<u64>,
}

/// Follows a run along its outline.
#[derive(Debug, Clone)]
pub struct Tracker {
    outline: Outline,
    current: Option<usize>,
    /// Whether the current step ended: it has nothing left, also while a
    /// step the outline does not know runs after it.
    done: bool,
    seen: Option<Seen>,
    /// Bytes and time of the finished size- or time-bound steps, per
    /// block size: a 4 KiB random step says nothing of a 1 MiB one.
    rates: HashMap<u64, (u64, Duration)>,
}

impl Tracker {
    /// At the start of `outline`.
    pub fn new(outline: Outline) -> Tracker {
        Tracker {
            outline,
            current: None,
            done: false,
            seen: None,
            rates: HashMap::new(),
        }
    }

    /// The outline followed.
    pub fn outline(&self) -> &Outline {
        &self.outline
    }

    /// A step labelled `label` began: the next one of the outline with
    /// that label. A label the outline does not know leaves the position
    /// where it was, the step there ended (its time does not come back).
    pub fn begin(&mut self, label: &str) {
        self.end();
        let from = self.current.map_or(0, |c| c + 1);
        if let Some(i) = self.outline.steps[from.min(self.outline.steps.len())..]
            .iter()
            .position(|s| s.label == label)
        {
            self.current = Some(from + i);
            self.done = false;
        }
    }

    /// Progress within the current step.
    pub fn progress(&mut self, p: &Progress) {
        self.seen = Some(Seen {
            elapsed: p.elapsed,
            total: p.total,
            bytes: p.bytes,
            bytes_total: p.bytes_total,
        });
    }

    /// The current step ended: its rate is kept for the steps to come.
    pub fn end(&mut self) {
        if let (Some(seen), Some(block)) = (self.seen.take(), self.step().and_then(|s| s.block)) {
            // Bytes are counted up to a timed step's deadline only; the
            // in-flight I/O that finishes after it is not.
            let time = seen.total.map_or(seen.elapsed, |t| seen.elapsed.min(t));
            if seen.bytes > 0 && !time.is_zero() {
                let r = self.rates.entry(block).or_default();
                r.0 += seen.bytes;
                r.1 += time;
            }
        }
        self.done = self.current.is_some();
    }

    /// The current step.
    pub fn step(&self) -> Option<&Step> {
        self.current.map(|c| &self.outline.steps[c])
    }

    /// Test k of N, once a step of the outline began.
    pub fn test(&self) -> Option<(u32, u32)> {
        self.step().map(|s| (s.test, self.outline.tests()))
    }

    /// Bytes per second seen at `block`, the current step's included.
    fn rate(&self, block: u64) -> Option<f64> {
        let (mut bytes, mut time) = self.rates.get(&block).copied().unwrap_or_default();
        if let (Some(seen), Some(b)) = (self.seen, self.step().and_then(|s| s.block)) {
            if b == block {
                bytes += seen.bytes;
                time += seen.total.map_or(seen.elapsed, |t| seen.elapsed.min(t));
            }
        }
        (bytes > 0 && !time.is_zero()).then(|| bytes as f64 / time.as_secs_f64())
    }

    /// What a step costs in time, when known.
    fn price(&self, step: &Step) -> Option<Duration> {
        match step.cost {
            Cost::Time(d) => Some(d),
            Cost::Bytes(b) => {
                let rate = self.rate(step.block?)?;
                Some(Duration::from_secs_f64(b as f64 / rate))
            }
        }
    }

    /// The time left in the current step, when known.
    fn current_left(&self, step: &Step) -> Option<Duration> {
        let Some(s) = self.seen else {
            return self.price(step);
        };
        if let Some(total) = s.total {
            return Some(total.saturating_sub(s.elapsed));
        }
        // The bytes left at the rate of this block size so far, earlier
        // steps' included: one step's first tenth of a second alone would
        // swing the time left.
        if let (Some(bt), Some(rate)) = (s.bytes_total, step.block.and_then(|b| self.rate(b))) {
            return Some(Duration::from_secs_f64(
                bt.saturating_sub(s.bytes) as f64 / rate,
            ));
        }
        self.price(step).map(|d| d.saturating_sub(s.elapsed))
    }

    /// The time left in the whole run.
    pub fn left(&self) -> Eta {
        let mut eta = Eta {
            left: Duration::ZERO,
            at_least: false,
            at_most: false,
        };
        let mut add = |d: Option<Duration>| match d {
            Some(d) => eta.left += d,
            None => eta.at_least = true,
        };
        let next = match self.current {
            Some(c) => {
                if !self.done {
                    add(self.current_left(&self.outline.steps[c]));
                }
                c + 1
            }
            None => 0,
        };
        for step in &self.outline.steps[next..] {
            add(self.price(step));
        }
        eta.at_most = self.outline.steps[next..].iter().any(|s| s.optional);
        eta
    }
}

#[cfg(test)]
#[path = "outline_tests.rs"]
mod tests;
