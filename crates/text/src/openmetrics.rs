//! `/metrics` of `iomark serve`: the runs in progress in the OpenMetrics
//! text format (what Prometheus scrapes), one metric family per figure,
//! each point labelled by run, host, device and test.
//!
//! Gauges hold the last second measured; the counters and the latency
//! summary's count and sum are the run's totals so far, so a scrape that
//! misses seconds still adds up.

use std::fmt::Write;

use iomark_model::live::LiveSample;

/// The content type `/metrics` answers with.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One run in progress, as `/metrics` shows it.
#[derive(Debug, Clone)]
pub struct LiveRunMetrics<'a> {
    /// The stored run's id.
    pub run: i64,
    /// The host it runs on.
    pub host: &'a str,
    /// The device (or target) it measures.
    pub device: &'a str,
    /// Its samples so far, in order.
    pub samples: &'a [LiveSample],
}

/// A label value, escaped as the format asks (backslash, quote, newline).
fn label(v: &str) -> String {
    v.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

fn labels(run: &LiveRunMetrics<'_>, test: &str) -> String {
    format!(
        r#"run="{}",host="{}",device="{}",test="{}""#,
        run.run,
        label(run.host),
        label(run.device),
        label(test)
    )
}

/// One point of a family: the suffix of its sample's name (`_count`),
/// labels beyond the run's (`quantile="0.5"`), and its value.
type Point = (&'static str, String, f64);

/// A metric family: its name, type, unit, help, and its points for a run
/// whose last second is the sample given.
struct Family {
    name: &'static str,
    kind: &'static str,
    unit: &'static str,
    help: &'static str,
    points: fn(&LiveRunMetrics<'_>, &LiveSample) -> Vec<Point>,
}

/// Whether the run counts I/Os (a disk run does; a memory kernel's
/// seconds count bytes alone).
fn counts_ios(r: &LiveRunMetrics<'_>) -> bool {
    r.samples.iter().any(|t| t.ios > 0)
}

/// Whether the run counts bytes: all but one whose seconds count flops
/// and no bytes (Himeno), which has no bandwidth to give.
fn counts_bytes(r: &LiveRunMetrics<'_>) -> bool {
    r.samples.iter().any(|t| t.bytes > 0) || r.samples.iter().all(|t| t.flops.is_none())
}

fn one(v: f64) -> Vec<Point> {
    vec![("", String::new(), v)]
}

/// Gauges hold the last second; the counter and the summary's count and
/// sum add up the test or the run so far.
const FAMILIES: [Family; 8] = [
    Family {
        name: "iomark_bandwidth_bytes_per_second",
        kind: "gauge",
        unit: "bytes_per_second",
        help: "Bytes per second in the last second measured.",
        points: |r, s| {
            if counts_bytes(r) {
                one(s.bytes_per_sec())
            } else {
                Vec::new()
            }
        },
    },
    Family {
        name: "iomark_iops",
        kind: "gauge",
        unit: "",
        help: "I/Os per second in the last second measured.",
        // A run that counts no I/Os (a memory kernel) has no IOPS to give.
        points: |r, s| {
            if counts_ios(r) {
                one(s.iops())
            } else {
                Vec::new()
            }
        },
    },
    Family {
        name: "iomark_latency_seconds",
        kind: "summary",
        unit: "seconds",
        help:
            "I/O latency: quantiles of the last second measured; count and sum of the test so far.",
        points: |r, s| {
            if !counts_ios(r) {
                return Vec::new();
            }
            let mut points: Vec<Point> = s.latency.map_or_else(Vec::new, |l| {
                [("0.5", l.p50_ns), ("0.99", l.p99_ns), ("1.0", l.max_ns)]
                    .into_iter()
                    .map(|(q, ns)| ("", format!(",quantile=\"{q}\""), ns as f64 / 1e9))
                    .collect()
            });
            let test = r.samples.iter().filter(|t| t.step == s.step);
            let (count, sum_ns) = test.fold((0u64, 0f64), |(c, sum), t| {
                let mean = t.latency.map_or(0, |l| l.mean_ns);
                (c + t.ios, sum + mean as f64 * t.ios as f64)
            });
            points.push(("_count", String::new(), count as f64));
            points.push(("_sum", String::new(), sum_ns / 1e9));
            points
        },
    },
    Family {
        name: "iomark_bytes",
        kind: "counter",
        unit: "bytes",
        help: "Bytes moved by the run so far.",
        points: |r, _| {
            if !counts_bytes(r) {
                return Vec::new();
            }
            let total: u64 = r.samples.iter().map(|t| t.bytes).sum();
            vec![("_total", String::new(), total as f64)]
        },
    },
    Family {
        name: "iomark_flops",
        kind: "gauge",
        unit: "",
        help: "Floating-point operations per second in the last second measured (memory kernels that count them).",
        points: |_, s| s.flops_per_sec().map_or_else(Vec::new, one),
    },
    Family {
        name: "iomark_test",
        kind: "gauge",
        unit: "",
        help: "The test running: its place in the run, from 1 (of iomark_tests).",
        points: |_, s| one(f64::from(s.step)),
    },
    Family {
        name: "iomark_tests",
        kind: "gauge",
        unit: "",
        help: "How many tests the run has.",
        points: |_, s| one(f64::from(s.steps)),
    },
    Family {
        name: "iomark_time_left_seconds",
        kind: "gauge",
        unit: "seconds",
        help: "The time the run still needs, where it can be told.",
        points: |_, s| s.left_ms.map_or_else(Vec::new, |l| one(l as f64 / 1e3)),
    },
];

/// The exposition of `runs`, ending with `# EOF`.
pub fn render(runs: &[LiveRunMetrics<'_>]) -> String {
    let mut out = String::new();
    for f in &FAMILIES {
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
        if !f.unit.is_empty() {
            let _ = writeln!(out, "# UNIT {} {}", f.name, f.unit);
        }
        let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
        for r in runs {
            // A run with no second yet has no figure to give.
            let Some(last) = r.samples.last() else {
                continue;
            };
            let l = labels(r, &last.label);
            for (suffix, extra, v) in (f.points)(r, last) {
                let _ = writeln!(out, "{}{suffix}{{{l}{extra}}} {v}", f.name);
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::live::IntervalLatency;

    fn sample(step: u32, bytes: u64, ios: u64) -> LiveSample {
        LiveSample {
            left_at_most: false,
            step,
            steps: 8,
            label: "SEQ1M Q8T1 \"read\"".into(),
            at_ms: 0,
            offset_ms: 1000,
            duration_ms: 1000,
            bytes,
            ios,
            latency: Some(IntervalLatency {
                mean_ns: 2_000_000,
                p50_ns: 1_500_000,
                p99_ns: 9_000_000,
                max_ns: 12_000_000,
            }),
            left_ms: Some(42_500),
            flops: None,
        }
    }

    #[test]
    fn each_family_is_typed_and_labelled_and_the_exposition_ends_with_eof() {
        let samples = [
            sample(1, 100, 1),
            sample(2, 4 << 20, 4),
            sample(2, 2 << 20, 2),
        ];
        let text = render(&[LiveRunMetrics {
            run: 7,
            host: "h1",
            device: "ACME \\ SSD",
            samples: &samples,
        }]);
        assert!(text.ends_with("# EOF\n"), "{text}");
        let l = r#"run="7",host="h1",device="ACME \\ SSD",test="SEQ1M Q8T1 \"read\"""#;
        for line in [
            format!("iomark_bandwidth_bytes_per_second{{{l}}} 2097152"),
            format!("iomark_iops{{{l}}} 2"),
            format!("iomark_latency_seconds{{{l},quantile=\"0.99\"}} 0.009"),
            // The test so far: its two seconds, not the first test's.
            format!("iomark_latency_seconds_count{{{l}}} 6"),
            format!("iomark_latency_seconds_sum{{{l}}} 0.012"),
            format!("iomark_bytes_total{{{l}}} 6291556"),
            format!("iomark_test{{{l}}} 2"),
            format!("iomark_tests{{{l}}} 8"),
            format!("iomark_time_left_seconds{{{l}}} 42.5"),
        ] {
            assert!(text.lines().any(|t| t == line), "{line} not in:\n{text}");
        }
        assert_eq!(text.matches("# TYPE ").count(), 8);
        assert!(!text.contains("iomark_flops{"), "{text}");
    }

    #[test]
    fn a_run_that_counts_no_ios_gives_its_bandwidth_alone() {
        let memory = [LiveSample {
            ios: 0,
            latency: None,
            ..sample(1, 8 << 20, 0)
        }];
        let text = render(&[LiveRunMetrics {
            run: 3,
            host: "h",
            device: "",
            samples: &memory,
        }]);
        assert!(
            text.contains("iomark_bandwidth_bytes_per_second{run=\"3\""),
            "{text}"
        );
        for absent in [
            "iomark_iops{",
            "iomark_latency_seconds{",
            "iomark_latency_seconds_count{",
        ] {
            assert!(!text.contains(absent), "{absent} in:\n{text}");
        }
    }

    #[test]
    fn a_run_that_counts_flops_and_no_bytes_gives_its_flops_alone() {
        let himeno = [LiveSample {
            ios: 0,
            latency: None,
            flops: Some(3e9),
            duration_ms: 2000,
            ..sample(1, 0, 0)
        }];
        let text = render(&[LiveRunMetrics {
            run: 4,
            host: "h",
            device: "",
            samples: &himeno,
        }]);
        let l = r#"run="4",host="h",device="",test="SEQ1M Q8T1 \"read\"""#;
        let line = format!("iomark_flops{{{l}}} 1500000000");
        assert!(text.lines().any(|t| t == line), "{line} not in:\n{text}");
        for absent in [
            "iomark_bandwidth_bytes_per_second{",
            "iomark_bytes_total{",
            "iomark_iops{",
        ] {
            assert!(!text.contains(absent), "{absent} in:\n{text}");
        }
    }

    #[test]
    fn no_run_in_progress_is_an_empty_exposition() {
        let text = render(&[]);
        assert!(text.ends_with("# EOF\n"));
        assert!(!text.lines().any(|l| !l.starts_with('#')), "{text}");
    }
}
