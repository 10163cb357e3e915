//! Runs lined up figure by figure against a baseline, each matched pair
//! judged once ([`judge`]), so the table, the JSON
//! layout and the CI gate can never disagree about a figure (the text
//! crate only draws what this decides). The baseline
//! is one run for every figure, or, by label, chosen per run and test: the
//! labelled run of the same device and test.

use std::collections::{HashMap, HashSet};

use iomark_model::figure::{own_test_names, Direction, Figure, RateUnit, Sampled};
use iomark_model::stored::{RunId, StoredRun};

use iomark_model::figure::evidence::RatioInterval;

use crate::compare::{compare, format_ratio, ratio, Comparison, Measured};
use crate::gate::{judge, Verdict, WorseThreshold};

/// A `(test, metric)` row key.
pub type RowKey<'a> = (&'a str, &'a str);

/// What each figure is divided by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline<'a> {
    /// The first run, for every figure.
    FirstRun,
    /// Per run and test, the runs carrying this label that measured the
    /// same device and test, pooled (any one run carrying it that has the
    /// test, when none measured the same device); runs carrying it are
    /// baselines. Several runs of the device pooled are a baseline over
    /// time: a candidate is judged against where their spread says one
    /// more run would fall ([`RatioInterval::predicted`]).
    ///
    /// [`RatioInterval::predicted`]: iomark_model::figure::evidence::RatioInterval::predicted
    Label(&'a str),
}

/// Runs lined up on `(test, metric)` against a [`Baseline`].
pub struct Lineup<'a> {
    runs: &'a [StoredRun],
    keys: Vec<RowKey<'a>>,
    by_run: Vec<HashMap<RowKey<'a>, &'a Figure>>,
    printed: Vec<RateUnit>,
    own_names: HashMap<String, Vec<String>>,
    /// Per run, the samples behind each figure, derived again from its
    /// document (the store keeps only a figure's bands).
    sampled: Vec<HashMap<(String, String), Sampled>>,
    threshold: Option<WorseThreshold>,
    baseline: Baseline<'a>,
}

/// One candidate figure beside the baseline's, judged.
#[derive(Debug, Clone, Copy)]
pub struct Matched<'a> {
    /// The baseline run.
    pub baseline_run: RunId,
    /// The baseline's figure.
    pub baseline: &'a Figure,
    /// The candidate run.
    pub run: RunId,
    /// The candidate's figure (same test and metric).
    pub candidate: &'a Figure,
    /// The unit the baseline run printed its rates in.
    pub baseline_printed: RateUnit,
    /// The unit the candidate run printed its rates in: its value and the
    /// difference are shown in it.
    pub printed: RateUnit,
    /// What the candidate is divided by: the baseline's figure, or the
    /// mean of the pooled runs' figures.
    pub baseline_value: f64,
    /// How many baseline runs were pooled (1: the baseline run alone).
    pub pooled: usize,
    /// Ratio and noise.
    pub comparison: Comparison,
    /// What it means, in the figure's direction.
    pub verdict: Verdict,
}

impl Matched<'_> {
    /// The candidate's value as its run printed it: `10486 KB/s`.
    pub fn value_text(&self) -> String {
        self.printed.format_figure(self.candidate)
    }

    /// The ratio, `~` when it is within noise ([`Verdict::WithinNoise`]),
    /// and what it means in the figure's direction: `2.00x better`,
    /// `1.01x~ within noise`, `0.93x cannot tell`; none where there is no
    /// ratio (a zero baseline).
    pub fn judgement(&self) -> Option<String> {
        self.comparison.ratio.map(|r| {
            format!(
                "{}{} {}",
                format_ratio(r),
                if self.within_noise() { "~" } else { "" },
                self.verdict.words()
            )
        })
    }

    /// Whether the pair is within noise: the `~`, and `within_noise` in
    /// JSON, are the verdict's.
    pub fn within_noise(&self) -> bool {
        self.verdict == Verdict::WithinNoise
    }

    /// The difference candidate - baseline in the candidate's printed
    /// unit, signed: `+5243 KB/s` (the "UASP gains 70 MB/s" of a study,
    /// without arithmetic by hand).
    pub fn difference_text(&self) -> String {
        self.printed.format_difference(
            self.candidate.unit,
            self.candidate.value - self.baseline_value,
        )
    }

    /// The baseline as the candidate is judged against it, in its run's
    /// printed unit: `412 MB/s in #3`, or, pooled, `412 MB/s, the mean of
    /// 5 runs from #3`.
    pub fn baseline_text(&self) -> String {
        let figure = Figure {
            value: self.baseline_value,
            ..self.baseline.clone()
        };
        let value = self.baseline_printed.format_figure(&figure);
        if self.pooled > 1 {
            format!(
                "{value}, the mean of {} runs from #{}",
                self.pooled, self.baseline_run
            )
        } else {
            format!("{value} in #{}", self.baseline_run)
        }
    }
}

impl<'a> Lineup<'a> {
    /// Line `runs` up; `runs[0]` is the baseline. With a `threshold`, a
    /// figure worse than the baseline's by more than it (and outside the
    /// noise) is judged [`Verdict::Regressed`].
    pub fn new(runs: &'a [StoredRun], threshold: Option<WorseThreshold>) -> Lineup<'a> {
        Lineup::against(runs, Baseline::FirstRun, threshold)
    }

    /// Line `runs` up against `baseline`.
    pub fn against(
        runs: &'a [StoredRun],
        baseline: Baseline<'a>,
        threshold: Option<WorseThreshold>,
    ) -> Lineup<'a> {
        let mut keys: Vec<RowKey<'a>> = Vec::new();
        // Seen keys in a set beside the ordered list: a scan of the list per
        // figure made a compare of two 10,000-job runs take 50 s.
        let mut seen: HashSet<RowKey<'a>> = HashSet::new();
        let mut by_run = Vec::with_capacity(runs.len());
        for r in runs {
            let mut m = HashMap::new();
            for f in &r.figures {
                let k = (f.test.as_str(), f.metric.as_str());
                if seen.insert(k) {
                    keys.push(k);
                }
                // A repeated row keeps its first figure, as the table shows.
                m.entry(k).or_insert(f);
            }
            by_run.push(m);
        }
        // A document that cannot be read shows its rates in MB/s and names
        // no test of its own.
        let mut printed = Vec::with_capacity(runs.len());
        let mut own_names: HashMap<String, Vec<String>> = HashMap::new();
        let mut sampled = Vec::with_capacity(runs.len());
        for r in runs {
            let doc = r.document().ok();
            sampled.push(
                doc.as_ref()
                    .map(|d| {
                        d.body
                            .figures()
                            .into_iter()
                            .filter_map(|f| Some(((f.test, f.metric), f.sampled?)))
                            .collect()
                    })
                    .unwrap_or_default(),
            );
            printed.push(
                doc.as_ref()
                    .map(|d| RateUnit::printed_by(&d.body))
                    .unwrap_or_default(),
            );
            for (test, own) in doc.map(|d| own_test_names(&d.body)).unwrap_or_default() {
                let names = own_names.entry(test).or_default();
                if !names.contains(&own) {
                    names.push(own);
                }
            }
        }
        Lineup {
            runs,
            keys,
            by_run,
            printed,
            own_names,
            sampled,
            threshold,
            baseline,
        }
    }

    /// How the baseline is chosen.
    pub fn baseline(&self) -> Baseline<'a> {
        self.baseline
    }

    /// Whether run `i` is a baseline: the first run, or one carrying the
    /// baseline label.
    pub fn is_baseline(&self, i: usize) -> bool {
        match self.baseline {
            Baseline::FirstRun => i == 0,
            Baseline::Label(l) => self.runs[i].summary.labels.iter().any(|x| x == l),
        }
    }

    /// The run run `i`'s figure on row `key` is divided by: none for a
    /// baseline, or when no baseline has the row.
    pub fn baseline_of(&self, i: usize, key: RowKey<'a>) -> Option<usize> {
        if self.is_baseline(i) {
            return None;
        }
        match self.baseline {
            Baseline::FirstRun => self.figure(0, key).map(|_| 0),
            Baseline::Label(_) => {
                let mut with_row = (0..self.runs.len())
                    .filter(|&j| self.is_baseline(j) && self.figure(j, key).is_some());
                let device = self.runs[i].summary.device.as_deref();
                let same = with_row.clone().find(|&j| {
                    device.is_some() && self.runs[j].summary.device.as_deref() == device
                });
                same.or_else(|| with_row.next())
            }
        }
    }

    /// The unit run `i` printed its byte rates in (a sweep's MiB/s,
    /// MacBench's KB/s), which its figures are shown in.
    pub fn printed(&self, i: usize) -> RateUnit {
        self.printed.get(i).copied().unwrap_or_default()
    }

    /// The names the runs gave test `test` themselves, as they printed and
    /// warned under them (CrystalDiskMark 3.0's `Seq read` for `read 1MiB
    /// QD1 T1, psync, ...`), in first-seen order; empty when none differs.
    pub fn own_names(&self, test: &str) -> &[String] {
        self.own_names.get(test).map_or(&[], Vec::as_slice)
    }

    /// The runs, baseline first.
    pub fn runs(&self) -> &'a [StoredRun] {
        self.runs
    }

    /// The threshold figures are gated on, if any.
    pub fn threshold(&self) -> Option<WorseThreshold> {
        self.threshold
    }

    /// Every `(test, metric)` any run has, in first-seen order.
    pub fn keys(&self) -> &[RowKey<'a>] {
        &self.keys
    }

    /// Run `i`'s figure on row `key`.
    pub fn figure(&self, i: usize, key: RowKey<'a>) -> Option<&'a Figure> {
        self.by_run.get(i)?.get(&key).copied()
    }

    /// Run `i` (not a baseline) on row `key` beside its baseline
    /// ([`Lineup::baseline_of`]), when both have it.
    pub fn judged(&self, i: usize, key: RowKey<'a>) -> Option<Matched<'a>> {
        let b = self.baseline_of(i, key)?;
        let baseline = self.figure(b, key)?;
        let candidate = self.figure(i, key)?;
        let pool = self.pooled_with(i, b, key);
        let (baseline_value, comparison) = if pool.len() > 1 {
            // A baseline over time: the pooled runs' figures are the samples.
            let values: Vec<f64> = pool
                .iter()
                .filter_map(|&j| Some(self.figure(j, key)?.value))
                .collect();
            let runs = Sampled::of(&values);
            let mean = runs.map_or(baseline.value, |r| r.mean);
            let comparison = Comparison {
                ratio: ratio(mean, candidate.value),
                interval: runs.and_then(|r| RatioInterval::predicted(r, candidate.value)),
                bands_overlap: false,
                bands_known: runs.is_some(),
            };
            (mean, comparison)
        } else {
            let measured = |run: usize, f: &Figure| Measured {
                value: f.value,
                spread: f.noise,
                sampled: f.sampled.or_else(|| {
                    self.sampled
                        .get(run)?
                        .get(&(key.0.to_string(), key.1.to_string()))
                        .copied()
                }),
            };
            let comparison = compare(measured(b, baseline), measured(i, candidate));
            (baseline.value, comparison)
        };
        Some(Matched {
            baseline_run: self.runs[b].summary.id,
            baseline,
            run: self.runs[i].summary.id,
            candidate,
            baseline_printed: self.printed(b),
            printed: self.printed(i),
            baseline_value,
            pooled: pool.len(),
            comparison,
            verdict: judge(candidate.direction(), comparison, self.threshold),
        })
    }

    /// The baseline runs pooled for run `i` on row `key`, whose chosen
    /// baseline is `b`: by label, every labelled run of `b`'s device with
    /// the row, when that is run `i`'s device too; else `b` alone.
    fn pooled_with(&self, i: usize, b: usize, key: RowKey<'a>) -> Vec<usize> {
        let device = self.runs[i].summary.device.as_deref();
        let same_device = device.is_some() && self.runs[b].summary.device.as_deref() == device;
        if !matches!(self.baseline, Baseline::Label(_)) || !same_device {
            return vec![b];
        }
        (0..self.runs.len())
            .filter(|&j| {
                self.is_baseline(j)
                    && self.runs[j].summary.device.as_deref() == device
                    && self.figure(j, key).is_some()
            })
            .collect()
    }

    /// Every matched pair, row by row and run by run.
    pub fn matched(&self) -> Vec<Matched<'a>> {
        let mut out = Vec::new();
        for &k in &self.keys {
            for i in 0..self.runs.len() {
                out.extend(self.judged(i, k));
            }
        }
        out
    }

    /// The pairs judged [`Verdict::Regressed`].
    pub fn regressions(&self) -> Vec<Matched<'a>> {
        let mut m = self.matched();
        m.retain(|m| m.verdict == Verdict::Regressed);
        m
    }

    /// The pairs judged [`Verdict::CannotTell`] on a figure with a better
    /// direction: what a gate could not judge.
    pub fn undecided(&self) -> Vec<Matched<'a>> {
        let mut m = self.matched();
        m.retain(|m| {
            m.verdict == Verdict::CannotTell && m.candidate.direction() != Direction::Unknown
        });
        m
    }

    /// The candidates that share no figure with a direction with their
    /// baseline: a gate on them would pass having judged nothing.
    pub fn ungated(&self) -> Vec<RunId> {
        let m = self.matched();
        self.runs
            .iter()
            .enumerate()
            .filter(|&(i, _)| !self.is_baseline(i))
            .map(|(_, r)| r.summary.id)
            .filter(|id| {
                !m.iter()
                    .any(|p| p.run == *id && p.candidate.direction() != Direction::Unknown)
            })
            .collect()
    }

    /// Per candidate run, the tests it has that no baseline of its
    /// ([`Baseline::Label`]) has, in first-seen order; runs lacking none
    /// are left out. Against the first run, as [`Lineup::unmatched`].
    pub fn without_baseline(&self) -> Vec<(RunId, Vec<&'a str>)> {
        let mut out = Vec::new();
        for i in 0..self.runs.len() {
            if self.is_baseline(i) {
                continue;
            }
            let mut seen: HashSet<&str> = HashSet::new();
            let mut missing = Vec::new();
            for &k in &self.keys {
                if self.figure(i, k).is_some()
                    && self.baseline_of(i, k).is_none()
                    && seen.insert(k.0)
                {
                    missing.push(k.0);
                }
            }
            if !missing.is_empty() {
                out.push((self.runs[i].summary.id, missing));
            }
        }
        out
    }

    /// Per candidate run, the baseline runs its figures are divided by, in
    /// the order first used.
    pub fn baselines_used(&self) -> Vec<(RunId, Vec<RunId>)> {
        let mut out: Vec<(RunId, Vec<RunId>)> = Vec::new();
        for i in 0..self.runs.len() {
            let mut used: Vec<RunId> = Vec::new();
            for &k in &self.keys {
                if self.figure(i, k).is_none() {
                    continue;
                }
                if let Some(b) = self.baseline_of(i, k) {
                    for j in self.pooled_with(i, b, k) {
                        let id = self.runs[j].summary.id;
                        if !used.contains(&id) {
                            used.push(id);
                        }
                    }
                }
            }
            if !used.is_empty() {
                out.push((self.runs[i].summary.id, used));
            }
        }
        out
    }

    /// Per run, the tests other runs have and it lacks, in first-seen
    /// order, each with the words its nearest test differs in (the
    /// reason, [`counterpart`]); runs lacking none are left out.
    pub fn unmatched(&self) -> Vec<(RunId, Vec<Missing<'a>>)> {
        if self.runs.len() < 2 {
            return Vec::new();
        }
        let tests: Vec<Vec<&'a str>> = self
            .runs
            .iter()
            .map(|r| {
                let mut seen: HashSet<&str> = HashSet::new();
                r.figures
                    .iter()
                    .map(|f| f.test.as_str())
                    .filter(|t| seen.insert(t))
                    .collect()
            })
            .collect();
        self.runs
            .iter()
            .zip(counterpart::missing_tests(&tests))
            .filter(|(_, missing)| !missing.is_empty())
            .map(|(r, missing)| (r.summary.id, missing))
            .collect()
    }
}

/// Order runs into column groups by label: the runs carrying `baseline`
/// first, then the runs of each other set of labels, in the order that set
/// first appears; runs keep their order within a group.
pub fn group_by_label(runs: &mut [StoredRun], baseline: &str) {
    let mut sets: Vec<Vec<String>> = Vec::new();
    for r in runs.iter() {
        if !sets.contains(&r.summary.labels) {
            sets.push(r.summary.labels.clone());
        }
    }
    runs.sort_by_key(|r| {
        let labels = &r.summary.labels;
        (
            !labels.iter().any(|l| l == baseline),
            sets.iter().position(|s| s == labels),
        )
    });
}

mod columns;
pub mod counterpart;
mod refusal;

pub use counterpart::Missing;
pub use refusal::{by_label, LineupError};

#[cfg(test)]
mod tests;
