//! Network tests in the store as they go, for `iomark serve`'s live view:
//! a client's test, and a server's busy periods. Each is stored when its
//! first test opens (reading back as interrupted until it ends) and gains
//! a second per report interval.

use iomark_model::live::LiveSample;
use iomark_model::{RunDocument, RunStatus};
use iomark_net::live::{ServerObserver, TestObserver};
use iomark_net::TestReport;

use crate::record::{command_line, Recorder, StoreArgs};

/// A client's test: stored when it opens, each interval a second of it.
pub(crate) struct LiveClient<'a> {
    pub(crate) store: &'a StoreArgs,
    pub(crate) recorder: Option<Recorder>,
}

impl TestObserver for LiveClient<'_> {
    fn started(&mut self, report: &TestReport) {
        let mut begun = iomark_net::run_document(report, command_line());
        self.recorder = Some(Recorder::begin(self.store, &mut begun));
    }

    fn interval(&mut self, second: &LiveSample) {
        if let Some(r) = self.recorder.as_mut() {
            r.sample(second);
        }
    }
}

/// A server's busy period as it goes. Its run is stored when its first
/// test opens; a test that opens while one of the run's tests still runs
/// joins it, its seconds numbered as the run's test k (in the order they
/// joined). The run ends with the period the server hands over, or as
/// failed (interrupted, on a stop) when its tests all ended without a
/// report.
///
/// The server decides a period by the measured spans, after the fact: a
/// test whose client connected while the last one's results were being
/// exchanged joined the run live but measured after it, so it is a period
/// of its own. When its run's period is handed over without it, such a
/// test goes on in a run of its own, from its opening; the seconds it had
/// (rarely any: the exchange takes a moment) stay with the earlier run.
pub(crate) struct LiveServer<'a> {
    pub(crate) store: &'a StoreArgs,
    pub(crate) open: Option<OpenPeriod>,
}

/// The run of the busy period under way.
pub(crate) struct OpenPeriod {
    recorder: Recorder,
    begun: RunDocument,
    /// The tests that joined it, in order, each with its opening report.
    joined: Vec<(u32, TestReport)>,
    /// Those of them still running.
    running: Vec<u32>,
}

impl LiveServer<'_> {
    fn open(&mut self, test: u32, report: &TestReport) {
        let Some(mut begun) =
            iomark_net::served_document(std::slice::from_ref(report), command_line())
        else {
            return;
        };
        let recorder = Recorder::begin(self.store, &mut begun);
        self.open = Some(OpenPeriod {
            recorder,
            begun,
            joined: vec![(test, report.clone())],
            running: vec![test],
        });
    }
}

impl ServerObserver for LiveServer<'_> {
    fn started(&mut self, test: u32, report: &TestReport) {
        match self.open.as_mut() {
            Some(p) if !p.running.is_empty() => {
                p.joined.push((test, report.clone()));
                p.running.push(test);
            }
            _ => self.open(test, report),
        }
    }

    fn interval(&mut self, test: u32, second: &LiveSample) {
        let Some(p) = self.open.as_mut() else { return };
        if let Some(k) = p.joined.iter().position(|(t, _)| *t == test) {
            p.recorder.sample(&LiveSample {
                step: k as u32 + 1,
                // More tests may join.
                steps: 0,
                ..second.clone()
            });
        }
    }

    fn served(&mut self, period: Vec<(u32, TestReport)>) {
        let tests: Vec<u32> = period.iter().map(|(t, _)| *t).collect();
        let reports: Vec<TestReport> = period.into_iter().map(|(_, r)| r).collect();
        let Some(mut doc) = iomark_net::served_document(&reports, command_line()) else {
            return;
        };
        print_warnings(&doc);
        self.store.apply(&mut doc);
        let ours = |p: &mut OpenPeriod| p.joined.iter().any(|(t, _)| tests.contains(t));
        let Some(p) = self.open.take_if(ours) else {
            // None of its tests joined the open run (which goes on): stored
            // whole, as before the live view.
            Recorder::begin(self.store, &mut doc).finish(&doc);
            return;
        };
        p.recorder.finish(&doc);
        // Tests that joined live but measured after the period: a run of
        // their own.
        let mut left = p
            .joined
            .into_iter()
            .filter(|(t, _)| p.running.contains(t) && !tests.contains(t));
        if let Some((test, report)) = left.next() {
            self.open(test, &report);
            for (test, report) in left {
                self.started(test, &report);
            }
        }
    }

    fn failed(&mut self, test: u32) {
        let Some(p) = self.open.as_mut() else { return };
        p.running.retain(|t| *t != test);
        if !p.running.is_empty() || !p.joined.iter().any(|(t, _)| *t == test) {
            return;
        }
        // Every test of the run ended, and none with a report: no period
        // will be handed over for it.
        let Some(p) = self.open.take() else { return };
        let mut doc = p.begun;
        doc.status = if crate::signals::stop_signals_received() > 0 {
            RunStatus::Interrupted
        } else {
            RunStatus::Failed
        };
        doc.finished_at_ms = iomark_model::now_ms();
        p.recorder.finish(&doc);
    }
}

/// The iperf3-shaped text has no place for them; the link checks are
/// iomark's own.
pub(crate) fn print_warnings(doc: &iomark_model::RunDocument) {
    if let iomark_model::RunBody::Net(run) = &doc.body {
        for w in &run.warnings {
            eprintln!("iomark: warning: {w}");
        }
    }
}
