//! Pairing by label and the words of a judged pair.

use super::*;
use iomark_model::figure::FigureUnit;
use iomark_model::stored::RunSummary;

fn run(id: i64, label: &str, device: &str, value: f64, noise: Option<(f64, f64)>) -> StoredRun {
    StoredRun {
        summary: RunSummary::example(id, label, device),
        figures: vec![Figure {
            test: "read 1MiB".into(),
            metric: "read bw".into(),
            unit: FigureUnit::BytesPerSec,
            value,
            spread: noise,
            noise,
        }],
        warnings: vec![],
        document_json: String::new(),
    }
}

#[test]
fn each_run_is_paired_with_the_labelled_run_of_its_device_and_judged_in_words() {
    let runs = [
        run(1, "usb2", "sda", 40e6, Some((38e6, 42e6))),
        run(2, "usb2", "sdb", 20e6, None),
        run(3, "usb3", "sdb", 60e6, None),
        run(4, "usb3", "sda", 41e6, Some((39e6, 43e6))),
    ];
    let l = Lineup::against(&runs, Baseline::Label("usb2"), None);
    let key = ("read 1MiB", "read bw");
    let m = l.judged(2, key).unwrap();
    assert_eq!(m.baseline_run, RunId(2));
    assert_eq!(m.judgement().as_deref(), Some("3.00x better"));
    assert_eq!(m.difference_text(), "+40.00 MB/s");
    assert_eq!(m.value_text(), "60.00 MB/s");
    let m = l.judged(3, key).unwrap();
    assert_eq!(m.baseline_run, RunId(1));
    assert_eq!(m.judgement().as_deref(), Some("1.02x~ within noise"));
    assert_eq!(m.difference_text(), "+1.00 MB/s");
    // A baseline is not judged; an unreadable document prints MB/s.
    assert!(l.judged(0, key).is_none());
    assert_eq!(l.printed(0), RateUnit::Mb);
}

#[test]
fn runs_without_a_device_are_never_merged_into_one_column() {
    let mut a = run(1, "usb2", "sda", 40e6, None);
    let mut b = run(2, "usb2", "sda", 40e6, None);
    b.figures[0].test = "read 4KiB".into();
    let c = run(3, "usb3", "sda", 60e6, None);
    let l = Lineup::against(
        &[a.clone(), b.clone(), c.clone()],
        Baseline::Label("usb2"),
        None,
    )
    .columns();
    assert_eq!(l, vec![vec![0, 1], vec![2]]);
    a.summary.device = None;
    b.summary.device = None;
    let runs = [a, b, c];
    let l = Lineup::against(&runs, Baseline::Label("usb2"), None);
    assert_eq!(l.columns(), vec![vec![0], vec![1], vec![2]]);
    assert_eq!(l.in_column(&[0, 1], ("read 4KiB", "read bw")), Some(1));
}

#[test]
fn only_the_metrics_asked_for_are_rows_and_judged() {
    let mut a = run(1, "a", "sda", 40e6, None);
    let mut b = run(2, "b", "sda", 60e6, None);
    for r in [&mut a, &mut b] {
        let mut lat = r.figures[0].clone();
        lat.metric = "read lat p99".into();
        lat.unit = FigureUnit::Nanos;
        r.figures.push(lat);
    }
    let runs = [a, b];
    let mut l = Lineup::new(&runs, None);
    assert!(!l.only_metrics(&["iops".into()]));
    assert_eq!(l.keys().len(), 2);
    assert!(l.only_metrics(&["bw".into()]));
    assert_eq!(l.keys(), &[("read 1MiB", "read bw")]);
    assert_eq!(l.matched().len(), 1);
    // A metric of two words, after the direction.
    let mut l = Lineup::new(&runs, None);
    assert!(l.only_metrics(&["lat p99".into()]));
    assert_eq!(l.keys(), &[("read 1MiB", "read lat p99")]);
    // A part of a word is not a metric.
    let mut l = Lineup::new(&runs, None);
    assert!(!l.only_metrics(&["w".into()]));
}
