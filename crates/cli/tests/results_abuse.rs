//! What an outside attack on the results side tried, each staged for real:
//! reports and databases on a full or read-only file system, labels and
//! notes of megabytes, Markdown cells with `|` and HTML, imported
//! documents no run can have, and a relative `XDG_DATA_HOME` or `HOME`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use iomark_model::{RunBody, RunDocument, Warning, WarningKind};
use iomark_testrig::{assert_within, MountedFs};
use serde_json::Value;

/// Stderr of a run that must have failed with exit 2 and one line.
fn one_line_failure(out: &Output) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "expected exit 2: {err}");
    assert!(err.starts_with("iomark: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    err
}

/// Fills the file system `dir` is on to its last block, and checks that
/// a byte more does not fit.
fn fill(dir: &Path) {
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    // Big writes first, then blocks, so the last partial block is used too.
    for chunk in [1 << 20, 1 << 10, 1] {
        let buf = vec![0u8; chunk];
        loop {
            match f.write_all(&buf) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling {}: {e}", dir.display()),
            }
        }
    }
    f.sync_all().unwrap();
    let probe = dir.join("probe");
    let res = std::fs::write(&probe, b"x");
    std::fs::remove_file(&probe).unwrap();
    assert_eq!(
        res.map_err(|e| e.raw_os_error()),
        Err(Some(libc::ENOSPC)),
        "{} is not full",
        dir.display()
    );
}

/// Frees what [`fill`] took.
fn unfill(dir: &Path) {
    std::fs::remove_file(dir.join("filler")).unwrap();
}

/// Every file under `dir` by path, with its bytes.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(contents(&p));
        } else {
            out.insert(p.clone(), std::fs::read(&p).unwrap());
        }
    }
    out
}

/// The names of temporary files left anywhere under `dir`.
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    contents(dir)
        .into_keys()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect()
}

/// `iomark report ARGS... --db DB`.
fn report(db: &str, args: &[&str]) -> Output {
    iomark_cmd(&["report", "--db", db])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_report_on_a_full_file_system_leaves_the_last_one_whole() {
    let fs = require!(MountedFs::ext4(16 << 20));
    let mnt = &fs.mountpoint;
    let scratch = ScratchDb::new();
    let db = scratch.db();
    store(
        db,
        [
            read_run("usb2", 40.0, 0.05, Some(800.0)),
            read_run("usb3", 80.0, 0.05, Some(400.0)),
            read_run("nvme", 900.0, 0.05, Some(90.0)),
        ],
    );
    let html = mnt.join("report.html");
    let charts = mnt.join("charts");
    let (html_s, charts_s) = (html.to_str().unwrap(), charts.to_str().unwrap());
    ok(&report(
        db,
        &["1", "2", "--html", html_s, "--png", charts_s],
    ));
    let before = contents(mnt);
    assert!(before.keys().any(|p| p.starts_with(&charts)), "{before:?}");

    fill(mnt);
    // A report of three runs in place of the one of two: nothing fits.
    let err = one_line_failure(&report(
        db,
        &["1", "2", "3", "--html", html_s, "--png", charts_s],
    ));
    assert!(
        err.contains(&format!("cannot write {html_s}: the file system is full"))
            && err.contains(&format!("{html_s} is unchanged"))
            && err.contains("free some space"),
        "{err}"
    );
    let err = one_line_failure(&report(db, &["1", "2", "3", "--png", charts_s]));
    assert!(
        err.contains("the file system is full")
            && err.contains(&format!("every PNG in {charts_s} is unchanged")),
        "{err}"
    );
    unfill(mnt);
    assert_eq!(contents(mnt), before, "the last report was changed");
    assert_eq!(temporaries(mnt), Vec::<PathBuf>::new());

    // With room, the new report replaces the old one whole.
    ok(&report(
        db,
        &["1", "2", "3", "--html", html_s, "--png", charts_s],
    ));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("nvme") && page.ends_with("</html>\n"),
        "{page}"
    );
    assert_eq!(temporaries(mnt), Vec::<PathBuf>::new());
}

#[test]
fn a_full_file_system_under_the_database_is_named_with_the_fix() {
    let fs = require!(MountedFs::ext4(16 << 20));
    let mnt = &fs.mountpoint;
    let db = mnt.join("r.db");
    let db = db.to_str().unwrap();
    store(
        db,
        [
            read_run("a", 40.0, 0.0, None),
            read_run("b", 41.0, 0.0, None),
        ],
    );
    let doc = mnt.join("run.json");
    std::fs::write(
        &doc,
        serde_json::to_vec(&read_run("c", 1.0, 0.0, None)).unwrap(),
    )
    .unwrap();
    fill(mnt);
    for args in [vec!["import", doc.to_str().unwrap()], vec!["list"]] {
        let err = one_line_failure(&results(db, &args));
        assert!(
            err.contains(&format!(
                "results database {db}: the file system it is on is full"
            )) && err.contains("free some space there, or pass --db PATH"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("disk I/O error;"), "{err}");
    }
    unfill(mnt);
    // The failed import stored nothing.
    let list = ok(&results(db, &["list"]));
    assert_eq!(list.lines().count(), 3, "{list}");
}

#[test]
fn a_read_only_file_system_under_the_database_is_named_with_the_fix() {
    let fs = require!(MountedFs::ext4(16 << 20));
    let mnt = &fs.mountpoint;
    let db = mnt.join("r.db");
    let db = db.to_str().unwrap();
    store(db, [read_run("a", 40.0, 0.0, None)]);
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("run.json");
    std::fs::write(
        &doc,
        serde_json::to_vec(&read_run("c", 1.0, 0.0, None)).unwrap(),
    )
    .unwrap();
    let remount = |how: &str| {
        // A child another test spawns copies this process's descriptors
        // until it execs, and on a loaded host that can take a while: one
        // that forked while the store above had r.db open held it open for
        // writing, and the kernel refused the remount ("mount point is
        // busy"). Wait until nothing has a file here open for writing.
        wait_until(Duration::from_secs(30), "no writer on the mount", || {
            writers_under(mnt).is_empty()
        });
        let st = Command::new("mount")
            .args(["-o", &format!("remount,{how}")])
            .arg(mnt)
            .status()
            .unwrap();
        assert!(
            st.success(),
            "remount {how}: writers {:?}",
            writers_under(mnt)
        );
    };
    remount("ro");
    let fresh = mnt.join("new.db");
    for db in [db, fresh.to_str().unwrap()] {
        let err = one_line_failure(&results(db, &["import", doc.to_str().unwrap()]));
        assert!(
            err.contains(&format!(
                "results database {db} is read-only (the file system it is on is mounted read-only)"
            )) && err.contains("pass --db PATH to a writable place"),
            "{err}"
        );
    }
    // Reading needs no writing.
    let list = ok(&results(db, &["list"]));
    assert_eq!(list.lines().count(), 2, "{list}");
    remount("rw");
    assert_eq!(dir_names(mnt), ["lost+found", "r.db"]);
}

/// `pid:fd` of every descriptor open for writing on a file under `dir`
/// (procfs's `fdinfo` flags: O_WRONLY or O_RDWR).
fn writers_under(dir: &Path) -> Vec<String> {
    let mut writers = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return writers;
    };
    for p in procs.flatten() {
        let pid = p.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let on_dir = std::fs::read_link(fd.path()).is_ok_and(|t| t.starts_with(dir));
            let info = p.path().join("fdinfo").join(fd.file_name());
            let flags = std::fs::read_to_string(info).ok().and_then(|i| {
                let octal = i.lines().find_map(|l| l.strip_prefix("flags:"))?;
                u32::from_str_radix(octal.trim(), 8).ok()
            });
            if on_dir && flags.is_some_and(|f| f & 0o3 != 0) {
                writers.push(format!("{pid}:{}", fd.file_name().to_string_lossy()));
            }
        }
    }
    writers
}

#[test]
fn a_relative_xdg_data_home_is_ignored_and_a_relative_home_refused() {
    let cwd = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let doc = home.path().join("run.json");
    std::fs::write(
        &doc,
        serde_json::to_vec(&read_run("a", 1.0, 0.0, None)).unwrap(),
    )
    .unwrap();
    let doc = doc.to_str().unwrap();
    let iomark_in = |env: &[(&str, &str)], args: &[&str]| {
        let mut cmd = Command::new(IOMARK);
        cmd.current_dir(cwd.path())
            .env_remove("IOMARK_DB")
            .env_remove("XDG_DATA_HOME")
            .env_remove("HOME")
            .arg("results")
            .args(args)
            .stdin(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    // The specification: a relative XDG_DATA_HOME is ignored, HOME's
    // .local/share is used.
    let env = [
        ("XDG_DATA_HOME", "data"),
        ("HOME", home.path().to_str().unwrap()),
    ];
    ok(&iomark_in(&env, &["import", doc]));
    assert!(home.path().join(".local/share/iomark/results.db").is_file());
    let list = ok(&iomark_in(&env, &["list"]));
    assert_eq!(list.lines().count(), 2, "{list}");
    // A relative HOME has nothing to fall back on: refused, not used.
    for env in [
        vec![("HOME", "home")],
        vec![("HOME", "."), ("XDG_DATA_HOME", "./share")],
    ] {
        for args in [vec!["import", doc], vec!["list"]] {
            let err = one_line_failure(&iomark_in(&env, &args));
            assert!(
                err.contains(&format!("HOME is '{}', a relative path", env[0].1))
                    && err.contains("pass --db PATH"),
                "{err}"
            );
        }
    }
    assert_empty_dir(cwd.path(), "a database under the current directory");
}

#[test]
fn labels_and_notes_over_1_kib_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let db_s = db.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let long = "l".repeat(100 << 10);
    let limit = "1 KiB (1024 bytes)";
    let refused = |out: Output, what: &str| {
        let err = one_line_failure(&out);
        assert!(err.contains(what) && err.contains(limit), "{err}");
        // Named, not quoted.
        assert!(err.len() < 300, "{} bytes of message", err.len());
    };
    for args in [
        vec!["disk", d, "--size", "4M", "--label", &long, "--db", db_s],
        vec![
            "disk", d, "--size", "4M", "--label", "ok", "--note", &long, "--db", db_s,
        ],
        vec![
            "disk",
            d,
            "--size",
            "4M",
            "--label",
            &format!("{long},x"),
            "--no-store",
        ],
    ] {
        let what = if args.contains(&"--note") {
            "--note is"
        } else {
            "--label is"
        };
        refused(iomark(&args), what);
    }
    assert_empty_dir(dir.path(), "a run with a refused label");

    let file = dir.path().join("run.json");
    let import = |doc: &RunDocument, extra: &[&str]| {
        std::fs::write(&file, serde_json::to_vec(doc).unwrap()).unwrap();
        let mut args = vec!["import", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        results(db_s, &args)
    };
    let plain = read_run("a", 1.0, 0.0, None);
    refused(
        import(&plain, &["--label", &long]),
        "--label is 102400 bytes",
    );
    refused(import(&plain, &["--note", &long]), "--note is 102400 bytes");
    let huge = read_run(&"x".repeat(5 << 20), 1.0, 0.0, None);
    refused(import(&huge, &[]), "labels[0] is 5242880 bytes long");
    let mut noted = read_run("a", 1.0, 0.0, None);
    noted.note = Some("n".repeat(2048));
    refused(import(&noted, &[]), "note is 2048 bytes long");
    refused(
        report(db_s, &["--label", &long, "--html", "-"]),
        "--label is",
    );
    assert!(!db.exists(), "a refusal created the database");

    // At the limit a label is taken, and a report of it is quick.
    let at_limit = read_run(&"w".repeat(1024), 1.0, 0.05, Some(100.0));
    ok(&import(&at_limit, &["--note", &"n".repeat(1024)]));
    let start = Instant::now();
    let png = dir.path().join("png");
    let out = report(db_s, &["1", "--html", "-", "--png", png.to_str().unwrap()]);
    assert_within(
        "report of a run with a 1 KiB label",
        start.elapsed(),
        Duration::from_secs(10),
    );
    let page = ok(&out);
    assert!(page.len() < 1 << 20, "{} bytes of page", page.len());
}

#[test]
fn markdown_export_escapes_every_cell_that_came_from_outside() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let mut evil = read_run("a|b<img src=x onerror=alert(1)>", 40.0, 0.05, None);
    evil.warnings.push(Warning::new(
        WarningKind::Other,
        "slow <script>alert(1)</script> | [x](javascript:y)",
    ));
    if let RunBody::Disk(d) = &mut evil.body {
        d.target.given = "/mnt/a|b".into();
        d.target.path = "/mnt/a|b/t".into();
        d.jobs[0].spec.name = "job|<b>bold</b>".into();
    }
    let [a, b] = store(db, [evil, read_run("plain", 41.0, 0.05, None)]);
    let md = ok(&results(db, &["export", &a, &b, "--format", "markdown"]));
    let table: Vec<&str> = md.lines().take_while(|l| l.starts_with('|')).collect();
    assert!(table.len() >= 3, "{md}");
    // Every row has the header's cells: an unescaped | starts each.
    let cells = |row: &str| {
        row.char_indices()
            .filter(|&(i, c)| {
                c == '|' && row[..i].chars().rev().take_while(|&b| b == '\\').count() % 2 == 0
            })
            .count()
    };
    for row in &table {
        assert_eq!(cells(row), cells(table[0]), "{row}\n{md}");
    }
    assert_eq!(cells(table[0]), 5, "{md}");
    assert!(
        !md.contains('<') && !md.contains('>'),
        "raw HTML passed: {md}"
    );
    assert!(
        md.contains("a\\|b&lt;img src=x onerror=alert(1)&gt;"),
        "{md}"
    );
    assert!(
        md.contains("slow &lt;script&gt;alert(1)&lt;/script&gt; \\| \\[x\\](javascript:y)"),
        "{md}"
    );
    // The terminal shows the same text as it is.
    let cmp = ok(&results_wide(db, &["compare", &a, &b]));
    assert!(cmp.contains("a|b<img src=x onerror=alert(1)>"), "{cmp}");
}

/// `read_run`'s document as JSON, with `edit` applied.
fn edited(edit: impl FnOnce(&mut Value)) -> Value {
    let mut v = serde_json::to_value(read_run("a", 40.0, 0.05, Some(100.0))).unwrap();
    edit(&mut v);
    v
}

#[test]
fn impossible_documents_are_refused_naming_the_field_and_nothing_is_stored() {
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let job = "body.jobs[0]";
    let pct = |p: f64| {
        move |v: &mut Value| {
            v["body"]["jobs"][0]["read"]["clat"]["percentiles"] =
                serde_json::json!([{"percent": 50.0, "ns": 100}, {"percent": p, "ns": 200}]);
        }
    };
    let cases: Vec<(Value, String)> = vec![
        (
            edited(|v| v["body"]["jobs"][0]["spec"]["bs"] = 0.into()),
            format!("{job}.spec.bs is 0"),
        ),
        (
            edited(|v| v["body"]["jobs"][0]["read"]["iops"] = (-1).into()),
            format!("{job}.read.iops is negative (-1)"),
        ),
        (
            edited(|v| v["body"]["jobs"][0]["read"]["bw"] = (-1.5).into()),
            format!("{job}.read.bw is negative (-1.5)"),
        ),
        (
            edited(pct(150.0)),
            format!(
                "{job}.read.clat.percentiles[1].percent is not a percentile from 0 to 100 (150.0)"
            ),
        ),
        (
            edited(pct(-5.0)),
            format!(
                "{job}.read.clat.percentiles[1].percent is not a percentile from 0 to 100 (-5.0)"
            ),
        ),
        (
            edited(|v| v["body"]["jobs"][0]["read"]["clat"]["mean_ns"] = (-3).into()),
            format!("{job}.read.clat.mean_ns is negative (-3)"),
        ),
        (
            edited(|v| v["body"]["jobs"][0]["samples"][2]["mean_lat_ns"] = (-1e6).into()),
            format!("{job}.samples[2].mean_lat_ns is negative"),
        ),
        (
            edited(|v| v["schema_version"] = 999.into()),
            "schema_version is 999, newer than this iomark reads".into(),
        ),
        (
            edited(|v| v["schema_version"] = 0.into()),
            "schema_version is 0, not a version of iomark's result document".into(),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, edited(|_| {}).to_string()).unwrap();
    for (i, (doc, field)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("bad{i}.json"));
        std::fs::write(&file, doc.to_string()).unwrap();
        // A good file beside it is not stored either.
        let err = one_line_failure(&results(
            db,
            &["import", good.to_str().unwrap(), file.to_str().unwrap()],
        ));
        assert!(
            err.contains(&format!("cannot import {}: {field}", file.display())),
            "{field}: {err}"
        );
        if field.starts_with("schema_version") {
            assert!(err.contains("this iomark reads schema version 1"), "{err}");
        }
        // In an exported array, the document is named by its place.
        let array = dir.path().join(format!("array{i}.json"));
        std::fs::write(&array, format!("[{}, {doc}]", edited(|_| {}))).unwrap();
        let err = one_line_failure(&results(db, &["import", array.to_str().unwrap()]));
        assert!(err.contains(&format!(": [1].{field}")), "{field}: {err}");
    }
    assert!(
        !Path::new(db).exists(),
        "a refused import created the database"
    );
    // The same document unharmed imports.
    ok(&results(db, &["import", good.to_str().unwrap()]));
}
