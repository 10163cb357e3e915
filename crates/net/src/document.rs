//! A finished client test as an iomark result document, for the store.

use iomark_model::{epoch_ms, RunBody, RunDocument, RunStatus};

use crate::TestReport;

/// The result document of a client test, with the interface the control
/// connection left through.
pub fn run_document(report: &TestReport, command_line: Vec<String>) -> RunDocument {
    let interface = crate::iface::describe(report.peering.control_local.ip());
    RunDocument {
        started_at_ms: epoch_ms(report.started),
        finished_at_ms: epoch_ms(report.finished),
        status: if report.interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        },
        ..RunDocument::iomark(command_line, RunBody::Net(report.to_net_run(interface)))
    }
}
