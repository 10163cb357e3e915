//! `iomark serve` that stays up (issue 45): another SQLite reader and a
//! writing iomark beside it leave it listing every run; every bad query
//! value is a 4xx naming the fix, never a 500; a page the store fails is
//! logged and answered without touching the other requests' connections.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

/// How soon serve must list a run after its commit.
const SEEN_WITHIN: Duration = Duration::from_secs(2);

/// Another program that reads and writes SQLite files: the `sqlite3`
/// shell, else Python's sqlite3 module. Each call opens the database,
/// runs one statement and closes it, as a person checking the store does.
enum Sqlite {
    Shell,
    Python,
}

impl Sqlite {
    /// The first of the two that is here (a skip otherwise, a failure
    /// under IOMARK_REQUIRE_RIGS=1, as root in CI).
    fn here() -> Result<Sqlite, String> {
        if have_command("sqlite3", "sqlite3").is_ok() {
            return Ok(Sqlite::Shell);
        }
        have_command("python3", "python3").map(|()| Sqlite::Python)
    }

    /// The rows `sql` gives in the database at `db`, a line each (columns
    /// joined by `|`).
    fn run(&self, db: &Path, sql: &str) -> Vec<String> {
        let out = match self {
            Sqlite::Shell => Command::new("sqlite3").arg(db).arg(sql).output(),
            Sqlite::Python => Command::new("python3")
                .args([
                    "-c",
                    "import sqlite3, sys\n\
                     c = sqlite3.connect(sys.argv[1])\n\
                     for row in c.execute(sys.argv[2]):\n    print('|'.join(map(str, row)))\n\
                     c.commit()\n\
                     c.close()",
                ])
                .arg(db)
                .arg(sql)
                .output(),
        }
        .expect("run the SQLite reader");
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Every run id the store holds.
    fn ids(&self, db: &Path) -> BTreeSet<i64> {
        self.run(db, "SELECT id FROM runs")
            .iter()
            .map(|l| l.parse().unwrap())
            .collect()
    }

    /// `PRAGMA integrity_check`'s answer.
    fn integrity(&self, db: &Path) -> String {
        self.run(db, "PRAGMA integrity_check").join("\n")
    }
}

/// The run ids `/api/runs` lists.
fn served_ids(served: &Served) -> BTreeSet<i64> {
    // Every page, as a client that wants everything reads them: its
    // `Link: <...>; rel="next"` followed until there is none.
    let mut ids = BTreeSet::new();
    let mut path = "/api/runs".to_string();
    for _ in 0..100 {
        let res = served.get(&path);
        assert_eq!(res.status, 200, "{path}: {}", res.text());
        let doc: Value = serde_json::from_slice(&res.body).unwrap();
        ids.extend(
            doc["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_i64().unwrap()),
        );
        match res.header("link") {
            Some(link) => {
                let (next, _) = link.trim_start_matches('<').split_once('>').unwrap();
                path = next.to_string();
            }
            None => return ids,
        }
    }
    panic!("/api/runs: more than 100 pages");
}

/// Wait until serve lists exactly `ids`, at most [`SEEN_WITHIN`].
fn assert_served_within(served: &Served, ids: &BTreeSet<i64>, what: &str) {
    let start = Instant::now();
    loop {
        let seen = served_ids(served);
        if &seen == ids {
            return;
        }
        assert!(
            start.elapsed() < SEEN_WITHIN,
            "{what}: serve lists {} runs, the store holds {} (missing {:?}, gone {:?})",
            seen.len(),
            ids.len(),
            ids.difference(&seen).take(5).collect::<Vec<_>>(),
            seen.difference(ids).take(5).collect::<Vec<_>>(),
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A run document to import, written once.
fn doc_file(dir: &Path) -> String {
    let file = dir.join("run.json");
    let doc = read_run("beside", 100.0, 0.1, Some(50.0));
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    file.to_str().unwrap().to_string()
}

/// The reproduction of issue 45, 200 writes long: `sqlite3 c.db "select
/// count(*) from runs"` beside a running serve made SQLite delete `-wal`
/// and `-shm` under it (serve had lost its lock on the database: its
/// read-only open opened and closed the file to test it for writing), and
/// from then on serve listed 8 runs of 37, said "no run 20", and answered
/// 500 "database disk image is malformed".
#[test]
fn another_sqlite_reader_and_a_writer_beside_serve_leave_it_every_run() {
    let sqlite = require!(Sqlite::here());
    let scratch = ScratchDb::named("c.db");
    let db = scratch.path();
    let doc = doc_file(scratch.dir.path());
    let import = || iomark_ok(&["results", "import", &doc, "--db", scratch.db()]);
    import();
    let served = Served::start(scratch.db(), &[]);
    assert_eq!(served.get("/").status, 200);

    let (mut writes, mut imported) = (0, 1);
    let mut deleted = Vec::new();
    while writes < 200 {
        // The other reader opens, reads and closes: the close is what
        // deleted the WAL under serve.
        let held = sqlite.ids(db);
        assert_served_within(&served, &held, &format!("after {writes} writes"));
        if writes % 7 == 6 {
            let victim = *held.iter().nth(held.len() / 2).unwrap();
            let id = victim.to_string();
            iomark_ok(&["results", "delete", &id, "--db", scratch.db()]);
            deleted.push(victim);
        } else {
            import();
            imported += 1;
        }
        writes += 1;
        if writes % 25 == 0 {
            assert_eq!(sqlite.integrity(db), "ok", "after {writes} writes");
            // A run's page, and a deleted run's, read right.
            let last = *sqlite.ids(db).last().unwrap();
            let page = served.get(&format!("/runs/{last}"));
            assert_eq!(page.status, 200, "{}", page.text());
            let gone = served.get(&format!("/runs/{}", deleted[0]));
            assert_eq!(gone.status, 404, "{}", gone.text());
        }
    }
    let held = sqlite.ids(db);
    assert_served_within(&served, &held, "at the end");
    assert_eq!(held.len(), imported - deleted.len());
    assert_eq!(sqlite.integrity(db), "ok");
    let log = served.proc.stderr_so_far();
    assert!(!log.contains("iomark serve: "), "a request failed: {log}");
}

/// A run whose stored figures are garbage fails its page (500, logged
/// with its cause on stderr); the server keeps its connections and
/// their locks, and goes on listing what is written beside it.
#[test]
fn a_page_the_store_fails_is_logged_and_the_store_stays_open() {
    let sqlite = require!(Sqlite::here());
    let scratch = ScratchDb::named("c.db");
    let db = scratch.path();
    let doc = doc_file(scratch.dir.path());
    let import = || iomark_ok(&["results", "import", &doc, "--db", scratch.db()]);
    import();
    import();
    sqlite.run(
        db,
        "UPDATE figures SET value = 'not a number' WHERE run_id = 1",
    );
    let served = Served::start(scratch.db(), &[]);
    for _ in 0..2 * iomark_serve::WORKERS {
        let broken = served.get("/runs/1");
        assert_eq!(broken.status, 500, "{}", broken.text());
        sqlite.ids(db);
        import();
        assert_served_within(&served, &sqlite.ids(db), "after a failed page");
    }
    let log = served.proc.stderr_so_far();
    let logged: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("iomark serve: GET /runs/1: 500: "))
        .collect();
    assert_eq!(
        logged.len(),
        2 * iomark_serve::WORKERS,
        "each failure logged once: {log}"
    );
    assert!(
        logged[0].contains("results database") && logged[0].contains("c.db"),
        "the cause is named: {log}"
    );
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    assert!(Path::new(&wal).exists(), "the WAL was deleted under serve");
    assert_eq!(served.get("/runs/2").status, 200);
    assert_eq!(sqlite.integrity(db), "ok");
}

/// Every query parameter of every page and API route, out of range,
/// repeated too often or malformed: a 4xx whose text names the fix, and
/// nothing logged as a server error.
#[test]
fn every_bad_query_value_is_a_4xx_naming_the_fix() {
    let scratch = ScratchDb::new();
    let doc = doc_file(scratch.dir.path());
    for _ in 0..2 {
        iomark_ok(&["results", "import", &doc, "--db", scratch.db()]);
    }
    let served = Served::start(scratch.db(), &[]);
    let labels = "label=a&".repeat(5_500);
    let ids = "id=1&".repeat(101);
    let metrics = "metric=bw&".repeat(17);
    let long = "x".repeat(2_000);
    let cases: Vec<(String, u16, &str)> = vec![
        // The list and /api/runs: pages, counts, filters.
        (
            "/?page=184467440737095516".into(),
            400,
            "'page=184467440737095516' is not a whole number from 1 to",
        ),
        ("/?page=0".into(), 400, "from 1 to"),
        ("/?page=-3".into(), 400, "from 1 to"),
        ("/?page=1.5".into(), 400, "from 1 to"),
        (
            "/?page=1&page=2".into(),
            400,
            "'page' is given 2 times: give it once",
        ),
        (
            format!("/?{labels}"),
            400,
            "5500 parameters is too many: give at most 200",
        ),
        (
            format!("/?{}", "label=a&".repeat(33)),
            400,
            "'label' is given 33 times: give it at most 32 times",
        ),
        (
            format!("/api/runs?{labels}"),
            400,
            "5500 parameters is too many",
        ),
        (
            format!("/?device={long}"),
            400,
            "'device' is 2000 bytes long: give at most 1024",
        ),
        (
            format!("/api/runs?host={long}"),
            400,
            "'host' is 2000 bytes long",
        ),
        ("/?host=a%00b".into(), 400, "NUL character"),
        ("/?label=%00".into(), 400, "NUL character"),
        ("/?kind=tape".into(), 400, "use disk, mem, net"),
        ("/?profile=a&profile=b".into(), 400, "give it once"),
        ("/?since=yesterday".into(), 400, "neither a date nor a span"),
        ("/?until=99999999999y".into(), 400, "'until=99999999999y'"),
        ("/?since=2026-13-45".into(), 400, "'since=2026-13-45'"),
        ("/?devcie=sda".into(), 400, "unknown parameter 'devcie'"),
        (
            format!("/?{}", "kind=disk&".repeat(201)),
            400,
            "give at most 200",
        ),
        (
            "/api/runs?limit=0".into(),
            400,
            "'limit=0' is out of range: use 1 to 1000",
        ),
        (
            "/api/runs?limit=99999999999999999999".into(),
            400,
            "is out of range: use 1 to 1000",
        ),
        (
            "/api/runs?offset=9223372036854775808".into(),
            400,
            "from 0 to 9223372036854775807",
        ),
        ("/api/runs?offset=x".into(), 400, "'offset=x'"),
        // One run and its live paths.
        (
            "/runs/1?x=1".into(),
            400,
            "unknown parameter 'x': this page takes none",
        ),
        (
            "/runs/99999999999999999999".into(),
            404,
            "run ids are numbers",
        ),
        (
            "/runs/9223372036854775807".into(),
            404,
            "no run 9223372036854775807",
        ),
        ("/api/runs/1?x=1".into(), 400, "this page takes none"),
        (
            "/api/runs/1/samples?after=-1".into(),
            400,
            "'after=-1' is not a whole number from 0 to",
        ),
        (
            "/api/runs/1/samples?after=99999999999999999999".into(),
            400,
            "from 0 to",
        ),
        (
            "/api/runs/1/samples?after=1&after=2".into(),
            400,
            "give it once",
        ),
        ("/live?x=1".into(), 400, "this page takes none"),
        ("/live/1?x=1".into(), 400, "this page takes none"),
        (
            "/live/1/bandwidth.svg?seq=1&seq=2".into(),
            400,
            "give it once",
        ),
        ("/api/live/1?x=1".into(), 400, "this page takes none"),
        ("/metrics?x=1".into(), 400, "this page takes none"),
        // Compare, page and API.
        (
            format!("/compare?{ids}"),
            400,
            "'id' is given 101 times: give it at most 100 times",
        ),
        (
            format!("/api/compare?id=1&id=2&{metrics}"),
            400,
            "'metric' is given 17 times: give it at most 16 times",
        ),
        ("/compare?id=1".into(), 400, "name 2 runs or more"),
        ("/compare?id=1&id=x".into(), 400, "'id=x'"),
        (
            "/api/compare?id=1&id=99999999999999999999".into(),
            400,
            "not a run id",
        ),
        (
            "/api/compare?id=1&id=9223372036854775807".into(),
            404,
            "no run 9223372036854775807",
        ),
        (
            "/api/compare?id=1&id=2&fail_if_worse=lots".into(),
            400,
            "'fail_if_worse=lots'",
        ),
        (
            "/api/compare?id=1&id=2&fail_if_worse=-5%25".into(),
            400,
            "'fail_if_worse=-5%'",
        ),
        ("/api/compare?id=1&id=2&metric=nope".into(), 400, "nope"),
        (
            "/api/compare?id=1&baseline=1&baseline_label=x".into(),
            400,
            "not both",
        ),
        (
            "/api/compare?id=1&id=2&baseline_label=nosuch".into(),
            400,
            "none of #1, #2 is labelled nosuch",
        ),
        ("/compare?id=1&baseline=x".into(), 400, "'baseline=x'"),
        // Devices.
        ("/devices?x=1".into(), 400, "this page takes none"),
        ("/devices/history".into(), 400, "name one device"),
        ("/devices/history?name=a&name=b".into(), 400, "give it once"),
        (
            format!("/devices/history?name={long}"),
            400,
            "2000 bytes long",
        ),
        (
            "/devices/history?name=nothing-here".into(),
            404,
            "no stored run measured",
        ),
    ];
    for (path, status, needle) in &cases {
        let res = served.get(path);
        let text = unescaped(&res.text());
        let shown = &path[..path.len().min(80)];
        assert_eq!(res.status, *status, "{shown}: {text}");
        assert!(text.contains(needle), "{shown}: {needle:?} not in {text}");
    }
    // And the edges that are not errors.
    for fine in [
        "/api/runs?offset=9223372036854775807",
        "/api/runs?limit=1000",
        "/?page=92233720368547758",
        &format!("/?{}", "label=a&".repeat(32)),
    ] {
        let res = served.get(fine);
        assert_eq!(
            res.status,
            200,
            "{}: {}",
            &fine[..fine.len().min(80)],
            res.text()
        );
    }
    let log = served.proc.stderr_so_far();
    assert!(!log.contains("iomark serve: "), "a request failed: {log}");
}

/// `html` with the escapes the pages use undone.
fn unescaped(html: &str) -> String {
    html.replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// `results list` (and the other reading commands) refuse a `--db` that
/// is a directory, a FIFO or a device, in one line with exit code 2, as
/// `serve` and `import` do; a file that does not exist yet is still no
/// stored runs.
#[test]
fn a_store_path_that_is_not_a_file_is_refused_for_reading() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let doc = doc_file(dir.path());
    for (path, what) in [
        (dir.path().to_str().unwrap(), "a directory"),
        (fifo.to_str().unwrap(), "a FIFO"),
        ("/dev/null", "a character device"),
    ] {
        let needle = format!("{path} is {what}, not a results database file: give --db");
        for args in [
            vec!["results", "list", "--db", path],
            vec!["results", "list", "--json", "--db", path],
            vec!["results", "show", "1", "--db", path],
            vec!["results", "import", &doc, "--db", path],
            vec!["serve", "--db", path, "--bind", "127.0.0.1:0"],
        ] {
            let out = iomark(&args);
            let err = fails_with(&out, &needle);
            assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
            assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
        }
    }
    // Nothing there yet: an empty list, exit 0, and nothing created.
    let missing = dir.path().join("none.db");
    let out = iomark(&["results", "list", "--db", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no results database"),
        "{}",
        stderr(&out)
    );
    assert!(!missing.exists());
}

/// `--token` refuses an empty, blank or short token in one line, exit 2;
/// the cookie it sets is named after the port and set for every path.
#[test]
fn the_token_is_refused_weak_and_its_cookie_is_this_server_s() {
    let scratch = ScratchDb::new();
    let doc = doc_file(scratch.dir.path());
    iomark_ok(&["results", "import", &doc, "--db", scratch.db()]);
    for weak in [
        "",
        " ",
        "                    ",
        "short",
        "123456789012345",
        "  0123456789abcd  ",
    ] {
        for bind in ["127.0.0.1:0", "0.0.0.0:0"] {
            let out = iomark(&[
                "serve",
                "--db",
                scratch.db(),
                "--bind",
                bind,
                "--token",
                weak,
            ]);
            let err = fails_with(&out, "--token needs 16 characters or more");
            assert_eq!(err.trim_end().lines().count(), 1, "{weak:?}: {err}");
            assert!(err.contains("--token generate"), "{err}");
        }
    }
    let token = "0123456789abcdef-token";
    let served = Served::start(scratch.db(), &["--token", token]);
    let port = served.addr.rsplit(':').next().unwrap();
    let first = served.get(&format!("/runs/1?token={token}"));
    assert_eq!(first.status, 303);
    let cookie = first.header("set-cookie").unwrap();
    assert_eq!(
        cookie,
        format!("iomark_token_{port}={token}; Path=/; HttpOnly; SameSite=Strict")
    );
    let pair = cookie.split(';').next().unwrap();
    assert_eq!(served.get_with("/devices", &[("Cookie", pair)]).status, 200);
    // Another port's cookie (another server on this host name) is not this one's.
    let other = format!("iomark_token_1={token}");
    assert_eq!(
        served.get_with("/devices", &[("Cookie", &other)]).status,
        401
    );
    let bearer = format!("Bearer {token}");
    assert_eq!(
        served
            .get_with("/api/runs", &[("Authorization", &bearer)])
            .status,
        200
    );
}

/// Issue 48: a run's warnings are counted alike wherever they are shown:
/// `results list`, `results show`, `/api/runs`, the run's page in serve
/// and the report, each counting what was raised (one message raised by
/// three jobs is three), the report and the page adding how many differ.
#[test]
fn a_runs_warning_count_agrees_in_list_show_the_api_serve_and_the_report() {
    use iomark_model::{RunBody, Warning, WarningKind};
    let scratch = ScratchDb::new();
    let mut doc = read_run("counted", 100.0, 0.02, None);
    let RunBody::Disk(d) = &mut doc.body else {
        unreachable!()
    };
    for name in ["second", "third"] {
        let mut j = d.jobs[0].clone();
        j.spec.name = name.into();
        d.jobs.push(j);
    }
    for j in &mut d.jobs {
        j.warnings.push(Warning::new(
            WarningKind::ForeignIo,
            "other I/O reached vda",
        ));
    }
    doc.warnings
        .push(Warning::new(WarningKind::Shortened, "--quick: 1 pass"));
    import_doc(Path::new(scratch.db()), scratch.dir.path(), "counted", &doc);
    let raised = 4;
    let listed = json(&results(scratch.db(), &["list", "--json"]));
    assert_eq!(listed["runs"][0]["warning_count"], raised, "{listed}");
    let shown = json(&results(scratch.db(), &["show", "1", "--json"]));
    assert_eq!(shown["warnings"].as_array().unwrap().len(), raised);
    let served = Served::start(scratch.db(), &[]);
    let api: Value = serde_json::from_slice(&served.get("/api/runs").body).unwrap();
    assert_eq!(api["runs"][0]["warning_count"], raised, "{api}");
    let said = format!(": {raised} warnings, 2 different");
    let page = served.get("/runs/1").text();
    assert!(page.contains(&said), "{page}");
    let html = scratch.dir.path().join("report.html");
    ok(&iomark(&[
        "report",
        "1",
        "--db",
        scratch.db(),
        "--html",
        html.to_str().unwrap(),
    ]));
    let report = std::fs::read_to_string(&html).unwrap();
    assert!(report.contains(&said), "{report}");
}
