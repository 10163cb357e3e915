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
            sampled: None,
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
fn several_labelled_runs_of_the_device_are_one_baseline_over_time() {
    // Five runs of main over time on sda, and one on another disk.
    let mut runs: Vec<StoredRun> = [100e6, 104e6, 96e6, 102e6, 98e6]
        .iter()
        .enumerate()
        .map(|(k, &v)| run(k as i64 + 1, "main", "sda", v, None))
        .collect();
    runs.push(run(6, "main", "sdb", 50e6, None));
    runs.push(run(7, "ci", "sda", 85e6, None));
    runs.push(run(8, "ci", "sda", 100e6, None));
    let key = ("read 1MiB", "read bw");
    let t = Some("5%".parse().unwrap());
    let l = Lineup::against(&runs, Baseline::Label("main"), t);
    let m = l.judged(6, key).unwrap();
    assert_eq!((m.pooled, m.baseline_value), (5, 100e6));
    assert_eq!(m.verdict, Verdict::Regressed);
    assert_eq!(m.baseline_text(), "100.00 MB/s, the mean of 5 runs from #1");
    assert_eq!(m.difference_text(), "-15.00 MB/s");
    // No change, against runs 3% apart, cannot rule a 5% loss out.
    assert_eq!(l.judged(7, key).unwrap().verdict, Verdict::CannotTell);
    assert_eq!(
        l.baselines_used(),
        [
            (RunId(7), (1..=5).map(RunId).collect::<Vec<_>>()),
            (RunId(8), (1..=5).map(RunId).collect::<Vec<_>>())
        ]
    );
    // One labelled run of the device is the baseline alone, as before.
    let l = Lineup::against(&runs[4..], Baseline::Label("main"), t);
    let m = l.judged(2, key).unwrap();
    assert_eq!((m.pooled, m.baseline_run), (1, RunId(5)));
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

#[test]
fn a_baseline_label_must_divide_some_run_and_be_carried_by_one() {
    let mut runs = vec![
        run(1, "usb3", "sda", 60e6, None),
        run(2, "usb2", "sda", 40e6, None),
    ];
    // The labelled runs come first, and the label is the baseline.
    assert_eq!(by_label(&mut runs, "usb2"), Ok(Baseline::Label("usb2")));
    assert_eq!(runs[0].summary.id, RunId(2));
    let err = by_label(&mut runs[..1], "usb2").unwrap_err();
    assert_eq!(
        err.to_string(),
        "--baseline-label usb2: every run given is labelled usb2, so none is compared with them; add runs with another label"
    );
    let err = by_label(&mut runs, "usb\x1b1").unwrap_err();
    assert_eq!(
        err.to_string(),
        "--baseline-label usb\\x1b1: none of #2, #1 is labelled usb\\x1b1; their labels are usb2, usb3"
    );
    runs.iter_mut().for_each(|r| r.summary.labels.clear());
    let err = by_label(&mut runs, "usb2").unwrap_err();
    assert!(
        err.to_string().ends_with(
            "none of #2, #1 is labelled usb2; they have no labels: label runs with --label when storing or importing them"
        ),
        "{err}"
    );
}

#[test]
fn an_unknown_metric_is_refused_naming_the_metrics_there_are() {
    let mut a = run(1, "a", "sda", 40e6, None);
    let mut lat = a.figures[0].clone();
    lat.metric = "read lat p99".into();
    a.figures.push(lat);
    let runs = [a.clone(), a];
    let mut l = Lineup::new(&runs, None);
    assert_eq!(l.keep_metrics(&[]), Ok(()));
    assert_eq!(l.keys().len(), 2);
    let err = l
        .keep_metrics(&["iops".into(), "mflops".into()])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--metric iops, mflops: no row of these runs has that metric; their metrics are read bw, read lat p99"
    );
    assert_eq!(l.keep_metrics(&["bw".into()]), Ok(()));
    assert_eq!(l.keys(), &[("read 1MiB", "read bw")]);
}

#[test]
fn a_gate_with_no_shared_judged_figure_is_refused() {
    let a = run(1, "a", "sda", 40e6, None);
    let mut b = run(2, "b", "sda", 60e6, None);
    let runs = [a.clone(), b.clone()];
    assert_eq!(Lineup::new(&runs, None).check_gated(), Ok(()));
    b.figures[0].test = "read 4KiB".into();
    let runs = [a, b];
    let err = Lineup::new(&runs, None).check_gated().unwrap_err();
    assert_eq!(
        err,
        LineupError::NothingToJudge {
            ungated: vec![RunId(2)],
            baseline: RunId(1)
        }
    );
    assert!(err
        .to_string()
        .starts_with("--fail-if-worse has nothing to judge: #2 shares no bandwidth, IOPS, MFLOPS or latency figure of the same test with baseline #1;"));
}
