//! Network tests recorded as they go, through a run's sink (the store,
//! for `iomark serve`'s live view): a client's test, and a server's busy
//! periods. Each is begun when its first test opens (reading back as
//! interrupted until it ends) and gains a second per report interval.

use iomark_model::live::LiveSample;
use iomark_model::{RunDocument, RunStatus};
use iomark_pipeline::RunSink;

use crate::live::{ServerObserver, TestObserver};
use crate::TestReport;

/// A maker of sinks, one per run: a server's busy periods are runs of
/// their own, begun as they open.
pub type NewSink<'a> = Box<dyn FnMut() -> Box<dyn RunSink + 'a> + 'a>;

/// A client's test: begun when it opens, each interval a second of it.
pub struct LiveClient<'a> {
    sink: Box<dyn RunSink + 'a>,
    command_line: Vec<String>,
    begun: bool,
}

impl<'a> LiveClient<'a> {
    /// Record the client's test in `sink`, stored with `command_line`.
    pub fn new(sink: Box<dyn RunSink + 'a>, command_line: Vec<String>) -> Self {
        LiveClient {
            sink,
            command_line,
            begun: false,
        }
    }

    /// Finish the run with the test's document; one that never opened is
    /// begun and finished at once.
    pub fn finish(mut self, doc: &mut RunDocument) {
        if !self.begun {
            self.sink.begin(doc);
        }
        self.sink.finish(doc);
    }
}

impl TestObserver for LiveClient<'_> {
    fn started(&mut self, report: &TestReport) {
        let mut begun = crate::run_document(report, self.command_line.clone());
        self.sink.begin(&mut begun);
        self.begun = true;
    }

    fn interval(&mut self, second: &LiveSample) {
        if self.begun {
            self.sink.sample(second);
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
pub struct LiveServer<'a> {
    new_sink: NewSink<'a>,
    command_line: Vec<String>,
    /// Called with each period's document before it is stored (the
    /// iperf3-shaped text has no place for its warnings).
    served: Box<dyn FnMut(&RunDocument) + 'a>,
    /// Whether a stop signal came: a run whose tests all ended without a
    /// report is then interrupted, not failed.
    stopped: fn() -> bool,
    open: Option<OpenPeriod<'a>>,
}

/// The run of the busy period under way.
struct OpenPeriod<'a> {
    sink: Box<dyn RunSink + 'a>,
    begun: RunDocument,
    /// The tests that joined it, in order, each with its opening report.
    joined: Vec<(u32, TestReport)>,
    /// Those of them still running.
    running: Vec<u32>,
}

impl<'a> LiveServer<'a> {
    /// Record each busy period in a sink of `new_sink`, stored with
    /// `command_line`; `served` sees each period's document first, and
    /// `stopped` says whether a stop signal came.
    pub fn new(
        new_sink: NewSink<'a>,
        command_line: Vec<String>,
        served: Box<dyn FnMut(&RunDocument) + 'a>,
        stopped: fn() -> bool,
    ) -> Self {
        LiveServer {
            new_sink,
            command_line,
            served,
            stopped,
            open: None,
        }
    }

    fn open(&mut self, test: u32, report: &TestReport) {
        let Some(mut begun) =
            crate::served_document(std::slice::from_ref(report), self.command_line.clone())
        else {
            return;
        };
        let mut sink = (self.new_sink)();
        sink.begin(&mut begun);
        self.open = Some(OpenPeriod {
            sink,
            begun,
            joined: vec![(test, report.clone())],
            running: vec![test],
        });
    }
}

impl<'a> ServerObserver for LiveServer<'a> {
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
            p.sink.sample(&LiveSample {
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
        let Some(mut doc) = crate::served_document(&reports, self.command_line.clone()) else {
            return;
        };
        (self.served)(&doc);
        let ours = |p: &mut OpenPeriod<'a>| p.joined.iter().any(|(t, _)| tests.contains(t));
        let Some(mut p) = self.open.take_if(ours) else {
            // None of its tests joined the open run (which goes on): stored
            // whole, as before the live view.
            let mut sink = (self.new_sink)();
            sink.begin(&mut doc);
            sink.finish(&mut doc);
            return;
        };
        p.sink.finish(&mut doc);
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
        let Some(OpenPeriod {
            mut sink,
            begun: mut doc,
            ..
        }) = self.open.take()
        else {
            return;
        };
        doc.status = if (self.stopped)() {
            RunStatus::Interrupted
        } else {
            RunStatus::Failed
        };
        doc.finished_at_ms = iomark_model::now_ms();
        sink.finish(&mut doc);
    }
}
