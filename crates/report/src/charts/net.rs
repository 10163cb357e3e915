//! Network runs: goodput, RTT and both ends' CPU over the test's time.

use super::*;

pub(super) fn draw(report: &Report, out: &mut Vec<Chart>) {
    let runs: Vec<(&ReportRun, &NetRun)> = report
        .runs()
        .iter()
        .filter_map(|r| match &r.doc.body {
            RunBody::Net(n) => Some((r, n)),
            _ => None,
        })
        .collect();
    push_lines(
        out,
        LineChart {
            id: "net-bitrate".into(),
            title: "Network bitrate per interval".into(),
            x_label: "time (s, interval end)".into(),
            y_label: "Mbit/s (10⁶ bit/s)".into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: net_series(&runs, |i| {
                (i.end > i.start).then(|| {
                    let bits =
                        BytesPerSec::over(i.bytes, Nanos(i.end.get() - i.start.get())).0 * 8.0;
                    (bits / 1e6, bits)
                })
            }),
        },
    );
    // The sending streams' smoothed RTT: latency under load.
    push_lines(
        out,
        LineChart {
            id: "net-rtt".into(),
            title: "Round-trip time under load per interval (TCP_INFO of the sending streams)"
                .into(),
            x_label: "time (s, interval end)".into(),
            y_label: "RTT (ms)".into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: net_series(&runs, |i| {
                let ms = i.rtt?.get() as f64 / 1e6;
                Some((ms, ms))
            }),
        },
    );
    push_lines(
        out,
        LineChart {
            id: "net-cpu".into(),
            title: "CPU per interval, each end's iomark process".into(),
            x_label: "time (s, interval end)".into(),
            y_label: "% of one core".into(),
            x_scale: Scale::Linear,
            x_tick: TickFormat::Number,
            series: net_cpu_series(&runs),
        },
    );
}

/// Which end's CPU an interval holds.
type CpuOf = fn(&NetInterval) -> Option<f64>;

/// Each run's process CPU per interval: this host's solid, the peer's
/// (an iomark peer's) dashed. A `--bidir` run's intervals come in pairs,
/// one per direction, with the same CPU: the first direction's are drawn.
fn net_cpu_series(runs: &[(&ReportRun, &NetRun)]) -> Vec<LineSeries> {
    let mut series = Vec::new();
    for (r, n) in runs {
        let first = n.intervals.first().map(|i| i.direction);
        let ends: [(&str, CpuOf, bool); 2] = [
            ("this host", |i| i.cpu, false),
            ("peer", |i| i.peer_cpu, true),
        ];
        for (who, cpu, dashed) in ends {
            let points: Vec<_> = n
                .intervals
                .iter()
                .filter(|i| Some(i.direction) == first && !i.omitted)
                .filter_map(|i| cpu(i).map(|c| (i.end.as_secs_f64(), c, c)))
                .collect();
            if !points.is_empty() {
                series.push(LineSeries {
                    name: format!("{} {who}", r.name),
                    points,
                    dashed,
                    scatter: false,
                    colour: r.colour,
                });
            }
        }
    }
    series
}

/// One line per run and direction of `value` (drawn, labelled) at each
/// interval's end, omitted intervals left out; a run's download dashed
/// when it has both directions.
fn net_series(
    runs: &[(&ReportRun, &NetRun)],
    value: impl Fn(&NetInterval) -> Option<(f64, f64)>,
) -> Vec<LineSeries> {
    let mut series = Vec::new();
    for (r, n) in runs {
        let has = |d| n.intervals.iter().any(|i| i.direction == d);
        let both = has(NetDirection::Upload) && has(NetDirection::Download);
        for (dir, d) in [
            (NetDirection::Upload, "upload"),
            (NetDirection::Download, "download"),
        ] {
            let points: Vec<_> = n
                .intervals
                .iter()
                .filter(|i| i.direction == dir && !i.omitted)
                .filter_map(|i| value(i).map(|(y, label)| (i.end.as_secs_f64(), y, label)))
                .collect();
            if points.is_empty() {
                continue;
            }
            series.push(LineSeries {
                name: format!("{} {d}", r.name),
                points,
                dashed: both && dir == NetDirection::Download,
                scatter: false,
                colour: r.colour,
            });
        }
    }
    series
}
