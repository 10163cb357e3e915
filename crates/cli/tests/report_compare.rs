//! `iomark report --baseline ID | --baseline-label L`: the page's table of
//! every figure against its baseline, paired as `results compare` pairs
//! them (the same lineup), in the unit each run printed.

use iomark_model::disk::EngineKind;
use serde_json::Value;

use crate::common::*;
use crate::report_html::fixtures;

#[test]
fn a_baseline_label_puts_each_figure_against_its_baseline_on_the_page() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    // Runs 1 and 2: the block-size sweep, which prints MiB/s.
    scratch.import(
        "ssd",
        &fixtures::sweep(&["ssd"], 400.0, &[EngineKind::Psync]),
    );
    scratch.import(
        "hdd",
        &fixtures::sweep(&["hdd"], 100.0, &[EngineKind::Psync]),
    );

    let page = ok(&iomark_ok(&[
        "report",
        "1",
        "2",
        "--baseline-label",
        "hdd",
        "--html",
        "-",
        "--db",
        db,
    ]));
    let table_of = |id: &str| {
        page.split(&format!("<table id=\"{id}\">"))
            .nth(1)
            .and_then(|t| t.split("</table>").next())
    };
    let table = table_of("comparison").unwrap_or_else(|| panic!("no comparison table:\n{page}"));
    // CPU figures, where there are any, are folded into a table of their own.
    assert!(!table.contains(">cpu "), "{table}");
    let both = format!("{table}{}", table_of("comparison-cpu").unwrap_or_default());
    // The baseline's column first, as compare groups them.
    let hdd = table.find("hdd").unwrap();
    assert!(hdd < table.find("ssd").unwrap(), "{table}");
    assert!(table.contains("(baseline)"), "{table}");
    // The runs table marks the labelled run too.
    assert!(page.contains("<td>run 2 (hdd) (baseline)</td>"), "{page}");
    assert!(table.contains("4.00x better"), "{table}");
    assert!(
        table.contains("MiB/s") && !table.contains("MB/s"),
        "{table}"
    );

    // Every pair compare makes is on the page, with the same baseline.
    let compare: Value = serde_json::from_str(&ok(&results(
        db,
        &["compare", "1", "2", "--baseline-label", "hdd", "--json"],
    )))
    .unwrap();
    let figures = compare["figures"].as_array().unwrap();
    assert!(!figures.is_empty());
    for f in figures {
        assert_eq!(f["printed_unit"], "MiB/s", "{f:#}");
        let cell = format!(
            "data-run=\"{}\" data-value=\"{}\" data-against=\"{}\"",
            f["run"],
            f["candidate"].as_f64().unwrap(),
            f["baseline_run"]
        );
        assert!(both.contains(&cell), "{cell} not in\n{both}");
    }
    assert_eq!(both.matches("data-against=").count(), figures.len());
    // And the difference, as compare prints it.
    let text = ok(&results(
        db,
        &["compare", "1", "2", "--baseline-label", "hdd"],
    ));
    assert!(text.contains("(+300.00 MiB/s)"), "{text}");
    assert!(table.contains("(+300.00 MiB/s)"), "{table}");

    // --baseline ID gives the same table against that run.
    let page = ok(&iomark_ok(&[
        "report",
        "1",
        "--baseline",
        "2",
        "--html",
        "-",
        "--db",
        db,
    ]));
    assert!(page.contains("<table id=\"comparison\">") && page.contains("4.00x better"));
    // Without either, no table.
    let page = ok(&iomark_ok(&["report", "1", "2", "--html", "-", "--db", db]));
    assert!(!page.contains("id=\"comparison\""));
}

#[test]
fn report_refuses_a_baseline_label_it_cannot_use() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    scratch.import(
        "ssd",
        &fixtures::sweep(&["ssd"], 400.0, &[EngineKind::Psync]),
    );
    scratch.import(
        "hdd",
        &fixtures::sweep(&["hdd"], 100.0, &[EngineKind::Psync]),
    );
    let html = scratch.dir.path().join("page.html");
    let html = html.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--baseline-label", "usb1"],
            "their labels are hdd, ssd",
        ),
        (
            vec!["--baseline-label", "hdd", "--baseline", "2"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["report", "1", "2", "--html", html, "--db", db];
        all.extend(args);
        let out = iomark(&all);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert!(!std::path::Path::new(html).exists());
    }
    let out = iomark(&[
        "report",
        "2",
        "--baseline-label",
        "hdd",
        "--html",
        html,
        "--db",
        db,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("every run given is labelled hdd"),
        "{}",
        stderr(&out)
    );
}
