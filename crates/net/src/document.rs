//! A finished client test, or a server's busy period, as an iomark result
//! document, for the store.

use std::time::SystemTime;

use iomark_model::net::{NetClientTest, NetDirection, NetRun};
use iomark_model::units::Nanos;
use iomark_model::{epoch_ms, RunBody, RunDocument, RunStatus};

use crate::TestReport;

/// The result document of a client test, with the interface the control
/// connection left through, its chain and the peer's (when the peer is
/// iomark), and the link checks of both against the goodput.
pub fn run_document(report: &TestReport, command_line: Vec<String>) -> RunDocument {
    let interface = crate::iface::describe(report.peering.control_local.ip());
    let run = with_link_checks(report.to_net_run(interface));
    RunDocument {
        started_at_ms: epoch_ms(report.started),
        finished_at_ms: epoch_ms(report.finished),
        status: if report.interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        },
        host: Some(this_host()),
        ..RunDocument::iomark(command_line, RunBody::Net(run))
    }
}

/// The result document of a server's busy period: every test in `served`
/// (one, or those that overlapped under `--max-clients`) with its own
/// figures, and their total ([`NetRun::served`]), with the interface the
/// first test's control connection arrived on. `None` when nothing was
/// served.
pub fn served_document(served: &[TestReport], command_line: Vec<String>) -> Option<RunDocument> {
    let started = served.iter().map(|r| r.started).min()?;
    let finished = served.iter().map(|r| r.finished).max()?;
    let since =
        |t: SystemTime| Nanos(t.duration_since(started).unwrap_or_default().as_nanos() as u64);
    let clients = served
        .iter()
        .map(|r| {
            let interface = crate::iface::describe(r.peering.control_local.ip());
            let omit = Nanos::from_secs(r.params.omit.into());
            NetClientTest {
                client: format!("{} port {}", r.peering.peer_host, r.peering.peer_port),
                start: Nanos(since(r.started).get() + omit.get()),
                run: r.to_net_run(interface),
            }
        })
        .collect();
    let run = with_link_checks(NetRun::served(clients));
    Some(RunDocument {
        started_at_ms: epoch_ms(started),
        finished_at_ms: epoch_ms(finished),
        status: RunStatus::Complete,
        host: Some(this_host()),
        ..RunDocument::iomark(command_line, RunBody::Net(run))
    })
}

/// The machine this end ran on, as disk and mem runs record theirs: a net
/// run's page showed an empty host cell, at either end.
fn this_host() -> iomark_model::device::HostInfo {
    <iomark_model::device::HostInfo as iomark_host::HostInfoExt>::collect()
}

/// `run` with this host's interface chain (from the interface the control
/// connection used) and both ends' link checks against the goodput.
fn with_link_checks(mut run: NetRun) -> NetRun {
    run.nic_local = run
        .interface
        .as_ref()
        .and_then(|i| iomark_host::nic_chain(&i.name))
        .map(Box::new);
    let link = link_warnings(&run);
    run.warnings.extend(link);
    run
}

/// Both ends' interfaces checked against the fastest direction's goodput
/// (a full-duplex link carries its speed each way).
pub fn link_warnings(run: &NetRun) -> Vec<iomark_model::Warning> {
    let fastest = [NetDirection::Upload, NetDirection::Download]
        .into_iter()
        .filter_map(|d| run.goodput(d))
        .map(|g| g.0 * 8.0)
        .reduce(f64::max);
    let mut out = Vec::new();
    for (nic, end) in [
        (&run.nic_local, "this host's"),
        (&run.nic_remote, "the peer's"),
    ] {
        if let Some(nic) = nic {
            out.extend(iomark_host::nic_warnings(nic, end, fastest));
        }
    }
    out
}

#[cfg(test)]
#[path = "document_tests.rs"]
mod tests;
