//! A run as it goes: one [`LiveSample`] per second of a test, measured on
//! the I/O path, written to the store while the run lasts (so a viewer
//! needs nothing from the running process, and a killed run keeps its
//! samples) and printed by `--json-stream`.

use serde::{Deserialize, Serialize};

/// One interval (a second, the last one of a test shorter) of a running
/// test: what completed in it, and how long the I/Os took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveSample {
    /// The test's place in the run, from 1 ("test 3 of 8").
    pub step: u32,
    /// How many tests the run has; 0 when not known in advance.
    pub steps: u32,
    /// The test's label, as the progress line shows it.
    pub label: String,
    /// When the interval ended, ms since the Unix epoch.
    pub at_ms: u64,
    /// When the interval ended, ms after the test's measured start.
    pub offset_ms: u64,
    /// The interval's length, ms.
    pub duration_ms: u64,
    /// Bytes completed in the interval.
    pub bytes: u64,
    /// I/Os completed in the interval (0 where a test counts none: mem).
    pub ios: u64,
    /// How long the interval's I/Os took; none when none completed.
    pub latency: Option<IntervalLatency>,
    /// The time the run still needs, ms, when it can be told.
    pub left_ms: Option<u64>,
    /// Whether `left_ms` is the most the run can still take: it counts
    /// steps the run may skip (a PTS test's rounds after a steady window
    /// ends it); absent when it is the time left.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub left_at_most: bool,
    /// Floating-point operations completed in the interval, where the test
    /// counts them (the stencil and Himeno kernels of `iomark mem`);
    /// absent in documents written before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<f64>,
}

/// Latency of the I/Os completed in one interval, ns. The quantiles come
/// from a log-linear histogram of eight buckets per power of two, so each
/// is within 1/16 of the true value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalLatency {
    /// The mean, exact.
    pub mean_ns: u64,
    /// The median.
    pub p50_ns: u64,
    /// The 99th percentile.
    pub p99_ns: u64,
    /// The longest, exact.
    pub max_ns: u64,
}

impl LiveSample {
    /// The interval's bandwidth, bytes per second.
    pub fn bytes_per_sec(&self) -> f64 {
        per_sec(self.bytes, self.duration_ms)
    }

    /// The interval's I/Os per second.
    pub fn iops(&self) -> f64 {
        per_sec(self.ios, self.duration_ms)
    }

    /// The interval's floating-point operations per second, where it
    /// counts them.
    pub fn flops_per_sec(&self) -> Option<f64> {
        let ms = self.duration_ms;
        self.flops
            .map(|f| if ms == 0 { 0.0 } else { f * 1000.0 / ms as f64 })
    }
}

/// One line of a `--json-stream` (`disk`, `mem`, `net`), without its
/// newline: `{"event":"interval","data":{...}}`, the keys in iperf3's
/// order, so a reader of iperf3's stream reads iomark's. Written by
/// [`crate::escape::to_json`], so no U+2028 in a label splits the line.
pub fn stream_event<T: Serialize>(event: &str, data: &T) -> String {
    // A struct, not a map, so the keys keep their order.
    #[derive(Serialize)]
    struct Event<'a, T> {
        event: &'a str,
        data: &'a T,
    }
    crate::escape::to_json(&Event { event, data }).expect("a stream event serialises")
}

fn per_sec(count: u64, ms: u64) -> f64 {
    if ms == 0 {
        0.0
    } else {
        count as f64 * 1000.0 / ms as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_per_second_of_the_interval() {
        let s = LiveSample {
            left_at_most: false,
            step: 1,
            steps: 2,
            label: "SEQ1M Q8T1 read".into(),
            at_ms: 1,
            offset_ms: 500,
            duration_ms: 500,
            bytes: 1_000_000,
            ios: 250,
            latency: None,
            left_ms: None,
            flops: None,
        };
        assert_eq!(s.bytes_per_sec(), 2_000_000.0);
        assert_eq!(s.iops(), 500.0);
        assert_eq!(s.flops_per_sec(), None);
        let counted = LiveSample {
            flops: Some(3e9),
            ..s.clone()
        };
        assert_eq!(counted.flops_per_sec(), Some(6e9));
        assert_eq!(
            LiveSample {
                duration_ms: 0,
                ..s
            }
            .iops(),
            0.0
        );
    }

    #[test]
    fn flops_are_written_only_when_counted_and_read_when_absent() {
        let s = LiveSample {
            left_at_most: false,
            step: 1,
            steps: 0,
            label: "himeno 4.6 MiB".into(),
            at_ms: 1,
            offset_ms: 1000,
            duration_ms: 1000,
            bytes: 0,
            ios: 0,
            latency: None,
            left_ms: None,
            flops: None,
        };
        let old = serde_json::to_string(&s).unwrap();
        assert!(!old.contains("flops"), "{old}");
        assert_eq!(serde_json::from_str::<LiveSample>(&old).unwrap(), s);
        let counted = LiveSample {
            flops: Some(1.5e9),
            ..s
        };
        let text = serde_json::to_string(&counted).unwrap();
        assert!(text.ends_with(r#""flops":1500000000.0}"#), "{text}");
        assert_eq!(serde_json::from_str::<LiveSample>(&text).unwrap(), counted);
    }
}
