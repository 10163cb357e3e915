//! `iomark serve` following runs as they go: the live page of a 10 s run
//! in a real headless Chromium gains points each second while the run
//! goes and moves on to the run's page when it ends; `/metrics` while it
//! goes is read by the OpenMetrics reference parser; a run killed with -9
//! stays on its page with the seconds it had.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

/// A disk run of `runtime` on the null engine (the same speed every run,
/// no device time) into `db`.
fn null_run(dir: &str, db: &str, runtime: &str) -> Proc {
    Proc::spawn(&mut iomark_cmd(&[
        "disk",
        dir,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--size",
        "4M",
        "--engine",
        "null",
        "--runtime",
        runtime,
        "--db",
        db,
        "--label",
        "live",
    ]))
}

/// The id of the run in progress in `db`, once it is one.
fn run_in_progress(db: &str) -> u64 {
    let mut id = None;
    wait_until(Duration::from_secs(60), "a run in progress", || {
        let Ok(mut store) = iomark_store::open_read_only(Some(db)) else {
            return false;
        };
        id = store
            .in_progress(0)
            .ok()
            .and_then(|ids| ids.first().copied());
        id.is_some()
    });
    id.unwrap().0 as u64
}

/// Run `id`'s status as `results list`, `results show` (`--json`, and
/// its text's first line), `/api/runs`, `/api/runs/ID` and `/api/live/ID`
/// give it.
fn standing(served: &Served, db: &str, id: u64) -> Vec<String> {
    let listed = json(&results(db, &["list", "--json"]));
    let shown = json(&results(db, &["show", &id.to_string(), "--json"]));
    let text = ok(&results(db, &["show", &id.to_string()]));
    let api = |path: &str| -> Value { serde_json::from_slice(&served.get(path).body).unwrap() };
    // "run 1  running  disk run by iomark ...".
    let in_text = text.split_whitespace().nth(2).unwrap_or("none");
    let of = |v: &Value| v.as_str().unwrap_or("none").to_string();
    assert_eq!(shown["document"]["status"], shown["run"]["status"]);
    vec![
        of(&listed["runs"][0]["status"]),
        of(&shown["run"]["status"]),
        in_text.to_string(),
        of(&api("/api/runs")["runs"][0]["status"]),
        of(&api(&format!("/api/runs/{id}"))["run"]["status"]),
        of(&api(&format!("/api/live/{id}"))["status"]),
    ]
}

/// The testrig's script `name`.
fn rig(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testrig/rigs")
        .join(name)
}

fn python() -> Result<&'static str, &'static str> {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import websocket, prometheus_client"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some("/usr/bin/python3")
        .ok_or("needs python3-websocket and python3-prometheus-client (scripts/test installs them)")
}

#[test]
fn the_live_page_gains_points_while_the_run_goes_and_moves_on_to_the_finished_run() {
    let bin = require!(find_chromium().ok_or("the browser checks need chromium"));
    let py = require!(python());
    let scratch = ScratchDb::new();
    let target = tempfile::tempdir().unwrap();
    let run = null_run(target.path().to_str().unwrap(), scratch.db(), "10s");
    // The server reads a store that exists: the run's first write makes it.
    let id = run_in_progress(scratch.db());
    let served = Served::start(scratch.db(), &[]);

    // Listed as in progress, and /metrics names it while it goes.
    let live = served.get("/live");
    assert!(
        live.text().contains(&format!("href=\"/live/{id}\"")),
        "{}",
        live.text()
    );
    wait_until(Duration::from_secs(30), "a second stored", || {
        served.get("/metrics").text().contains("iomark_iops{")
    });
    let metrics = served.get("/metrics");
    assert_eq!(
        metrics.header("content-type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    let mut parser = Command::new(py)
        .arg(rig("openmetrics_check.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    parser
        .stdin
        .take()
        .unwrap()
        .write_all(&metrics.body)
        .unwrap();
    let parsed = parser.wait_with_output().unwrap();
    assert!(
        parsed.status.success(),
        "{}\n{}",
        stderr(&parsed),
        metrics.text()
    );
    let families: Value = serde_json::from_slice(&parsed.stdout).unwrap();
    let family = |name: &str| {
        families
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {families}"))
            .clone()
    };
    let iops = family("iomark_iops");
    assert_eq!(iops["type"], "gauge");
    let point = &iops["samples"][0];
    assert_eq!(point["labels"]["run"], id.to_string());
    assert_eq!(point["labels"]["test"], "custom");
    assert!(point["value"].as_f64().unwrap() > 0.0, "{point}");
    let latency = family("iomark_latency_seconds");
    assert_eq!(latency["type"], "summary");
    assert!(latency["samples"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["labels"]["quantile"] == "0.99"));
    assert_eq!(family("iomark_bytes")["type"], "counter");

    // The page, watched in Chromium: its point count and whether its
    // charts are drawn, each time they change, until it moves on.
    let profile = tempfile::tempdir().unwrap();
    let expr = "location.pathname + '|' + \
        ((document.getElementById('live-status') || {dataset: {}}).dataset.points || '') + '|' + \
        Array.from(document.querySelectorAll('img.live')).every(i => i.complete && i.naturalWidth > 0)";
    let watched = Command::new(py)
        .arg(rig("watch_page.py"))
        .arg(&bin)
        .arg(profile.path())
        .arg(served.url(&format!("/live/{id}")))
        .arg(expr)
        .arg("/runs/")
        .arg("90")
        .output()
        .unwrap();
    let out = ok(&watched);
    let events: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let errors: Vec<&Value> = events.iter().filter(|e| e.get("error").is_some()).collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    assert_eq!(events.last().unwrap()["end"], "until", "{out}");
    let values: Vec<&str> = events.iter().filter_map(|e| e["value"].as_str()).collect();
    let live_points: Vec<u64> = values
        .iter()
        .filter(|v| v.starts_with(&format!("/live/{id}|")))
        .filter_map(|v| v.split('|').nth(1)?.parse().ok())
        .collect();
    let mut distinct = live_points.clone();
    distinct.dedup();
    assert!(
        distinct.len() >= 3 && distinct.windows(2).all(|w| w[0] < w[1]),
        "the chart did not gain points as the run went: {values:?}"
    );
    assert!(
        values
            .iter()
            .any(|v| v.starts_with("/live/") && v.ends_with("|true")),
        "the live charts were never drawn: {values:?}"
    );
    assert!(
        values.last().unwrap().starts_with(&format!("/runs/{id}|")),
        "{values:?}"
    );
    let finished = run.finish(Duration::from_secs(60));
    assert!(finished.status.success(), "{}", stderr(&finished));
}

#[test]
fn a_killed_run_keeps_its_seconds_on_its_live_page_and_in_the_api() {
    let scratch = ScratchDb::new();
    let target = tempfile::tempdir().unwrap();
    let run = null_run(target.path().to_str().unwrap(), scratch.db(), "60s");
    let id = run_in_progress(scratch.db());
    let served = Served::start(scratch.db(), &[]);
    wait_until(Duration::from_secs(60), "two seconds stored", || {
        let state: Value = serde_json::from_slice(&served.get(&format!("/api/live/{id}")).body)
            .unwrap_or_default();
        state["points"].as_u64().is_some_and(|n| n >= 2)
    });
    // While it goes, its last second's figures in large type, on the page
    // and for the page's script.
    let state: Value =
        serde_json::from_slice(&served.get(&format!("/api/live/{id}")).body).unwrap();
    let big: Vec<&str> = state["big"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(
        big.contains(&"fig-rate") && big.contains(&"fig-iops"),
        "{state}"
    );
    let page = served.get(&format!("/live/{id}")).text();
    assert!(
        page.contains("<span class=\"value\" id=\"fig-rate\">"),
        "{page}"
    );
    // "running" wherever the run is shown while it goes (issue 48): the
    // list, show, the API and the run's page, never "interrupted".
    assert_eq!(standing(&served, scratch.db(), id), ["running"; 6]);
    run.signal(rustix::process::Signal::KILL);
    let _ = run.finish(Duration::from_secs(30));
    // Its process gone, it is interrupted at once, everywhere.
    assert_eq!(standing(&served, scratch.db(), id), ["interrupted"; 6]);

    let samples: Value =
        serde_json::from_slice(&served.get(&format!("/api/runs/{id}/samples")).body).unwrap();
    let kept = samples["samples"].as_array().unwrap().len();
    assert!(kept >= 2, "{samples}");
    let after: Value =
        serde_json::from_slice(&served.get(&format!("/api/runs/{id}/samples?after=0")).body)
            .unwrap();
    assert_eq!(after["samples"].as_array().unwrap().len(), kept - 1);
    let page = served.get(&format!("/live/{id}")).text();
    assert!(page.contains(&format!("data-points=\"{kept}\"")), "{page}");
    let svg = served.get(&format!("/live/{id}/bandwidth.svg"));
    assert_eq!(svg.header("content-type"), Some("image/svg+xml"));
    assert_eq!(svg.text().matches("data-value=").count(), kept);
    assert_eq!(served.get(&format!("/live/{id}/speed.svg")).status, 404);
    // Not in progress once its seconds age; its run page reads interrupted.
    let run_page = served.get(&format!("/runs/{id}")).text();
    assert!(run_page.contains("interrupted"), "{run_page}");
}

/// Issue 48: the live page of a run that is going, at 1400 and 800 px,
/// checked for what a person would see wrong (common::layout_problems):
/// its big figures, charts and legend while the seconds come in.
#[test]
fn a_running_runs_live_page_fits_a_wide_and_a_narrow_window() {
    let bin = require!(find_chromium().ok_or("the browser checks need chromium"));
    let py = require!(devtools_python());
    let scratch = ScratchDb::new();
    let target = tempfile::tempdir().unwrap();
    let run = null_run(target.path().to_str().unwrap(), scratch.db(), "60s");
    let id = run_in_progress(scratch.db());
    let served = Served::start(scratch.db(), &[]);
    wait_until(Duration::from_secs(60), "three seconds stored", || {
        let state: Value = serde_json::from_slice(&served.get(&format!("/api/live/{id}")).body)
            .unwrap_or_default();
        state["points"].as_u64().is_some_and(|n| n >= 3)
    });
    let mut problems = Vec::new();
    for (width, height) in [(1400, 1800), (800, 1800)] {
        for p in layout_problems(&bin, py, &served.url(&format!("/live/{id}")), width, height) {
            problems.push(format!("/live/{id} at {width} px: {p}"));
        }
    }
    let state: Value =
        serde_json::from_slice(&served.get(&format!("/api/live/{id}")).body).unwrap();
    run.signal(rustix::process::Signal::KILL);
    let _ = run.finish(Duration::from_secs(30));
    assert_eq!(state["in_progress"], true, "checked while it went: {state}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_mem_run_stores_its_seconds_as_it_goes() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    // About 3 s of STREAM passes: a stored second comes while it runs.
    // The arrays are sized from this machine's own pass time: 150 passes
    // of 8M elements took 1.5 s on one machine and 10.6 s on a newer one,
    // over 60 s beside two busy loops. Sized for 2 s from the average pass
    // of arrays that fit in a cache, a run lasted 1 s (the fresh-machine
    // check of 7e6b24b); sized for 4 s from the fastest such pass, it ran
    // past 60 s beside two busy loops (loaded run 1 of 1315bc9), its own
    // arrays far out of the cache. Calibrated at the largest size it may
    // choose, the pass time is the run's own.
    let size = stream_size_lasting(Duration::from_secs(3), 200).to_string();
    let run = Proc::spawn(&mut iomark_cmd(&[
        "mem",
        "stream",
        "--size",
        &size,
        "--ntimes",
        "200",
        "--threads",
        "1",
        "--db",
        db,
    ]));
    let out = run.finish(Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut store = iomark_store::open_read_only(Some(db)).unwrap();
    let runs = store.list(&iomark_store::RunQuery::default()).unwrap();
    assert_eq!(runs[0].status, iomark_model::RunStatus::Complete);
    let kept = store.samples(runs[0].id, None).unwrap();
    assert!(kept.len() >= 2, "{kept:?}");
    // Handed to the store as it went: the first second a good part of a
    // second before the last, which the end of the run hands over (the
    // stamps are the run's own, so a slow reader of the store cannot blur
    // them; the Himeno test below reads a second back while the run is
    // held still).
    let (first, last) = (&kept[0].1, &kept[kept.len() - 1].1);
    assert!(
        first.at_ms + 250 <= last.at_ms,
        "the first second was stored at the end: {kept:?}"
    );
    for (_, s) in &kept {
        assert!(s.label.starts_with("stream "), "{s:?}");
        assert_eq!((s.step, s.ios, s.latency), (1, 0, None), "{s:?}");
        assert!(s.bytes > 0 && s.duration_ms > 0, "{s:?}");
    }
}

/// A `--size` for `passes` STREAM passes on one thread to last at least
/// about `time` here, from a short run's fastest pass (its four kernels'
/// shortest times) at the largest size it returns, [`STREAM_MOST`]: a
/// smaller one's arrays are at most as slow a byte.
fn stream_size_lasting(time: Duration, passes: u32) -> u64 {
    let most = STREAM_MOST.to_string();
    let out = iomark_ok(&[
        "mem",
        "stream",
        "--size",
        &most,
        "--ntimes",
        "5",
        "--threads",
        "1",
        "--json",
        "--no-store",
    ]);
    let doc = json(&out);
    let kernels = doc["body"]["outcome"]["result"]["kernels"]
        .as_array()
        .expect("STREAM's kernels");
    // The fastest pass: load only ever slows a pass, so the run lasts at
    // least `time` unless the machine is quieter than it ever was here.
    let pass_ns: f64 = kernels.iter().map(|k| k["min"].as_f64().unwrap()).sum();
    assert!(pass_ns > 0.0, "{kernels:?}");
    let scale = time.as_secs_f64() * 1e9 / (pass_ns * f64::from(passes));
    ((STREAM_MOST as f64 * scale) as u64).clamp(100_000, STREAM_MOST)
}

/// The largest `--size` [`stream_size_lasting`] gives, and the one it
/// measures at.
const STREAM_MOST: u64 = 64_000_000;

/// Himeno counts flops, not bytes: its seconds carry the flops of their
/// sweeps as it goes, and the live page, its API and `/metrics` give its
/// MFLOPS instead of an empty bandwidth.
#[test]
fn a_himeno_run_stores_its_flops_as_it_goes() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    // Himeno's own scheme filling 8 s: a stored second about 1 s in.
    let mut run = Proc::spawn(&mut iomark_cmd(&[
        "mem",
        "himeno",
        "--grid",
        "xs",
        "--seconds",
        "8",
        "--threads",
        "1",
        "--db",
        db,
    ]));
    let id = run_in_progress(db);
    // Held still (SIGSTOP) as soon as the store has a second of it, so
    // the live views are read while it goes however slowly this host
    // serves them: a loaded new machine took the 3 s that were left of a
    // 4 s run to start the server and ask, and the run had ended.
    wait_until(Duration::from_secs(60), "a stored second", || {
        iomark_store::open_read_only(Some(db))
            .and_then(|mut s| s.samples(iomark_store::RunId(id as i64), None))
            .is_ok_and(|seconds| !seconds.is_empty())
    });
    run.signal(rustix::process::Signal::STOP);
    assert!(run.running(), "the first second was stored at the end");
    let served = Served::start(db, &[]);
    let state = || -> Value {
        serde_json::from_slice(&served.get(&format!("/api/live/{id}")).body).unwrap_or_default()
    };
    assert!(
        state()["points"].as_u64().is_some_and(|n| n >= 1),
        "{}",
        state()
    );
    let metrics = served.get("/metrics").text();
    let now = state();
    assert_eq!(now["figures"], serde_json::json!(["flops"]), "{now}");
    assert!(now["flops_per_second"].as_f64().unwrap() > 0.0, "{now}");
    assert!(now["text"].as_str().unwrap().contains(" MFLOPS"), "{now}");
    let l = format!("iomark_flops{{run=\"{id}\",");
    assert!(metrics.contains(&l), "{metrics}");
    assert!(
        !metrics.contains(&format!("iomark_bandwidth_bytes_per_second{{run=\"{id}\",")),
        "{metrics}"
    );

    run.signal(rustix::process::Signal::CONT);
    let out = run.finish(Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    // Every timed sweep's flops, stored once: iterations x flops per sweep.
    let shown = json(&results(db, &["show", &id.to_string(), "--json"]));
    let result = &shown["document"]["body"]["outcome"]["result"];
    let iterations = result["iterations"].as_f64().expect("iterations");
    let grid = iomark_mem::himeno::parse_grid("xs").unwrap();
    let per_sweep = iomark_mem::himeno::flops_per_sweep(&grid);
    let samples: Value =
        serde_json::from_slice(&served.get(&format!("/api/runs/{id}/samples")).body).unwrap();
    let seconds = samples["samples"].as_array().unwrap();
    assert!(seconds.len() >= 2, "{samples}");
    let mut flops = 0.0;
    for s in seconds.iter().map(|s| &s["sample"]) {
        assert_eq!((&s["bytes"], &s["ios"]), (&0.into(), &0.into()), "{s}");
        assert!(s["label"].as_str().unwrap().starts_with("himeno "), "{s}");
        flops += s["flops"].as_f64().expect("flops");
    }
    assert_eq!(flops, iterations * per_sweep, "{samples}");
    // Its pages draw MFLOPS, not an empty bandwidth.
    let svg = served.get(&format!("/live/{id}/flops.svg")).text();
    assert!(svg.contains("MFLOPS"), "{svg}");
    assert_eq!(svg.matches("data-value=").count(), seconds.len(), "{svg}");
    for page in [format!("/live/{id}"), format!("/runs/{id}")] {
        let text = served.get(&page).text();
        assert!(text.contains("id=\"chart-flops\""), "{page}: {text}");
        assert!(!text.contains("id=\"chart-bandwidth\""), "{page}: {text}");
    }
}

#[test]
fn a_net_test_stores_each_interval_as_it_goes_at_both_ends() {
    let (client_db, server_db) = (ScratchDb::new(), ScratchDb::named("server.db"));
    let (db, sdb) = (client_db.db(), server_db.db());
    let port = crate::net_common::free_port();
    let server = crate::net_common::iomark_server(port, &["-1", "--db", sdb]);
    let port = port.to_string();
    let mut client = Proc::spawn(&mut iomark_cmd(&[
        "net",
        "-c",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "4",
        "--db",
        db,
    ]));
    let stored = |db: &str| -> Option<(iomark_store::RunId, usize)> {
        let mut store = iomark_store::open_read_only(Some(db)).ok()?;
        let id = *store.in_progress(0).ok()?.first()?;
        Some((id, store.samples(id, None).ok()?.len()))
    };
    wait_until(
        Duration::from_secs(60),
        "an interval stored at both ends",
        || stored(db).is_some_and(|(_, n)| n >= 1) && stored(sdb).is_some_and(|(_, n)| n >= 1),
    );
    assert!(client.running(), "the first interval was stored at the end");
    let out = client.finish(Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    // `-1`: the server ends after its one test.
    let served = server.finish(Duration::from_secs(60));
    assert!(served.status.success(), "{}", stderr(&served));
    for db in [db, sdb] {
        let mut store = iomark_store::open_read_only(Some(db)).unwrap();
        let runs = store.list(&iomark_store::RunQuery::default()).unwrap();
        assert_eq!(runs.len(), 1, "{db}: {runs:?}");
        assert_eq!(runs[0].status, iomark_model::RunStatus::Complete, "{db}");
        let seconds = store.samples(runs[0].id, None).unwrap();
        // The server's clock starts as it tells the client to start, so
        // the client's end reaches it a moment after its fourth second: a
        // moment over a tenth of a second (a loaded host) is an interval
        // of its own, as iperf3's server prints it.
        let four = seconds.len() == 4 || (db == sdb && seconds.len() == 5);
        assert!(four, "{db}: {seconds:?}");
        // An interval ends when its timer wakes, which on a loaded host is
        // a few milliseconds late, and iperf3 prints that end too
        // (`3.00-4.01 sec`). Later than a tenth of an interval would have
        // made the tail an interval of its own.
        let late = 0..100;
        for (n, (_, s)) in seconds.iter().take(4).enumerate() {
            // The stored run's own test name, known as the test opens.
            assert_eq!((s.label.as_str(), s.step, s.ios), ("tcp P1", 1, 0), "{s:?}");
            let due = 1000 * (n as u64 + 1);
            let lateness = s.offset_ms.checked_sub(due);
            assert!(
                lateness.is_some_and(|ms| late.contains(&ms)),
                "{db}: due at {due} ms: {s:?}"
            );
            assert!(s.bytes > 0, "{s:?}");
        }
        // The time left after the first interval is counted from its real
        // end (to the millisecond, each figure rounded on its own).
        let (first, left) = (seconds[0].1.offset_ms, seconds[0].1.left_ms);
        assert!(
            left.is_some_and(|ms| ms.abs_diff(4000 - first) <= 1),
            "{db}: {left:?} ms left after {first} ms of 4 s"
        );
    }
    // Issue 48: the client's page opens with its goodput, as stored, and
    // its host cell is filled.
    let served = Served::start(db, &[]);
    let shown = json(&results(db, &["show", "1", "--json"]));
    let goodput = shown["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["metric"].as_str().is_some_and(|m| m.ends_with("goodput")))
        .unwrap_or_else(|| panic!("no goodput: {shown}"))
        .clone();
    let page = served.get("/runs/1").text();
    let headline = &page[page.find("<table id=\"headline\">").expect(&page)..];
    let headline = &headline[..headline.find("</table>").unwrap()];
    let row = format!(
        "data-metric=\"{}\" data-value=\"",
        goodput["metric"].as_str().unwrap()
    );
    let on_page: f64 = headline
        .split(&row)
        .nth(1)
        .and_then(|rest| rest.split('"').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no goodput row: {headline}"));
    assert_eq!(on_page, goodput["value"].as_f64().unwrap(), "{headline}");
    let hostname = shown["document"]["host"]["hostname"].as_str().unwrap();
    assert!(!hostname.is_empty());
    let runs = &page[page.find("<table id=\"runs\">").expect(&page)..];
    assert!(
        runs[..runs.find("</table>").unwrap()].contains(hostname),
        "{runs}"
    );
}

/// Issue 49: a PTS test's live page shows where its steady state stands
/// after each round (the terminal's round line) and its convergence
/// chart, both from the rounds its checkpoints store, while it goes; the
/// finished run's document keeps its rounds in the result alone.
#[test]
fn a_pts_tests_live_page_shows_each_rounds_verdict_and_its_convergence() {
    let scratch = ScratchDb::new();
    let target = tempfile::tempdir().unwrap();
    let dir = target.path().to_str().unwrap();
    // Rounds of 4 s: at least 20 s in all (five rounds), so the page is
    // read well before the run ends, even on a loaded machine.
    let run = Proc::spawn(&mut iomark_cmd(&pts_on_file(
        dir,
        "0",
        "4k",
        "8",
        "4s",
        &["--db", scratch.db()],
    )));
    let id = run_in_progress(scratch.db());
    let served = Served::start(scratch.db(), &[]);
    let mut state = Value::Null;
    wait_until(Duration::from_secs(60), "a round on the live page", || {
        state = serde_json::from_slice(&served.get(&format!("/api/live/{id}")).body).unwrap();
        state["round"].is_string()
    });
    let round = state["round"].as_str().unwrap();
    assert!(round.starts_with("round "), "{round}");
    assert!(round.contains(" of at most 8: 4K 0/100 "), "{round}");
    assert!(
        state["figures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "convergence"),
        "{state}"
    );
    let page = served.get(&format!("/live/{id}")).text();
    assert!(page.contains("id=\"live-round\""), "{page}");
    assert!(page.contains("id=\"chart-convergence\""), "{page}");
    let chart = served.get(&format!("/live/{id}/convergence.svg"));
    assert_eq!(chart.header("content-type"), Some("image/svg+xml"));
    let svg = chart.text();
    assert!(
        svg.contains("<svg") && svg.contains("PTS IOPS: round "),
        "{svg}"
    );
    let finished = run.finish(Duration::from_secs(120));
    assert!(finished.status.success(), "{}", stderr(&finished));
    let shown = json(&results(scratch.db(), &["show", &id.to_string(), "--json"]));
    let body = &shown["document"]["body"];
    assert!(body.get("rounds_so_far").is_none(), "{body}");
    assert!(
        body["profile_result"]["rounds"].as_array().unwrap().len() >= 5,
        "{body}"
    );
}
