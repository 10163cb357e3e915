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

/// The exposition of `runs`, ending with `# EOF`.
pub fn render(runs: &[LiveRunMetrics<'_>]) -> String {
    let mut out = String::new();
    let mut family =
        |name: &str, kind: &str, unit: &str, help: &str, body: &dyn Fn(&mut String)| {
            let _ = writeln!(out, "# TYPE {name} {kind}");
            if !unit.is_empty() {
                let _ = writeln!(out, "# UNIT {name} {unit}");
            }
            let _ = writeln!(out, "# HELP {name} {help}");
            body(&mut out);
        };
    // The last second of each run, and the test it belongs to.
    let last = |r: &LiveRunMetrics<'_>| r.samples.last().cloned();
    family(
        "iomark_bandwidth_bytes_per_second",
        "gauge",
        "bytes_per_second",
        "Bytes per second in the last second measured.",
        &|o| {
            for r in runs {
                if let Some(s) = last(r) {
                    let _ = writeln!(
                        o,
                        "iomark_bandwidth_bytes_per_second{{{}}} {}",
                        labels(r, &s.label),
                        s.bytes_per_sec()
                    );
                }
            }
        },
    );
    family(
        "iomark_iops",
        "gauge",
        "",
        "I/Os per second in the last second measured.",
        &|o| {
            for r in runs {
                if let Some(s) = last(r) {
                    let _ = writeln!(o, "iomark_iops{{{}}} {}", labels(r, &s.label), s.iops());
                }
            }
        },
    );
    family(
        "iomark_latency_seconds",
        "summary",
        "seconds",
        "I/O latency: quantiles of the last second measured; count and sum of the test so far.",
        &|o| {
            for r in runs {
                let Some(s) = last(r) else { continue };
                let l = labels(r, &s.label);
                if let Some(lat) = s.latency {
                    for (q, ns) in [
                        ("0.5", lat.p50_ns),
                        ("0.99", lat.p99_ns),
                        ("1.0", lat.max_ns),
                    ] {
                        let _ = writeln!(
                            o,
                            "iomark_latency_seconds{{{l},quantile=\"{q}\"}} {}",
                            ns as f64 / 1e9
                        );
                    }
                }
                let test = r.samples.iter().filter(|t| t.step == s.step);
                let (count, sum_ns) = test.fold((0u64, 0f64), |(c, sum), t| {
                    let mean = t.latency.map_or(0, |l| l.mean_ns);
                    (c + t.ios, sum + mean as f64 * t.ios as f64)
                });
                let _ = writeln!(o, "iomark_latency_seconds_count{{{l}}} {count}");
                let _ = writeln!(o, "iomark_latency_seconds_sum{{{l}}} {}", sum_ns / 1e9);
            }
        },
    );
    family(
        "iomark_bytes",
        "counter",
        "bytes",
        "Bytes moved by the run so far.",
        &|o| {
            for r in runs {
                if let Some(s) = last(r) {
                    let total: u64 = r.samples.iter().map(|t| t.bytes).sum();
                    let _ = writeln!(o, "iomark_bytes_total{{{}}} {total}", labels(r, &s.label));
                }
            }
        },
    );
    family(
        "iomark_test",
        "gauge",
        "",
        "The test running: its place in the run, from 1 (of iomark_tests).",
        &|o| {
            for r in runs {
                if let Some(s) = last(r) {
                    let l = labels(r, &s.label);
                    let _ = writeln!(o, "iomark_test{{{l}}} {}", s.step);
                }
            }
        },
    );
    family(
        "iomark_tests",
        "gauge",
        "",
        "How many tests the run has.",
        &|o| {
            for r in runs {
                if let Some(s) = last(r) {
                    let l = labels(r, &s.label);
                    let _ = writeln!(o, "iomark_tests{{{l}}} {}", s.steps);
                }
            }
        },
    );
    family(
        "iomark_time_left_seconds",
        "gauge",
        "seconds",
        "The time the run still needs, where it can be told.",
        &|o| {
            for r in runs {
                if let Some((s, left)) = last(r).and_then(|s| s.left_ms.map(|l| (s, l))) {
                    let l = labels(r, &s.label);
                    let _ = writeln!(o, "iomark_time_left_seconds{{{l}}} {}", left as f64 / 1e3);
                }
            }
        },
    );
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::live::IntervalLatency;

    fn sample(step: u32, bytes: u64, ios: u64) -> LiveSample {
        LiveSample {
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
        assert_eq!(text.matches("# TYPE ").count(), 7);
    }

    #[test]
    fn no_run_in_progress_is_an_empty_exposition() {
        let text = render(&[]);
        assert!(text.ends_with("# EOF\n"));
        assert!(!text.lines().any(|l| !l.starts_with('#')), "{text}");
    }
}
