//! `iomark disk` runs land in the results store; a run killed with
//! SIGKILL keeps the tests it finished and reads back as interrupted.

use std::process::Stdio;
use std::time::Duration;

use crate::common::*;
use iomark_model::live::LiveSample;
use iomark_model::RunStatus;
use iomark_store::{RunId, RunQuery};
use serde_json::Value;

#[test]
fn a_killed_profile_run_keeps_its_finished_tests() {
    let scratch = ScratchDb::named("results.db");
    let dir = &scratch.dir;
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let db = scratch.db();
    // macbench: four tests of 1 s each; kill during the third.
    let mut child = iomark_cmd(&["disk", target.to_str().unwrap(), "--profile", "macbench"])
        .args([
            "--size",
            "8M",
            "--runtime",
            "1s",
            "--engine",
            "psync",
            "--db",
            db,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until two tests are stored, then kill.
    let jobs = |db: &str| -> usize {
        let out = iomark_cmd(&["results", "--db", db, "export", "1", "--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| {
                let doc = if v.is_array() { v[0].clone() } else { v };
                doc["body"]["jobs"].as_array().map(Vec::len)
            })
            .unwrap_or(0)
    };
    wait_until(Duration::from_secs(30), "two tests stored", || {
        jobs(db) >= 2
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let list = ok(&results(db, &["list"]));
    assert!(list.contains("interrupted"), "{list}");
    assert!(jobs(db) >= 2, "finished tests kept");
}

/// A stored run's id, status and numbered seconds.
type Seconds = (RunId, RunStatus, Vec<(u64, LiveSample)>);

/// The run in `db` and its stored seconds; none before it is begun.
fn stored_seconds(db: &str) -> Option<Seconds> {
    let mut store = iomark_store::open_read_only(Some(db)).ok()?;
    let run = store.list(&RunQuery::default()).ok()?.pop()?;
    let seconds = store.samples(run.id, None).ok()?;
    Some((run.id, run.status, seconds))
}

#[test]
fn a_run_stores_each_second_as_it_goes_and_killed_keeps_them() {
    let scratch = ScratchDb::named("results.db");
    let target = scratch.dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let db = scratch.db();
    let mut child = Proc::spawn(
        iomark_cmd(&["disk", target.to_str().unwrap(), "--rw", "read"])
            .args(["--bs", "64k", "--size", "4M", "--engine", "null"])
            .args(["--runtime", "60s", "--db", db]),
    );
    // Two seconds stored while the run goes, and the run is in progress.
    wait_until(Duration::from_secs(60), "two seconds stored", || {
        stored_seconds(db).is_some_and(|(_, _, s)| s.len() >= 2)
    });
    assert!(child.running(), "{}", child.stderr_so_far());
    let (id, _, _) = stored_seconds(db).unwrap();
    let mut store = iomark_store::open_read_only(Some(db)).unwrap();
    let recently = now_ms() - 30_000;
    assert_eq!(store.in_progress(recently).unwrap(), [id]);
    child.signal(rustix::process::Signal::KILL);
    let _ = child.finish(Duration::from_secs(30));

    let (_, status, seconds) = stored_seconds(db).unwrap();
    assert_eq!(status, RunStatus::Interrupted);
    let seqs: Vec<u64> = seconds.iter().map(|(n, _)| *n).collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
    for (_, s) in &seconds {
        assert_eq!((s.step, s.steps), (1, 1), "{s:?}");
        assert!(s.bytes > 0 && s.ios > 0 && s.latency.is_some(), "{s:?}");
        assert!(s.duration_ms.abs_diff(1000) < 500, "{s:?}");
    }
    // Killed, it is no longer in progress once its seconds age.
    let last = seconds.last().unwrap().1.at_ms;
    assert_eq!(store.in_progress(last + 1).unwrap(), Vec::<RunId>::new());
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn a_custom_run_is_stored_with_its_labels() {
    let scratch = ScratchDb::named("results.db");
    let dir = &scratch.dir;
    let db = scratch.db();
    let o = iomark_cmd(&["disk", dir.path().to_str().unwrap(), "--size", "4M"])
        .args(["--runtime", "200ms", "--engine", "psync", "--db", db])
        .args(["--label", "usb3", "--note", "first try"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let list = ok(&results(db, &["list", "--label", "usb3"]));
    assert!(list.contains("complete") && list.contains("disk"), "{list}");
}

/// Writes `dir/filler` until the file system refuses more (ENOSPC).
fn fill_up(dir: &std::path::Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let block = vec![0x5a_u8; 1 << 16];
    loop {
        match f.write_all(&block).and_then(|()| f.sync_data()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("filling {}: {e}", dir.display()),
        }
    }
    // What fits in smaller pieces too.
    let small = [0x5a_u8; 512];
    while f.write_all(&small).and_then(|()| f.sync_data()).is_ok() {}
}

#[test]
fn a_run_whose_store_fills_up_prints_its_figures_and_exits_4() {
    iomark_testrig::require!(iomark_testrig::require_root());
    let fs = iomark_testrig::require!(iomark_testrig::MountedFs::ext4(8 << 20));
    let db_path = fs.mountpoint.join("r.db");
    let db = db_path.to_str().unwrap();
    let target = tempfile::tempdir().unwrap();
    let run = iomark_cmd(&["disk", target.path().to_str().unwrap(), "--size", "4M"])
        .args(["--runtime", "5s", "--engine", "psync", "--db", db])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Begun in the store; then its file system fills up under it.
    wait_until(
        Duration::from_secs(30),
        "the run begun in the store",
        || {
            iomark_cmd(&["results", "--db", db, "list"])
                .output()
                .is_ok_and(|o| stdout(&o).contains("running"))
        },
    );
    fill_up(&fs.mountpoint);
    let o = run.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "measured, not stored: {err}");
    assert!(
        stdout(&o).contains("read:"),
        "figures printed: {}",
        stdout(&o)
    );
    assert!(err.contains("results not stored"), "{err}");
    // Room again: what the store holds never claims the completed run was
    // interrupted without saying so on stderr.
    std::fs::remove_file(fs.mountpoint.join("filler")).unwrap();
    let list = ok(&results(db, &["list"]));
    if list.contains("interrupted") {
        assert!(
            err.contains("stays in") && err.contains("as interrupted"),
            "{err}"
        );
    } else {
        assert!(err.contains("taken out of"), "{err}");
    }
}

#[test]
fn a_store_that_stops_answering_costs_a_bounded_wait_and_ctrl_c_ends_it() {
    for stop_it in [false, true] {
        let db = iomark_testrig::require!(PgScratchDb::new());
        let relay = FreezableRelay::to(&db.server());
        let url = db
            .url
            .replacen(&db.server(), &format!("127.0.0.1:{}", relay.port), 1);
        let target = tempfile::tempdir().unwrap();
        let mut run = iomark_cmd(&["disk", target.path().to_str().unwrap(), "--size", "4M"]);
        run.args(["--runtime", "2s", "--engine", "psync", "--db", &url])
            // Ctrl-C must end the wait well before this does.
            .env("IOMARK_STORE_TIMEOUT", if stop_it { "600" } else { "3" });
        let child = Proc::spawn(&mut run);
        // Measuring (so begun in the store): then the store goes silent,
        // as a server stopped with SIGSTOP, connected and answering nothing.
        wait_until(Duration::from_secs(30), "the job runs", || {
            !threads_named(child.pid(), "iomark-job-0").is_empty()
        });
        relay.freeze();
        if stop_it {
            // The job is done and the run waits on the store: Ctrl-C now.
            wait_until(Duration::from_secs(30), "the job done", || {
                threads_named(child.pid(), "iomark-job-0").is_empty()
            });
            child.signal(rustix::process::Signal::INT);
        }
        let (o, took) = child.finish_timed(Duration::from_secs(60));
        let err = stderr(&o);
        // Measured, not stored (4), or, stopped by Ctrl-C, interrupted.
        let codes: &[i32] = if stop_it { &[4, 130] } else { &[4] };
        assert!(
            o.status.code().is_some_and(|c| codes.contains(&c)),
            "{:?}: {err}",
            o.status
        );
        assert!(stdout(&o).contains("read:"), "{}", stdout(&o));
        let why = if stop_it {
            "stopped while waiting for the store"
        } else {
            "did not answer within 3 s"
        };
        assert!(err.contains(why), "{err}");
        assert_no_test_files(target.path());
        // Bounded: 2 s of run, 3 s of wait (or none after Ctrl-C), start-up.
        assert_within("the frozen store's run", took, Duration::from_secs(30));
    }
}

#[test]
fn a_postgresql_database_that_only_reads_is_named_in_words_and_the_run_exits_4() {
    let mut db = iomark_testrig::require!(PgScratchDb::new());
    // As a standby or a database set to refuse writes answers.
    db.admin("ALTER DATABASE {db} SET default_transaction_read_only = on");
    let target = tempfile::tempdir().unwrap();
    let o = iomark_cmd(&["disk", target.path().to_str().unwrap(), "--size", "4M"])
        .args(["--runtime", "1s", "--engine", "psync", "--db", &db.url])
        .output()
        .unwrap();
    // Measured, printed, not stored: said in words, with the fix.
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(stdout(&o).contains("read:"), "{}", stdout(&o));
    assert!(
        err.contains("the server only reads here") && err.contains("--no-store"),
        "{err}"
    );
    assert_no_test_files(target.path());
}
