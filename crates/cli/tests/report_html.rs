//! `iomark report` end to end: runs go into a temporary SQLite store (one
//! measured with the real binary, the others fixed documents imported as
//! JSON), the report is written as HTML and PNG, and the page is opened in
//! headless Chromium: every chart is there, its numbers are the stored
//! ones, nothing fails in the console, and the screenshot is not blank.

#[path = "../../report/tests/fixtures/mod.rs"]
pub(crate) mod fixtures;

use iomark_model::disk::EngineKind;
use iomark_model::profile::ProfileResult;
use iomark_model::RunBody;
use iomark_store::RunId;

use crate::common::*;

/// Every `data-value` in `html` inside elements whose tag text contains `marker`.
fn attr_values(html: &str, marker: &str) -> Vec<f64> {
    html.split('<')
        .filter(|tag| tag.contains(marker))
        .filter_map(|tag| {
            let v = tag.split("data-value=\"").nth(1)?;
            Some(v[..v.find('"')?].parse().unwrap())
        })
        .collect()
}

/// The part of the page inside the SVG with this id.
fn svg_of<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("chart {id} missing from the page"));
    let end = html[start..].find("</svg>").unwrap() + start;
    &html[start..end]
}

#[test]
fn report_shows_the_stored_runs_in_chromium() {
    let scratch = ScratchDb::named("results.db");
    let dir = scratch.dir.path();
    let db = scratch.path();
    let dbs = scratch.db();

    // A real CrystalDiskMark run, kept short.
    let target = dir.join("target");
    std::fs::create_dir(&target).unwrap();
    let measured = iomark_ok(&[
        "disk",
        target.to_str().unwrap(),
        "--profile",
        "cdm",
        "--size",
        "8M",
        "--engine",
        "psync",
        "--passes",
        "2",
        "--pass-time",
        "100ms",
        "--interval",
        "0s",
        "--json",
    ]);
    let measured_file = dir.join("measured.json");
    std::fs::write(&measured_file, &measured.stdout).unwrap();
    iomark_ok(&[
        "results",
        "import",
        measured_file.to_str().unwrap(),
        "--label",
        "here",
        "--db",
        dbs,
    ]);
    import_doc(db, dir, "usb2", &fixtures::cdm(&["usb2"], 40.0));
    import_doc(
        db,
        dir,
        "sweep-hdd",
        &fixtures::sweep(&["hdd"], 100.0, &[EngineKind::Psync]),
    );
    import_doc(
        db,
        dir,
        "sweep-ssd",
        &fixtures::sweep(&["ssd"], 900.0, &[EngineKind::Psync]),
    );
    import_doc(db, dir, "gnome", &fixtures::gnome(&["gnome"]));
    import_doc(db, dir, "iometer", &fixtures::iometer(&["qd"], 50.0));
    import_doc(db, dir, "net", &fixtures::net(&["lo"], 900.0));
    import_doc(
        db,
        dir,
        "stream",
        &fixtures::stream(&["mmap"], 5000.0, Some(2.5)),
    );
    // Run 9: a real custom run, two seconds of one-second samples.
    let custom = iomark_ok(&[
        "disk",
        target.to_str().unwrap(),
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--size",
        "8M",
        "--runtime",
        "2s",
        "--engine",
        "psync",
        "--json",
    ]);
    let custom_file = dir.join("custom.json");
    std::fs::write(&custom_file, &custom.stdout).unwrap();
    iomark_ok(&[
        "results",
        "import",
        custom_file.to_str().unwrap(),
        "--label",
        "custom",
        "--db",
        dbs,
    ]);
    // Run 10: fio's own json+, through the fio importer.
    import_fio_json_plus(dir, dbs);

    let html = dir.join("report.html");
    let pngs = dir.join("png");
    let out = iomark_ok(&[
        "report",
        "1",
        "2",
        "4",
        "--baseline",
        "3",
        "--label",
        "gnome",
        "--label",
        "qd",
        "--label",
        "lo",
        "--label",
        "mmap",
        "--label",
        "custom",
        "--label",
        "fio",
        "--db",
        dbs,
        "--html",
        html.to_str().unwrap(),
        "--png",
        pngs.to_str().unwrap(),
    ]);
    assert!(stderr(&out).contains("report.html"));

    let expected = [
        "cdm-read",
        "cdm-write",
        "cdm-iops",
        "cdm-latency",
        "iometer-4-kib-random-read",
        "gnome-rate",
        "gnome-access",
        "sweep-read",
        "sweep-randread",
        "sweep-relative-read",
        "sweep-relative-randread",
        "jobs-bw",
        "jobs-iops",
        "time-bw",
        "time-iops",
        "time-lat",
        "latency-percentiles",
        "latency-hist-1",
        "net-bitrate",
        "mem-stream",
        "mem-relative",
    ];

    // PNG files: one per chart, decodable, at twice the chart's width.
    for id in expected {
        let f = std::fs::File::open(pngs.join(format!("{id}.png")))
            .unwrap_or_else(|e| panic!("{id}.png: {e}"));
        let reader = png::Decoder::new(std::io::BufReader::new(f))
            .read_info()
            .unwrap();
        // Taller where the legend went under the plot.
        let (w, h) = (reader.info().width, reader.info().height);
        assert!(w == 1600 && h >= 840, "{id}: {w} x {h}");
    }

    let bin = require!(
        find_chromium().ok_or("the browser checks need chromium (scripts/test installs it)")
    );
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.display());
    let dom = chromium(&bin, profile.path(), &["--dump-dom"], &url);
    assert!(dom.status.success(), "chromium --dump-dom failed");
    assert_eq!(console_errors(&dom.stderr), Vec::<String>::new());
    let page = String::from_utf8(dom.stdout).unwrap();

    for id in expected {
        svg_of(&page, id);
    }

    // The figures in the page are the store's, run by run.
    let mut store = iomark_store::open(Some(dbs)).unwrap();
    for id in 1..=10 {
        let stored = store.load(RunId(id)).unwrap();
        let in_page = attr_values(&page, &format!("class=\"figure\" data-run=\"{id}\""));
        let want: Vec<f64> = stored.figures.iter().map(|f| f.value).collect();
        assert_eq!(in_page, want, "figures of run {id}");
        if id == 1 || id == 2 {
            assert!(!want.is_empty());
        }
    }
    // The CDM bars are the stored best passes of runs 1 and 2, row by row.
    let mut read_bw = |id: i64| -> Vec<(String, f64)> {
        let doc = store.load(RunId(id)).unwrap().document().unwrap();
        let RunBody::Disk(d) = doc.body else {
            panic!("run {id} is not a disk run")
        };
        let Some(ProfileResult::Cdm(c)) = d.profile_result else {
            panic!("no CDM result")
        };
        c.tests
            .iter()
            .filter(|t| t.dir == iomark_model::profile::TestDir::Read)
            .map(|t| (t.row.clone(), t.bw.0))
            .collect()
    };
    let runs = [read_bw(1), read_bw(2)];
    // Rows in order of first appearance; in each, one bar per run that ran it.
    let mut rows: Vec<&String> = Vec::new();
    for (row, _) in runs.iter().flatten() {
        if !rows.contains(&row) {
            rows.push(row);
        }
    }
    let interleaved: Vec<f64> = rows
        .iter()
        .flat_map(|row| {
            runs.iter()
                .filter_map(move |r| r.iter().find(|(x, _)| x == *row).map(|(_, bw)| *bw))
        })
        .collect();
    let bars = attr_values(svg_of(&page, "cdm-read"), "class=\"bar\"");
    assert!(
        interleaved.len() > 4,
        "the measured run has all four CDM rows"
    );
    assert_eq!(bars, interleaved);
    assert!(
        page.contains("USB 2.0: 53 MB/s hard"),
        "device table lacks the ceiling"
    );
    job_charts_show_the_stored_numbers(&page, store.as_mut());

    // A screenshot of the page is not blank.
    let shot = dir.join("shot.png");
    assert_drawn(&bin, profile.path(), &url, &shot, 2400);
    if let Ok(keep) = std::env::var("IOMARK_REPORT_SHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// [`fio_json_plus`] stored in `db` through the fio importer, labelled
/// `fio` (written first as `dir/fio.json`).
pub(crate) fn import_fio_json_plus(dir: &std::path::Path, db: &str) {
    let file = dir.join("fio.json");
    std::fs::write(&file, fio_json_plus().to_string()).unwrap();
    iomark_ok(&[
        "results",
        "import",
        file.to_str().unwrap(),
        "--label",
        "fio",
        "--db",
        db,
    ]);
}

/// fio 3.33's json+ for one 4 KiB random-read job, cut to what the
/// importer reads, with a latency histogram of ten I/Os.
pub(crate) fn fio_json_plus() -> serde_json::Value {
    serde_json::json!({
        "fio version": "fio-3.33",
        "timestamp": 1795399698,
        "timestamp_ms": 1795399698802u64,
        "global options": {"ioengine": "psync"},
        "jobs": [{
            "jobname": "rand-read",
            "groupid": 0,
            "error": 0,
            "elapsed": 2,
            "job options": {"name": "rand-read", "rw": "randread", "bs": "4k", "direct": "1"},
            "read": {
                "io_bytes": 40960, "bw_bytes": 2_560_000, "bw": 2500, "iops": 625.0,
                "runtime": 16, "total_ios": 10,
                "clat_ns": {
                    "min": 640, "max": 143472, "mean": 38789.15, "stddev": 40169.3, "N": 10,
                    "percentile": {"50.000000": 38144, "99.000000": 117248, "99.990000": 144384},
                    "bins": {"640": 1, "38144": 6, "117248": 2, "144384": 1}
                }
            },
            "write": {"io_bytes": 0, "total_ios": 0, "runtime": 0, "bw_bytes": 0, "iops": 0.0},
            "usr_cpu": 1.5,
            "sys_cpu": 20.0,
            "iodepth_level": {"1": 100.0}
        }]
    })
}

/// The custom run's (9) and the fio import's (10) charts carry the
/// stored numbers: per-job bandwidth, per-interval rates, percentiles and
/// histogram counts; the CDM IOPS bars are the stored IOPS.
fn job_charts_show_the_stored_numbers(page: &str, store: &mut dyn iomark_store::Store) {
    let disk = |store: &mut dyn iomark_store::Store, id: i64| {
        let doc = store.load(RunId(id)).unwrap().document().unwrap();
        let RunBody::Disk(d) = doc.body else {
            panic!("run {id} is not a disk run")
        };
        d
    };
    let (custom, fio) = (disk(store, 9), disk(store, 10));
    let read = |d: &iomark_model::disk::DiskRun| d.jobs[0].read.clone().unwrap();
    // One category each (custom read, rand-read read), one bar each.
    assert_eq!(
        attr_values(svg_of(page, "jobs-bw"), "class=\"bar\""),
        [read(&custom).bw.0, read(&fio).bw.0]
    );
    let samples = &custom.jobs[0].samples;
    assert!(!samples.is_empty(), "a 2 s custom run has samples");
    assert_eq!(
        attr_values(svg_of(page, "time-bw"), "class=\"point\""),
        samples.iter().map(|s| s.bw().0).collect::<Vec<_>>()
    );
    let pct: Vec<f64> = [&custom, &fio]
        .iter()
        .flat_map(|d| read(d).clat.percentiles)
        .filter(|p| p.percent > 0.0 && p.percent < 100.0)
        .map(|p| p.ns as f64)
        .collect();
    assert_eq!(
        attr_values(svg_of(page, "latency-percentiles"), "class=\"point\""),
        pct
    );
    // Both runs' first jobs on one histogram, one axis.
    let counts = attr_values(svg_of(page, "latency-hist-1"), "class=\"bin\"");
    assert_eq!(
        counts.iter().sum::<f64>(),
        (read(&custom).clat.count + read(&fio).clat.count) as f64
    );
    assert!(
        page.contains("run 10 (fio): no per-interval samples stored (fio"),
        "the fio run's missing time series is not explained"
    );
    let RunBody::Disk(cdm) = store.load(RunId(1)).unwrap().document().unwrap().body else {
        panic!("run 1 is not a disk run")
    };
    let Some(ProfileResult::Cdm(c)) = cdm.profile_result else {
        panic!("no CDM result")
    };
    let iops = attr_values(svg_of(page, "cdm-iops"), "data-series=\"run 1 (here)");
    assert_eq!(iops, c.tests.iter().map(|t| t.iops.0).collect::<Vec<_>>());
}

#[test]
fn report_refuses_bad_input() {
    let scratch = ScratchDb::new();
    let db = scratch.path();
    let dbs = scratch.db();
    let no_output = iomark(&["report", "1", "--db", dbs]);
    assert_eq!(no_output.status.code(), Some(2));
    assert!(stderr(&no_output).contains("add --html FILE or --png DIR"));
    // Reading never creates a database.
    let no_db = iomark(&["report", "--db", dbs, "--html", "-"]);
    assert_eq!(no_db.status.code(), Some(2));
    assert!(stderr(&no_db).contains("no results database"));
    assert!(!db.exists());
    import_doc(
        db,
        scratch.dir.path(),
        "one",
        &fixtures::cdm(&["usb2"], 40.0),
    );
    let no_label = iomark(&["report", "--label", "nope", "--db", dbs, "--html", "-"]);
    assert_eq!(no_label.status.code(), Some(2));
    assert!(stderr(&no_label).contains("label 'nope'"));
    let no_runs = iomark(&["report", "--db", dbs, "--html", "-"]);
    assert_eq!(no_runs.status.code(), Some(2));
}
