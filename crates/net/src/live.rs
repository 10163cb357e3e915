//! A test as it goes, for whoever stores it (the live view of `iomark
//! serve`): the report as opened, then each report interval as a
//! [`LiveSample`] (the bytes every stream moved in it; a network test
//! counts no I/Os). A client has one test ([`TestObserver`]); a server
//! tells which of its tests each event is of, and hands over each busy
//! period's finished tests ([`ServerObserver`]).

use iomark_model::figure::net_spec_name;
use iomark_model::live::LiveSample;

use crate::report::{IntervalRecord, TestReport};

/// Watches one test as it goes; the defaults do nothing.
pub trait TestObserver {
    /// The test started: its report as opened, before any interval.
    fn started(&mut self, _report: &TestReport) {}
    /// A report interval ended (omitted ones are not told).
    fn interval(&mut self, _second: &LiveSample) {}
}

/// Watches a server's tests, numbered from 1 in the order accepted; the
/// defaults do nothing.
pub trait ServerObserver {
    /// Test `test` started: its report as opened.
    fn started(&mut self, _test: u32, _report: &TestReport) {}
    /// A report interval of test `test` ended.
    fn interval(&mut self, _test: u32, _second: &LiveSample) {}
    /// A busy period closed: its tests that ran to the end, in the order
    /// they ended, each with its number (one test at a time, as iperf3
    /// serves, makes one test a period; `--max-clients` gathers those
    /// that overlapped).
    fn served(&mut self, _period: Vec<(u32, TestReport)>) {}
    /// Test `test` ended without a report (it failed, or a stop ended
    /// it); told before any period its end closed is served.
    fn failed(&mut self, _test: u32) {}
}

/// Watches nothing.
#[derive(Debug, Default)]
pub struct Quiet;

impl TestObserver for Quiet {}
impl ServerObserver for Quiet {}

/// One test of a server's, told to the server's observer as test `test`.
pub(crate) struct ServedTest<'a> {
    pub obs: &'a mut dyn ServerObserver,
    pub test: u32,
}

impl TestObserver for ServedTest<'_> {
    fn started(&mut self, report: &TestReport) {
        self.obs.started(self.test, report);
    }
    fn interval(&mut self, second: &LiveSample) {
        self.obs.interval(self.test, second);
    }
}

/// What the test is, as a live view names it: the stored run's test name
/// (`tcp P1`, `udp P4 reverse`), known as soon as the test opens.
pub(crate) fn label(report: &TestReport) -> String {
    net_spec_name(&report.spec())
}

/// Interval `rec` of the test as a sample; none for an omitted one.
pub(crate) fn sample(report: &TestReport, rec: &IntervalRecord) -> Option<LiveSample> {
    if rec.omitted {
        return None;
    }
    let bytes = rec.streams.iter().map(|s| s.delta.bytes).sum();
    let time = f64::from(report.params.time);
    let at_ms = iomark_model::now_ms();
    let omit = f64::from(report.params.omit);
    Some(LiveSample {
        left_at_most: false,
        step: 1,
        steps: 1,
        label: label(report),
        at_ms,
        offset_ms: ((rec.end - omit).max(0.0) * 1e3) as u64,
        duration_ms: ((rec.end - rec.start).max(0.0) * 1e3).round() as u64,
        bytes,
        ios: 0,
        latency: None,
        // A -n/-k test has no time to tell.
        left_ms: (time > 0.0).then(|| ((time + omit - rec.end).max(0.0) * 1e3) as u64),
        flops: None,
    })
}

/// Tell `obs` of each interval in `recs`.
pub(crate) fn tell(obs: &mut dyn TestObserver, report: &TestReport, recs: &[IntervalRecord]) {
    for rec in recs {
        if let Some(second) = sample(report, rec) {
            obs.interval(&second);
        }
    }
}
