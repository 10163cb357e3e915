//! Charts drawn: escaped, labelled, within the canvas.

use super::*;

#[test]
fn control_characters_are_shown_not_sent() {
    assert_eq!(esc("a\u{1b}]0;x\u{7}<b>"), "a\\x1b]0;x\\x07&lt;b&gt;");
    assert_eq!(esc("\u{9b}2J"), "\\x9b2J");
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
fn bars_carry_tooltips_and_the_legend_sits_beside_the_plot() {
    let svg = bars(&[1234.6]).render();
    assert!(
        svg.contains("<title>a run with a very long name that does not fit beside the plot, c0\nMB/s: 1235</title>"),
        "{svg}"
    );
    // The legend starts level with the plot's top, right of it, and the
    // long name is cut there (whole in the entry's tooltip).
    let legend = &svg[svg.find("class=\"legend\"").unwrap()..];
    assert!(
        legend.contains(&format!("y=\"{:.1}\"", TOP + 12.0)),
        "{legend}"
    );
    assert!(legend.contains('…'));
    let x = number_after(legend, "x1=\"");
    assert!(x > 560.0, "legend at x {x}");
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
