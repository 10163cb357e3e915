//! Charts drawn: escaped, labelled, within the canvas.

use super::*;

#[test]
fn control_characters_are_shown_not_sent() {
    assert_eq!(esc("a\u{1b}]0;x\u{7}<b>"), "a\\x1b]0;x\\x07&lt;b&gt;");
    assert_eq!(esc("\u{9b}2J"), "\\x9b2J");
}

#[test]
fn bidi_controls_and_line_separators_are_shown_as_the_terminal_shows_them() {
    assert_eq!(esc("exe.\u{202e}gpj"), "exe.\\u{202e}gpj");
    assert_eq!(
        esc("a\u{2028}b\u{2029}c\u{85}d\u{b}\u{1c}\u{2066}<"),
        "a\\u{2028}b\\u{2029}c\\x85d\\x0b\\x1c\\u{2066}&lt;"
    );
    // A page's own lines and tabs stay layout.
    assert_eq!(esc("one\n\ttwo\r"), "one\n\ttwo\\r");
    for c in [
        '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{2069}', '\u{2029}', '\u{1e}',
    ] {
        let shown = esc(&format!("x{c}y"));
        assert!(!shown.contains(c) && shown.starts_with("x\\"), "{shown:?}");
    }
}

#[test]
fn text_is_escaped() {
    assert_eq!(esc(r#"a<b & "c""#), "a&lt;b &amp; &quot;c&quot;");
}

fn bars(values: &[f64]) -> BarChart {
    BarChart {
        id: "t".into(),
        title: "t".into(),
        y_label: "MB/s".into(),
        categories: (0..values.len()).map(|i| format!("c{i}")).collect(),
        series: vec![BarSeries {
            name: "a run with a very long name that does not fit beside the plot".into(),
            colour: 0,
            bars: values.iter().map(|&v| Some(Bar::new(v, v))).collect(),
        }],
        reference: None,
    }
}

#[test]
fn bars_spanning_three_decades_get_a_log_axis_with_si_ticks() {
    let svg = bars(&[40.0, 7000.0]).render();
    assert!(svg.contains("MB/s, log scale"), "{svg}");
    assert!(svg.contains(">10k</text>"), "{svg}");
    let linear = bars(&[400.0, 7000.0]).render();
    assert!(!linear.contains("log scale"));
    assert!(linear.contains(">8000</text>"), "{linear}");
}

#[test]
fn bars_carry_tooltips_and_a_short_legend_sits_beside_the_plot() {
    let mut chart = bars(&[1234.6]);
    chart.series[0].name = "run 12 (usb2)".into();
    let svg = chart.render();
    assert!(
        svg.contains("<title>run 12 (usb2), c0\nMB/s: 1235</title>"),
        "{svg}"
    );
    // The legend starts level with the plot's top, right of it; the chart
    // keeps its height.
    let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
    assert!(
        legend.contains(&format!("y=\"{:.1}\"", TOP + 12.0)),
        "{legend}"
    );
    let x = number_after(legend, "x1=\"");
    assert!(x > 560.0, "legend at x {x}");
    assert_eq!(number_after(&svg, " height=\""), f64::from(HEIGHT));
}

/// A legend entry as drawn: its name's lines and its box (swatch to the
/// end of the widest line, the first line's cap to the last's descent).
#[derive(Debug)]
struct Entry {
    title: String,
    lines: Vec<String>,
    area: bar::Area,
}

fn legend_entries(svg: &str) -> Vec<Entry> {
    svg.split("<g class=\"legend\">")
        .skip(1)
        .map(|g| {
            let g = &g[..g.find("</g>").unwrap()];
            let title = g[g.find("<title>").unwrap() + 7..g.find("</title>").unwrap()].to_string();
            let texts: Vec<(f64, f64, String)> = g
                .split("<text ")
                .skip(1)
                .map(|t| {
                    let text = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
                    (
                        number_after(t, "x=\""),
                        number_after(t, "y=\""),
                        text.to_string(),
                    )
                })
                .collect();
            let right = texts
                .iter()
                .map(|(x, _, t)| x + legend::text_width(t))
                .fold(0.0, f64::max);
            Entry {
                title,
                lines: texts.iter().map(|t| t.2.clone()).collect(),
                area: bar::Area {
                    left: number_after(g, "x1=\""),
                    right,
                    top: texts[0].1 - 12.0,
                    bottom: texts[texts.len() - 1].1 + 4.0,
                },
            }
        })
        .collect()
}

/// The plot and its axes' labels: from the chart's left edge to the
/// plot's right (the x axis line's end), from the plot's top to the
/// bottom of [`HEIGHT`], where the x axis title is.
fn plot_area(svg: &str) -> bar::Area {
    let axis = svg
        .split("<line ")
        .find(|l| l.contains("stroke=\"#333\"") && number_after(l, "x2=\"") > LEFT)
        .unwrap();
    bar::Area {
        left: 0.0,
        right: number_after(axis, "x2=\""),
        top: TOP,
        bottom: f64::from(HEIGHT),
    }
}

fn apart(a: &bar::Area, b: &bar::Area) -> bool {
    a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top
}

/// Names from 5 to 80 characters, one of 80 with spaces, one of 130
/// without (wider than the chart: it wraps).
fn names(n: usize) -> Vec<String> {
    let eighty = "run 48 (Samsung T7 Shield on the USB-C port of the dock, cold, 2026-11-27 15:10)";
    assert_eq!(eighty.chars().count(), 80);
    (0..n)
        .map(|i| match i {
            1 => eighty.to_string(),
            3 => "W".repeat(130),
            _ => format!("run {i} {}", "x".repeat((i * 7) % 30)),
        })
        .collect()
}

fn charts_with(names: &[String]) -> Vec<String> {
    let bar = BarChart {
        id: "b".into(),
        title: "b".into(),
        y_label: "MB/s".into(),
        categories: vec!["SEQ1M Q8T1".into(), "RND4K Q1T1".into()],
        series: names
            .iter()
            .enumerate()
            .map(|(i, n)| BarSeries {
                name: n.clone(),
                colour: i,
                bars: vec![Some(Bar::new(10.0 + i as f64, 1.0)), None],
            })
            .collect(),
        reference: None,
    };
    let line = LineChart {
        id: "l".into(),
        title: "l".into(),
        x_label: "queue depth".into(),
        y_label: "IOPS".into(),
        x_scale: Scale::Log2,
        x_tick: TickFormat::Number,
        series: names
            .iter()
            .enumerate()
            .map(|(i, n)| LineSeries {
                name: n.clone(),
                points: vec![(1.0, 5.0 + i as f64, 1.0), (4.0, 9.0, 1.0)],
                dashed: i % 2 == 1,
                scatter: false,
                colour: i,
            })
            .collect(),
    };
    vec![bar.render(), line.render()]
}

#[test]
fn a_long_name_is_whole_under_the_plot() {
    let names = names(2);
    for svg in charts_with(&names) {
        assert!(
            svg.contains(&format!(">{}</text>", esc(&names[1]))),
            "{svg}"
        );
        assert!(!svg.contains('…'));
        let height = number_after(&svg, " height=\"");
        assert!(height > f64::from(HEIGHT), "the chart grows: {height}");
        // The plot keeps the whole width: nothing beside it.
        assert!(plot_area(&svg).right > f64::from(WIDTH) - GAP_RIGHT - 1.0);
    }
}

#[test]
fn legend_entries_never_overlap_each_other_or_the_plot() {
    for n in [1, 2, 5, 12, 50] {
        let names = names(n);
        for svg in charts_with(&names) {
            let entries = legend_entries(&svg);
            // A line chart of more lines than colours names three of them
            // and the rest as a count (the line charts' own test).
            if svg.contains("data-chart=\"lines\"") && n > COLOURS {
                // Three picked (fewer when the first is also the highest or
                // the lowest), and the count of the others.
                assert!((3..=4).contains(&entries.len()), "{n} lines");
            } else {
                assert_eq!(entries.len(), n, "every run has its entry");
            }
            let plot = plot_area(&svg);
            let height = number_after(&svg, " height=\"");
            for (i, e) in entries.iter().enumerate() {
                let named = names.iter().any(|name| {
                    let name = esc(name);
                    e.title == name || e.title.ends_with(&format!(": {name}"))
                });
                assert!(
                    named || e.title.ends_with("named in its tooltip"),
                    "{}",
                    e.title
                );
                // Whole: the lines give the name back, less the breaks.
                assert_eq!(
                    e.lines.concat().replace(' ', ""),
                    e.title.replace(' ', ""),
                    "{n} runs: entry {i} is cut"
                );
                assert!(
                    apart(&e.area, &plot),
                    "{n} runs: entry {i} {:?} runs into the plot {plot:?}",
                    e.area
                );
                assert!(
                    e.area.left >= 0.0
                        && e.area.right <= f64::from(WIDTH)
                        && e.area.bottom <= height,
                    "{n} runs: entry {i} {:?} leaves the chart ({height} high)",
                    e.area
                );
                for (j, o) in entries.iter().enumerate().skip(i + 1) {
                    assert!(
                        apart(&e.area, &o.area),
                        "{n} runs: entries {i} {:?} and {j} {:?} overlap",
                        e.area,
                        o.area
                    );
                }
            }
        }
    }
}

/// The number that follows the first `marker` in `svg` (an attribute's
/// value, when `marker` ends in `="`).
fn number_after(svg: &str, marker: &str) -> f64 {
    let from = svg.find(marker).unwrap() + marker.len();
    svg[from..from + svg[from..].find('"').unwrap()]
        .parse()
        .unwrap()
}

/// The value labels of a chart: (x, baseline, font size, text).
fn value_labels(svg: &str) -> Vec<(f64, f64, f64, String)> {
    svg.split("<text class=\"value\" ")
        .skip(1)
        .map(|t| {
            let attr = |name: &str| number_after(t, &format!("{name}=\""));
            let text = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            (attr("x"), attr("y"), attr("font-size"), text.to_string())
        })
        .collect()
}

#[test]
fn value_labels_of_narrow_bars_never_overlap() {
    // Six runs of eight tests, values of five digits within 10% of each
    // other: the labels are wider than their bars, at nearly one height.
    let chart = BarChart {
        id: "t".into(),
        title: "t".into(),
        y_label: "IOPS".into(),
        categories: (0..8).map(|i| format!("test {i}")).collect(),
        series: (0..6)
            .map(|s| BarSeries {
                name: format!("run {s}"),
                colour: s,
                bars: (0..8)
                    .map(|i| {
                        Some(Bar::new(
                            10_000.0 + 97.0 * ((i * 7 + s * 3) % 11) as f64,
                            1.0,
                        ))
                    })
                    .collect(),
            })
            .collect(),
        reference: None,
    };
    let svg = chart.render();
    let labels = value_labels(&svg);
    assert!(
        labels.len() >= 24,
        "at least half the labels are drawn: {}",
        labels.len()
    );
    let boxes: Vec<bar::Area> = labels
        .iter()
        .map(|(x, y, size, text)| {
            let w = text.chars().count() as f64 * size * 0.64 + 2.0;
            bar::Area {
                left: x - w / 2.0,
                right: x + w / 2.0,
                top: y - size,
                bottom: *y,
            }
        })
        .collect();
    for (i, a) in boxes.iter().enumerate() {
        for (j, b) in boxes.iter().enumerate().skip(i + 1) {
            let apart =
                a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
            assert!(apart, "labels {:?} and {:?} overlap", labels[i], labels[j]);
        }
    }
    // A wide bar keeps its label where it was: just above the bar.
    let one = bars(&[1234.6]).render();
    let (_, y, _, text) = &value_labels(&one)[0];
    assert_eq!(text, "1235");
    let top = number_after(&one[one.find("class=\"bar\" ").unwrap()..], "y=\"");
    assert!((top - 3.0 - y).abs() < 0.11, "{y} vs bar top {top}");
}

#[test]
fn more_lines_than_colours_pick_three_out_and_grey_the_rest() {
    let y = |i: usize| match i {
        4 => 30.0,
        8 => 1.0,
        _ => 10.0 + (i % 5) as f64,
    };
    let series = |n: usize| -> Vec<LineSeries> {
        (0..n)
            .map(|i| LineSeries {
                name: format!("run {}", i + 1),
                // Run 5 the highest, run 9 the lowest.
                points: vec![(1.0, y(i), 1.0), (2.0, 12.0, 1.0)],
                dashed: false,
                scatter: false,
                colour: i,
            })
            .collect()
    };
    let chart = |n: usize| LineChart {
        id: "l".into(),
        title: "l".into(),
        x_label: "x".into(),
        y_label: "MB/s".into(),
        x_scale: Scale::Linear,
        x_tick: TickFormat::Number,
        series: series(n),
    };
    let few = chart(COLOURS).render();
    assert_eq!(legend_entries(&few).len(), COLOURS);
    assert!(!few.contains(colour(GREY)));

    let svg = chart(20).render();
    let entries: Vec<String> = legend_entries(&svg)
        .into_iter()
        .map(|e| e.lines.concat())
        .collect();
    assert_eq!(
        entries,
        [
            "first: run 1",
            "highest: run 5",
            "lowest: run 9",
            "17 other lines, each named in its tooltip"
        ]
    );
    // Every line is drawn and named (in its tooltip), the grey ones first.
    let groups: Vec<&str> = svg
        .split("<g class=\"series\" data-series=\"")
        .skip(1)
        .map(|g| &g[..g.find('"').unwrap()])
        .collect();
    assert_eq!(groups.len(), 20);
    assert_eq!(&groups[17..], ["run 1", "run 5", "run 9"]);
    for i in 1..=20 {
        assert!(
            svg.contains(&format!("<title>run {i}\n")),
            "run {i} unnamed"
        );
    }
    assert_eq!(
        svg.matches(&format!("fill=\"none\" stroke=\"{}\"", colour(GREY)))
            .count(),
        17,
        "the others' lines are grey"
    );
}
