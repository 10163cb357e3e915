//! How a run is named on the page: `run 12 (usb2, t7)`, then the test's
//! defining parameters where they differ between the runs of its family
//! (disk runs of one profile, memory or network runs) in the report:
//! `run 12 (usb2) 64 MiB`.

use iomark_model::figure::{mem_test_name, net_test_name};
use iomark_model::RunBody;

use crate::{date, ReportRun};

/// `run ID (labels)`, or `run ID (start date)` for a run without labels.
pub(crate) fn base_name(id: &str, doc: &iomark_model::RunDocument) -> String {
    if doc.labels.is_empty() {
        format!("run {id} ({})", date(doc.started_at_ms))
    } else {
        format!("run {id} ({})", doc.labels.join(", "))
    }
}

/// Which runs share charts: disk runs of one profile (a CrystalDiskMark
/// chart shows CrystalDiskMark runs only), memory runs, network runs.
fn family(r: &ReportRun) -> String {
    match &r.doc.body {
        RunBody::Disk(d) => format!("disk {}", d.profile),
        RunBody::Mem(_) => "mem".into(),
        RunBody::Net(_) => "net".into(),
        #[allow(unreachable_patterns)]
        _ => "other".into(),
    }
}

/// The parameters that define a run's test, each as it reads in a name:
/// a disk run's target size (the test size) and memory limit, a memory
/// run's kernel,
/// backing, threads and limit, a network run's protocol, streams and
/// direction.
fn parameters(r: &ReportRun) -> Vec<String> {
    match &r.doc.body {
        // A run held to a memory limit measures another thing than the
        // same test without one (issue 46); named where the runs differ in
        // it (`results compare` heads every such column with it).
        RunBody::Disk(d) => std::iter::once(d.target.size.to_string())
            .chain(d.cgroup.as_ref().map(|c| format!("mem limit {}", c.limit)))
            .collect(),
        RunBody::Mem(m) => mem_test_name(m).split(", ").map(str::to_owned).collect(),
        RunBody::Net(n) => net_test_name(n).split(' ').map(str::to_owned).collect(),
        #[allow(unreachable_patterns)]
        _ => Vec::new(),
    }
}

/// Appends to each run's name the parameters that not every run of its
/// family shares (nothing when it is alone in its family).
pub(crate) fn distinguish(runs: &mut [ReportRun]) {
    let params: Vec<Vec<String>> = runs.iter().map(parameters).collect();
    let families: Vec<String> = runs.iter().map(family).collect();
    for (i, r) in runs.iter_mut().enumerate() {
        let peers: Vec<&Vec<String>> = params
            .iter()
            .zip(&families)
            .filter(|(_, f)| **f == families[i])
            .map(|(p, _)| p)
            .collect();
        if peers.len() < 2 {
            continue;
        }
        let own: Vec<&str> = params[i]
            .iter()
            .filter(|p| !peers.iter().all(|q| q.contains(p)))
            .map(String::as_str)
            .collect();
        if !own.is_empty() {
            r.name = format!("{} {}", r.name, own.join(", "));
        }
    }
}
