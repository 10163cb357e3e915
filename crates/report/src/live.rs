//! The charts of a run as it goes, from its stored samples alone
//! ([`LiveSample`]): bandwidth, IOPS, latency and floating-point rate
//! (MFLOPS) over the run's time, a line per test. `iomark serve` draws them for a run in progress and for
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
    /// Floating-point operations, MFLOPS (10^6 per second, as the stencil
    /// and Himeno report them).
    Flops,
}

impl LiveFigure {
    /// All four, in the order a page shows them.
    pub const ALL: [LiveFigure; 4] = [
        LiveFigure::Bandwidth,
        LiveFigure::Iops,
        LiveFigure::Latency,
        LiveFigure::Flops,
    ];

    /// Its name in ids and URLs.
    pub fn name(self) -> &'static str {
        match self {
            LiveFigure::Bandwidth => "bandwidth",
            LiveFigure::Iops => "iops",
            LiveFigure::Latency => "latency",
            LiveFigure::Flops => "flops",
        }
    }

    /// The figures `samples` have something to draw in: bandwidth unless
    /// they count flops and no bytes (Himeno's seconds); IOPS and latency
    /// where I/Os were counted (a memory kernel's seconds count none);
    /// MFLOPS where flops were (the stencil's and Himeno's).
    pub fn of(samples: &[LiveSample]) -> Vec<LiveFigure> {
        let ios = samples.iter().any(|s| s.ios > 0);
        let flops = samples.iter().any(|s| s.flops.is_some());
        let bytes = samples.iter().any(|s| s.bytes > 0);
        LiveFigure::ALL
            .into_iter()
            .filter(|f| match f {
                LiveFigure::Bandwidth => bytes || !flops,
                LiveFigure::Iops | LiveFigure::Latency => ios,
                LiveFigure::Flops => flops,
            })
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
            LiveFigure::Flops => s
                .flops_per_sec()
                .map_or_else(Vec::new, |f| vec![(f / 1e6, false)]),
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
        LiveFigure::Flops => ("Floating-point rate, each second", "MFLOPS"),
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
            flops: None,
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
        assert_eq!(
            LiveFigure::of(&samples),
            [LiveFigure::Bandwidth, LiveFigure::Iops, LiveFigure::Latency]
        );
        let memory = [LiveSample {
            ios: 0,
            latency: None,
            ..sample(1, 900)
        }];
        assert_eq!(LiveFigure::of(&memory), [LiveFigure::Bandwidth]);
        assert_eq!(LiveFigure::of(&[]), [LiveFigure::Bandwidth]);
        assert_eq!(LiveFigure::named("x"), None);
    }

    #[test]
    fn seconds_that_count_flops_draw_mflops_and_bandwidth_only_with_bytes() {
        let flops = |bytes: u64, mflop: f64| LiveSample {
            ios: 0,
            latency: None,
            bytes,
            flops: Some(mflop * 1e6),
            duration_ms: 500,
            ..sample(1, 0)
        };
        // Himeno: flops, no bytes.
        let himeno = [flops(0, 800.0), flops(0, 900.0)];
        assert_eq!(LiveFigure::of(&himeno), [LiveFigure::Flops]);
        let svg = live_chart(LiveFigure::Flops, &himeno);
        assert!(
            svg.contains(r#"id="live-flops""#) && svg.contains("MFLOPS"),
            "{svg}"
        );
        // 800 Mflop in half a second: 1600 MFLOPS.
        assert!(svg.contains(r#"data-value="1600""#), "{svg}");
        assert_eq!(svg.matches("data-value=").count(), 2, "{svg}");
        // The stencil: both.
        let stencil = [flops(1_000_000, 100.0)];
        assert_eq!(
            LiveFigure::of(&stencil),
            [LiveFigure::Bandwidth, LiveFigure::Flops]
        );
        assert_eq!(LiveFigure::named("flops"), Some(LiveFigure::Flops));
    }
}
