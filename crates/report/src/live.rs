//! The charts of a run as it goes, from its stored samples alone
//! ([`LiveSample`]): bandwidth, IOPS, latency and floating-point rate
//! (MFLOPS) over the run's time, a line per test. `iomark serve` draws them for a run in progress and for
//! one that was killed, with what it had.

use iomark_model::live::{IntervalLatency, LiveSample};
use iomark_model::pts::PtsRoundStatus;

use crate::svg::{LineChart, LineSeries, Scale, TickFormat};

/// A PTS test's convergence while it runs, from the rounds its
/// checkpoints stored so far (`DiskRun::rounds_so_far`): the tracking
/// variable per round and the window ending at the last one, with its
/// bands and best-fit line. None before the first round.
pub fn live_convergence(rounds: &[PtsRoundStatus]) -> Option<String> {
    crate::charts::pts::rounds_so_far(rounds).map(|c| c.render())
}

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

/// The unit a live chart and the live page's figures give a rate in: a
/// network run's in Mbit/s, as iperf3 and the run's own report give it (a
/// net run's page drew its report's goodput in Mbit/s and its seconds in
/// MB/s), every other run's in MB/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateUnit {
    /// 10^6 bytes a second.
    MegabytesPerSec,
    /// 10^6 bits a second.
    MegabitsPerSec,
}

impl RateUnit {
    /// The unit for a run of `kind` (`disk`, `mem`, `net`).
    pub fn of_kind(kind: &str) -> RateUnit {
        if kind == "net" {
            RateUnit::MegabitsPerSec
        } else {
            RateUnit::MegabytesPerSec
        }
    }

    /// `bytes_per_sec` in this unit.
    pub fn of(self, bytes_per_sec: f64) -> f64 {
        match self {
            RateUnit::MegabytesPerSec => bytes_per_sec / 1e6,
            RateUnit::MegabitsPerSec => bytes_per_sec * 8.0 / 1e6,
        }
    }

    /// Its symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            RateUnit::MegabytesPerSec => "MB/s",
            RateUnit::MegabitsPerSec => "Mbit/s",
        }
    }
}

/// Points a live chart draws at most, about one per pixel of its plot: a
/// run of a day has 86,400 seconds, which drawn one by one made charts of
/// 16 and 31 MB that the live page fetched again each second.
pub const MOST_POINTS: usize = 900;

/// The chart of `figure` over `samples` (in order): x is the run's
/// measured time in seconds, each test a line of its own colour, a rate
/// in `unit`. Past [`MOST_POINTS`] seconds, each point is `k` consecutive
/// seconds of a test ([`windows`]), and the title says so.
pub fn live_chart(figure: LiveFigure, samples: &[LiveSample], unit: RateUnit) -> String {
    let (samples, k) = windows(samples);
    // Each line with the step it draws (a test's passes are steps of
    // their own, never joined across another test).
    let mut lines: Vec<(LineSeries, usize)> = Vec::new();
    // A colour per test, in the order they ran: a CrystalDiskMark run's
    // five passes of a test are one line, not five legend entries.
    let mut tests: Vec<&str> = Vec::new();
    let mut t = 0.0;
    for s in &samples {
        t += s.duration_ms as f64 / 1e3;
        let (test, prep) = test_of(&s.label);
        if prep {
            // A preparation is discarded, not measured: the status line
            // and the figures above the charts show it while it goes.
            continue;
        }
        let colour = match tests.iter().position(|&x| x == test) {
            Some(c) => c,
            None => {
                tests.push(test);
                tests.len() - 1
            }
        };
        let values: Vec<(f64, bool)> = match figure {
            LiveFigure::Bandwidth => vec![(unit.of(s.bytes_per_sec()), false)],
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
        for (v, dashed) in values {
            // A line per pass, named by its test: the legend has one entry
            // per test (a p99 shares its median's; the title says dashed).
            let name = test.to_string();
            // A step is one test: its median and p99 differ only by dash.
            let same =
                |l: &&mut (LineSeries, usize)| l.1 == s.step as usize && l.0.dashed == dashed;
            match lines.iter_mut().rev().find(same) {
                Some(line) => line.0.points.push((t, v, v)),
                None => lines.push((
                    LineSeries {
                        name,
                        points: vec![(t, v, v)],
                        dashed,
                        scatter: false,
                        colour,
                    },
                    s.step as usize,
                )),
            }
        }
    }
    let series: Vec<LineSeries> = lines.into_iter().map(|(l, _)| l).collect();
    let each = if k == 1 {
        "each second".to_string()
    } else {
        format!("each {k} s")
    };
    let (title, y_label) = match figure {
        LiveFigure::Bandwidth => (format!("Bandwidth, {each}"), unit.symbol()),
        LiveFigure::Iops => (format!("IOPS, {each}"), "IOPS"),
        LiveFigure::Latency if k == 1 => {
            ("Latency, each second (p50; dashed: p99)".to_string(), "µs")
        }
        LiveFigure::Latency => (
            format!("Latency, the worst second of each {k} s (p50; dashed: p99)"),
            "µs",
        ),
        LiveFigure::Flops => (format!("Floating-point rate, {each}"), "MFLOPS"),
    };
    let chart = LineChart {
        id: format!("live-{}", figure.name()),
        title,
        x_label: "time measured (s)".into(),
        y_label: y_label.into(),
        x_scale: Scale::Linear,
        x_tick: TickFormat::Number,
        series,
    };
    match figure {
        LiveFigure::Latency => chart.render_log_y(),
        _ => chart.render(),
    }
}

/// The test a step's label is of, and whether the step prepares it:
/// `SEQ1M Q8T1 read 2/5` and `SEQ1M Q8T1 read prep` are both of
/// `SEQ1M Q8T1 read`.
fn test_of(label: &str) -> (&str, bool) {
    if let Some(test) = label.strip_suffix(" prep") {
        return (test, true);
    }
    match label.rsplit_once(' ') {
        Some((test, pass))
            if pass
                .split_once('/')
                .is_some_and(|(a, b)| is_number(a) && is_number(b)) =>
        {
            (test, false)
        }
        _ => (label, false),
    }
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `samples` as a chart draws them: as they are up to [`MOST_POINTS`],
/// else each `k` consecutive seconds of a test as one (a window never
/// spans two tests), with `k` the fewest that fit. A window's bytes, I/Os,
/// flops and length are its seconds' sums, so its rates are their mean
/// over its time; its latency is its worst second's (the highest p50, p99
/// and longest), so a spike is never averaged away.
pub fn windows(samples: &[LiveSample]) -> (Vec<LiveSample>, usize) {
    let k = samples.len().div_ceil(MOST_POINTS).max(1);
    if k == 1 {
        return (samples.to_vec(), 1);
    }
    let mut out = Vec::with_capacity(MOST_POINTS + 16);
    let mut rest = samples;
    while let Some(first) = rest.first() {
        let n = rest
            .iter()
            .take(k)
            .take_while(|s| s.step == first.step)
            .count();
        let (window, after) = rest.split_at(n);
        out.push(merged(window));
        rest = after;
    }
    (out, k)
}

/// The seconds of `window` (one test's, in order, at least one) as one.
fn merged(window: &[LiveSample]) -> LiveSample {
    let last = window.last().expect("a window has a second");
    let sum = |f: fn(&LiveSample) -> u64| window.iter().map(f).sum::<u64>();
    let flops = window.iter().filter_map(|s| s.flops).reduce(|a, b| a + b);
    let worst = |f: fn(&IntervalLatency) -> u64| {
        window
            .iter()
            .filter_map(|s| s.latency.as_ref().map(f))
            .max()
    };
    let ios = sum(|s| s.ios);
    let latency = match (
        worst(|l| l.p50_ns),
        worst(|l| l.p99_ns),
        worst(|l| l.max_ns),
    ) {
        (Some(p50_ns), Some(p99_ns), Some(max_ns)) => {
            let weighted: u64 = window
                .iter()
                .filter_map(|s| s.latency.map(|l| l.mean_ns.saturating_mul(s.ios)))
                .sum();
            Some(IntervalLatency {
                mean_ns: weighted / ios.max(1),
                p50_ns,
                p99_ns,
                max_ns,
            })
        }
        _ => None,
    };
    LiveSample {
        bytes: sum(|s| s.bytes),
        ios,
        duration_ms: sum(|s| s.duration_ms),
        flops,
        latency,
        ..last.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(step: u32, mb: u64) -> LiveSample {
        LiveSample {
            left_at_most: false,
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
    fn a_net_runs_rate_is_drawn_in_megabits() {
        let samples = [sample(1, 125), sample(1, 125)];
        let net = live_chart(LiveFigure::Bandwidth, &samples, RateUnit::of_kind("net"));
        assert!(net.contains(">Mbit/s<"), "{net}");
        assert_eq!(net.matches("data-value=\"1000\"").count(), 2, "{net}");
        let disk = live_chart(LiveFigure::Bandwidth, &samples, RateUnit::of_kind("disk"));
        assert!(disk.contains(">MB/s<"), "{disk}");
        assert_eq!(disk.matches("data-value=\"125\"").count(), 2, "{disk}");
    }

    #[test]
    fn a_line_per_test_with_a_point_per_second() {
        let samples = [sample(1, 500), sample(1, 510), sample(2, 40)];
        let svg = live_chart(LiveFigure::Bandwidth, &samples, RateUnit::MegabytesPerSec);
        assert!(svg.contains(r#"id="live-bandwidth""#), "{svg}");
        assert!(
            svg.contains(">SEQ1M read<") && svg.contains(">RND4K read<"),
            "{svg}"
        );
        assert_eq!(svg.matches("data-value=").count(), 3, "{svg}");
        let lat = live_chart(LiveFigure::Latency, &samples, RateUnit::MegabytesPerSec);
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
    fn a_tests_passes_share_its_colour_and_legend_entry_and_preparations_are_left_out() {
        // CrystalDiskMark's steps: a preparation, then passes, per test.
        let step = |n: u32, label: &str, mb: u64, p99_us: u64| LiveSample {
            label: label.into(),
            latency: Some(IntervalLatency {
                mean_ns: 1000,
                p50_ns: 20_000,
                p99_ns: p99_us * 1000,
                max_ns: p99_us * 2000,
            }),
            ..sample(n, mb)
        };
        let samples = [
            step(1, "SEQ1M Q8T1 read prep", 300, 9000),
            step(2, "SEQ1M Q8T1 read 1/3", 500, 9000),
            step(3, "SEQ1M Q8T1 read 2/3", 510, 9000),
            step(4, "SEQ1M Q8T1 read 3/3", 505, 9000),
            step(5, "RND4K Q1T1 read prep", 30, 30),
            step(6, "RND4K Q1T1 read 1/3", 40, 30),
            step(7, "RND4K Q1T1 read 2/3", 41, 30),
        ];
        let svg = live_chart(LiveFigure::Bandwidth, &samples, RateUnit::MegabytesPerSec);
        let legend: Vec<&str> = svg
            .split("<g class=\"legend\">")
            .skip(1)
            .filter_map(|g| g.split("<title>").nth(1)?.split("</title>").next())
            .collect();
        assert_eq!(legend, ["SEQ1M Q8T1 read", "RND4K Q1T1 read"], "{svg}");
        // Every measured second, no preparation's.
        assert_eq!(svg.matches("data-value=").count(), 5, "{svg}");
        assert!(!svg.contains("data-value=\"300\""), "{svg}");
        // Latency: each test's p99 beside its median, on a log axis (20 µs
        // to 9 ms).
        let lat = live_chart(LiveFigure::Latency, &samples, RateUnit::MegabytesPerSec);
        assert_eq!(lat.matches("data-value=").count(), 10, "{lat}");
        assert!(lat.contains("log scale"), "{lat}");
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
        let svg = live_chart(LiveFigure::Flops, &himeno, RateUnit::MegabytesPerSec);
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
    /// A day of seconds: the chart draws at most MOST_POINTS, each a
    /// window's mean rate, its latency the worst second's, and says so.
    #[test]
    fn a_long_run_is_drawn_a_window_of_seconds_at_a_time_keeping_its_worst_second() {
        let mut day: Vec<LiveSample> = (0..86_400u64)
            .map(|i| LiveSample {
                bytes: 100_000_000 + (i % 2) * 20_000_000,
                ..sample(1, 0)
            })
            .collect();
        // One second's p99 spike, in the middle of a window.
        day[40_050].latency = Some(IntervalLatency {
            mean_ns: 1000,
            p50_ns: 900,
            p99_ns: 777_000,
            max_ns: 900_000,
        });
        let (drawn, k) = windows(&day);
        assert_eq!(k, 96);
        assert_eq!(drawn.len(), 900);
        // 96 seconds of 100 and 120 MB alternately: 110 MB/s over 96 s.
        assert_eq!(drawn[0].duration_ms, 96_000);
        assert_eq!(drawn[0].bytes_per_sec(), 110e6);
        let svg = live_chart(LiveFigure::Bandwidth, &day, RateUnit::MegabytesPerSec);
        assert_eq!(svg.matches("data-value=").count(), 900);
        assert!(svg.contains("Bandwidth, each 96 s"), "title");
        let lat = live_chart(LiveFigure::Latency, &day, RateUnit::MegabytesPerSec);
        assert!(lat.contains("the worst second of each 96 s"));
        assert!(
            lat.contains(r#"data-value="777""#),
            "the spike was averaged away"
        );
        // A window never spans two tests: the second test starts its own.
        let two: Vec<LiveSample> = (0..1000)
            .map(|i| sample(if i < 450 { 1 } else { 2 }, 10))
            .collect();
        let (drawn, k) = windows(&two);
        assert_eq!(k, 2);
        assert_eq!(drawn.len(), 500);
        assert!(drawn.iter().all(|w| w.duration_ms == 2000));
        let per_test = |step| drawn.iter().filter(|w| w.step == step).count();
        assert_eq!((per_test(1), per_test(2)), (225, 275));
        // Few seconds: as they are.
        assert_eq!(windows(&two[..900]).1, 1);
    }
}
