//! Many ranks as one benchmark (docs/mpi.md), built with the `mpi` feature
//! only (`cargo test --profile citest -p iomark --features mpi --test mpi_rig`, as
//! scripts/test does), under `mpirun --allow-run-as-root --oversubscribe
//! -np 3`: file per rank and shared file read back what they wrote and
//! leave nothing; a bad path on one rank and a rank killed mid-run end
//! every rank within 10 s and store the run as failed or interrupted; on
//! one loop device throttled to a known rate (ranks in the throttle's
//! cgroup) the aggregate is within 3% of the throttle and the per-rank
//! rates add up to it; the seconds stored while a job runs are the whole
//! job's (every rank's bytes). As root, two ranks in two network namespaces
//! joined by a veth pair (mpirun's launcher entering the namespace in place
//! of ssh) complete a run over the veth.

mod common;

#[cfg(feature = "mpi")]
mod mpi {
    use super::common::*;
    use iomark_model::live::LiveSample;
    use iomark_model::RunStatus;
    use iomark_store::RunQuery;
    use iomark_testrig::{
        require, require_fake_disk, require_root, CacheShape, Fake, FakeDisk, Limits, LoopDevice,
        MountedFs, Throttle, ThrottleCliff,
    };
    use serde_json::Value;
    use std::process::{Command, Output, Stdio};
    use std::time::{Duration, Instant};

    const RANKS: &str = "3";
    const MPIRUN: [&str; 4] = ["--allow-run-as-root", "--oversubscribe", "-np", RANKS];

    fn mpirun(args: &[&str]) -> Command {
        let mut cmd = Command::new("mpirun");
        cmd.args(MPIRUN).arg(IOMARK).args(args);
        cmd
    }

    fn run(args: &[&str]) -> Output {
        mpirun(args).output().expect("mpirun runs")
    }

    fn stored(db: &ScratchDb) -> Value {
        let out = results(db.db(), &["show", "1", "--json"]);
        json(&out)
    }

    fn status_of(db: &ScratchDb) -> String {
        stdout(&results(db.db(), &["list"]))
    }

    /// Write with --verify in a layout; every block read back, nothing left,
    /// one stored run with a row per rank.
    fn writes_read_back(layout: &[&str]) {
        require!(have("mpirun"));
        let dir = tempfile::tempdir().unwrap();
        let db = ScratchDb::new();
        let d = dir.path().to_str().unwrap();
        let mut args = vec![
            "disk",
            d,
            "--rw",
            "randwrite",
            "--bs",
            "64k",
            "--size",
            "32M",
            "--runtime",
            "2s",
            "--iodepth",
            "4",
            "--verify",
            "--json",
            "--db",
            db.db(),
        ];
        args.extend_from_slice(layout);
        let out = run(&args);
        let doc = json_of(&out);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let body = &doc["body"];
        let verify = &body["profile_result"];
        assert_eq!(verify["bad"]["corrupted"], 0, "{verify}");
        assert_eq!(verify["bad"]["lost"], 0, "{verify}");
        assert!(verify["checked_blocks"].as_u64().unwrap() > 0, "{verify}");
        let cluster = &body["cluster"];
        assert_eq!(cluster["ranks"], 3);
        let ranks = cluster["per_rank"].as_array().unwrap();
        assert_eq!(ranks.len(), 3);
        let sum: u64 = ranks
            .iter()
            .map(|r| r["write_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, body["jobs"][0]["write"]["io_bytes"].as_u64().unwrap());
        assert!(sum > 0);
        assert_no_test_files(dir.path());
        assert_eq!(stored(&db)["document"]["body"]["cluster"], *cluster);
    }

    #[test]
    fn file_per_rank_reads_back_what_each_rank_wrote() {
        writes_read_back(&[]);
    }

    #[test]
    fn a_shared_file_gives_each_rank_its_own_region() {
        writes_read_back(&["--shared-file"]);
        // The regions are disjoint: rank r's starts at r * --size.
    }

    /// The run in `db` and its stored seconds, numbered; none before it
    /// is begun.
    fn stored_seconds(db: &ScratchDb) -> Option<(bool, Vec<(u64, LiveSample)>)> {
        let mut store = iomark_store::open_read_only(Some(db.db())).ok()?;
        let run = store.list(&RunQuery::default()).ok()?.pop()?;
        let seconds = store.samples(run.id, None).ok()?;
        Some((run.status == RunStatus::Complete, seconds))
    }

    /// Two ranks of a 4 s custom run: its seconds are stored while it
    /// goes, each the whole job's (both ranks' I/Os), so they add up to the
    /// merged job's bytes, more than rank 0's alone; `--json-stream` prints
    /// the same seconds, then the run's document.
    #[test]
    fn the_stored_seconds_are_the_whole_jobs_while_it_runs() {
        require!(have("mpirun"));
        let dir = tempfile::tempdir().unwrap();
        let db = ScratchDb::new();
        let mut job = Proc::spawn(
            Command::new("mpirun")
                .args(["--allow-run-as-root", "--oversubscribe", "-np", "2", IOMARK])
                .args(["disk", dir.path().to_str().unwrap(), "--rw", "read"])
                .args(["--bs", "64k", "--size", "4M", "--engine", "null"])
                .args(["--runtime", "4s", "--json-stream", "--db", db.db()]),
        );
        wait_until(
            Duration::from_secs(60),
            "a second of the job stored",
            || stored_seconds(&db).is_some_and(|(_, s)| !s.is_empty()),
        );
        assert!(
            job.running(),
            "the first second was stored only at the end: {}",
            job.stderr_so_far()
        );
        let (complete, first) = stored_seconds(&db).unwrap();
        assert!(!complete, "the run was over when its first second came");
        let first = &first[0].1;
        let out = job.finish(Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let lines: Vec<Value> = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
        assert_eq!(
            events,
            ["start", "interval", "interval", "interval", "interval", "end"]
        );
        let body = &lines[5]["data"]["body"];
        let ranks = body["cluster"]["per_rank"].as_array().unwrap();
        let of_rank = |r: usize| ranks[r]["read_bytes"].as_u64().unwrap();
        let job_bytes = body["jobs"][0]["read"]["io_bytes"].as_u64().unwrap();
        assert_eq!(job_bytes, of_rank(0) + of_rank(1));
        assert!(of_rank(0) > 0 && of_rank(1) > 0, "{ranks:?}");

        let (complete, seconds) = stored_seconds(&db).unwrap();
        assert!(complete);
        // Numbered as they came, one a second of the test, in order.
        let seqs: Vec<u64> = seconds.iter().map(|(n, _)| *n).collect();
        assert_eq!(seqs, [0, 1, 2, 3], "{seconds:?}");
        assert_eq!(&seconds[0].1, first, "a stored second was rewritten");
        for (i, (_, s)) in seconds.iter().enumerate() {
            assert_eq!((s.step, s.steps), (1, 1), "{s:?}");
            assert!(s.offset_ms > 1000 * i as u64, "{s:?}");
            assert!(s.offset_ms <= 1000 * (i as u64 + 1) + 200, "{s:?}");
            assert!(s.ios > 0 && s.latency.is_some(), "{s:?}");
            // The stream's second is the stored one.
            let streamed = &lines[1 + i]["data"];
            assert_eq!(streamed["bytes"].as_u64(), Some(s.bytes), "{streamed}");
            assert_eq!(streamed["at_ms"].as_u64(), Some(s.at_ms), "{streamed}");
        }
        let stored: u64 = seconds.iter().map(|(_, s)| s.bytes).sum();
        let ios: u64 = seconds.iter().map(|(_, s)| s.ios).sum();
        assert_eq!(stored, job_bytes, "rank 0 read {}", of_rank(0));
        assert_eq!(ios, body["jobs"][0]["read"]["ios"].as_u64().unwrap());
        assert_no_test_files(dir.path());
    }

    #[test]
    fn a_bad_path_on_one_rank_stops_every_rank_with_its_message() {
        require!(have("mpirun"));
        let dir = tempfile::tempdir().unwrap();
        let db = ScratchDb::new();
        for r in [0, 2] {
            std::fs::create_dir(dir.path().join(format!("r{r}"))).unwrap();
        }
        let template = format!("{}/r{{rank}}", dir.path().display());
        let started = Instant::now();
        let out = run(&[
            "disk",
            "--per-rank-path",
            &template,
            "--rw",
            "write",
            "--size",
            "16M",
            "--runtime",
            "30s",
            "--db",
            db.db(),
        ]);
        assert_within(
            "every rank ending after a bad path on one",
            started.elapsed(),
            Duration::from_secs(10),
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("rank 1 (") && err.contains("r1: does not exist"),
            "{err}"
        );
        for r in [0, 2] {
            assert_empty_dir(&dir.path().join(format!("r{r}")), "after a failed start");
        }
        assert!(status_of(&db).contains("failed"), "{}", status_of(&db));
    }

    #[test]
    fn a_killed_rank_ends_the_job_and_leaves_nothing() {
        require!(have("mpirun"));
        let dir = tempfile::tempdir().unwrap();
        a_killed_rank_ends(
            dir.path(),
            // In the job.
            1,
            &[
                "--rw",
                "write",
                "--bs",
                "1M",
                "--size",
                "32M",
                "--runtime",
                "60s",
            ],
        );
    }

    /// Rank 1's device fails with EIO after 8 MiB, while the ranks read
    /// for 30 s: its notice stops the others at once, every rank exits 2
    /// with its message, and the run is stored as failed.
    #[test]
    fn an_io_error_on_one_rank_mid_run_stops_every_rank() {
        require!(have("mpirun"));
        require!(require_fake_disk());
        let good: Vec<LoopDevice> = (0..2)
            .map(|_| LoopDevice::blank_in_memory(64 << 20).unwrap())
            .collect();
        let failing = FakeDisk::new(64 << 20, Fake::Failing { from: 8 << 20 }).unwrap();
        let links = tempfile::tempdir().unwrap();
        for (r, dev) in [&good[0].dev, &failing.dev, &good[1].dev]
            .iter()
            .enumerate()
        {
            std::os::unix::fs::symlink(dev, links.path().join(format!("d{r}"))).unwrap();
        }
        let template = format!("{}/d{{rank}}", links.path().display());
        let db = ScratchDb::new();
        let started = Instant::now();
        let out = run(&[
            "disk",
            "--per-rank-path",
            &template,
            "--rw",
            "read",
            "--bs",
            "64k",
            "--size",
            "64M",
            "--runtime",
            "30s",
            "--iodepth",
            "4",
            "--db",
            db.db(),
        ]);
        let took = started.elapsed();
        assert_within(
            "an I/O error on rank 1 ending the job",
            took,
            Duration::from_secs(10),
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("rank 1 (") && err.contains("Input/output error"),
            "{err}"
        );
        assert!(status_of(&db).contains("failed"), "{}", status_of(&db));
    }

    /// During a profile the other ranks wait for the dead one at the next
    /// job's barrier or gather: they see mpirun's SIGTERM there too.
    #[test]
    fn a_killed_rank_ends_a_profile_and_leaves_nothing() {
        require!(have("mpirun"));
        let dir = fast_dir();
        // Past the first job: in a later one or at a gather between two.
        a_killed_rank_ends(
            dir.path(),
            2,
            &[
                "--profile",
                "cdm",
                "--quick",
                "--pass-time",
                "1s",
                "--size",
                "16M",
                "--buffered",
            ],
        );
    }

    /// Kill rank 1 of `args` on `dir` once every rank has its test file
    /// and rank 1 is in its `nth_job`-th job (its workers, `iomark-job-0` and
    /// on, are there; each job's are new threads): the job ends within
    /// 10 s, nothing is left, the run is stored as interrupted.
    fn a_killed_rank_ends(dir: &std::path::Path, nth_job: usize, args: &[&str]) {
        let db = ScratchDb::new();
        let d = dir.to_str().unwrap();
        let mut all = vec!["disk", d, "--db", db.db()];
        all.extend_from_slice(args);
        let mut job = mpirun(&all)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mpirun_pid = job.id();
        // The ranks are mpirun's grandchildren or children; find them by
        // their parent chain once all three test files exist.
        wait_until(Duration::from_secs(30), "three test files", || {
            test_files(dir).len() == 3
        });
        let ranks = ranks_of(mpirun_pid);
        assert_eq!(ranks.len(), 3, "ranks {ranks:?}");
        let victim = ranks[1];
        let mut workers_seen: Vec<u32> = Vec::new();
        let what = format!("rank 1 in job {nth_job}");
        wait_until(Duration::from_secs(60), &what, || {
            for tid in threads_named(victim as u32, "iomark-job-0") {
                if !workers_seen.contains(&tid) {
                    workers_seen.push(tid);
                }
            }
            workers_seen.len() >= nth_job
        });
        // The job's seconds are stored as it goes (a profile's after
        // each of its jobs).
        wait_until(Duration::from_secs(60), "a second stored", || {
            stored_seconds(&db).is_some_and(|(_, s)| !s.is_empty())
        });
        let before = stored_seconds(&db).unwrap().1.len();
        let killed = Instant::now();
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(victim).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
        let status = job.wait().unwrap();
        assert_within(
            "every rank ending after one was killed",
            killed.elapsed(),
            Duration::from_secs(10),
        );
        assert!(!status.success());
        let mut err = String::new();
        std::io::Read::read_to_string(job.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(err.contains("signal 9"), "{err}");
        assert_no_test_files(dir);
        assert!(status_of(&db).contains("interrupted"), "{}", status_of(&db));
        // The interrupted run keeps its seconds, the dead rank's share of
        // those after its death left out.
        let (_, seconds) = stored_seconds(&db).unwrap();
        let seqs: Vec<u64> = seconds.iter().map(|(n, _)| *n).collect();
        assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
        assert!(seconds.len() >= before, "{before} then {seconds:?}");
    }

    /// The iomark processes below `pid`, in pid order.
    fn ranks_of(pid: u32) -> Vec<i32> {
        let mut found = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
            if comm.trim() == "iomark" && descends_from(p, pid as i32) {
                found.push(p);
            }
        }
        found.sort_unstable();
        found
    }

    fn descends_from(mut p: i32, ancestor: i32) -> bool {
        for _ in 0..8 {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            let after = stat.rsplit_once(')').map_or("", |s| s.1);
            let Some(ppid) = after.split_whitespace().nth(1).and_then(|s| s.parse().ok()) else {
                return false;
            };
            if ppid == ancestor {
                return true;
            }
            p = ppid;
        }
        false
    }

    #[test]
    fn ranks_on_one_throttled_device_add_up_to_the_throttle() {
        require!(have("mpirun"));
        require!(require_root());
        const RATE: u64 = 24 << 20;
        let dev = LoopDevice::new(256 << 20).unwrap();
        let throttle = Throttle::new(
            &dev.majmin().unwrap(),
            Limits {
                read_bps: Some(RATE),
                ..Limits::default()
            },
        )
        .unwrap();
        let devpath = dev.dev.to_str().unwrap().to_string();
        let mut args: Vec<&str> = MPIRUN.to_vec();
        args.push(IOMARK);
        args.extend([
            "disk",
            &devpath,
            "--rw",
            "read",
            "--bs",
            "64k",
            "--size",
            "64M",
            "--runtime",
            "8s",
            "--ramp",
            "1s",
            "--iodepth",
            "4",
            "--json",
            "--no-store",
        ]);
        let out = throttle.command("mpirun", &args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc = json_of(&out);
        let body = &doc["body"];
        let agg = body["jobs"][0]["read"]["bw"].as_f64().unwrap();
        // The measured window: --runtime 8s after the ramp.
        let window = Duration::from_secs(8);
        assert_at_the_throttle(
            "aggregate of 3 ranks, B/s",
            agg,
            RATE as f64,
            window,
            WindowStart::Streaming,
        );
        let per: f64 = body["cluster"]["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["read_bw"].as_f64().unwrap())
            .sum();
        assert_at_the_throttle(
            "sum of the per-rank rates, B/s",
            per,
            RATE as f64,
            window,
            WindowStart::Streaming,
        );
    }

    #[test]
    fn stonewall_with_verify_is_refused_on_every_rank() {
        require!(have("mpirun"));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let out = run(&[
            "disk",
            d,
            "--rw",
            "write",
            "--size",
            "8M",
            "--stonewall",
            "--verify",
            "--no-store",
        ]);
        fails_with(&out, "--stonewall with --verify");
        assert_no_test_files(dir.path());
    }

    /// Rank 0 reads a device throttled to 4 MiB/s, ranks 1 and 2 devices
    /// in memory, 32 MiB each: under --stonewall rank 0 stops when the
    /// first fast rank finishes (not 8 s later), with the bytes it managed.
    #[test]
    fn under_stonewall_every_rank_stops_when_the_first_finishes() {
        require!(have("mpirun"));
        require!(require_root());
        const RATE: u64 = 4 << 20;
        const SIZE: u64 = 32 << 20;
        let devs: Vec<LoopDevice> = (0..3)
            .map(|_| LoopDevice::blank_in_memory(64 << 20).unwrap())
            .collect();
        let throttle = Throttle::new(
            &devs[0].majmin().unwrap(),
            Limits {
                read_bps: Some(RATE),
                ..Limits::default()
            },
        )
        .unwrap();
        // --per-rank-path takes one template: rank r's name leads to its device.
        let links = tempfile::tempdir().unwrap();
        for (r, dev) in devs.iter().enumerate() {
            std::os::unix::fs::symlink(&dev.dev, links.path().join(format!("d{r}"))).unwrap();
        }
        let template = format!("{}/d{{rank}}", links.path().display());
        let db = ScratchDb::new();
        let mut args: Vec<&str> = MPIRUN.to_vec();
        args.push(IOMARK);
        args.extend([
            "disk",
            "--per-rank-path",
            &template,
            "--rw",
            "read",
            "--bs",
            "64k",
            "--size",
            "32M",
            "--runtime",
            "0",
            "--iodepth",
            "4",
            "--stonewall",
            "--json",
            "--db",
            db.db(),
        ]);
        let started = Instant::now();
        let out = throttle.command("mpirun", &args).output().unwrap();
        let took = started.elapsed();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc = json_of(&out);
        let cluster = &doc["body"]["cluster"];
        assert_eq!(cluster["stonewall"], true, "{cluster}");
        let ranks = cluster["per_rank"].as_array().unwrap();
        assert_eq!(ranks.len(), 3);
        let bytes = |r: &Value| r["read_bytes"].as_u64().unwrap();
        let end = |r: &Value| r["end"].as_u64().unwrap() as f64 / 1e9;
        // The slow rank was stopped, with what it read: some, not all.
        let slow = &ranks[0];
        assert_eq!(slow["stonewalled"], true, "{slow}");
        assert!(bytes(slow) > 0 && bytes(slow) < SIZE, "{slow}");
        assert_eq!(slow["interrupted"], false, "{slow}");
        // The first to finish read all of its size and was not stopped.
        let first = ranks
            .iter()
            .filter(|r| r["stonewalled"] != true)
            .min_by(|a, b| end(a).total_cmp(&end(b)))
            .expect("a rank finished on its own");
        assert_eq!(bytes(first), SIZE, "{first}");
        let spread = ranks.iter().map(end).fold(0.0, f64::max) - end(first);
        eprintln!(
            "rig-accuracy: stonewall: first end {:.3}s, last end {:.3}s after it, slow rank read {} of {SIZE} bytes, mpirun {took:?}",
            end(first),
            spread,
            bytes(slow)
        );
        assert!(
            spread < 1.0,
            "the ranks ended {spread:.3}s apart: {cluster}"
        );
        // Unstonewalled the slow rank would read for 8 s.
        assert_within("the stonewalled job", took, Duration::from_secs(6));
        // The aggregate is every rank's bytes over first start to last end.
        let job = &doc["body"]["jobs"][0]["read"];
        let sum: u64 = ranks.iter().map(bytes).sum();
        assert_eq!(job["io_bytes"].as_u64().unwrap(), sum);
        let wall = cluster["wall"].as_f64().unwrap() / 1e9;
        let agg = job["bw"].as_f64().unwrap();
        assert!(
            (agg - sum as f64 / wall).abs() <= 0.01 * agg,
            "{agg} vs {sum} over {wall}"
        );
        // Stored as one complete run, with the flags per rank.
        assert_eq!(stored(&db)["document"]["body"]["cluster"], *cluster);
        assert!(status_of(&db).contains("complete"), "{}", status_of(&db));
        // Its seconds are every rank's, the stopped rank's up to its stop.
        let (_, seconds) = stored_seconds(&db).unwrap();
        let stored: u64 = seconds.iter().map(|(_, s)| s.bytes).sum();
        assert_eq!(stored, sum, "{seconds:?}");
    }

    /// A directory in memory when there is one (/dev/shm): a profile's
    /// many short jobs then measure the page cache, not a busy disk.
    fn fast_dir() -> tempfile::TempDir {
        tempfile::tempdir_in("/dev/shm").unwrap_or_else(|_| tempfile::tempdir().unwrap())
    }

    /// A profile across the ranks, as JSON into a fresh store: its
    /// document (checked to be stored as the one complete run), after
    /// every job was checked to add up: each job's aggregate bytes are the
    /// ranks' shares summed, over the first rank's start to the last
    /// rank's end.
    fn profile_across_ranks(dir: &std::path::Path, db: &ScratchDb, args: &[&str]) -> Value {
        let d = dir.to_str().unwrap();
        let mut all = vec!["disk", d, "--buffered", "--json", "--db", db.db()];
        all.extend_from_slice(args);
        let started = Instant::now();
        let out = run(&all);
        eprintln!("rig: {args:?} across 3 ranks took {:?}", started.elapsed());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc = json_of(&out);
        let body = &doc["body"];
        let jobs = body["jobs"].as_array().unwrap();
        assert!(!jobs.is_empty(), "{body}");
        let cluster = &body["cluster"];
        assert_eq!(cluster["ranks"], 3, "{cluster}");
        let ranks = cluster["per_rank"].as_array().unwrap();
        assert_eq!(ranks.len(), 3);
        for (i, r) in ranks.iter().enumerate() {
            assert_eq!(r["rank"], i as u64);
            assert_eq!(r["jobs"].as_array().unwrap().len(), jobs.len(), "{r}");
        }
        for (j, job) in jobs.iter().enumerate() {
            let name = &job["spec"]["name"];
            let mut measured = 0;
            for dir in ["read", "write"] {
                let Some(m) = job.get(dir).filter(|m| !m.is_null()) else {
                    continue;
                };
                let share = |r: &Value| r["jobs"][j][format!("{dir}_bytes")].as_u64().unwrap();
                for r in ranks {
                    assert!(share(r) > 0, "{name} {dir}: rank {} did nothing", r["rank"]);
                }
                let sum: u64 = ranks.iter().map(share).sum();
                assert_eq!(m["io_bytes"].as_u64().unwrap(), sum, "{name} {dir}");
                let at = |r: &Value, k: &str| r["jobs"][j][k].as_u64().unwrap();
                let first = ranks.iter().map(|r| at(r, "start")).min().unwrap();
                let last = ranks.iter().map(|r| at(r, "end")).max().unwrap();
                let window = m["runtime"].as_u64().unwrap();
                assert_eq!(window, last - first, "{name} {dir}: the window");
                let bw = m["bw"].as_f64().unwrap();
                let want = sum as f64 / (window as f64 / 1e9);
                assert!(
                    (bw - want).abs() <= 1e-6 * want,
                    "{name} {dir}: {bw} vs {want}"
                );
                measured += 1;
            }
            assert!(measured > 0, "{name}: no direction measured");
        }
        // The per-rank totals are the rank's shares of the jobs.
        for r in ranks {
            for dir in ["read", "write"] {
                let key = format!("{dir}_bytes");
                let total: u64 = r["jobs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|j| j[&key].as_u64().unwrap())
                    .sum();
                assert_eq!(r[&key].as_u64().unwrap(), total, "rank {} {dir}", r["rank"]);
            }
        }
        assert_no_test_files(dir);
        let list = status_of(db);
        assert_eq!(list.matches("complete").count(), 1, "{list}");
        assert_eq!(stored(db)["document"]["body"], *body);
        doc
    }

    /// `results show -v` prints the profile's figures (as for a run on one
    /// machine), under their stored names too, and the per-rank table;
    /// `report` draws the ranks' chart.
    fn shown_like_a_profile_run(db: &ScratchDb, needles: &[&str]) {
        let shown = stdout(&results_wide(db.db(), &["show", "-v", "1"]));
        for n in needles.iter().chain(&["3 ranks", "slowest rank"]) {
            assert!(shown.contains(n), "no {n:?} in:\n{shown}");
        }
        let dir = tempfile::tempdir().unwrap();
        let html = dir.path().join("report.html");
        iomark_ok(&[
            "report",
            "1",
            "--db",
            db.db(),
            "--html",
            html.to_str().unwrap(),
        ]);
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains("ranks-1"), "no per-rank chart in the report");
    }

    /// One profile across 3 ranks: its flags, how many jobs it keeps, what
    /// else its result must show, and what `results show` prints of it.
    struct ProfileCase {
        args: &'static [&'static str],
        jobs: usize,
        check: fn(&Value),
        shown: &'static [&'static str],
        /// Whether every pass is a kept job (no preparation pass, no
        /// best of several): the stored seconds then add up to the jobs.
        every_pass_kept: bool,
    }

    /// CrystalDiskMark 8: every test of the grid is the best of its merged
    /// passes.
    fn cdm_grid(body: &Value) {
        let cdm = &body["profile_result"];
        let rows = ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"];
        assert_eq!(cdm["rows"], serde_json::json!(rows));
        let tests = cdm["tests"].as_array().unwrap();
        assert_eq!(tests.len(), 8, "{cdm}");
        let jobs = body["jobs"].as_array().unwrap();
        for (t, test) in tests.iter().enumerate() {
            assert_eq!(test["row"], rows[t / 2]);
            assert_eq!(test["dir"], ["read", "write"][t % 2]);
            // The grid's figure is the best merged pass.
            let first = test["first_job"].as_u64().unwrap() as usize;
            let dir = test["dir"].as_str().unwrap();
            let best = (first..first + 2)
                .map(|j| jobs[j][dir]["bw"].as_f64().unwrap())
                .fold(0.0, f64::max);
            assert!(best > 0.0);
            assert_eq!(test["bw"].as_f64().unwrap(), best, "{test}");
        }
    }

    /// IOmeter's depth sweep: the knee sentences from the merged points.
    fn iometer_knees(body: &Value) {
        let knees = body["knees"].as_array().unwrap();
        assert_eq!(knees.len(), 4, "{knees:?}");
    }

    const PROFILES_ACROSS_RANKS: [ProfileCase; 3] = [
        // 2 passes of 8 tests, the preparation passes not kept.
        ProfileCase {
            args: &[
                "--profile",
                "cdm",
                "--quick",
                "--passes",
                "2",
                "--pass-time",
                "0.3s",
                "--size",
                "8M",
            ],
            jobs: 16,
            check: cdm_grid,
            shown: &["read 1MiB QD8 T1", "randwrite 4KiB QD1 T1"],
            every_pass_kept: false,
        },
        // 4 patterns at 2 depths.
        ProfileCase {
            args: &[
                "--profile",
                "iometer",
                "--quick",
                "--qd",
                "1,2",
                "--ramp",
                "0",
                "--runtime",
                "0.3s",
                "--size",
                "8M",
            ],
            jobs: 8,
            check: iometer_knees,
            shown: &["depth sweep 1,2: 4 KiB random read", "knee depth"],
            every_pass_kept: true,
        },
        // Random read and write at 2 sizes, then sequential read and write.
        ProfileCase {
            args: &[
                "--profile",
                "sweep",
                "--quick",
                "--sizes",
                "4k,1M",
                "--runtime",
                "0.3s",
                "--size",
                "8M",
            ],
            jobs: 6,
            check: |_| {},
            shown: &["randread 1MiB QD1", "randwrite 4KiB QD1"],
            every_pass_kept: true,
        },
    ];

    /// CrystalDiskMark 8, IOmeter's depth sweep and the block-size sweep
    /// across 3 ranks: every job merged (profile_across_ranks), one stored
    /// run each, shown and drawn like a profile run on one machine.
    #[test]
    fn profiles_across_ranks_merge_every_job() {
        require!(have("mpirun"));
        let dir = fast_dir();
        for case in &PROFILES_ACROSS_RANKS {
            let db = ScratchDb::new();
            let doc = profile_across_ranks(dir.path(), &db, case.args);
            let body = &doc["body"];
            assert_eq!(body["profile"], case.args[1]);
            let jobs = body["jobs"].as_array().unwrap().len();
            assert_eq!(jobs, case.jobs, "{:?}", case.args);
            (case.check)(body);
            shown_like_a_profile_run(&db, case.shown);
            seconds_of_every_rank(&db, body, case);
        }
    }

    /// A profile's stored seconds are the whole job's, every pass's: at
    /// least the kept jobs' bytes, and exactly theirs when every pass is
    /// kept; numbered as they came, each of a test of the run.
    fn seconds_of_every_rank(db: &ScratchDb, body: &Value, case: &ProfileCase) {
        let (_, seconds) = stored_seconds(db).unwrap();
        let seqs: Vec<u64> = seconds.iter().map(|(n, _)| *n).collect();
        assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
        for (_, s) in &seconds {
            assert!(s.step >= 1 && s.step <= s.steps, "{s:?}");
        }
        let stored: u64 = seconds.iter().map(|(_, s)| s.bytes).sum();
        let kept: u64 = body["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|j| ["read", "write"].map(|d| j[d]["io_bytes"].as_u64().unwrap_or(0)))
            .sum();
        eprintln!(
            "rig: {:?}: {} seconds stored, {stored} bytes; kept jobs {kept}",
            case.args[1],
            seconds.len()
        );
        if case.every_pass_kept {
            assert_eq!(stored, kept, "{:?}", case.args);
        } else {
            assert!(stored >= kept, "{:?}: {stored} < {kept}", case.args);
        }
    }

    /// Sustained writes across 3 ranks: the ranks' bytes-written series
    /// summed, so the pass wrote every rank's region; the merged job and
    /// the per-rank rows agree.
    #[test]
    fn sustained_across_ranks_sums_the_ranks_series() {
        require!(have("mpirun"));
        let dir = fast_dir();
        let db = ScratchDb::new();
        let d = dir.path().to_str().unwrap();
        let started = Instant::now();
        let out = run(&[
            "disk",
            d,
            "--profile",
            "sustained",
            "--size",
            "32M",
            "--buffered",
            "--json",
            "--db",
            db.db(),
        ]);
        eprintln!("rig: sustained across 3 ranks took {:?}", started.elapsed());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc = json_of(&out);
        let body = &doc["body"];
        assert_eq!(body["profile"], "sustained");
        let pass = &body["profile_result"]["pass"];
        let ranks = body["cluster"]["per_rank"].as_array().unwrap();
        assert_eq!(ranks.len(), 3);
        for r in ranks {
            assert_eq!(r["write_bytes"].as_u64().unwrap(), 32 << 20, "{r}");
        }
        let written = pass["written"].as_u64().unwrap();
        assert_eq!(written, 3 * (32 << 20), "{pass}");
        assert_eq!(pass["end"], "region");
        let series = pass["series"].as_array().unwrap();
        assert_eq!(series.last().unwrap()["bytes"].as_u64().unwrap(), written);
        let job = &body["jobs"][0]["write"];
        assert_eq!(job["io_bytes"].as_u64().unwrap(), written);
        let last = ranks
            .iter()
            .map(|r| r["end"].as_u64().unwrap())
            .max()
            .unwrap();
        let first = ranks
            .iter()
            .map(|r| r["start"].as_u64().unwrap())
            .min()
            .unwrap();
        assert_eq!(job["runtime"].as_u64().unwrap(), last - first);
        assert_no_test_files(dir.path());
        assert_eq!(stored(&db)["document"]["body"], *body);
        assert!(status_of(&db).contains("complete"), "{}", status_of(&db));
    }

    /// Three ranks write their files on one file system whose device's
    /// write rate falls from 100 to 20 MiB/s after 256 MiB (testrig's
    /// ThrottleCliff, as in sustained_rig): the cliff in the summed series
    /// is where the rig put it, with the rates before and after. (One
    /// device cannot be shared by ranks on one host: each holds its target
    /// open exclusively.)
    #[test]
    fn sustained_across_ranks_finds_a_shared_devices_cliff() {
        require!(have("mpirun"));
        require!(require_root());
        const MIB: u64 = 1 << 20;
        const CACHE: u64 = 256 * MIB;
        const FAST: u64 = 100 * MIB;
        const SLOW: u64 = 20 * MIB;
        let fs = MountedFs::ext4(1536 * MIB).unwrap();
        let rig = ThrottleCliff::new(
            &fs.device,
            CacheShape {
                fast_bps: FAST,
                cache: CACHE,
                slow_bps: SLOW,
                recovers: None,
            },
        );
        require!(rig.as_ref().map(drop));
        let d = fs.mountpoint.to_str().unwrap();
        // The ranks at nice -10, as in sustained_rig: the claim is the
        // detector's over the summed series, and three ranks starved of
        // CPU by busy loops beside the suite stalled for seconds at a time
        // and read their own stalls as a gradual cliff (+27%).
        let mut ranks = Command::new("nice");
        ranks.args(["-n", "-10", "mpirun"]).args(MPIRUN).arg(IOMARK);
        let out = ranks
            .args([
                "disk",
                d,
                "--size",
                "300M",
                "--profile",
                "sustained",
                "--engine",
                "psync",
                "--until-steady=5s",
                "--json",
                "--no-store",
            ])
            .output()
            .expect("mpirun runs");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc = json_of(&out);
        let pass = &doc["body"]["profile_result"]["pass"];
        let cliff = &pass["cliff"];
        assert!(cliff.is_object(), "no cliff found: {pass}");
        // The rate after is held to what the device served after the
        // fall (testrig's cliff module says why), which the rule bounds.
        let served = rig
            .as_ref()
            .unwrap()
            .served()
            .expect("the rig saw its fall");
        served.assert_after_within_the_rule(SLOW);
        for (what, got, want, tolerance) in [
            (
                "cache size",
                cliff["at"].as_f64().unwrap(),
                CACHE as f64,
                0.10,
            ),
            (
                "rate before",
                cliff["rate_before"].as_f64().unwrap(),
                FAST as f64,
                0.05,
            ),
            (
                "rate after (against what the device served)",
                cliff["rate_after"].as_f64().unwrap(),
                served.after,
                0.05,
            ),
        ] {
            // Each rank's span and bytes beside the pass: where the ranks'
            // series were summed, and which ended first.
            eprintln!(
                "{what}: {pass}\nranks: {}",
                doc["body"]["cluster"]["per_rank"]
            );
            assert_near(&format!("across 3 ranks, {what}"), got, want, tolerance);
        }
        let ranks = doc["body"]["cluster"]["per_rank"].as_array().unwrap();
        assert_eq!(ranks.len(), 3);
        assert!(ranks.iter().all(|r| r["write_bytes"].as_u64().unwrap() > 0));
        assert_no_test_files(&fs.mountpoint);
    }

    /// The profiles that measure one device stay alone: exit 2, the reason,
    /// nothing left.
    #[test]
    fn profiles_of_one_device_are_refused_across_ranks() {
        require!(have("mpirun"));
        let dir = fast_dir();
        let db = ScratchDb::new();
        let d = dir.path().to_str().unwrap();
        for (profile, why) in [
            ("verify", "one device's data"),
            ("artefacts", "compression"),
            ("gnome", "transfer-rate curve"),
        ] {
            let out = run(&["disk", d, "--profile", profile, "--db", db.db()]);
            assert_eq!(out.status.code(), Some(2), "{profile}: {}", stderr(&out));
            let err = stderr(&out);
            let want = format!("--profile {profile} runs alone, not across MPI ranks");
            assert!(err.contains(&want) && err.contains(why), "{err}");
            assert!(err.contains("cdm, cdm-nvme"), "{err}");
            assert_no_test_files(dir.path());
        }
        let out = run(&[
            "disk",
            d,
            "--profile",
            "cdm",
            "--quick",
            "--stonewall",
            "--db",
            db.db(),
        ]);
        fails_with(&out, "--stonewall stops a custom workload");
        assert!(!status_of(&db).contains("complete"), "{}", status_of(&db));
    }

    /// STREAM on 3 ranks in step: one stored run whose rates are the sum
    /// of the ranks' own, each rank's result kept.
    #[test]
    fn stream_across_ranks_sums_the_ranks_rates() {
        require!(have("mpirun"));
        let db = ScratchDb::new();
        let out = run(&[
            "mem",
            "stream",
            "--size",
            "2M",
            "--ntimes",
            "5",
            "--threads",
            "1",
            "--json",
            "--db",
            db.db(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc = json_of(&out);
        let body = &doc["body"];
        let cluster = &body["cluster"];
        assert_eq!(cluster["ranks"], 3, "{cluster}");
        let ranks = cluster["per_rank"].as_array().unwrap();
        assert_eq!(ranks.len(), 3);
        let merged = body["outcome"]["result"]["kernels"].as_array().unwrap();
        assert_eq!(merged.len(), 4);
        for (k, m) in merged.iter().enumerate() {
            let rates: Vec<f64> = ranks
                .iter()
                .map(|r| r["result"]["kernels"][k]["best_rate"].as_f64().unwrap())
                .collect();
            // Each rank measured something a memory bus can do: above
            // 10 MB/s, below 10 TB/s.
            for r in &rates {
                assert!(*r > 1e7 && *r < 1e13, "{} rank rate {r}", m["op"]);
            }
            let sum: f64 = rates.iter().sum();
            let got = m["best_rate"].as_f64().unwrap();
            assert!(
                (got - sum).abs() <= 1e-9 * sum,
                "{}: {got} vs sum {sum}",
                m["op"]
            );
            let bytes: u64 = ranks
                .iter()
                .map(|r| {
                    r["result"]["kernels"][k]["bytes_per_pass"]
                        .as_u64()
                        .unwrap()
                })
                .sum();
            assert_eq!(m["bytes_per_pass"].as_u64().unwrap(), bytes);
        }
        for (i, r) in ranks.iter().enumerate() {
            assert_eq!(r["rank"], i as u64);
            assert_eq!(r["result"]["validation"]["outcome"], "passed", "{r}");
        }
        // One stored run, its figures the sums.
        let stored = stored(&db);
        assert_eq!(stored["document"]["body"]["cluster"], *cluster);
        assert!(status_of(&db).contains("complete"), "{}", status_of(&db));
        let triad = merged[3]["best_rate"].as_f64().unwrap();
        eprintln!(
            "rig: STREAM across 3 ranks, Triad sum {:.0} MB/s of {:?} MB/s",
            triad / 1e6,
            ranks
                .iter()
                .map(|r| (r["result"]["kernels"][3]["best_rate"].as_f64().unwrap() / 1e6).round())
                .collect::<Vec<_>>()
        );
        let shown = stdout(&results(db.db(), &["show", "1"]));
        assert!(shown.contains("3 ranks in step"), "{shown}");
    }

    #[test]
    fn stream_across_ranks_refuses_what_runs_alone() {
        require!(have("mpirun"));
        let out = run(&[
            "mem",
            "stream",
            "--size",
            "1M",
            "--mem-limit",
            "64M",
            "--no-store",
        ]);
        fails_with(&out, "--mem-limit is not applied across MPI ranks");
        let out = run(&["mem", "himeno", "--no-store"]);
        fails_with(&out, "runs alone, not across MPI ranks");
    }

    /// Two network namespaces joined by a veth pair, each a "host" for
    /// mpirun: the ranks' only way to each other is the veth. Deletes the
    /// namespaces (and with them the veth pair) on drop, also on failure.
    struct NetnsHosts {
        ns: [String; 2],
        ifs: [String; 2],
    }

    /// The subnet of the veth pair; it exists only in the namespaces the
    /// test makes.
    const NETNS_NET: &str = "10.204.0.0/24";

    impl NetnsHosts {
        fn up() -> Result<NetnsHosts, String> {
            let pid = std::process::id();
            let hosts = NetnsHosts {
                ns: [format!("iomk-mpi0-{pid}"), format!("iomk-mpi1-{pid}")],
                ifs: [format!("imp0x{pid}"), format!("imp1x{pid}")],
            };
            let ([n0, n1], [i0, i1]) = (&hosts.ns, &hosts.ifs);
            let steps: [&[&str]; 9] = [
                &["netns", "add", n0],
                &["netns", "add", n1],
                &[
                    "link", "add", i0, "netns", n0, "type", "veth", "peer", "name", i1, "netns", n1,
                ],
                &["-n", n0, "addr", "add", "10.204.0.1/24", "dev", i0],
                &["-n", n1, "addr", "add", "10.204.0.2/24", "dev", i1],
                &["-n", n0, "link", "set", "lo", "up"],
                &["-n", n1, "link", "set", "lo", "up"],
                &["-n", n0, "link", "set", i0, "up"],
                &["-n", n1, "link", "set", i1, "up"],
            ];
            for args in steps {
                let out = Command::new("ip")
                    .args(args)
                    .output()
                    .map_err(|e| format!("ip: {e}"))?;
                if !out.status.success() {
                    return Err(format!("ip {}: {}", args.join(" "), stderr(&out).trim()));
                }
            }
            Ok(hosts)
        }

        /// rx and tx bytes of the veth end in the second namespace (read
        /// there: sysfs shows the namespace of whoever mounted it).
        fn counters(&self) -> (u64, u64) {
            let stat = |what: &str| {
                let out = Command::new("ip")
                    .args(["netns", "exec", &self.ns[1], "cat"])
                    .arg(format!("/sys/class/net/{}/statistics/{what}", self.ifs[1]))
                    .output()
                    .expect("read the veth's counters");
                assert!(out.status.success(), "{}", stderr(&out));
                stdout(&out).trim().parse::<u64>().expect("a byte count")
            };
            (stat("rx_bytes"), stat("tx_bytes"))
        }
    }

    impl Drop for NetnsHosts {
        fn drop(&mut self) {
            for ns in &self.ns {
                let _ = Command::new("ip").args(["netns", "del", ns]).status();
            }
        }
    }

    fn have_netns() -> Result<(), String> {
        if !is_root() {
            return Err("needs root (network namespaces)".into());
        }
        match Command::new("ip").args(["netns", "list"]).output() {
            Ok(out) if out.status.success() => Ok(()),
            _ => Err("needs `ip netns` (iproute2)".into()),
        }
    }

    /// One rank in each of two network namespaces, mpirun's launcher a
    /// script that enters the namespace named as the host (in place of
    /// ssh), MPI's traffic held to the veth's subnet: the run completes
    /// with a row per rank, and the veth carried the ranks' traffic.
    #[test]
    fn ranks_in_two_network_namespaces_talk_over_a_veth() {
        require!(have("mpirun"));
        require!(have_netns());
        let hosts = match NetnsHosts::up() {
            Ok(h) => h,
            Err(e) => panic!("the namespaces could not be made: {e}"),
        };
        let dir = fast_dir();
        let agent = dir.path().join("netns-agent");
        // As ssh would: the host name first, then a command line for a
        // shell. Each namespace gets a host name of its own (a UTS
        // namespace), as a real host has: with the machine's name in both,
        // mpirun sometimes waited forever for one of the two daemons
        // (1 launch in 8 on this machine).
        std::fs::write(
            &agent,
            "#!/bin/sh\nhost=$1\nshift\nexec ip netns exec \"$host\" unshare --uts sh -c \"hostname $host && $*\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        for r in 0..2 {
            std::fs::create_dir(dir.path().join(format!("r{r}"))).unwrap();
        }
        let template = format!("{}/r{{rank}}", dir.path().display());
        let before = hosts.counters();
        let started = Instant::now();
        let out = Proc::spawn(
            Command::new("ip")
                .args(["netns", "exec", &hosts.ns[0], "mpirun"])
                .args(["--allow-run-as-root", "-np", "2"])
                .args(["--host", &format!("{},{}", hosts.ns[0], hosts.ns[1])])
                .args(["--mca", "plm_rsh_agent", agent.to_str().unwrap()])
                .args(["--mca", "plm_rsh_no_tree_spawn", "1"])
                .args(["--mca", "oob_tcp_if_include", NETNS_NET])
                .args(["--mca", "btl_tcp_if_include", NETNS_NET])
                .args(["--mca", "btl", "tcp,self"])
                .arg(IOMARK)
                .args(["disk", "--per-rank-path", &template])
                .args(["--rw", "write", "--bs", "1M", "--size", "8MiB"])
                .args(["--runtime", "0", "--no-store", "--json"]),
        )
        .finish(Duration::from_secs(60));
        let took = started.elapsed();
        let after = hosts.counters();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc = json_of(&out);
        let body = &doc["body"];
        let cluster = &body["cluster"];
        assert_eq!(cluster["ranks"], 2, "{cluster}");
        let ranks = cluster["per_rank"].as_array().unwrap();
        assert_eq!(ranks.len(), 2, "{cluster}");
        for (i, r) in ranks.iter().enumerate() {
            assert_eq!(r["rank"], i as u64);
            assert_eq!(r["write_bytes"], 8 << 20, "{r}");
            assert_eq!(r["interrupted"], false, "{r}");
        }
        assert_eq!(body["jobs"][0]["write"]["io_bytes"], 16u64 << 20);
        // Two hosts to MPI, so no shared memory between the ranks: with
        // btl tcp,self held to the veth's subnet, rank 1's row reached
        // rank 0 over the veth or the job would have failed (unreachable
        // proc). The veth's counters say so too, in both directions.
        let (rx, tx) = (after.0 - before.0, after.1 - before.1);
        assert!(rx > 1024 && tx > 1024, "veth rx {rx} B, tx {tx} B");
        for r in 0..2 {
            assert_no_test_files(&dir.path().join(format!("r{r}")));
        }
        eprintln!("rig: 2 ranks over a veth in {took:?}, veth rx {rx} B, tx {tx} B");
    }

    /// What the store knows of a device is what the ranks are told, as a
    /// run alone is: a `--rated` speed stored and checked against the
    /// merged figure, a verify verdict remembered from a run alone warned
    /// of, and the engine's note printed once.
    #[test]
    fn ranks_are_told_what_the_store_knows_as_a_run_alone_is() {
        require!(have("mpirun"));
        require!(require_fake_disk());
        let rig = FakeDisk::new(128 << 20, Fake::Wrap { real: 32 << 20 }).unwrap();
        let dev = rig.dev.to_str().unwrap();
        let db = ScratchDb::new();
        // Alone: the quick check finds that the device wraps; the verdict
        // is remembered with the disk.
        let alone = iomark(&[
            "disk",
            dev,
            "--allow-write",
            dev,
            "--profile",
            "verify",
            "--quick",
            "--json",
            "--db",
            db.db(),
        ]);
        assert_eq!(alone.status.code(), Some(3), "{}", stderr(&alone));

        let read = |extra: &[&str]| {
            let mut args = vec![
                "disk",
                dev,
                "--rw",
                "read",
                "--bs",
                "1M",
                "--size",
                "16M",
                "--runtime",
                "1s",
                "--engine",
                "libaio",
                "--json",
                "--db",
                db.db(),
            ];
            args.extend_from_slice(extra);
            let out = run(&args);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            out
        };
        let out = read(&["--rated", "read=1MB/s"]);
        let doc = json_of(&out);
        let rated = warnings_of_kind(&doc, "above_rated");
        assert!(rated.iter().any(|m| m.contains("1.00 MB/s")), "{rated:?}");
        let wrong = warnings_of_kind(&doc, "data_errors");
        assert!(
            wrong.iter().any(|m| m.contains("verify run 1")),
            "the remembered verdict: {:?}",
            doc["warnings"]
        );
        assert_eq!(
            stderr(&out)
                .matches("iomark: note: ioengine libaio")
                .count(),
            1,
            "{}",
            stderr(&out)
        );
        // Remembered: the next run, without --rated, is still checked.
        let later = json_of(&read(&[]));
        assert!(
            !warnings_of_kind(&later, "above_rated").is_empty(),
            "{later}"
        );

        // Each rank on a path of its own: one device's rating is no one's.
        let template = format!("{dev}{{rank}}");
        let out = run(&[
            "disk",
            "--per-rank-path",
            &template,
            "--rw",
            "read",
            "--rated",
            "read=1MB/s",
            "--no-store",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("--rated rates one device"),
            "{}",
            stderr(&out)
        );
    }
}
