//! The charts of a run as it goes, from its stored samples alone
//! ([`LiveSample`]): bandwidth, IOPS and latency over the run's time, a
//! line per test. `iomark serve` draws them for a run in progress and for
//! one that was killed, with what it had.

use iomark_model::live::LiveSample;

use crate::svg::{LineChart, LineSeries, Scale, TickFormat};

/// Which figure a live chart draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveFigure {
    /// MB/s.
    Bandwidth,
    /// I/Os per second.
    Iops,
    /// The median and the 99th percentile, µs.
    Latency,
}

impl LiveFigure {
    /// All three, in the order a page shows them.
    pub const ALL: [LiveFigure; 3] = [LiveFigure::Bandwidth, LiveFigure::Iops, LiveFigure::Latency];

    /// Its name in ids and URLs.
    pub fn name(self) -> &'static str {
        match self {
            LiveFigure::Bandwidth => "bandwidth",
            LiveFigure::Iops => "iops",
            LiveFigure::Latency => "latency",
        }
    }

    /// The figures `samples` have something to draw in: bandwidth always;
    /// IOPS and latency where I/Os were counted (a memory kernel's
    /// seconds count bytes alone).
    pub fn of(samples: &[LiveSample]) -> Vec<LiveFigure> {
        let ios = samples.iter().any(|s| s.ios > 0);
        LiveFigure::ALL
            .into_iter()
            .filter(|f| *f == LiveFigure::Bandwidth || ios)
            .collect()
    }

    /// The figure a URL names.
    pub fn named(name: &str) -> Option<LiveFigure> {
        LiveFigure::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// The chart of `figure` over `samples` (in order): x is the run's
/// measured time in seconds, each test a line of its own colour.
pub fn live_chart(figure: LiveFigure, samples: &[LiveSample]) -> String {
    let mut series: Vec<LineSeries> = Vec::new();
    let mut t = 0.0;
    for s in samples {
        t += s.duration_ms as f64 / 1e3;
        let values: Vec<(f64, bool)> = match figure {
            LiveFigure::Bandwidth => vec![(s.bytes_per_sec() / 1e6, false)],
            LiveFigure::Iops => vec![(s.iops(), false)],
            LiveFigure::Latency => s.latency.map_or_else(Vec::new, |l| {
                vec![
                    (l.p50_ns as f64 / 1e3, false),
                    (l.p99_ns as f64 / 1e3, true),
                ]
            }),
        };
        for (v, tail) in values {
            let name = match figure {
                LiveFigure::Latency if tail => format!("{}. {} p99", s.step, s.label),
                LiveFigure::Latency => format!("{}. {} p50", s.step, s.label),
                _ => format!("{}. {}", s.step, s.label),
            };
            match series.iter_mut().find(|l| l.name == name) {
                Some(line) => line.points.push((t, v, v)),
                None => series.push(LineSeries {
                    name,
                    points: vec![(t, v, v)],
                    dashed: tail,
                    scatter: false,
                    colour: s.step.saturating_sub(1) as usize,
                }),
            }
        }
    }
    let (title, y_label) = match figure {
        LiveFigure::Bandwidth => ("Bandwidth, each second", "MB/s"),
        LiveFigure::Iops => ("IOPS, each second", "IOPS"),
        LiveFigure::Latency => ("Latency, each second (p50; dashed: p99)", "µs"),
    };
    LineChart {
        id: format!("live-{}", figure.name()),
        title: title.into(),
        x_label: "time measured (s)".into(),
        y_label: y_label.into(),
        x_scale: Scale::Linear,
        x_tick: TickFormat::Number,
        series,
    }
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::live::IntervalLatency;

    fn sample(step: u32, mb: u64) -> LiveSample {
        LiveSample {
            step,
            steps: 2,
            label: if step == 1 {
                "SEQ1M read"
            } else {
                "RND4K read"
            }
            .into(),
            at_ms: 0,
            offset_ms: 1000,
            duration_ms: 1000,
            bytes: mb * 1_000_000,
            ios: mb,
            latency: Some(IntervalLatency {
                mean_ns: 1000,
                p50_ns: 900,
                p99_ns: 5000,
                max_ns: 9000,
            }),
            left_ms: None,
        }
    }

    #[test]
    fn a_line_per_test_with_a_point_per_second() {
        let samples = [sample(1, 500), sample(1, 510), sample(2, 40)];
        let svg = live_chart(LiveFigure::Bandwidth, &samples);
        assert!(svg.contains(r#"id="live-bandwidth""#), "{svg}");
        assert!(svg.contains("1. SEQ1M read") && svg.contains("2. RND4K read"));
        assert_eq!(svg.matches("data-value=").count(), 3, "{svg}");
        let lat = live_chart(LiveFigure::Latency, &samples);
        assert!(lat.contains("p99") && lat.contains("p50"));
        assert_eq!(LiveFigure::named("iops"), Some(LiveFigure::Iops));
        assert_eq!(LiveFigure::of(&samples), LiveFigure::ALL);
        let memory = [LiveSample {
            ios: 0,
            latency: None,
            ..sample(1, 900)
        }];
        assert_eq!(LiveFigure::of(&memory), [LiveFigure::Bandwidth]);
        assert_eq!(LiveFigure::named("x"), None);
    }
}
