//! The charts for fixed runs: which appear, that they carry the stored
//! numbers, and their SVG (insta snapshots).

mod fixtures;

use iomark_model::disk::EngineKind;
use iomark_model::RunBody;
use iomark_report::{Chart, Report, ReportRun};

fn report(docs: Vec<iomark_model::RunDocument>, baseline: Option<&str>) -> Report {
    let runs = docs
        .into_iter()
        .enumerate()
        .map(|(i, d)| ReportRun::new(i + 1, d))
        .collect();
    Report::new(runs, baseline).unwrap()
}

fn ids(charts: &[Chart]) -> Vec<&str> {
    charts.iter().map(|c| c.id.as_str()).collect()
}

fn chart<'a>(charts: &'a [Chart], id: &str) -> &'a Chart {
    charts
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no chart {id} in {:?}", ids(charts)))
}

/// `data-value` attributes of the bars or points in an SVG, in order.
fn values(svg: &str) -> Vec<f64> {
    svg.split("data-value=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].parse().unwrap())
        .collect()
}

#[test]
fn cdm_bars_carry_the_stored_best_pass() {
    let usb2 = fixtures::cdm(&["usb2"], 40.0);
    let usb3 = fixtures::cdm(&["usb3"], 400.0);
    let r = report(vec![usb2.clone(), usb3], Some("1"));
    let charts = r.charts();
    assert_eq!(
        ids(&charts),
        [
            "cdm-read",
            "cdm-write",
            "cdm-iops",
            "cdm-latency",
            "cdm-relative"
        ]
    );
    let read = chart(&charts, "cdm-read");
    // SEQ1M usb2, SEQ1M usb3, RND4K usb2, RND4K usb3.
    assert_eq!(values(&read.svg), [40e6, 400e6, 10e6, 100e6]);
    assert!(read.svg.contains(">run 1 (usb2)</text>") && read.svg.contains(">run 2 (usb3)</text>"));
    assert!(read.svg.contains("MB/s"));
    let rel = chart(&charts, "cdm-relative");
    assert_eq!(values(&rel.svg), [10.0, 10.0, 10.0, 10.0]);
    insta::assert_snapshot!("cdm_read", read.svg);
    // CrystalDiskMark 8's other units: the stored IOPS and mean latency.
    let iops = chart(&charts, "cdm-iops");
    let stored_iops = |mb: f64| {
        [
            mb * 1e6 / 1048576.0,
            mb * 0.8e6 / 1048576.0,
            mb * 0.25e6 / 4096.0,
            mb * 0.2e6 / 4096.0,
        ]
    };
    let want: Vec<f64> = stored_iops(40.0)
        .into_iter()
        .zip(stored_iops(400.0))
        .flat_map(|(a, b)| [a, b])
        .collect();
    assert_eq!(values(&iops.svg), want);
    // SEQ1M at 38 IOPS beside RND4K at 24 000: a log axis.
    assert!(iops.svg.contains("log scale"), "{}", iops.svg);
    assert_eq!(values(&chart(&charts, "cdm-latency").svg), [900.0; 8]);
    insta::assert_snapshot!("cdm_iops", iops.svg);
}

#[test]
fn custom_and_fio_runs_get_job_time_and_latency_charts() {
    let r = report(
        vec![
            fixtures::custom(&["custom"], 100.0),
            fixtures::fio_import(&["fio"], 50.0),
        ],
        None,
    );
    let charts = r.charts();
    assert_eq!(
        ids(&charts),
        [
            "jobs-bw",
            "jobs-iops",
            "time-bw",
            "time-iops",
            "time-lat",
            "latency-percentiles",
            "latency-hist-1",
        ]
    );
    // Per job and direction, one bar per run that has it.
    let bw = chart(&charts, "jobs-bw");
    assert_eq!(values(&bw.svg), [100e6, 200e6, 50e6]);
    assert!(bw.svg.contains(r#"data-category="seq-read read""#));
    // The samples: 100 MB/s but for the middle second at half.
    // Of several runs, one chart: each line named by its run.
    let time = chart(&charts, "time-bw");
    let v = values(&time.svg);
    assert_eq!(v.len(), 5);
    assert!((v[2] / v[0] - 0.5).abs() < 1e-3, "{v:?}");
    assert!(time.svg.contains("run 1 (custom): custom"), "{}", time.svg);
    assert_eq!(values(&chart(&charts, "time-lat").svg)[2], 120_000.0);
    // Three curves of six percentiles, each ending at 4 ms on the 99.99 tick.
    let pct = chart(&charts, "latency-percentiles");
    assert_eq!(values(&pct.svg).len(), 18);
    assert!(pct.svg.contains(">99.99</text>") && pct.svg.contains("log scale"));
    assert!(pct.svg.contains("run 1 (custom): custom read"));
    // The histogram's buckets add up to the I/Os measured.
    let hist = chart(&charts, "latency-hist-1");
    let RunBody::Disk(d) = &r.runs()[0].doc.body else {
        unreachable!()
    };
    let ios = d.jobs[0].read.as_ref().unwrap().clat.count;
    assert_eq!(values(&hist.svg).iter().sum::<f64>(), ios as f64);
    // What the fio import lacks is said, not drawn empty.
    let notes = r.chart_notes();
    assert_eq!(
        notes,
        [
            "run 2 (fio): no per-interval samples stored (fio's JSON has none), so no time series",
            "run 2 (fio): no latency histogram bins stored (fio prints them only with --output-format=json+), so no histogram",
        ]
    );
    let html = String::from_utf8(r.html()).unwrap();
    assert!(html.contains("so no time series"));
    // The tests one run has and the other lacks, folded under their count.
    assert!(
        html.contains(
            "<details id=\"unmatched\"><summary>Tests without a counterpart in every run: 3</summary>"
        ),
        "{html}"
    );
    insta::assert_snapshot!("jobs_bw", bw.svg);
    insta::assert_snapshot!("time_bw", time.svg);
    insta::assert_snapshot!("latency_percentiles", pct.svg);
    insta::assert_snapshot!("latency_hist", hist.svg);
}

/// Issue 48: the relative chart pairs CrystalDiskMark tests as `results
/// compare` lines them up: a run at another test size has no test in
/// common with the baseline, and gets no ratio (it had 0.19x to 0.82x
/// where compare said "no test in common").
#[test]
fn cdm_runs_of_another_size_are_not_charted_against_each_other() {
    let big = fixtures::cdm(&["1g"], 40.0);
    let mut small = fixtures::cdm(&["256m"], 400.0);
    let RunBody::Disk(d) = &mut small.body else {
        unreachable!()
    };
    // The test size is the region the user chose: part of each test's name.
    d.target.size = iomark_model::units::Bytes(256 << 20);
    let charts = report(vec![big.clone(), small], Some("1")).charts();
    assert!(
        !ids(&charts).contains(&"cdm-relative"),
        "{:?}",
        ids(&charts)
    );
    // At the same size every test lines up, at the ratio of the stored
    // figures.
    let ten = fixtures::cdm(&["1g x10"], 400.0);
    let charts = report(vec![big, ten], Some("1")).charts();
    assert_eq!(values(&chart(&charts, "cdm-relative").svg), [10.0; 4]);
}

/// Issue 46: a run held to a memory limit is named with it on the page,
/// as `results compare` heads its column.
#[test]
fn a_run_under_a_memory_limit_is_named_with_it() {
    let free = fixtures::custom(&["a"], 100.0);
    let mut held = fixtures::custom(&["b"], 100.0);
    let RunBody::Disk(d) = &mut held.body else {
        unreachable!()
    };
    d.cgroup = Some(Box::new(iomark_model::cgroup::CgroupUsage {
        version: "v1".into(),
        limit: iomark_model::units::Bytes(64 << 20),
        peak: None,
        oom_kills: 0,
        limit_hits: None,
        major_faults: None,
    }));
    let r = report(vec![free, held], None);
    let names: Vec<&str> = r.runs().iter().map(|r| r.name.as_str()).collect();
    assert!(!names[0].contains("mem limit"), "{names:?}");
    assert!(names[1].ends_with("mem limit 64 MiB"), "{names:?}");
}

/// Issue 48: a test one run ran at another size says so where the page
/// lists the tests without a counterpart, by `results compare`'s rule.
#[test]
fn a_test_at_another_size_says_why_it_has_no_counterpart() {
    let a = fixtures::custom(&["a"], 100.0);
    let mut b = fixtures::custom(&["b"], 100.0);
    let RunBody::Disk(d) = &mut b.body else {
        unreachable!()
    };
    d.jobs[0].spec.size = iomark_model::units::Bytes(256 << 20);
    let html = String::from_utf8(report(vec![a, b], None).html()).unwrap();
    let unmatched = &html[html.find("<details id=\"unmatched\">").expect(&html)..];
    let unmatched = &unmatched[..unmatched.find("</details>").unwrap()];
    assert!(
        unmatched.contains(", which ran it with 1GiB, not 256MiB: randread")
            && unmatched.contains(", which ran it with 256MiB, not 1GiB: randread"),
        "{unmatched}"
    );
}

#[test]
fn several_runs_share_each_time_and_histogram_chart_and_one_run_keeps_its_own() {
    let two = report(
        vec![
            fixtures::custom(&["a"], 100.0),
            fixtures::custom(&["b"], 50.0),
        ],
        None,
    );
    let charts = two.charts();
    assert!(
        !ids(&charts)
            .iter()
            .any(|id| id.starts_with("time-bw-") || id.starts_with("latency-hist-1-")),
        "{:?}",
        ids(&charts)
    );
    // One axis for both runs' five seconds, each line named by its run.
    let time = chart(&charts, "time-bw");
    assert_eq!(values(&time.svg).len(), 10);
    assert!(
        time.svg.contains("run 1 (a): custom") && time.svg.contains("run 2 (b): custom"),
        "{}",
        time.svg
    );
    let ios: u64 = two
        .runs()
        .iter()
        .map(|r| match &r.doc.body {
            RunBody::Disk(d) => d.jobs[0].read.as_ref().unwrap().clat.count,
            _ => unreachable!(),
        })
        .sum();
    let hist = chart(&charts, "latency-hist-1");
    assert_eq!(values(&hist.svg).iter().sum::<f64>(), ios as f64);
    // A run alone keeps its own charts, named by it.
    let one = report(vec![fixtures::custom(&["a"], 100.0)], None);
    let charts = one.charts();
    for id in ["time-bw-1", "time-lat-1", "latency-hist-1-1"] {
        assert!(ids(&charts).contains(&id), "{id}: {:?}", ids(&charts));
    }
    // A run alone opens with its answer: each test's first figure, before
    // the tables; several runs open with their comparison instead.
    let html = String::from_utf8(one.html()).unwrap();
    let headline = html.find("<table id=\"headline\">").expect(&html);
    assert!(headline < html.find("<table id=\"runs\">").unwrap());
    assert!(
        html[headline..].contains("<td class=\"num headline\">100.00 MB/s</td>"),
        "{html}"
    );
    let html = String::from_utf8(two.html()).unwrap();
    assert!(!html.contains("id=\"headline\""));
}

#[test]
fn profile_charts_fit_their_runs() {
    let r = report(
        vec![
            fixtures::iometer(&["a"], 100.0),
            fixtures::gnome(&["hdd"]),
            fixtures::sweep(&["hdd"], 100.0, &[EngineKind::Psync]),
            fixtures::sweep(&["ssd"], 1000.0, &[EngineKind::Psync, EngineKind::MmapSync]),
        ],
        Some("3"),
    );
    let charts = r.charts();
    assert_eq!(
        ids(&charts),
        [
            "iometer-4-kib-random-read",
            "gnome-rate",
            "gnome-access",
            "sweep-read",
            "sweep-randread",
            "sweep-relative-read",
            "sweep-relative-randread",
        ]
    );
    let io = chart(&charts, "iometer-4-kib-random-read");
    assert_eq!(values(&io.svg), [100e6, 200e6, 300e6, 400e6]);
    // The first access sample has no distance and is not plotted.
    assert_eq!(values(&chart(&charts, "gnome-access").svg).len(), 4);
    let rel = chart(&charts, "sweep-relative-read");
    // ssd psync over hdd psync; ssd mmap-sync has no baseline (hdd ran no
    // mmap-sync, and another engine is another test, as compare says).
    assert_eq!(values(&rel.svg), [10.0, 10.0, 10.0]);
    insta::assert_snapshot!("sweep_read", chart(&charts, "sweep-read").svg);
    insta::assert_snapshot!("gnome_rate", chart(&charts, "gnome-rate").svg);
}

#[test]
fn net_and_mem_charts() {
    let r = report(
        vec![
            fixtures::net(&["lo"], 900.0),
            fixtures::stream(&["heap"], 10_000.0, Some(1.0)),
            fixtures::stream(&["mmap"], 5_000.0, Some(2.5)),
            fixtures::himeno(&["himeno"], 1500.0),
        ],
        None,
    );
    let charts = r.charts();
    assert_eq!(
        ids(&charts),
        [
            "net-bitrate",
            "net-rtt",
            "net-cpu",
            "mem-stream",
            "mem-mflops",
            "mem-relative"
        ]
    );
    assert_eq!(
        values(&chart(&charts, "net-bitrate").svg),
        [900e6, 910e6, 920e6]
    );
    // The fixture's intervals: 0.20, 0.25 and 0.30 ms.
    assert_eq!(values(&chart(&charts, "net-rtt").svg), [0.2, 0.25, 0.3]);
    // This host's 20-22 %, then the peer's 30-32 %.
    assert_eq!(
        values(&chart(&charts, "net-cpu").svg),
        [20.0, 21.0, 22.0, 30.0, 31.0, 32.0]
    );
    assert_eq!(values(&chart(&charts, "mem-relative").svg), [1.0, 2.5, 3.5]);
    assert_eq!(values(&chart(&charts, "mem-mflops").svg), [1500.0]);
    insta::assert_snapshot!("net_bitrate", chart(&charts, "net-bitrate").svg);
    insta::assert_snapshot!("mem_stream", chart(&charts, "mem-stream").svg);
}

#[test]
fn a_run_across_mpi_ranks_gets_a_bar_per_rank_naming_the_slowest_and_fastest() {
    let r = report(
        vec![
            fixtures::cluster(&["mpi"], &[120.0, 150.0, 90.0]),
            fixtures::custom(&["alone"], 100.0),
        ],
        None,
    );
    let charts = r.charts();
    // One per-rank chart, for the run that has ranks.
    let ranks: Vec<&str> = ids(&charts)
        .into_iter()
        .filter(|id| id.starts_with("ranks-"))
        .collect();
    assert_eq!(ranks, ["ranks-1"]);
    let c = chart(&charts, "ranks-1");
    // Write only (nothing was read): the stored rates, in rank order.
    assert_eq!(values(&c.svg), [120e6, 150e6, 90e6]);
    assert!(
        c.title.contains("slowest rank 2, fastest rank 1"),
        "{}",
        c.title
    );
    for k in 0..3 {
        assert!(c.svg.contains(&format!(">rank {k}</text>")), "rank {k}");
    }
    assert!(c.svg.contains(">write</text>") && !c.svg.contains(">read</text>"));
    let html = String::from_utf8(r.html()).unwrap();
    assert!(html.contains("id=\"ranks-1\""));
    insta::assert_snapshot!("ranks_bw", c.svg);
}

#[test]
fn html_is_one_file_with_tables_and_no_scripts() {
    let r = report(
        vec![fixtures::cdm(&["usb2"], 40.0), fixtures::cdm(&[], 400.0)],
        None,
    );
    let html = String::from_utf8(r.html()).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for forbidden in ["<script", "http://", "https://", "@import", "<link", "url("] {
        let outside_svg_ns = html.replace("http://www.w3.org/2000/svg", "");
        assert!(
            !outside_svg_ns.contains(forbidden),
            "page contains {forbidden}"
        );
    }
    assert!(html.contains("USB 2.0: 53 MB/s hard, 42 MB/s typical"));
    assert!(html.contains("USB 3.0 (500 MB/s)"));
    assert!(html.contains("passes ranged 10% apart"));
    // The unlabelled run is named by id and date.
    assert!(
        html.contains("run 2 (2025-11-21 04:40 UTC)"),
        "{}",
        &html[..600]
    );
    assert_eq!(html.matches("<figure id=\"chart-").count(), 4);
}

#[test]
fn bad_baseline_and_empty_reports_are_refused() {
    let runs = vec![ReportRun::new(1, fixtures::cdm(&[], 1.0))];
    let err = Report::new(runs, Some("9")).unwrap_err();
    assert!(err.to_string().contains("add it to the run IDs"));
    assert!(Report::new(vec![], None).is_err());
}

#[test]
fn pngs_have_the_chart_size() {
    let r = report(vec![fixtures::gnome(&["hdd"])], None);
    let pngs = match r.pngs(1) {
        Ok(p) => p,
        Err(e) if e.to_string().contains("no fonts") => {
            iomark_testrig::skipped(&e.to_string());
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert_eq!(pngs.len(), 2);
    for (name, bytes) in pngs {
        assert!(name.ends_with(".png"));
        let dec = png::Decoder::new(std::io::Cursor::new(bytes));
        let reader = dec.read_info().unwrap();
        let info = reader.info();
        assert_eq!(
            (info.width, info.height),
            (iomark_report::svg::WIDTH, iomark_report::svg::HEIGHT)
        );
    }
}

#[test]
fn runs_with_the_same_labels_are_told_apart() {
    let r = report(
        vec![fixtures::cdm(&["t7"], 400.0), fixtures::cdm(&["t7"], 300.0)],
        None,
    );
    let names: Vec<&str> = r.runs().iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["run 1 (t7)", "run 2 (t7)"]);
    assert_eq!(r.title(), "iomark report: run 1 (t7) vs run 2 (t7)");
}

#[test]
fn names_carry_the_parameters_that_differ_between_runs() {
    let sized = |label: &str, size: u64| {
        let mut d = fixtures::cdm(&[label], 400.0);
        let RunBody::Disk(disk) = &mut d.body else {
            unreachable!()
        };
        disk.target.size = iomark_model::Bytes(size);
        d
    };
    let r = report(
        vec![
            sized("usb", 64 << 20),
            sized("usb", 96 << 20),
            fixtures::net(&["lan"], 900.0),
        ],
        None,
    );
    let names: Vec<&str> = r.runs().iter().map(|r| r.name.as_str()).collect();
    // The profile is shared and the network run alone in its family.
    assert_eq!(
        names,
        ["run 1 (usb) 64 MiB", "run 2 (usb) 96 MiB", "run 3 (lan)"]
    );
    let charts = r.charts();
    let read = chart(&charts, "cdm-read");
    assert!(
        read.svg.contains(">run 2 (usb) 96 MiB</text>"),
        "{}",
        read.svg
    );
}

/// `(run, fill)` of every bar in an SVG, each pair once; the run is the
/// series name up to its labels (`run 1 (a)`).
fn bar_colours(svg: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for tag in svg
        .split('<')
        .filter(|t| t.starts_with("rect class=\"bar\""))
    {
        let attr = |name: &str| {
            let v = tag.split(&format!(" {name}=\"")).nth(1).unwrap();
            v[..v.find('"').unwrap()].to_string()
        };
        let series = attr("data-series");
        let run = series[..=series.find(')').unwrap()].to_string();
        let pair = (run, attr("fill"));
        if !out.contains(&pair) {
            out.push(pair);
        }
    }
    out
}

#[test]
fn a_run_keeps_its_colour_in_every_chart() {
    // Runs 1 and 3 are on both charts, run 2 (Himeno) only on the second:
    // by position within each chart run 3 would change colour.
    let r = report(
        vec![
            fixtures::stream(&["a"], 1000.0, Some(2.0)),
            fixtures::himeno(&["b"], 100.0),
            fixtures::stream(&["c"], 900.0, Some(1.5)),
        ],
        None,
    );
    let charts = r.charts();
    let stream = bar_colours(&chart(&charts, "mem-stream").svg);
    let relative = bar_colours(&chart(&charts, "mem-relative").svg);
    let colour = |i: usize| iomark_report::svg::colour(i).to_string();
    assert_eq!(
        stream,
        [
            ("run 1 (a)".to_string(), colour(0)),
            ("run 3 (c)".to_string(), colour(2))
        ]
    );
    assert_eq!(
        relative,
        [
            ("run 1 (a)".to_string(), colour(0)),
            ("run 2 (b)".to_string(), colour(1)),
            ("run 3 (c)".to_string(), colour(2))
        ]
    );
    for (name, fill) in &stream {
        assert!(relative.contains(&(name.clone(), fill.clone())), "{name}");
    }
}

#[test]
fn a_mem_sweep_chart_names_its_run() {
    let r = report(
        vec![
            fixtures::stream(&["plain"], 900.0, None),
            fixtures::mem_sweep(&["paper"]),
        ],
        None,
    );
    let charts = r.charts();
    let sweep = chart(&charts, "mem-sweep-2");
    assert!(sweep.title.starts_with("run 2 (paper)"), "{}", sweep.title);
}

/// Twenty runs of two curves each: the percentile chart draws every run's
/// first curve (none is left out for coming late), and its title says
/// how many of the curves it draws.
#[test]
fn the_percentile_chart_of_many_runs_has_each_runs_first_curve_and_says_what_it_left_out() {
    let docs = (0..20)
        .map(|k| fixtures::fio_import(&[&format!("r{k}")], 100.0 + k as f64))
        .collect();
    let charts = report(docs, None).charts();
    let pct = chart(&charts, "latency-percentiles");
    for k in 0..20 {
        let name = format!("run {} (r{k}): ", k + 1);
        assert!(pct.svg.contains(&name), "no curve of {name}");
    }
    assert!(pct.title.contains("20 of 40 curves"), "{}", pct.title);
    // Few runs: every curve, and the plain title.
    let few = (0..3)
        .map(|k| fixtures::fio_import(&[&format!("r{k}")], 100.0))
        .collect();
    let charts = report(few, None).charts();
    let pct = chart(&charts, "latency-percentiles");
    assert_eq!(pct.title, "Completion latency by percentile");
    assert_eq!(
        values(&pct.svg).len(),
        6 * 6,
        "six curves of six percentiles"
    );
}
