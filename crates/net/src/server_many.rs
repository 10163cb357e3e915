//! `--max-clients N`: several tests at once, each on a thread of its own.
//! Each test's report is printed whole when it ends, so the reports of
//! tests that overlap never interleave; the tests that overlapped go to
//! the store together ([`Periods`]). A stop (Ctrl-C) ends the running
//! tests (SERVER_TERMINATE), stores what had ended, and returns.

use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, SystemTime};

use crate::report::TestReport;
use crate::server::Server;
use crate::server_periods::Periods;
use crate::NetError;

/// How often the server looks for finished tests while it waits for new ones.
const DONE_POLL: Duration = Duration::from_millis(20);

/// One finished test: its number, its text, its log lines and, when it ran
/// to the end, its report.
type Finished = (u32, Vec<u8>, Vec<u8>, Option<TestReport>);

impl Server {
    /// Serve tests, up to `max_clients` at once, until the acceptor stops.
    pub(crate) fn serve_many(
        &self,
        out: &mut dyn Write,
        err: &mut dyn Write,
        served: &mut dyn FnMut(Vec<TestReport>),
    ) -> Result<(), NetError> {
        let cfg = self.config();
        if cfg.text {
            let _ = writeln!(
                out,
                "-----------------------------------------------------------\n\
                 Server listening on {} (up to {} tests at once)\n\
                 -----------------------------------------------------------",
                self.local_addr().port(),
                cfg.max_clients
            );
            let _ = out.flush();
        }
        let (done_tx, done_rx) = mpsc::channel::<Finished>();
        std::thread::scope(|scope| {
            let mut n = 0u32;
            let mut periods = Periods::new();
            loop {
                while let Ok((test, text, log, report)) = done_rx.try_recv() {
                    let _ = out.write_all(&text);
                    let _ = out.flush();
                    let _ = err.write_all(&log);
                    for period in periods.ended(test, report) {
                        served(period);
                    }
                }
                if self.interrupted() {
                    if !periods.busy() {
                        let rest = periods.rest();
                        if !rest.is_empty() {
                            served(rest);
                        }
                        return Ok(());
                    }
                    // The running tests see the stop at their next poll.
                    std::thread::sleep(DONE_POLL);
                    continue;
                }
                let (conn, cookie) = match self.next_test(DONE_POLL) {
                    Ok(t) => t,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(NetError::Closed {
                            during: "accepting connections",
                        })
                    }
                };
                n += 1;
                let done = done_tx.clone();
                let test = n;
                let spawned = std::thread::Builder::new()
                    .name(format!("net-test-{test}"))
                    .spawn_scoped(scope, move || {
                        let (mut text, mut log) = (Vec::new(), Vec::new());
                        let report = match self.serve_test(conn, cookie, test, &mut text, &mut log)
                        {
                            Ok(report) => {
                                if cfg.json {
                                    let _ = writeln!(text, "{}", report.to_iperf3_json());
                                }
                                Some(report)
                            }
                            Err(e) => {
                                let e = iomark_model::escape::escape_controls(&e.to_string())
                                    .into_owned();
                                let _ = writeln!(log, "iomark: test #{test} ended: {e}");
                                None
                            }
                        };
                        let _ = done.send((test, text, log, report));
                    });
                match spawned {
                    Ok(_) => periods.accepted(test, SystemTime::now()),
                    Err(e) => {
                        let _ = writeln!(err, "iomark: test #{n} not started: {e}");
                    }
                }
            }
        })
    }
}
