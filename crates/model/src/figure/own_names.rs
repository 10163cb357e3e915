//! The names a run gives its tests itself, beside the names its figures
//! carry. A figure's test is named by its shape (`read 1MiB QD1 T1, psync,
//! direct, random data, 16MiB`) so the same work lines up whoever ran it:
//! fio's `rw=read bs=1M` job, CrystalDiskMark 3.0's `Seq` read and a custom
//! run. The run itself prints and warns under its own names (`Seq read`,
//! `2 MiB sequential read QD8`, `psync randread 4K`), which `compare` shows
//! beside the test so the two are visibly one.

use std::collections::HashSet;

use crate::run::RunBody;

use super::disk_names::Namer;

use super::disk_job_test_name_on;

/// `(figure test name, the run's own name)` for each job whose own name
/// differs from its test's, in job order, each pair once. The test names
/// are made unique as the figures' are (a CrystalDiskMark `4K QD32` on a
/// synchronous engine runs at depth 1, the second `... 4MiB #2`): each
/// own name counts once, so a test's passes (jobs of one name) do not.
pub fn own_test_names(body: &RunBody) -> Vec<(String, String)> {
    let RunBody::Disk(run) = body else {
        return Vec::new();
    };
    let mut namer = Namer::default();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out: Vec<(String, String)> = Vec::new();
    for j in &run.jobs {
        let own = j.spec.name.trim();
        if !seen.insert(own) {
            continue;
        }
        let test = namer.name(disk_job_test_name_on(&j.spec, &run.target));
        if own.is_empty() || own == test || test.starts_with(&format!("{own}: ")) {
            continue;
        }
        out.push((test, own.to_string()));
    }
    out
}
