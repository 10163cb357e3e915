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
    let x: f64 = legend
        .split("x1=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(x > 560.0, "legend at x {x}");
}
