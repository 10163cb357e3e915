//! A client's test as it goes, for whoever stores it (the live view of
//! `iomark serve`): the report as opened, then each report interval as a
//! [`LiveSample`] (the bytes every stream moved in it; a network test
//! counts no I/Os).

use std::time::{SystemTime, UNIX_EPOCH};

use iomark_model::live::LiveSample;

use crate::proto::params::Protocol;
use crate::report::{IntervalRecord, TestReport};

/// Watches a client's test as it goes; the defaults do nothing.
pub trait ClientObserver {
    /// The test started: its report as opened, before any interval.
    fn started(&mut self, _report: &TestReport) {}
    /// A report interval ended (omitted ones are not told).
    fn interval(&mut self, _second: &LiveSample) {}
}

/// Watches nothing.
#[derive(Debug, Default)]
pub struct Quiet;

impl ClientObserver for Quiet {}

/// What the test is, as a live view names it: `TCP send`, `UDP receive`,
/// `TCP both ways`.
pub(crate) fn label(report: &TestReport) -> String {
    let p = &report.params;
    let protocol = match p.protocol {
        Protocol::Tcp => "TCP",
        Protocol::Udp => "UDP",
    };
    let way = if p.bidirectional {
        "both ways"
    } else if p.reverse {
        "receive"
    } else {
        "send"
    };
    format!("{protocol} {way}")
}

/// Interval `rec` of the test as a sample; none for an omitted one.
pub(crate) fn sample(report: &TestReport, rec: &IntervalRecord) -> Option<LiveSample> {
    if rec.omitted {
        return None;
    }
    let bytes = rec.streams.iter().map(|s| s.delta.bytes).sum();
    let time = f64::from(report.params.time);
    let at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let omit = f64::from(report.params.omit);
    Some(LiveSample {
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
pub(crate) fn tell(obs: &mut dyn ClientObserver, report: &TestReport, recs: &[IntervalRecord]) {
    for rec in recs {
        if let Some(second) = sample(report, rec) {
            obs.interval(&second);
        }
    }
}
