//! The page for fixed runs: what it shows beside the charts.

mod fixtures;

use iomark_report::{Report, ReportRun};

fn page(docs: Vec<iomark_model::RunDocument>) -> String {
    let runs = docs
        .into_iter()
        .enumerate()
        .map(|(i, d)| ReportRun::new(i + 1, d))
        .collect();
    String::from_utf8(Report::new(runs, None).unwrap().html()).unwrap()
}

/// The `<div id="warnings">` section of a page.
fn warnings_section(page: &str) -> &str {
    let start = page
        .find("<div id=\"warnings\">")
        .expect("a warnings section");
    let end = start + page[start..].find("</div>").unwrap();
    &page[start..end]
}

#[test]
fn a_mem_sweep_shows_every_point_warning_grouped_by_kind() {
    let html = page(vec![
        fixtures::mem_sweep(&["sweep"]),
        fixtures::stream(&["plain"], 900.0, None),
    ]);
    let w = warnings_section(&html);
    assert!(!w.contains("none"), "{w}");
    for size in ["64 MiB", "256 MiB"] {
        for backing in ["heap", "swap"] {
            let at = format!("at {size} on {backing}");
            assert!(w.contains(&at), "no warning {at} in {w}");
        }
    }
    // Folded under the sweep's run, counted, one list per kind with the
    // point each message was raised for.
    assert_eq!(w.matches("<details").count(), 1, "{w}");
    assert!(w.contains("data-run=\"1\"><summary><b>run 1 (sweep)</b>: 4 warnings (array fits in cache, few samples)</summary>"), "{w}");
    assert_eq!(
        w.matches("data-kind=\"array_fits_in_cache\"").count(),
        1,
        "{w}"
    );
    assert_eq!(w.matches("data-kind=\"few_samples\"").count(), 1, "{w}");
    assert!(
        w.contains("at 64 MiB on swap <small>(in 64 MiB on swap:/tmp/iomark-swap)</small>"),
        "{w}"
    );
}

#[test]
fn warnings_are_counted_as_raised_as_the_run_list_counts_them() {
    // The same message raised by every job is listed once, with the
    // jobs; the count is of what was raised, as `results list` says.
    let mut doc = fixtures::custom(&["usb"], 400.0);
    let iomark_model::RunBody::Disk(d) = &mut doc.body else {
        unreachable!()
    };
    let mut second = d.jobs[0].clone();
    second.spec.name = "second".into();
    d.jobs.push(second);
    let jobs = d.jobs.len();
    for j in &mut d.jobs {
        j.warnings.push(iomark_model::Warning::new(
            iomark_model::WarningKind::Other,
            "the same everywhere",
        ));
    }
    let raised = doc.scoped_warnings().len();
    assert_eq!(raised, jobs);
    let html = page(vec![doc]);
    let w = warnings_section(&html);
    assert!(
        w.contains(&format!(
            ": {raised} warnings, 1 different (other)</summary>"
        )),
        "{w}"
    );
}

#[test]
fn a_page_without_warnings_says_none() {
    let html = page(vec![fixtures::stream(&["plain"], 900.0, None)]);
    assert!(warnings_section(&html).contains("<p>none</p>"));
}

/// The value cells of a run's figure rows whose unit is a rate.
fn rate_cells<'a>(html: &'a str, run: &str) -> Vec<&'a str> {
    html.split("<tr class=\"figure\" ")
        .skip(1)
        .filter(|row| row.starts_with(&format!("data-run=\"{run}\"")))
        .flat_map(|row| row.split("<td class=\"num\">").skip(1))
        .map(|cell| &cell[..cell.find('<').unwrap()])
        .filter(|v| v.ends_with("B/s"))
        .collect()
}

#[test]
fn figures_are_in_the_unit_their_run_printed() {
    let html = page(vec![
        fixtures::sweep(&["hdd"], 100.0, &[iomark_model::disk::EngineKind::Psync]),
        fixtures::cdm(&["usb2"], 40.0),
    ]);
    // The block-size sweep prints MiB/s; CrystalDiskMark MB/s.
    let sweep = rate_cells(&html, "1");
    assert!(!sweep.is_empty(), "no rate figures for the sweep");
    assert!(sweep.iter().all(|v| v.ends_with(" MiB/s")), "{sweep:?}");
    assert!(sweep.contains(&"100.00 MiB/s"), "{sweep:?}");
    let cdm = rate_cells(&html, "2");
    assert!(!cdm.is_empty(), "no rate figures for CrystalDiskMark");
    assert!(cdm.iter().all(|v| v.ends_with(" MB/s")), "{cdm:?}");
}

#[test]
fn a_memory_limits_record_is_on_the_page() {
    let mut limited = fixtures::stream(&["limited"], 900.0, None);
    let iomark_model::RunBody::Mem(m) = &mut limited.body else {
        unreachable!("stream is a mem run")
    };
    m.cgroup = Some(Box::new(iomark_model::mem::CgroupUsage {
        version: "v1".into(),
        limit: iomark_model::Bytes(64 << 20),
        peak: Some(iomark_model::Bytes(63 << 20)),
        oom_kills: 0,
        limit_hits: Some(12),
        major_faults: Some(3456),
    }));
    let html = page(vec![limited, fixtures::stream(&["free"], 900.0, None)]);
    let start = html
        .find("<table id=\"mem-limits\">")
        .expect("a limits table");
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    assert!(table.contains("64 MiB (cgroup v1)"), "{table}");
    assert!(
        table.contains("limit hit 12 times, 3456 major faults"),
        "{table}"
    );
    // One row: the run without a limit has none.
    assert_eq!(table.matches("<tr data-run").count(), 1, "{table}");
    // A page without limits has no such table.
    let free = page(vec![fixtures::stream(&["free"], 900.0, None)]);
    assert!(!free.contains("mem-limits"));
}

#[test]
fn a_mem_sweep_shows_each_points_memory_limit_record() {
    let mut doc = fixtures::mem_sweep(&["sweep"]);
    let iomark_model::RunBody::Mem(m) = &mut doc.body else {
        unreachable!("a mem sweep")
    };
    let sweep = m.sweep.as_mut().unwrap();
    for (i, p) in sweep.points.iter_mut().enumerate() {
        p.run.cgroup = Some(Box::new(iomark_model::mem::CgroupUsage {
            version: "v2".into(),
            limit: iomark_model::units::Bytes(128 << 20),
            peak: Some(iomark_model::units::Bytes(100 << 20)),
            oom_kills: 0,
            limit_hits: Some(1000 + i as u64),
            major_faults: Some(7000 + i as u64),
        }));
    }
    let html = page(vec![doc]);
    let t = html
        .split("<table class=\"sweep-limits\" id=\"sweep-limits-1\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .unwrap_or_else(|| panic!("no sweep-limits table in {html}"));
    assert!(
        t.contains("<th>peak</th><th>limit hits</th><th>major faults</th>"),
        "{t}"
    );
    // A row per point, naming its size and backing, with its own record.
    assert_eq!(t.matches("<tr data-run=\"1\">").count(), 4, "{t}");
    for i in 0..4 {
        assert!(
            t.contains(&format!(
                "<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                1000 + i,
                7000 + i
            )),
            "{t}"
        );
    }
    assert!(
        t.contains("<td>256 MiB</td>") && t.contains("<td>swap</td>"),
        "{t}"
    );
}

#[test]
fn the_contents_link_every_section_and_every_chart() {
    let html = page(vec![
        fixtures::mem_sweep(&["sweep"]),
        fixtures::stream(&["plain"], 900.0, None),
    ]);
    let nav_start = html
        .find("<nav id=\"contents\">")
        .expect("a table of contents");
    let nav = &html[nav_start..nav_start + html[nav_start..].find("</nav>").unwrap()];
    // Before the first section.
    assert!(nav_start < html.find("<h2").unwrap());
    let targets = |prefix: &str| -> Vec<String> {
        html.split(prefix)
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].to_string())
            .collect()
    };
    let sections = targets("<h2 id=\"");
    assert!(sections.len() >= 4, "{sections:?}");
    assert!(!html.contains("<h2>"), "a section without a target");
    let charts = targets("<figure id=\"");
    assert!(!charts.is_empty());
    for id in sections.iter().chain(&charts) {
        assert!(
            nav.contains(&format!("href=\"#{id}\"")),
            "{id} not in {nav}"
        );
    }
    let links = nav.matches("<a href=").count();
    assert_eq!(links, sections.len() + charts.len(), "{nav}");
}

/// Fifty runs: 25 CrystalDiskMark runs and 25 custom runs, one of them
/// labelled with 80 characters.
fn fifty() -> Vec<iomark_model::RunDocument> {
    let long = "Samsung T7 Shield on the USB-C port of the dock behind the monitor, cold, 2026";
    (0..50)
        .map(|i| {
            let label = if i == 7 {
                long.to_string()
            } else {
                format!("disk{i}")
            };
            let mb = 40.0 + 37.0 * ((i * 13) % 50) as f64;
            if i % 2 == 0 {
                fixtures::cdm(&[&label], mb)
            } else {
                fixtures::custom(&[&label], mb)
            }
        })
        .collect()
}

/// Every `<svg ...>` opening tag of a page.
fn svgs(html: &str) -> Vec<&str> {
    html.split("<svg ")
        .skip(1)
        .map(|s| &s[..s.find('>').unwrap()])
        .collect()
}

fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let from = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    &tag[from..from + tag[from..].find('"').unwrap()]
}

#[test]
fn a_page_of_fifty_runs_ranks_them_and_folds_each_runs_own() {
    let docs = fifty();
    let runs: Vec<ReportRun> = docs
        .into_iter()
        .enumerate()
        .map(|(i, d)| ReportRun::new(i + 1, d))
        .collect();
    let names: Vec<String> = runs.iter().map(|r| r.name.clone()).collect();
    let html = String::from_utf8(Report::new(runs, None).unwrap().html()).unwrap();
    assert!(names[7].chars().count() > 80, "{}", names[7]);

    // Every run in the runs table, named whole.
    let table = &html[html.find("<table id=\"runs\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    for n in &names {
        assert!(table.contains(&format!("<td>{n}</td>")), "{n} not listed");
    }
    // No chart wider than the others, none overlaying more runs than
    // there are colours: a bar chart of the 25 CDM runs is one ranked
    // chart per test, every run a named row.
    for tag in svgs(&html) {
        assert_eq!(attr(tag, "width"), "800", "{tag}");
    }
    for svg in html.split("data-chart=\"bars\"").skip(1) {
        let svg = &svg[..svg.find("</svg>").unwrap()];
        let mut series: Vec<&str> = svg
            .split("data-series=\"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        series.sort();
        series.dedup();
        assert!(series.len() <= iomark_report::svg::COLOURS, "{series:?}");
    }
    let ranked = &html[html
        .find("id=\"cdm-read-seq1m-q8t1\"")
        .expect("a ranked CDM chart")..];
    let ranked = &ranked[..ranked.find("</svg>").unwrap()];
    let rows: Vec<&str> = ranked
        .split("class=\"row-name\"")
        .skip(1)
        .map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()])
        .collect();
    let cdm_names: Vec<&String> = names.iter().step_by(2).collect();
    assert_eq!(rows.len(), cdm_names.len(), "{rows:?}");
    for n in cdm_names {
        assert!(rows.contains(&n.as_str()), "{n} not a row of {rows:?}");
    }
    // The ranking goes down.
    let values: Vec<f64> = ranked
        .split("data-value=\"")
        .skip(1)
        .map(|v| v[..v.find('"').unwrap()].parse().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] >= w[1]), "{values:?}");

    // Each custom run's own charts folded under it, its figures too.
    assert_eq!(html.matches("<details class=\"run-charts\"").count(), 25);
    assert_eq!(html.matches("<details class=\"run-figures\"").count(), 50);
    let grid =
        &html[html.find("<h2 id=\"s-charts\">").unwrap()..html.find("id=\"run-charts\"").unwrap()];
    assert!(
        !grid.contains("id=\"chart-time-bw-"),
        "time series unfolded"
    );
    // The contents list the charts of several runs, not each run's own.
    let nav = &html[..html.find("</nav>").unwrap()];
    assert!(nav.matches("<a href=").count() < 60, "{nav}");
}
