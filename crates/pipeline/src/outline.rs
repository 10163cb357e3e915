//! A run's plan as a person plans with it: how many tests, how long they
//! take, and, while they run, which test is on and how long is left.
//!
//! An [`Outline`] lists the steps a run will begin, in order, under the
//! labels it begins them with (what [`RunDisplay::begin`] is told), each
//! with its cost: a set time (a timed pass, a pause) or a number of bytes
//! (a job bound by size, a GNOME Disks phase), whose time depends on the
//! device. A [`Tracker`] follows a run against its outline: the labels say
//! where the run is, the progress reports say how far into the step, and
//! the rates seen so far price the size-bound steps still to come. A
//! profile's outline is built by the measuring crate that knows its steps
//! (disk's `ProfilePlan::outline`).
//!
//! [`RunDisplay::begin`]: crate::RunDisplay::begin

use std::collections::HashMap;
use std::time::Duration;

use iomark_model::disk::DiskJobSpec;

/// What a running job tells whoever watches it, a few times a second.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Time since the job started, ramp included.
    pub elapsed: Duration,
    /// How long the job will take in all, when it is time-based.
    pub total: Option<Duration>,
    /// Whether the ramp is still running.
    pub ramping: bool,
    /// Bytes completed and counted so far.
    pub bytes: u64,
    /// Bytes the job will move in all, when it is size-based.
    pub bytes_total: Option<u64>,
}

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

    /// A step that always runs, after the ones so far.
    pub fn push(&mut self, label: String, test: u32, cost: Cost, block: Option<u64>) {
        self.steps.push(Step {
            label,
            test,
            cost,
            block,
            optional: false,
        });
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
