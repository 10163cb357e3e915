//! The table's columns: with a baseline label, a device's runs of one set
//! of labels that share no row are one column (the author's table has a
//! column per device or port, not per run: a GNOME and a MacBench run of
//! one disk, or CrystalDiskMark at two test sizes on one port).

use std::collections::HashSet;

use super::{Baseline, Lineup, RowKey};

impl<'a> Lineup<'a> {
    /// The columns, each the runs (indexes) it shows, in run order. Against
    /// the first run, a column per run. By label, the runs of the same
    /// labels and device share a column when no two of them have the same
    /// row; a run that repeats a row of the column starts another.
    pub fn columns(&self) -> Vec<Vec<usize>> {
        if self.baseline == Baseline::FirstRun {
            return (0..self.runs.len()).map(|i| vec![i]).collect();
        }
        let mut columns: Vec<(Vec<usize>, HashSet<RowKey<'a>>)> = Vec::new();
        for (i, r) in self.runs.iter().enumerate() {
            let keys: HashSet<RowKey<'a>> = self.by_run[i].keys().copied().collect();
            let same = |c: &(Vec<usize>, HashSet<RowKey<'a>>)| {
                let first = &self.runs[c.0[0]].summary;
                first.labels == r.summary.labels
                    && r.summary.device.is_some()
                    && first.device == r.summary.device
                    && c.1.is_disjoint(&keys)
            };
            match columns.iter_mut().find(|c| same(c)) {
                Some(c) => {
                    c.0.push(i);
                    c.1.extend(keys);
                }
                None => columns.push((vec![i], keys)),
            }
        }
        columns.into_iter().map(|(c, _)| c).collect()
    }

    /// Keep only the rows whose metric is one of `metrics`, or ends with
    /// one after a space (`bw` keeps `read bw` and `write bw`, `lat p99`
    /// keeps `read lat p99`): the author's table of bandwidths alone. The
    /// figures judged, the gate and the JSON follow. False, leaving every
    /// row, when none matches.
    pub fn only_metrics(&mut self, metrics: &[String]) -> bool {
        let wanted = |m: &str| {
            metrics
                .iter()
                .any(|w| m == w || m.strip_suffix(w.as_str()).is_some_and(|p| p.ends_with(' ')))
        };
        if !self.keys.iter().any(|k| wanted(k.1)) {
            return false;
        }
        self.keys.retain(|k| wanted(k.1));
        true
    }

    /// The run of column `col` that has row `key`, if any.
    pub fn in_column(&self, col: &[usize], key: RowKey<'a>) -> Option<usize> {
        col.iter().copied().find(|&i| self.figure(i, key).is_some())
    }
}
