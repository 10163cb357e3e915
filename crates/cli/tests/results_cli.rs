//! `iomark results ...` end to end: the real binary on real databases.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::*;
use iomark_model::{RunBody, RunDocument, Warning, WarningKind};
use iomark_testrig::require;

fn fails(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "expected exit 2: {out:?}");
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(
        err.starts_with("iomark: ") || err.starts_with("error: "),
        "{err}"
    );
    err
}

/// Real fio JSON for a short sequential read.
fn fio_json(dir: &Path, bs: &str) -> PathBuf {
    let out = Command::new("fio")
        .args([
            "--name=seq",
            "--rw=read",
            &format!("--bs={bs}"),
            "--size=4M",
            "--ioengine=psync",
            "--output-format=json",
        ])
        .arg(format!("--filename={}", dir.join("fio.dat").display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let path = dir.join(format!("fio-{bs}.json"));
    std::fs::write(&path, out.stdout).unwrap();
    path
}

/// A one-job disk run reading at `mb` MB/s with per-second samples of
/// `mb * (1 ± wobble)`, warned about its link.
fn disk_doc(label: &str, mb: f64, wobble: f64) -> RunDocument {
    let mut doc = read_run(label, mb, wobble, None);
    doc.warnings.push(Warning::new(
        WarningKind::AboveLinkCeiling,
        format!("{label}: read is above the USB 2.0 ceiling"),
    ));
    doc
}

/// `run.json` in `dir`: one run document, to import.
fn run_json(dir: &Path) -> PathBuf {
    let path = dir.join("run.json");
    std::fs::write(
        &path,
        serde_json::to_string(&disk_doc("a", 1.0, 0.0)).unwrap(),
    )
    .unwrap();
    path
}

#[test]
fn compare_shows_ratios_to_the_baseline_and_marks_noise() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let [base, fast, same] = store(
        db,
        [
            disk_doc("usb2", 40.0, 0.02),
            disk_doc("usb3", 67.2, 0.05),
            disk_doc("again", 40.4, 0.02),
        ],
    );
    let out = ok(&results_wide(
        db,
        &["compare", &fast, &same, "--baseline", &base],
    ));
    // The runs' read bw cells, in whichever of the split tables each is.
    let rows: Vec<&str> = out.lines().filter(|l| l.contains("read bw")).collect();
    assert!(!rows.is_empty(), "{out}");
    let row = rows.join("\n");
    assert!(row.contains("40.00 MB/s"), "{row}");
    // 67.2 / 40: far better than the seconds scatter.
    assert!(row.contains("67.20 MB/s 1.68x better"), "{row}");
    assert!(!row.contains("1.68x~"), "{row}");
    // 40.4 / 40, four seconds each within 2%: the interval of the ratio
    // holds 1 and rules out a 5% loss, so it is noise.
    assert!(row.contains("40.40 MB/s 1.01x~ within noise"), "{row}");
    let header: String = out
        .lines()
        .skip_while(|l| !l.starts_with('┌'))
        .take_while(|l| !l.starts_with('╞'))
        .collect();
    assert!(
        header.contains(&format!("#{base}")) && header.contains("(baseline)"),
        "{out}"
    );
    assert!(out.contains("~ within noise: no change"), "{out}");
    // The verdict first.
    assert!(
        out.starts_with(&format!(
            "#{fast} against #{base}: 2 better\n#{same} against #{base}: 2 within noise\n"
        )),
        "{out}"
    );
    // Warnings stored with the runs come along, one line for the kind
    // all three raised.
    assert!(
        out.contains(&format!(
            "warning: above link ceiling ×3: #{base}, #{fast}, #{same}; the first: #{base} usb2: read is above the USB 2.0 ceiling"
        )),
        "{out}"
    );

    let show = ok(&results_wide(db, &["show", "-v", &fast]));
    assert!(
        show.contains("read 1MiB QD8 T1, io_uring, direct, random data, 1GiB")
            && show.contains("67.20 MB/s"),
        "{show}"
    );
    assert!(show.contains("63.84 – 70.56 MB/s"), "{show}");
    assert!(show.contains("  - usb3: read is above"), "{show}");

    let md = ok(&results(
        db,
        &["export", &base, &fast, "--format", "markdown"],
    ));
    assert!(
        md.lines().any(|l| l
            .starts_with("| read 1MiB QD8 T1, io_uring, direct, random data, 1GiB")
            && l.contains("1.68x")),
        "{md}"
    );
    let csv = ok(&results(db, &["export", &fast, "--format", "csv"]));
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("run_id,started_at_ms,status"));
    assert!(csv.contains(&format!("{fast},1790000000000,complete,iomark,usb3,/mnt/usb3,,\"read 1MiB QD8 T1, io_uring, direct, random data, 1GiB\",read bw,B/s,67200000,63840000,70560000")), "{csv}");
}

#[test]
fn compare_needs_two_runs_and_existing_ids() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let [id] = store(db, [disk_doc("a", 1.0, 0.0)]);
    let err = fails(&results(db, &["compare", &id]));
    assert!(err.contains("compare needs two runs"), "{err}");
    let err = fails(&results(db, &["compare", &id, "77"]));
    assert!(err.contains("no run 77"), "{err}");
    let err = fails(&results(db, &["show", "x1"]));
    assert!(err.contains("not a run id"), "{err}");
}

#[test]
fn fio_output_imports_lists_exports_and_deletes() {
    require!(have("fio"));
    let scratch = ScratchDb::new();
    let dir = &scratch.dir;
    let db = scratch.db();
    let a = fio_json(dir.path(), "64k");
    let b = fio_json(dir.path(), "1M");
    let out = ok(&results(
        db,
        &[
            "import",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--label",
            "fio",
            "--note",
            "baseline box",
        ],
    ));
    assert!(
        out.contains("as run 1 (fio 3.") && out.contains("as run 2"),
        "{out}"
    );
    let list = ok(&results_wide(db, &["list", "--label", "fio"]));
    assert_eq!(list.lines().count(), 3, "{list}");
    assert!(
        list.contains("fio") && list.contains("baseline box"),
        "{list}"
    );
    let json = ok(&results(db, &["export", "1", "2", "--format", "json"]));
    let docs: Vec<RunDocument> = serde_json::from_str(&json).unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0].labels, ["fio"]);
    assert!(docs[0].command_line.iter().any(|a| a == "import"));
    // An export imports into another database unchanged.
    let exported = dir.path().join("export.json");
    std::fs::write(&exported, &json).unwrap();
    let other = dir.path().join("other.db");
    let other = other.to_str().unwrap();
    let out = ok(&results(other, &["import", exported.to_str().unwrap()]));
    assert_eq!(out.lines().count(), 2, "{out}");
    let again = ok(&results(other, &["export", "1", "2", "--format", "json"]));
    let back: Vec<RunDocument> = serde_json::from_str(&again).unwrap();
    assert_eq!(back, docs);
    let cmp = flat(&ok(&results(db, &["compare", "1", "2"])));
    assert!(
        cmp.contains("read 64KiB QD1 T1, psync, buffered, random data, 4MiB")
            && cmp.contains("read 1MiB QD1 T1, psync, buffered, random data, 4MiB"),
        "{cmp}"
    );
    ok(&results(db, &["delete", "1"]));
    let list = ok(&results(db, &["list"]));
    assert_eq!(list.lines().count(), 2, "{list}");
    fails(&results(db, &["delete", "1"]));
}

#[test]
fn bad_import_files_store_nothing() {
    let scratch = ScratchDb::new();
    let dir = &scratch.dir;
    let db = scratch.db();
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, b"\x7fELF\x02\x01 not json at all").unwrap();
    let truncated = dir.path().join("cut.json");
    std::fs::write(
        &truncated,
        "{\"fio version\" : \"fio-3.33\", \"jobs\" : [ {\"jobname\": ",
    )
    .unwrap();
    let foreign = dir.path().join("other.json");
    std::fs::write(&foreign, "{\"benchmark\": \"something else\"}").unwrap();
    for (f, expect) in [
        (&garbage, "no JSON object found"),
        (&truncated, "truncated"),
        (&foreign, "neither fio's nor iperf3's"),
    ] {
        let err = fails(&results(db, &["import", f.to_str().unwrap()]));
        assert!(err.contains(expect), "{err}");
        assert!(err.contains(&f.display().to_string()), "{err}");
    }
    let err = fails(&results(
        db,
        &["import", dir.path().join("missing.json").to_str().unwrap()],
    ));
    assert!(err.contains("cannot read"), "{err}");
    if have("fio").is_ok() {
        // A good file next to a bad one: neither is stored.
        let good = fio_json(dir.path(), "64k");
        fails(&results(
            db,
            &["import", good.to_str().unwrap(), garbage.to_str().unwrap()],
        ));
    }
    let err = String::from_utf8(results(db, &["list"]).stderr).unwrap();
    assert!(err.contains("no stored runs"), "{err}");
}

#[test]
fn the_default_database_lives_under_xdg_data_home() {
    let dir = tempfile::tempdir().unwrap();
    let results = |args: &[&str]| {
        Command::new(IOMARK)
            .arg("results")
            .args(args)
            .env("XDG_DATA_HOME", dir.path())
            .output()
            .unwrap()
    };
    // Reading never creates a database.
    let out = results(&["list"]);
    assert!(out.status.success(), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("no stored runs") && err.contains("iomark/results.db"),
        "{err}"
    );
    assert!(
        !dir.path().join("iomark").exists(),
        "list created something"
    );
    let doc = run_json(dir.path());
    ok(&results(&["import", doc.to_str().unwrap()]));
    assert!(dir.path().join("iomark/results.db").is_file());
}

#[test]
fn names_that_would_keep_nothing_are_refused_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let doc = run_json(dir.path());
    let doc = doc.to_str().unwrap();
    for (db, fix) in [
        (":memory:", "keeps nothing after iomark exits"),
        ("sqlite://", "sqlite:///abs/path.db"),
        ("sqlite://:memory:", "keeps nothing after iomark exits"),
        ("file::memory:", "give the file's path"),
        (
            "host=db.example dbname=iomark password=hunter2secret",
            "use a postgres:// URL",
        ),
    ] {
        let out = Command::new(IOMARK)
            .current_dir(dir.path())
            .args(["results", "--db", db, "import", doc])
            .output()
            .unwrap();
        let err = fails(&out);
        assert!(out.stdout.is_empty(), "{db}: {out:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "{db}: {err}");
        assert!(err.contains(fix), "{db}: {err}");
        assert!(!err.contains("hunter2secret"), "password leaked: {err}");
    }
    // Nothing was written anywhere, not even a file named like the URL.
    assert_eq!(dir_names(dir.path()), ["run.json"]);
}

/// Runs `iomark results ...` as a user that may not write `dir`: `nobody`
/// when the tests run as root (root writes anything), else this user.
fn iomark_unprivileged(db: &str, args: &[&str]) -> Output {
    let root = rustix::process::geteuid().is_root();
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", IOMARK]);
        c
    } else {
        Command::new(IOMARK)
    };
    cmd.args(["results", "--db", db])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Puts a directory's mode back on drop, so tempfile can remove it even
/// when the test fails half-way.
struct Mode(PathBuf, u32);

impl Drop for Mode {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(self.1));
    }
}

#[test]
fn a_read_only_database_lists_shows_compares_and_exports() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("ro");
    std::fs::create_dir(&sub).unwrap();
    let db = sub.join("r.db");
    let db_s = db.to_str().unwrap();
    let [a, b] = store(
        db_s,
        [disk_doc("usb2", 40.0, 0.05), disk_doc("usb3", 80.0, 0.05)],
    );
    let set = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    // Others (nobody, when root) must reach the directory.
    set(dir.path(), 0o755);
    let _restore = Mode(sub.clone(), 0o755);
    set(&db, 0o444);
    set(&sub, 0o555);
    if rustix::process::geteuid().is_root() {
        require!(have("setpriv"));
    }
    let before = std::fs::read(&db).unwrap();
    let out = iomark_unprivileged(db_s, &["list"]);
    let list = ok(&out);
    assert_eq!(list.lines().count(), 3, "{list}");
    let show = ok(&iomark_unprivileged(db_s, &["show", &a]));
    assert!(show.contains("40.00 MB/s"), "{show}");
    let cmp = ok(&iomark_unprivileged(db_s, &["compare", &a, &b]));
    assert!(cmp.contains("80.00 MB/s 2.00x"), "{cmp}");
    for format in ["json", "csv", "markdown"] {
        let out = ok(&iomark_unprivileged(
            db_s,
            &["export", &a, &b, "--format", format],
        ));
        assert!(!out.is_empty(), "{format}");
    }
    // A write is refused with what to do, and nothing changed.
    let err = fails(&iomark_unprivileged(db_s, &["delete", &a]));
    assert!(
        err.contains("read-only") && err.contains("--db PATH"),
        "{err}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(dir_names(&sub), ["r.db"], "side files were left");
    // A database that is not there is not created by reading.
    let missing = sub.join("none.db");
    let err = fails(&iomark_unprivileged(
        missing.to_str().unwrap(),
        &["show", "1"],
    ));
    assert!(err.contains("no results database at"), "{err}");
}

#[test]
fn control_characters_in_stored_text_never_reach_the_terminal() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let evil = "x\x1b]0;pwned\x07\u{9b}31m\x7fy";
    let mut doc = disk_doc("plain", 40.0, 0.05);
    doc.labels.push(format!("l{evil}"));
    doc.note = Some(format!("n{evil}\nsecond line"));
    doc.warnings
        .push(Warning::new(WarningKind::Other, format!("w{evil}")));
    if let RunBody::Disk(d) = &mut doc.body {
        d.target.given = format!("/mnt/{evil}");
        d.target.path = format!("/mnt/{evil}/t");
        d.jobs[0].spec.name = format!("job{evil}");
    }
    let [a, b] = store(db, [doc, disk_doc("b", 41.0, 0.05)]);
    let raw = |c: char| matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}');
    for args in [
        vec!["list"],
        vec!["show", &a],
        vec!["compare", &a, &b],
        vec!["export", &a, &b, "--format", "markdown"],
    ] {
        // At 80 columns cells are cut, never mid-way into a raw control.
        let cut = ok(&results(db, &args));
        assert!(
            !cut.chars().any(raw),
            "{args:?} printed a control character: {cut:?}"
        );
        let out = ok(&results_wide(db, &args));
        assert!(
            !out.chars().any(raw),
            "{args:?} printed a control character: {out:?}"
        );
        // Markdown escapes the backslashes that show them, and the `]`.
        let shown = if args.contains(&"markdown") {
            "\\\\x1b\\]0;pwned\\\\x07\\\\x9b31m\\\\x7fy"
        } else {
            "\\x1b]0;pwned\\x07\\x9b31m\\x7fy"
        };
        assert!(out.contains(shown), "{args:?}: {out}");
    }
}

#[test]
fn list_rejects_a_since_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let err = fails(&results(
        db.to_str().unwrap(),
        &["list", "--since", "last tuesday"],
    ));
    assert!(err.contains("use 2026-11-01"), "{err}");
    let out = ok(&results(db.to_str().unwrap(), &["list", "--since", "7d"]));
    assert!(out.is_empty());
}

#[test]
fn postgres_urls_store_and_read_the_same_data() {
    let db = require!(PgScratchDb::new());
    let url = db.url.clone();
    let [a, b] = store(
        &url,
        [disk_doc("usb2", 40.0, 0.05), disk_doc("usb3", 80.0, 0.05)],
    );
    let list = ok(&results(&url, &["list", "--device", "USB3"]));
    assert_eq!(list.lines().count(), 2, "{list}");
    let cmp = ok(&results(&url, &["compare", &a, &b]));
    assert!(cmp.contains("80.00 MB/s 2.00x"), "{cmp}");
}

/// A scratch directory on a real disk (`/var/tmp`), removed on drop.
fn disk_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("iomark-figs-")
        .tempdir_in("/var/tmp")
        .or_else(|_| tempfile::tempdir())
        .unwrap()
}

/// Runs `iomark disk <dir> <args> --db <db>` and returns the stored run's id.
fn disk_run(dir: &Path, db: &str, args: &[&str]) -> String {
    let out = iomark_cmd(&["disk", dir.to_str().unwrap()])
        .args(args)
        .args(["--db", db])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let list = ok(&results(db, &["list"]));
    let last = list.lines().last().expect("a stored run");
    last.split_whitespace().next().unwrap().to_string()
}

#[test]
fn a_gnome_run_stores_its_figures_and_compares_with_what_it_can() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let dir = disk_scratch();
    let gnome = disk_run(
        dir.path(),
        db,
        &[
            "--profile",
            "gnome",
            "--size",
            "16MiB",
            "--samples",
            "4",
            "--sample-size",
            "1MiB",
            "--access-samples",
            "20",
        ],
    );
    let show = ok(&results_wide(db, &["show", "-v", &gnome]));
    assert!(!show.contains("no figures were stored"), "{show}");
    let transfer = "GNOME transfer rate, 4 x 1MiB samples of 16MiB";
    assert!(
        show.contains(transfer) && show.contains("read bw"),
        "{show}"
    );
    assert!(show.contains("read bw at 0.0%"), "{show}");
    assert!(
        show.contains("GNOME access time, 20 samples of 16MiB") && show.contains("access mean"),
        "{show}"
    );

    let csv = ok(&results(db, &["export", &gnome, "--format", "csv"]));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    // The read average, four positions, the access mean and median.
    assert_eq!(rows.len(), 7, "{csv}");
    assert!(rows.iter().any(|r| r.contains(transfer)), "{csv}");

    // A different test: a custom psync job asked for depth 32 ran at 1.
    let custom = disk_run(
        dir.path(),
        db,
        &[
            "--size",
            "4MiB",
            "--runtime",
            "200ms",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--engine",
            "psync",
            "--iodepth",
            "32",
        ],
    );
    let show = ok(&results_wide(db, &["show", "-v", &custom]));
    assert!(show.contains("randread 4KiB QD1 T1, psync"), "{show}");
    assert!(!show.contains("QD32"), "{show}");

    let cmp = results(db, &["compare", &gnome, &custom]);
    let cmp = ok(&cmp);
    // Nothing lines up: each run's tests are listed as missing from the other.
    assert!(
        cmp.contains(&format!("not in #{gnome}: randread 4KiB QD1 T1, psync")),
        "{cmp}"
    );
    assert!(
        cmp.contains(&format!("not in #{custom}: {transfer}")),
        "{cmp}"
    );
    // The headers name what each run measured through, when it was stored.
    assert!(cmp.contains(&format!("#{gnome}")) && cmp.contains(&format!("#{custom}")));
    assert!(
        test_files(dir.path()).is_empty(),
        "{:?}",
        test_files(dir.path())
    );
}

#[test]
fn runs_of_the_same_test_line_up_and_other_sizes_do_not() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let dir = disk_scratch();
    let job = |size: &'static str| {
        [
            "--size",
            size,
            "--runtime",
            "200ms",
            "--rw",
            "read",
            "--bs",
            "64k",
            "--engine",
            "psync",
        ]
    };
    let a = disk_run(dir.path(), db, &job("4MiB"));
    let b = disk_run(dir.path(), db, &job("4MiB"));
    let c = disk_run(dir.path(), db, &job("8MiB"));
    let same = ok(&results_wide(db, &["compare", "-v", &a, &b]));
    assert!(!same.contains("not in #"), "{same}");
    let row = same
        .lines()
        .find(|l| l.contains("read 64KiB QD1 T1, psync") && l.contains("read bw"))
        .expect(&same);
    assert!(row.contains('x'), "a ratio: {row}");
    // Each says why: the other ran the same work at another size (issue
    // 48), in the text and in the JSON.
    let other = flat(&ok(&results(db, &["compare", &a, &c])));
    assert!(
        other.contains(&format!(
            "not in #{a}, which ran it with 4MiB, not 8MiB: read 64KiB QD1 T1, psync"
        )),
        "{other}"
    );
    assert!(
        other.contains(&format!("not in #{c}, which ran it with 8MiB, not 4MiB: ")),
        "{other}"
    );
    let other = json(&results(db, &["compare", &a, &c, "--json"]));
    let unmatched = &other["unmatched"][0];
    assert_eq!(unmatched["run"].to_string(), a, "{other}");
    assert_eq!(
        unmatched["reasons"][0]["differs"],
        serde_json::json!([{"run_has": "4MiB", "missing": "8MiB"}]),
        "{other}"
    );
    assert_eq!(
        unmatched["reasons"][0]["test"], unmatched["missing_tests"][0],
        "{other}"
    );
}

#[test]
fn show_prints_the_per_rank_table_of_a_run_across_mpi_ranks() {
    use iomark_model::cluster::{ClusterRun, Layout, RankResult};
    use iomark_model::units::{Bytes, BytesPerSec, Nanos};
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let mut doc = disk_doc("mpi", 300.0, 0.0);
    // Rank 2 is the slowest (100 MB/s), rank 1 the fastest (150 MB/s);
    // rank 2 was stopped by rank 1's finish.
    let rank = |r: u32, mb: f64| RankResult {
        rank: r,
        host: format!("node{r}\x1b[31m"),
        path: format!("/scratch/{r}/iomark.tmp"),
        offset: Bytes(0),
        start: Nanos(1_000_000 * u64::from(r)),
        end: Nanos(2_000_000_000 + 1_000_000 * u64::from(r)),
        read_bytes: Bytes((mb * 2e6) as u64),
        write_bytes: Bytes(0),
        read_bw: BytesPerSec(mb * 1e6),
        write_bw: BytesPerSec(0.0),
        interrupted: false,
        stonewalled: r == 2,
        device: None,
        jobs: Vec::new(),
    };
    if let RunBody::Disk(d) = &mut doc.body {
        d.cluster = Some(Box::new(ClusterRun {
            ranks: 3,
            layout: Layout::FilePerRank,
            wall: Nanos(2_002_000_000),
            per_rank: vec![rank(0, 120.0), rank(1, 150.0), rank(2, 100.0)],
            stonewall: true,
        }));
    }
    let [id] = store(db, [doc]);
    let out = ok(&results(db, &["show", &id]));
    assert!(
        out.contains("3 ranks, file-per-rank, aggregate over 2.002s"),
        "{out}"
    );
    let rows: Vec<&str> = out.lines().filter(|l| l.contains("/scratch/")).collect();
    assert_eq!(rows.len(), 3, "{out}");
    for (r, (row, rate)) in rows.iter().zip(["120.00", "150.00", "100.00"]).enumerate() {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[0], r.to_string(), "{row}");
        // The host's escape is shown, not sent.
        assert_eq!(cells[1], format!("node{r}\\x1b[31m"), "{row}");
        assert!(row.contains(&format!("{rate} MB/s")), "{row}");
        assert!(row.ends_with(&format!("/scratch/{r}/iomark.tmp")), "{row}");
    }
    assert!(out.contains("slowest rank 2, fastest rank 1"), "{out}");
    assert!(
        out.contains("stonewall: rank 2 stopped at the first rank's finish"),
        "{out}"
    );
    assert!(!out.contains('\x1b'), "{out:?}");
}

#[test]
fn an_iperf3_text_log_imports_as_a_net_run() {
    use crate::net_common::{free_port, iperf3_server};
    require!(have("iperf3"));
    let port = free_port();
    let _server = iperf3_server(port, &["-1"]);
    let log = Proc::spawn(Command::new("iperf3").args([
        "-c",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-t",
        "1",
        "-P",
        "2",
        "-V",
    ]))
    .finish(std::time::Duration::from_secs(60));
    assert_ok(&log, "iperf3's text client");
    let scratch = ScratchDb::new();
    let file = scratch.dir.path().join("iperf3.txt");
    std::fs::write(&file, &log.stdout).unwrap();
    let out = results(scratch.db(), &["import", file.to_str().unwrap()]);
    assert_ok(&out, "the import");
    let shown = json_of(&results(scratch.db(), &["show", "1", "--json"]));
    assert_eq!(shown["document"]["tool"], "iperf3");
    let goodput = shown["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["metric"].as_str().is_some_and(|m| m.ends_with("goodput")))
        .unwrap_or_else(|| panic!("no goodput in {shown}"))["value"]
        .as_f64()
        .unwrap();
    // The log's own summary: `[SUM] ... 5.13 Gbits/sec ... receiver`.
    let text = String::from_utf8_lossy(&log.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("[SUM]") && l.ends_with("receiver"))
        .unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let i = words.iter().position(|w| w.ends_with("bits/sec")).unwrap();
    let scale = match words[i] {
        "Gbits/sec" => 1e9,
        "Mbits/sec" => 1e6,
        "Kbits/sec" => 1e3,
        _ => 1.0,
    };
    let stated: f64 = words[i - 1].parse::<f64>().unwrap() * scale;
    // Text is rounded to three digits: the figures agree to 1%.
    assert_near("goodput against the log's own", goodput, stated, 0.01);

    // Issue 46: the same log without -V's CPU line: its CPU is unknown,
    // so it has no CPU figure, and compare shows `-` beside the run that
    // has one, never 0%.
    let without: String = text
        .lines()
        .filter(|l| !l.contains("CPU Utilization"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(without, text, "the -V log has a CPU line");
    let file = scratch.dir.path().join("iperf3-no-cpu.txt");
    std::fs::write(&file, without).unwrap();
    ok(&results(scratch.db(), &["import", file.to_str().unwrap()]));
    let shown = json_of(&results(scratch.db(), &["show", "2", "--json"]));
    let cpu: Vec<&serde_json::Value> = shown["figures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["metric"].as_str().is_some_and(|m| m.contains("cpu")))
        .collect();
    assert!(cpu.is_empty(), "{cpu:?}");
    let cmp = ok(&results_wide(scratch.db(), &["compare", "1", "2", "-v"]));
    let row = cmp
        .lines()
        .find(|l| l.contains("cpu process %"))
        .unwrap_or_else(|| panic!("no CPU row: {cmp}"));
    let cells: Vec<&str> = row
        .split(['│', '┆'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(cells.last(), Some(&"-"), "{row}");
    assert!(cells[cells.len() - 2].ends_with('%'), "{row}");
}

/// Issue 45: an import of N files kept the whole N-file command line in
/// each of its N runs, so the store grew as N squared. Each run keeps the
/// import of its own file, with the options that shaped it.
#[test]
fn each_imported_run_keeps_its_own_file_as_its_command_line() {
    let scratch = ScratchDb::new();
    let dir = scratch.dir.path();
    let files: Vec<PathBuf> = (0..40)
        .map(|i| {
            let f = dir.join(format!("fio-{i:02}.json"));
            std::fs::write(&f, crate::report_html::fio_json_plus().to_string()).unwrap();
            f
        })
        .collect();
    let mut args = vec!["import", "--label", "batch", "--note", "forty files"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    ok(&results(scratch.db(), &args));
    let ids: Vec<String> = (1..=files.len()).map(|i| i.to_string()).collect();
    let mut export = vec!["export"];
    export.extend(ids.iter().map(String::as_str));
    let json = ok(&results(scratch.db(), &export));
    let docs: Vec<RunDocument> = serde_json::from_str(&json).unwrap();
    assert_eq!(docs.len(), files.len());
    for (doc, file) in docs.iter().zip(&files) {
        let line = &doc.command_line;
        assert_eq!(
            line[1..],
            [
                "results",
                "import",
                file.to_str().unwrap(),
                "--label",
                "batch",
                "--note",
                "forty files"
            ],
            "{line:?}"
        );
        assert!(line[0].ends_with("iomark"), "{line:?}");
        let other_files = files.iter().filter(|f| *f != file);
        for other in other_files {
            assert!(
                !line.iter().any(|a| a == other.to_str().unwrap()),
                "{line:?}"
            );
        }
    }
}

/// `results show`, `show -v`, `compare`, `compare -v` and `list` on an
/// 80x24 terminal and into a pipe (80 columns there too): no line over 80
/// columns, however long the runs' warnings, labels and devices are.
#[test]
fn show_compare_and_list_fit_80_columns_on_a_terminal_and_in_a_pipe() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let long = |label: &str, mb: f64| {
        let mut doc = disk_doc(label, mb, 0.03);
        doc.warnings.push(Warning::new(
            WarningKind::ForeignIo,
            format!(
                "other I/O reached vda during the job: 158 MiB read and 21 MiB written beyond \
                 what {label} did (another process used the device); the figures include \
                 its effect: run again with nothing else on the device"
            ),
        ));
        doc
    };
    let ids = store(
        db,
        [
            long("usb2-port-behind-the-hub", 40.0),
            long("usb3-port-on-the-mainboard", 67.2),
            long("usb3-port-on-the-front-panel", 61.0),
        ],
    );
    let runs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["show", runs[0]],
        vec!["show", "-v", runs[1]],
        vec!["list"],
    ];
    for verbose in [false, true] {
        let mut c = vec!["compare"];
        c.extend(verbose.then_some("-v"));
        c.extend(&runs);
        commands.push(c);
    }
    for args in &commands {
        let piped = ok(&results(db, args));
        let mut all = vec!["results", "--db", db];
        all.extend(args);
        let shown = require!(iomark_on_terminal(&all));
        for (how, text) in [("in a pipe", piped.as_str()), ("on a terminal", &shown)] {
            assert!(text.contains("usb"), "{args:?} {how}: {text}");
            for line in text.lines().map(|l| l.trim_end_matches('\r')) {
                if line.starts_with("Script ") {
                    continue;
                }
                assert!(
                    line.chars().count() <= 80,
                    "{args:?} {how}: {} columns: {line}\n{text}",
                    line.chars().count()
                );
            }
        }
    }
}
