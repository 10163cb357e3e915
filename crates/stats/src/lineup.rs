//! Runs lined up figure by figure against a baseline, each matched pair
//! judged once ([`judge`]), so the table, the JSON layout and the CI gate
//! can never disagree about a figure. The text crate only draws what this
//! decides.

use std::collections::{HashMap, HashSet};

use iomark_model::figure::{Direction, Figure};
use iomark_model::stored::{RunId, StoredRun};

use crate::compare::{compare, Comparison, Measured};
use crate::gate::{judge, Verdict, WorseThreshold};

/// A `(test, metric)` row key.
pub type RowKey<'a> = (&'a str, &'a str);

/// Runs lined up on `(test, metric)`; the first run is the baseline.
pub struct Lineup<'a> {
    runs: &'a [StoredRun],
    keys: Vec<RowKey<'a>>,
    by_run: Vec<HashMap<RowKey<'a>, &'a Figure>>,
    threshold: Option<WorseThreshold>,
}

/// One candidate figure beside the baseline's, judged.
#[derive(Debug, Clone, Copy)]
pub struct Matched<'a> {
    /// The baseline's figure.
    pub baseline: &'a Figure,
    /// The candidate run.
    pub run: RunId,
    /// The candidate's figure (same test and metric).
    pub candidate: &'a Figure,
    /// Ratio and noise.
    pub comparison: Comparison,
    /// What it means, in the figure's direction.
    pub verdict: Verdict,
}

impl<'a> Lineup<'a> {
    /// Line `runs` up; `runs[0]` is the baseline. With a `threshold`, a
    /// figure worse than the baseline's by more than it (and outside the
    /// noise) is judged [`Verdict::Regressed`].
    pub fn new(runs: &'a [StoredRun], threshold: Option<WorseThreshold>) -> Lineup<'a> {
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
        Lineup {
            runs,
            keys,
            by_run,
            threshold,
        }
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

    /// Run `i` (not the baseline) on row `key` beside the baseline, when
    /// both have it.
    pub fn judged(&self, i: usize, key: RowKey<'a>) -> Option<Matched<'a>> {
        if i == 0 {
            return None;
        }
        let baseline = self.figure(0, key)?;
        let candidate = self.figure(i, key)?;
        let measured = |f: &Figure| Measured {
            value: f.value,
            spread: f.noise,
        };
        let comparison = compare(measured(baseline), measured(candidate));
        Some(Matched {
            baseline,
            run: self.runs[i].summary.id,
            candidate,
            comparison,
            verdict: judge(candidate.direction(), comparison, self.threshold),
        })
    }

    /// Every matched pair, row by row and run by run.
    pub fn matched(&self) -> Vec<Matched<'a>> {
        let mut out = Vec::new();
        for &k in &self.keys {
            for i in 1..self.runs.len() {
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

    /// The candidates that share no figure with a direction with the
    /// baseline: a gate on them would pass having judged nothing.
    pub fn ungated(&self) -> Vec<RunId> {
        let m = self.matched();
        self.runs
            .iter()
            .skip(1)
            .map(|r| r.summary.id)
            .filter(|id| {
                !m.iter()
                    .any(|p| p.run == *id && p.candidate.direction() != Direction::Unknown)
            })
            .collect()
    }

    /// Per run, the tests other runs have and it lacks, in first-seen
    /// order; runs lacking none are left out.
    pub fn unmatched(&self) -> Vec<(RunId, Vec<&'a str>)> {
        // Sets, not scans: linear in the figures however many tests a run has.
        let mut all: Vec<&str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for &(t, _) in &self.keys {
            if seen.insert(t) {
                all.push(t);
            }
        }
        let mut out = Vec::new();
        if self.runs.len() < 2 {
            return out;
        }
        for r in self.runs {
            let has: HashSet<&str> = r.figures.iter().map(|f| f.test.as_str()).collect();
            let missing: Vec<&str> = all.iter().copied().filter(|t| !has.contains(t)).collect();
            if !missing.is_empty() {
                out.push((r.summary.id, missing));
            }
        }
        out
    }
}
