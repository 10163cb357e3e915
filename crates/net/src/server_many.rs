//! `--max-clients N`: several tests at once, each on a thread of its own.
//! Each test's report is printed whole when it ends, so the reports of
//! tests that overlap never interleave; the tests that overlapped go to
//! the store together ([`Periods`]). What the observer hears of each test
//! as it goes (its opening, its intervals) comes from the test's thread to
//! the serving thread, which alone tells the observer. A stop (Ctrl-C)
//! ends the running tests (SERVER_TERMINATE), stores what had ended, and
//! returns.

use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, SystemTime};

use iomark_model::live::LiveSample;

use crate::live::{ServerObserver, TestObserver};
use crate::report::TestReport;
use crate::server::Server;
use crate::server_periods::Periods;
use crate::NetError;

/// How often the server looks for finished tests while it waits for new ones.
const DONE_POLL: Duration = Duration::from_millis(20);

/// What a test's thread tells the serving thread, each with the test's
/// number.
enum Heard {
    Started(u32, Box<TestReport>),
    Interval(u32, LiveSample),
    /// The test ended: its text, its log lines and, when it ran to the
    /// end, its report.
    Finished(u32, Vec<u8>, Vec<u8>, Option<Box<TestReport>>),
}

/// A test's observer on its own thread: passes what it hears on.
struct ToServing {
    tx: Sender<Heard>,
    test: u32,
}

impl TestObserver for ToServing {
    fn started(&mut self, report: &TestReport) {
        let _ = self
            .tx
            .send(Heard::Started(self.test, Box::new(report.clone())));
    }
    fn interval(&mut self, second: &LiveSample) {
        let _ = self.tx.send(Heard::Interval(self.test, second.clone()));
    }
}

impl Server {
    /// Serve tests, up to `max_clients` at once, until the acceptor stops.
    pub(crate) fn serve_many(
        &self,
        out: &mut dyn Write,
        err: &mut dyn Write,
        obs: &mut dyn ServerObserver,
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
        let (heard_tx, heard_rx) = mpsc::channel::<Heard>();
        std::thread::scope(|scope| {
            let mut n = 0u32;
            let mut periods = Periods::new();
            loop {
                while let Ok(heard) = heard_rx.try_recv() {
                    match heard {
                        Heard::Started(test, report) => obs.started(test, &report),
                        Heard::Interval(test, second) => obs.interval(test, &second),
                        Heard::Finished(test, text, log, report) => {
                            let _ = out.write_all(&text);
                            let _ = out.flush();
                            let _ = err.write_all(&log);
                            if report.is_none() {
                                obs.failed(test);
                            }
                            let report = report.map(|r| (test, *r));
                            for period in periods.ended(test, report) {
                                obs.served(period);
                            }
                        }
                    }
                }
                if self.interrupted() {
                    if !periods.busy() {
                        let rest = periods.rest();
                        if !rest.is_empty() {
                            obs.served(rest);
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
                let heard = heard_tx.clone();
                let test = n;
                let spawned = std::thread::Builder::new()
                    .name(format!("net-test-{test}"))
                    .spawn_scoped(scope, move || {
                        let (mut text, mut log) = (Vec::new(), Vec::new());
                        let mut to_serving = ToServing {
                            tx: heard.clone(),
                            test,
                        };
                        let served = self.serve_test(
                            conn,
                            cookie,
                            test,
                            &mut text,
                            &mut log,
                            &mut to_serving,
                        );
                        let report = match served {
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
                        let _ = heard.send(Heard::Finished(test, text, log, report.map(Box::new)));
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
