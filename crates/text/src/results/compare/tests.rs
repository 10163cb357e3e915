//! The comparison table: escaping, per-test baselines, width, warnings.

use super::*;
use iomark_model::figure::{Figure, FigureUnit};
use iomark_model::stored::RunSummary;
use iomark_model::stored::{RunId, StoredWarning};
use iomark_model::{Warning, WarningKind};
use iomark_stats::lineup::group_by_label;

/// A stored run with one bandwidth figure of test `test`, labelled
/// `label`, measured through `device`.
fn stored(id: i64, label: &str, device: &str, test: &str, value: f64) -> StoredRun {
    StoredRun {
        summary: RunSummary {
            warning_count: 1,
            ..RunSummary::example(id, label, device)
        },
        figures: vec![Figure {
            test: test.into(),
            metric: "read bw".into(),
            unit: FigureUnit::BytesPerSec,
            value,
            spread: None,
            noise: None,
            sampled: None,
        }],
        warnings: vec![StoredWarning {
            scope: "job|<b>".into(),
            warning: Warning::new(WarningKind::Other, "slow <script>x</script> | y"),
        }],
        document_json: String::new(),
    }
}

#[test]
fn markdown_cells_from_outside_cannot_break_the_table_or_carry_html() {
    let evil = "a|b<img src=x onerror=alert(1)>\\\n[l](javascript:x)";
    let runs = [
        stored(1, evil, "dev|ice<i>", "read | 1MiB", 40e6),
        stored(2, "ok", "sdb", "read | 1MiB", 80e6),
    ];
    let md = comparison(&Lineup::new(&runs, None), TableStyle::Markdown, View::ALL);
    let table: Vec<&str> = md.lines().take_while(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 3, "{md}");
    // Every row has as many cells as the header: 2 + one per run.
    for row in &table {
        let bars = row
            .char_indices()
            .filter(|&(i, c)| {
                c == '|' && row[..i].chars().rev().take_while(|&b| b == '\\').count() % 2 == 0
            })
            .count();
        assert_eq!(bars, 5, "{row}\n{md}");
    }
    assert!(!md.contains('<') && !md.contains('>'), "{md}");
    assert!(
        md.contains("a\\|b&lt;img src=x onerror=alert(1)&gt;\\\\\\\\n\\[l\\](javascript:x)"),
        "{md}"
    );
    assert!(md.contains("dev\\|ice&lt;i&gt;"), "{md}");
    assert!(md.contains("| read \\| 1MiB"), "{md}");
    assert!(
        md.contains("#1 job\\|&lt;b&gt;: slow &lt;script&gt;x&lt;/script&gt; \\| y"),
        "{md}"
    );
    // The terminal table shows the same text unescaped, controls aside.
    let term = comparison(&Lineup::new(&runs, None), TableStyle::Terminal, View::ALL);
    assert!(term.contains("dev|ice<i>"), "{term}");
}

/// A run labelled `label` on `device` with one read bw figure per
/// `(test, value)`, and no warnings.
fn run_of(id: i64, label: &str, device: &str, figures: &[(&str, f64)]) -> StoredRun {
    let mut r = stored(id, label, device, "", 0.0);
    r.warnings.clear();
    r.figures = figures
        .iter()
        .map(|&(test, value)| Figure {
            test: test.into(),
            metric: "read bw".into(),
            unit: FigureUnit::BytesPerSec,
            value,
            spread: None,
            noise: None,
            sampled: None,
        })
        .collect();
    r
}

#[test]
fn a_baseline_label_pairs_each_run_with_the_labelled_run_of_its_device_and_test() {
    // The USB study: two test sizes on two ports, and a second stick.
    let (small, large) = ("read 1MiB, 100MiB", "read 1MiB, 1000MiB");
    let mut runs = vec![
        run_of(1, "usb3", "stick A", &[(small, 40e6)]),
        run_of(2, "usb2", "stick A", &[(small, 30e6)]),
        run_of(3, "usb3", "stick A", &[(large, 42e6)]),
        run_of(4, "usb2", "stick A", &[(large, 32e6)]),
        run_of(5, "usb2", "stick B", &[(small, 20e6)]),
        run_of(6, "usb3", "stick B", &[(small, 25e6)]),
        // No usb2 run has this size.
        run_of(7, "usb3", "stick B", &[("read 1MiB, 4MiB", 1e6)]),
    ];
    group_by_label(&mut runs, "usb2");
    let order: Vec<i64> = runs.iter().map(|r| r.summary.id.0).collect();
    assert_eq!(order, [2, 4, 5, 1, 3, 6, 7]);
    let lineup = Lineup::against(&runs, Baseline::Label("usb2"), None);
    let pairs: Vec<(i64, i64, &str)> = lineup
        .matched()
        .iter()
        .map(|m| (m.run.0, m.baseline_run.0, m.candidate.test.as_str()))
        .collect();
    assert_eq!(pairs, [(1, 2, small), (6, 5, small), (3, 4, large)]);
    assert_eq!(lineup.ungated(), [RunId(7)]);
    let text = comparison(&lineup, TableStyle::Terminal, View::ALL);
    // Both sizes have a ratio and a difference.
    assert!(text.contains("(+10.00 MB/s)"), "{text}");
    assert!(text.contains("1.31x"), "{text}");
    assert!(
        text.contains("no run labelled usb2 has these tests of #7: read 1MiB, 4MiB"),
        "{text}"
    );
    assert!(
        text.replace('\n', " ")
            .contains("#1 against #2; #3 against #4; #6 against #5"),
        "{text}"
    );
    let doc = serde_json::to_value(crate::json::comparison(&lineup)).unwrap();
    assert_eq!(doc["baseline_label"], "usb2");
    assert_eq!(doc["baseline"], serde_json::Value::Null);
    assert_eq!(doc["figures"][0]["baseline_run"], 2);
    assert_eq!(doc["figures"][0]["difference"], 10e6);
    assert_eq!(doc["without_baseline"][0]["run"], 7);
    assert_eq!(doc["runs"][0]["is_baseline"], true);
}

#[test]
fn runs_with_no_test_in_common_say_so_first_and_what_differs() {
    let runs = [
        stored(1, "qd1", "vda", "randread 64KiB QD1 T1, io_uring", 40e6),
        stored(2, "qd8", "vda", "randread 64KiB QD8 T1, io_uring", 80e6),
    ];
    let lineup = Lineup::new(&runs, None);
    let term = comparison(&lineup, TableStyle::Terminal, View::ALL);
    assert!(
        term.starts_with(
            "#2 against #1: no test in common (#2 ran QD8 where #1 ran QD1); nothing compared\n"
        ),
        "{term}"
    );
    assert_eq!(
        crate::results::verdicts(&lineup),
        ["#2 against #1: no test in common (#2 ran QD8 where #1 ran QD1); nothing compared"]
    );
}

#[test]
fn a_wide_comparison_is_split_into_tables_that_fit_100_columns() {
    let test = "randread 4KiB QD32 T1, io_uring, direct, random data";
    let runs: Vec<StoredRun> = (1..=7)
        .map(|i| {
            run_of(
                i,
                &format!("port-{i}"),
                "Samsung T7, USB 3.2 10 Gb/s, uas",
                &[(test, 1e6 * i as f64)],
            )
        })
        .collect();
    let text = comparison(&Lineup::new(&runs, None), TableStyle::Terminal, View::ALL);
    for line in text.lines().take_while(|l| !l.starts_with("ratios are")) {
        assert!(
            line.chars().count() <= 100,
            "{} wide: {line}\n{text}",
            line.chars().count()
        );
    }
    // Several tables, some holding several runs; every figure with its ratio.
    let tables = text.matches('┌').count();
    assert!(tables > 1 && tables < 7, "{text}");
    for i in 1..=7 {
        assert!(text.contains(&format!("┆ #{i} ")), "#{i}: {text}");
    }
    assert!(text.contains("7.00x"), "{text}");
}

/// Issue 48: compare lays out as many device columns as the terminal
/// holds: seven runs that need several tables at 80 columns share one at
/// 220 (it printed the same split whatever the width), every line within
/// the width.
#[test]
fn a_wide_terminal_holds_every_run_in_one_table() {
    let test = "randread 4KiB QD32 T1, io_uring, direct, random data";
    let runs: Vec<StoredRun> = (1..=7)
        .map(|i| run_of(i, &format!("port-{i}"), "sdb", &[(test, 1e6 * i as f64)]))
        .collect();
    let at = |width: usize| {
        let view = View {
            width,
            verbose: true,
        };
        let text = comparison(&Lineup::new(&runs, None), TableStyle::Terminal, view);
        for line in text.lines() {
            assert!(line.chars().count() <= width, "{line}\n{text}");
        }
        for i in 1..=7 {
            assert!(text.contains(&format!("┆ #{i} ")), "#{i}: {text}");
        }
        text.matches('┌').count()
    };
    assert!(at(80) > 1);
    assert_eq!(at(220), 1);
}

#[test]
fn repeated_warnings_are_one_line_per_kind_naming_the_runs_and_tests() {
    let mut a = run_of(1, "a", "sdb", &[("t", 1.0)]);
    let mut b = run_of(2, "b", "sdb", &[("t", 1.0)]);
    let cache = |scope: &str| StoredWarning {
        scope: scope.into(),
        warning: Warning::new(
            WarningKind::CacheSuspected,
            format!("{scope}: reads sped up"),
        ),
    };
    a.warnings = vec![
        cache("SEQ1M read"),
        cache("RND4K read"),
        cache("SEQ1M read"),
    ];
    b.warnings = vec![
        cache("SEQ1M read"),
        StoredWarning {
            scope: String::new(),
            warning: Warning::new(WarningKind::Shortened, "--quick: 1 pass"),
        },
    ];
    let lines = warning_lines(&[a, b], TableStyle::Terminal, false);
    assert_eq!(
        lines,
        [
            "warning: cache suspected ×4: #1 (SEQ1M read; RND4K read), #2 (SEQ1M read); the first: #1 SEQ1M read: SEQ1M read: reads sped up",
            "warning: #2 --quick: 1 pass",
        ]
    );
}

/// A MacBench run storing `kb` KB/s on its sequential read.
pub(in crate::results) fn macbench(id: i64, label: &str, kb: f64) -> StoredRun {
    use iomark_model::profile::{MacbenchResult, MacbenchTest, ProfileResult};
    use iomark_model::units::{BytesPerSec, Nanos};
    let doc = crate::profile::tests::doc(
        ProfileResult::Macbench(MacbenchResult {
            runtime: Nanos::from_secs(1),
            tests: vec![MacbenchTest {
                name: "Sequential read".into(),
                bw: BytesPerSec(kb * 1e3),
                job: 0,
            }],
        }),
        RunStatus::Complete,
        vec![],
    );
    StoredRun {
        document_json: serde_json::to_string(&doc).unwrap(),
        ..stored(id, label, "sdc", "read 512KiB", kb * 1e3)
    }
}

#[test]
fn rates_are_shown_in_the_unit_the_run_printed() {
    let runs = [macbench(1, "disk", 5243.0), macbench(2, "emu", 10486.0)];
    let term = comparison(&Lineup::new(&runs, None), TableStyle::Terminal, View::ALL);
    assert!(term.contains("5243 KB/s"), "{term}");
    assert!(term.contains("10486 KB/s 2.00x better"), "{term}");
    assert!(term.contains("(+5243 KB/s)"), "{term}");
    assert!(!term.contains("MB/s"), "{term}");
    let md = comparison(&Lineup::new(&runs, None), TableStyle::Markdown, View::ALL);
    assert!(md.contains("10486 KB/s 2.00x better (+5243 KB/s)"), "{md}");
    // A run whose document is not there (an old store) keeps MB/s.
    let plain = [
        stored(1, "a", "sdb", "read 512KiB", 5.243e6),
        stored(2, "b", "sdb", "read 512KiB", 10.486e6),
    ];
    let term = comparison(&Lineup::new(&plain, None), TableStyle::Terminal, View::ALL);
    assert!(term.contains("10.49 MB/s 2.00x better"), "{term}");
    // The JSON keeps base units and names the printed unit.
    let json = serde_json::to_value(crate::json::comparison(&Lineup::new(&runs, None))).unwrap();
    let row = &json["figures"][0];
    assert_eq!(row["unit"], "B/s");
    assert_eq!(row["printed_unit"], "KB/s");
    assert_eq!(row["candidate"], 10486e3);
    // The gate's line names both figures as printed.
    let slower_second = [runs[1].clone(), runs[0].clone()];
    let gated = Lineup::new(&slower_second, "10%".parse().ok());
    let lines = regression_lines(&gated);
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].contains("5243 KB/s against 10486 KB/s"),
        "{}",
        lines[0]
    );
    let threshold = "10%".parse().unwrap();
    let report = gate_report(&gated, threshold).unwrap();
    assert_eq!(report.regressed, 1);
    assert_eq!(report.lines[0], lines[0]);
    assert_eq!(report.lines[1], "1 figure regressed by more than 10%");
    let report = gate_report(&Lineup::new(&runs, Some(threshold)), threshold).unwrap();
    assert_eq!(report.regressed, 0);
    assert_eq!(
        report.lines,
        ["no figure is worse than the baseline by more than 10% outside the noise"]
    );
}

/// Issue 46: a figure whose runs stored neither samples nor bands (an
/// import without its intervals) 3% worse is not a pass: the gate cannot
/// tell, and says what is missing rather than to run --repeat.
#[test]
fn a_gate_on_figures_without_samples_cannot_tell_and_says_why() {
    let runs = [
        stored(1, "a", "sdb", "read 1MiB", 100e6),
        stored(2, "b", "sdb", "read 1MiB", 97e6),
    ];
    let threshold = "5%".parse().unwrap();
    let report = gate_report(&Lineup::new(&runs, Some(threshold)), threshold).unwrap();
    assert_eq!((report.regressed, report.undecided), (0, 1));
    let last = report.lines.last().unwrap();
    assert!(
        last.starts_with(
            "cannot tell whether 1 figure is worse by more than 5%: no samples are stored"
        ),
        "{last}"
    );
    assert!(!last.contains("--repeat"), "{last}");
}

#[test]
fn a_devices_runs_of_one_label_share_a_column_when_they_share_no_row() {
    let mut runs = vec![
        stored(1, "disk", "sdc", "GNOME transfer rate", 5e6),
        stored(2, "disk", "sdc", "MacBench sequential read", 4e6),
        stored(3, "emulator", "sdd", "GNOME transfer rate", 10e6),
        stored(4, "emulator", "sdd", "MacBench sequential read", 2e6),
        // A repeat of run 3's test: a column of its own.
        stored(5, "emulator", "sdd", "GNOME transfer rate", 11e6),
    ];
    group_by_label(&mut runs, "disk");
    let lineup = Lineup::against(&runs, Baseline::Label("disk"), None);
    assert_eq!(lineup.columns(), vec![vec![0, 1], vec![2, 3], vec![4]]);
    let term = comparison(&lineup, TableStyle::Terminal, View::ALL);
    assert!(
        term.lines()
            .any(|l| l.contains("#1 #2") && l.contains("#3 #4")),
        "{term}"
    );
    // The verdict first, a line per run that has a baseline.
    assert!(
        term.starts_with(
            "#3 against #1: 1 better\n#4 against #2: 1 worse, most lost: \
             MacBench sequential read read bw 0.50x\n#5 against #1: 1 better\n"
        ),
        "{term}"
    );
    // Every emulator row has its ratio against the disk's run of that test.
    // (Stacked at 100 columns: the value, then its judgement.)
    for (value, judged) in [
        ("10.00 MB/s", "2.00x better"),
        ("2.00 MB/s", "0.50x worse"),
        ("11.00 MB/s", "2.20x better"),
    ] {
        let lines: Vec<&str> = term.lines().collect();
        let at = lines.iter().position(|l| l.contains(&format!(" {value} ")));
        assert!(
            at.is_some_and(|at| lines[at + 1].contains(judged)),
            "{value} {judged}: {term}"
        );
    }
    // Against the first run, a column per run.
    let first = Lineup::new(&runs, None);
    assert_eq!(first.columns().len(), 5);
}

#[test]
fn a_run_under_a_memory_limit_says_so_in_its_column() {
    use iomark_model::cgroup::CgroupUsage;
    let mut run = macbench(1, "mmap", 5243.0);
    let mut doc: iomark_model::RunDocument = serde_json::from_str(&run.document_json).unwrap();
    if let RunBody::Disk(d) = &mut doc.body {
        d.cgroup = Some(Box::new(CgroupUsage {
            version: "v1".into(),
            limit: iomark_model::Bytes(32 << 20),
            peak: None,
            oom_kills: 0,
            limit_hits: None,
            major_faults: None,
        }));
    }
    run.document_json = serde_json::to_string(&doc).unwrap();
    let h = run_header(&run, TableStyle::Terminal);
    assert!(h.ends_with("\nmem limit 32 MiB"), "{h}");
    let free = run_header(&macbench(2, "mmap", 5243.0), TableStyle::Terminal);
    assert!(!free.contains("mem limit"), "{free}");
}

#[test]
fn at_80_columns_tests_have_their_printed_names_and_cpu_rows_wait_for_verbose() {
    // A job that printed its own name, stored under its spec's, as a run
    // stores it; the second run reads twice as fast.
    let run = |id: i64, scale: f64| {
        let mut doc = iomark_stats::example::mixed_randrw_run();
        let RunBody::Disk(d) = &mut doc.body else {
            unreachable!()
        };
        d.jobs[0].spec.name = "Mixed 4K".into();
        let mut figures = doc.body.figures();
        for f in figures.iter_mut().filter(|f| f.metric == "read bw") {
            f.value *= scale;
        }
        StoredRun {
            figures,
            document_json: serde_json::to_string(&doc).unwrap(),
            ..stored(id, "a", "sdc", "", 0.0)
        }
    };
    let runs = [run(1, 1.0), run(2, 2.0)];
    assert!(runs[0].figures.iter().any(|f| f.metric.starts_with("cpu")));
    let lineup = Lineup::new(&runs, None);
    let view = View {
        width: 80,
        verbose: false,
    };
    let term = comparison(&lineup, TableStyle::Terminal, view);
    for line in term.lines() {
        assert!(line.chars().count() <= 80, "{line}\n{term}");
    }
    assert!(term.starts_with("#2 against #1: "), "{term}");
    assert!(term.contains("│ Mixed 4K "), "{term}");
    assert!(!term.contains("randrw"), "{term}");
    assert!(!term.contains("┆ cpu"), "{term}");
    assert!(term.contains(" rows of CPU figures with -v"), "{term}");
    let all = comparison(
        &lineup,
        TableStyle::Terminal,
        View {
            verbose: true,
            ..view
        },
    );
    assert!(
        all.contains("randrw") && all.contains("(Mixed 4K)"),
        "{all}"
    );
    assert!(all.contains("┆ cpu"), "{all}");
}

#[test]
fn a_gate_against_runs_over_time_names_the_pool_and_what_narrows_it() {
    let test = "read 1MiB, 100MiB";
    let mut runs: Vec<StoredRun> = [100e6, 104e6, 96e6, 102e6, 98e6]
        .iter()
        .enumerate()
        .map(|(k, &v)| run_of(k as i64 + 1, "main", "stick A", &[(test, v)]))
        .collect();
    runs.push(run_of(6, "ci", "stick A", &[(test, 100e6)]));
    runs.push(run_of(7, "ci", "stick A", &[(test, 85e6)]));
    let threshold: WorseThreshold = "5%".parse().unwrap();
    let lineup = Lineup::against(&runs, Baseline::Label("main"), Some(threshold));
    let report = gate_report(&lineup, threshold).unwrap();
    assert_eq!(report.regressed, 1, "{:?}", report.lines);
    assert!(
        report.lines[0].starts_with(
            "regressed: #7 read 1MiB, 100MiB read bw: 85.00 MB/s against 100.00 MB/s, the \
             mean of 5 runs from #1 (0.85x, 15.0% worse"
        ),
        "{:?}",
        report.lines
    );
    // Without the loss, the pool's own 3% spread cannot rule out 5%.
    let lineup = Lineup::against(&runs[..6], Baseline::Label("main"), Some(threshold));
    let report = gate_report(&lineup, threshold).unwrap();
    assert_eq!((report.regressed, report.undecided), (0, 1));
    assert!(
        report.lines.last().unwrap().contains(
            "the 5 baseline runs pooled differ from each other too much to show or rule out \
             such a loss; more runs labelled as the baseline narrow that"
        ),
        "{:?}",
        report.lines
    );
    let doc = serde_json::to_value(crate::json::comparison(&lineup)).unwrap();
    assert_eq!(doc["figures"][0]["baseline_pooled"], 5);
    assert_eq!(doc["figures"][0]["baseline"], 100e6);
}
