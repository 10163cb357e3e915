//! Which stored runs a command means: runs named by id, runs carrying a
//! label, and a baseline that comes first.

use crate::{RunId, RunQuery, Store, StoreError, StoredRun};

/// Runs named on a command line.
#[derive(Debug, Clone, Default)]
pub struct RunSelection {
    /// Runs by id, in the order given.
    pub ids: Vec<RunId>,
    /// Every run carrying one of these labels, oldest first.
    pub labels: Vec<String>,
    /// The run the others are compared with; it comes first.
    pub baseline: Option<RunId>,
}

impl RunSelection {
    /// Runs by id only, in the order given.
    pub fn of(ids: &[RunId]) -> RunSelection {
        RunSelection {
            ids: ids.to_vec(),
            ..RunSelection::default()
        }
    }

    /// The ids: the baseline, then the ids as given, then each label's
    /// runs; each once. A label no run carries is an error, so a typo does
    /// not quietly drop runs.
    pub fn resolve(&self, store: &mut dyn Store) -> Result<Vec<RunId>, StoreError> {
        let mut ids: Vec<RunId> = Vec::new();
        let mut add = |id: RunId| {
            if !ids.contains(&id) {
                ids.push(id);
            }
        };
        self.baseline.into_iter().for_each(&mut add);
        self.ids.iter().copied().for_each(&mut add);
        for label in &self.labels {
            let query = RunQuery {
                labels: vec![label.clone()],
                ..RunQuery::default()
            };
            let found = store.list(&query)?;
            if found.is_empty() {
                return Err(StoreError::NoRunWithLabel {
                    label: label.clone(),
                });
            }
            found.iter().for_each(|s| add(s.id));
        }
        Ok(ids)
    }

    /// The runs, loaded in the order of [`resolve`](Self::resolve).
    pub fn load(&self, store: &mut dyn Store) -> Result<Vec<StoredRun>, StoreError> {
        let ids = self.resolve(store)?;
        ids.into_iter().map(|id| store.load(id)).collect()
    }
}
