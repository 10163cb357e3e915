//! Every warning of a run document with the part it was raised for. The
//! store's warning rows lose where a mem sweep point's warning came from
//! (its scope is empty: a point has no name), so the report page and
//! `results show` read a sweep's warnings from the document, each point
//! named by its data and backing.

use crate::run::{RunBody, RunDocument};
use crate::warning::Warning;

impl RunDocument {
    /// The run's own warnings (scope `run`), then each job's (its name),
    /// the mem run's (`mem`) and each sweep point's (`31.99 MiB on
    /// swap:/dev/zram0`), or the network run's (`net`).
    pub fn scoped_warnings(&self) -> Vec<(String, &Warning)> {
        let mut out: Vec<(String, &Warning)> = self
            .warnings
            .iter()
            .map(|w| ("run".to_string(), w))
            .collect();
        match &self.body {
            RunBody::Disk(d) => {
                for j in &d.jobs {
                    out.extend(j.warnings.iter().map(|w| (j.spec.name.clone(), w)));
                }
            }
            RunBody::Mem(m) => {
                out.extend(m.warnings.iter().map(|w| ("mem".to_string(), w)));
                for p in m.sweep.iter().flat_map(|s| &s.points) {
                    let scope = format!("{} on {}", p.data, p.run.spec.backing);
                    out.extend(p.run.warnings.iter().map(|w| (scope.clone(), w)));
                }
            }
            RunBody::Net(n) => out.extend(n.warnings.iter().map(|w| ("net".to_string(), w))),
        }
        out
    }
}
