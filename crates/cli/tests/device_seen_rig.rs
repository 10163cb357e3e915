//! What the device saw (docs/devices.md): on loop devices of its own, a
//! run's per-job device counters must match iomark's own I/O, name the
//! queue limit that split its requests, name other I/O on the device, and
//! name a stall, and say nothing on an idle device.
//!
//! Each run is a few hundred milliseconds on an 8-16 MiB region; the
//! loop devices' images are in memory.

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::*;
use iomark_testrig::{require_fake_disk, require_root, Fake, FakeDisk, LoopDevice, MountedFs};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// A queue attribute of a loop device set for a test, put back on drop
/// (before the device is detached: a loop device's queue settings
/// outlive its backing file).
struct QueueSetting {
    file: PathBuf,
    was: String,
}

impl QueueSetting {
    fn set(dev: &Path, attr: &str, value: &str) -> QueueSetting {
        let name = dev.file_name().unwrap().to_str().unwrap();
        let file = PathBuf::from(format!("/sys/block/{name}/queue/{attr}"));
        let was = std::fs::read_to_string(&file).unwrap().trim().to_string();
        std::fs::write(&file, value).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        QueueSetting { file, was }
    }
}

impl Drop for QueueSetting {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.file, &self.was);
    }
}

/// `iomark disk TARGET ARGS... --no-store --json`, which must succeed.
fn run(target: &Path, args: &[&str]) -> Value {
    let mut all = vec!["disk", target.to_str().unwrap()];
    all.extend(args);
    all.extend(["--no-store", "--json"]);
    json_of(&iomark(&all))
}

/// The messages of the one job's warnings of `kind`.
fn job_warnings<'a>(job: &'a Value, kind: &str) -> Vec<&'a str> {
    job["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| w["kind"] == kind)
        .filter_map(|w| w["message"].as_str())
        .collect()
}

fn the_job(doc: &Value) -> &Value {
    let jobs = doc["body"]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{doc}");
    &jobs[0]
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn a_lowered_max_sectors_kb_splits_1m_reads_and_is_named() {
    require!(require_root());
    let dev = require!(LoopDevice::new(16 * MIB));
    let _limit = QueueSetting::set(&dev.dev, "max_sectors_kb", "128");
    let doc = run(
        &dev.dev,
        &[
            "--rw",
            "read",
            "--bs",
            "1M",
            "--size",
            "8M",
            "--runtime",
            "300ms",
        ],
    );
    let job = the_job(&doc);
    let split = job_warnings(job, "request_size_changed");
    assert_eq!(split.len(), 1, "{job}");
    assert!(
        split[0].contains("as 128 KiB requests on average, not the 1 MiB asked for")
            && split[0].contains("split each I/O at max_sectors_kb (128 KiB)"),
        "{}",
        split[0]
    );
    assert!(job_warnings(job, "foreign_io").is_empty(), "{job}");
    eprintln!("device-seen: {}", split[0]);

    // Eight requests per I/O, and per I/O still in flight when the
    // measured time ended (iomark counts what completed inside it; the
    // device's readings enclose it).
    let seen = &job["device_io"];
    let ios = u(&job["read"]["ios"]);
    let edge = u(&job["spec"]["iodepth"]) * u(&job["spec"]["numjobs"]);
    let requests = u(&seen["read"]["requests"]);
    eprintln!("device-seen: {ios} reads of 1 MiB by iomark, {requests} requests at the device");
    assert!(
        (8 * ios..=8 * (ios + edge)).contains(&requests),
        "{requests} requests for {ios} I/Os (edge {edge})"
    );
    assert_eq!(u(&seen["read"]["bytes"]) / requests, 128 << 10, "{seen}");
    assert_eq!(u(&seen["write"]["requests"]), 0, "{seen}");
    assert_eq!(u(&seen["limits"]["max_request"]), 128 << 10, "{seen}");
}

#[test]
fn sequential_4k_reads_submitted_together_are_merged_and_named() {
    require!(require_root());
    let dev = require!(LoopDevice::new(16 * MIB));
    let _scheduler = QueueSetting::set(&dev.dev, "scheduler", "none");
    // 32 adjacent reads handed to the kernel in one call are merged while
    // the submission is plugged, with or without a scheduler.
    let doc = run(
        &dev.dev,
        &[
            "--rw",
            "read",
            "--bs",
            "4k",
            "--iodepth",
            "32",
            "--iodepth-batch",
            "32",
            "--size",
            "8M",
            "--runtime",
            "300ms",
        ],
    );
    let job = the_job(&doc);
    let merged = job_warnings(job, "request_size_changed");
    assert_eq!(merged.len(), 1, "{job}");
    assert!(
        merged[0].contains("not the 4 KiB asked for")
            && merged[0].contains("merged adjacent I/Os")
            && merged[0].contains("scheduler none"),
        "{}",
        merged[0]
    );
    eprintln!("device-seen: {}", merged[0]);
    // Every I/O of the job is a request or a merge into one.
    let seen = &job["device_io"]["read"];
    let ios = u(&job["read"]["ios"]);
    let edge = u(&job["spec"]["iodepth"]);
    let (requests, merges) = (u(&seen["requests"]), u(&seen["merges"]));
    eprintln!("device-seen: {ios} reads of 4 KiB by iomark, {requests} requests + {merges} merges at the device");
    assert!(
        (ios..=ios + edge).contains(&(requests + merges)),
        "{requests} requests and {merges} merges for {ios} I/Os (edge {edge})"
    );
}

/// Runs `job` while another thread writes `file` (opened for direct I/O)
/// in 1 MiB blocks over its 8 MiB from `base` on, from its first write
/// before the job to after the job's end; the job's document and the bytes
/// the writer wrote.
fn beside_a_writer(file: &std::fs::File, base: u64, job: impl FnOnce() -> Value) -> (Value, u64) {
    let stop = AtomicBool::new(false);
    let (started, first) = mpsc::channel();
    std::thread::scope(|s| {
        let w = s.spawn(|| {
            // One page-aligned MiB out of a larger buffer, as O_DIRECT wants.
            let mut buf = vec![0x5au8; (MIB + 4096) as usize];
            let skip = buf.as_ptr().align_offset(4096);
            let block = &mut buf[skip..skip + MIB as usize];
            let mut written = 0u64;
            while !stop.load(Ordering::Relaxed) {
                file.write_all_at(block, base + written % (8 * MIB))
                    .unwrap();
                written += MIB;
                if written == MIB {
                    started.send(()).unwrap();
                }
            }
            written
        });
        first.recv().expect("the writer wrote");
        let doc = job();
        stop.store(true, Ordering::Relaxed);
        (doc, w.join().unwrap())
    })
}

fn direct_writer(path: &Path) -> std::fs::File {
    OpenOptions::new()
        .write(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The job's one foreign-I/O warning names the writer's bytes, and the
/// device counted no more written than the writer wrote.
fn assert_foreign_writes(what: &str, doc: &Value, written: u64) {
    let job = the_job(doc);
    let foreign = job_warnings(job, "foreign_io");
    assert_eq!(foreign.len(), 1, "{what}: {job}");
    assert!(
        foreign[0].contains("other I/O reached")
            && foreign[0].contains("written beyond the job's own"),
        "{what}: {}",
        foreign[0]
    );
    eprintln!("device-seen: {what}: {}", foreign[0]);
    // The writer wrote before the job, during it and after it.
    let seen_written = u(&job["device_io"]["write"]["bytes"]);
    assert!(
        (4 * MIB..=written).contains(&seen_written),
        "{what}: device saw {seen_written} B written, the writer wrote {written} B"
    );
    // The job's own reads are not blamed on the writer's mean size.
    assert!(
        job_warnings(job, "request_size_changed").is_empty(),
        "{what}: {job}"
    );
}

#[test]
fn a_writer_beside_the_job_is_named_as_foreign_io() {
    require!(require_root());
    let dev = require!(LoopDevice::new(16 * MIB));
    // The job reads the first 8 MiB; the writer writes the last 8 MiB.
    let writer = direct_writer(&dev.dev);
    let (doc, written) = beside_a_writer(&writer, 8 * MIB, || {
        run(
            &dev.dev,
            &[
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--size",
                "8M",
                "--runtime",
                "300ms",
            ],
        )
    });
    assert_foreign_writes("device", &doc, written);
}

#[test]
fn a_writer_to_another_file_beside_a_test_file_is_named_as_foreign_io() {
    require!(require_root());
    let fs = require!(MountedFs::ext4(32 * MIB));
    // Another program's file on the same ext4, its blocks written and
    // synced first so that the writer only overwrites them.
    let other = fs.mountpoint.join("other.dat");
    std::fs::write(&other, vec![1u8; (8 * MIB) as usize]).unwrap();
    std::fs::File::open(&other).unwrap().sync_all().unwrap();
    let writer = direct_writer(&other);
    let (doc, written) = beside_a_writer(&writer, 0, || {
        run(
            &fs.mountpoint,
            &[
                "--rw",
                "randread",
                "--bs",
                "4k",
                "--size",
                "8M",
                "--runtime",
                "300ms",
            ],
        )
    });
    drop(writer);
    std::fs::remove_file(&other).unwrap();
    assert_foreign_writes("ext4", &doc, written);
}

#[test]
fn an_idle_device_and_a_file_on_ext4_raise_no_alarm() {
    require!(require_root());
    let dev = require!(LoopDevice::new(16 * MIB));
    // 256 KiB fits a loop device's 128 segments of a page each.
    let raw = run(
        &dev.dev,
        &[
            "--rw",
            "read",
            "--bs",
            "256k",
            "--size",
            "8M",
            "--runtime",
            "300ms",
        ],
    );
    // Direct writes to a test file on ext4: its journal and the file's
    // metadata reach the device too, and are not foreign I/O.
    let fs = require!(MountedFs::ext4(32 * MIB));
    let file = run(
        &fs.mountpoint,
        &[
            "--rw",
            "randwrite",
            "--bs",
            "16k",
            "--size",
            "8M",
            "--runtime",
            "300ms",
        ],
    );
    for (what, doc, dir) in [("raw reads", &raw, "read"), ("ext4 writes", &file, "write")] {
        let job = the_job(doc);
        assert_eq!(job["page_cache_bypassed"], true, "{what}: {job}");
        let seen = &job["device_io"];
        assert!(u(&seen[dir]["requests"]) > 0, "{what}: {seen}");
        for kind in ["foreign_io", "request_size_changed", "device_stalled"] {
            assert!(job_warnings(job, kind).is_empty(), "{what}: {job}");
        }
        eprintln!(
            "device-seen: {what}: iomark {} I/Os, {} B; device {} requests, {} B",
            job[dir]["ios"], job[dir]["io_bytes"], seen[dir]["requests"], seen[dir]["bytes"]
        );
    }
}

#[test]
fn the_text_and_results_show_carry_what_the_device_saw() {
    require!(require_root());
    let dev = require!(LoopDevice::new(16 * MIB));
    let scratch = ScratchDb::new();
    let path = dev.dev.to_str().unwrap();
    let name = dev.dev.file_name().unwrap().to_str().unwrap();
    let text = ok(&iomark(&[
        "disk",
        path,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--size",
        "8M",
        "--runtime",
        "200ms",
        "--db",
        scratch.db(),
    ]));
    // Under the job, as fio's "Disk stats".
    // Its line, wrapped at 80 columns: from the device's name to the
    // queue's size.
    let flat = flat(&text);
    let at = flat
        .find(&format!("device {name}: reads "))
        .unwrap_or_else(|| panic!("no device line:\n{text}"));
    let line = &flat[at..at + flat[at..].find("aqu-sz").expect("the queue's size")];
    assert!(
        line.contains(" x 4 KiB (") && line.contains("writes none; util "),
        "{line}"
    );
    // `results show` as the run printed it; with -v, also the section.
    let show = ok(&results(scratch.db(), &["show", "1"]));
    assert!(show.contains(&format!("  device {name}: reads ")), "{show}");
    let show = ok(&results(scratch.db(), &["show", "-v", "1"]));
    assert!(
        show.contains(&format!("What the device saw ({name}):\n  custom: reads ")),
        "{show}"
    );
}

#[test]
fn a_partition_has_its_own_counters_and_names_its_disk() {
    require!(require_root());
    require!(have_command("partx", "util-linux"));
    let dev = require!(LoopDevice::new(16 * MIB));
    // An MBR with one Linux partition from sector 2048 to the end, added
    // to the kernel's table with partx (the device was attached without
    // a partition scan).
    let mut mbr = [0u8; 512];
    mbr[446 + 4] = 0x83;
    mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
    mbr[446 + 12..446 + 16].copy_from_slice(&(((16 * MIB) / 512 - 2048) as u32).to_le_bytes());
    mbr[510..].copy_from_slice(&[0x55, 0xaa]);
    let disk = OpenOptions::new().write(true).open(&dev.dev).unwrap();
    disk.write_all_at(&mbr, 0).unwrap();
    disk.sync_all().unwrap();
    // A loop device attached without a partition scan keeps partitions
    // added by hand after it is detached: delete them first, always.
    let _added = PartitionsAdded(dev.dev.clone());
    let added = std::process::Command::new("partx")
        .arg("-a")
        .arg(&dev.dev)
        .output()
        .unwrap();
    assert!(added.status.success(), "partx -a: {}", stderr(&added));
    let name = dev.dev.file_name().unwrap().to_str().unwrap();
    let part = PathBuf::from(format!("{}p1", dev.dev.display()));
    wait_until(
        std::time::Duration::from_secs(10),
        "the partition's node",
        || part.exists(),
    );
    let doc = run(
        &part,
        &[
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "4M",
            "--runtime",
            "200ms",
        ],
    );
    let seen = &the_job(&doc)["device_io"];
    assert_eq!(seen["name"], format!("{name}p1"), "{seen}");
    assert_eq!(seen["partition_of"], name, "{seen}");
    assert!(
        u(&seen["read"]["requests"]) >= u(&the_job(&doc)["read"]["ios"]),
        "{seen}"
    );
    // The whole disk's queue limits stand for the partition's.
    assert!(u(&seen["limits"]["max_request"]) > 0, "{seen}");
}

/// Deletes the partitions `partx -a` added to a device, on drop.
struct PartitionsAdded(PathBuf);

impl Drop for PartitionsAdded {
    fn drop(&mut self) {
        let _ = std::process::Command::new("partx")
            .arg("-d")
            .arg(&self.0)
            .output();
    }
}

#[test]
fn a_device_that_holds_its_requests_for_a_second_is_named_as_stalled() {
    require!(require_fake_disk());
    let size = 32 * MIB;
    // A loop device over a FUSE file whose daemon is stopped for 1.5 s of
    // a 4 s run: the loop device holds the requests that reach it.
    let disk = FakeDisk::new(size, Fake::Wrap { real: size }).unwrap();
    let dev = disk.dev.to_str().unwrap();
    let mut run = Proc::spawn(&mut iomark_cmd(&[
        "disk",
        dev,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "4",
        "--runtime",
        "4s",
        "--no-store",
        "--json-stream",
    ]));
    run.wait_stdout(r#"{"event":"interval""#, Duration::from_secs(60));
    disk.stall_for(Duration::from_millis(1500)).unwrap();
    assert!(run.running(), "the run ended before the stall was over");
    let out = run.finish(Duration::from_secs(60));
    let text = ok(&out);
    let end: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let job = the_job(&end["data"]);
    let stalled = u(&job["device_io"]["stalled"]) as f64 / 1e9;
    eprintln!("device-seen: held 1.5 s, stalled {stalled:.2} s");
    // Looks ten times a second see the 1.5 s less a look on each side
    // (1.4 s seen); a loaded host may look later, or wake the daemon
    // later, but not count the rest of the run.
    assert!((1.0..2.5).contains(&stalled), "{}", job["device_io"]);
    let named = job_warnings(job, "device_stalled");
    assert_eq!(named.len(), 1, "{job}");
    let name = disk.dev.file_name().unwrap().to_str().unwrap();
    assert!(
        named[0].starts_with(&format!("{name} held requests for 1.")),
        "{}",
        named[0]
    );
}

/// Two iomark runs on one device name each other (issue 48): the second
/// says at its start that run 1 (its pid) is using the device, and each
/// stores a `shared_device` warning naming the other, whatever the store.
#[test]
fn a_second_run_on_the_same_device_names_the_first_and_both_warn() {
    let dev = require!(LoopDevice::new(16 * MIB));
    let scratch = ScratchDb::new();
    let db = scratch.db();
    let path = dev.dev.to_str().unwrap();
    let name = dev.dev.file_name().unwrap().to_str().unwrap();
    let job = |runtime: &str| {
        let mut c = iomark_cmd(&["disk", path, "--rw", "randread", "--bs", "4k"]);
        c.args(["--size", "8M", "--runtime", runtime, "--db", db]);
        c
    };
    let mut first = Proc::spawn(&mut job("60s"));
    let first_pid = first.pid();
    wait_until(Duration::from_secs(30), "run 1 reads as running", || {
        // Until the run makes it, there is no database to list.
        let out = results(db, &["list", "--json"]);
        out.status.success() && json(&out)["runs"][0]["status"] == "running"
    });
    let second = job("2s").output().unwrap();
    // Wrapped at 80 columns in a pipe: read with its lines joined.
    let err = flat(&stderr(&second));
    let said = format!("run 1 (pid {first_pid}) is using {name} too");
    assert!(err.contains(&said), "no {said:?} in {err}");
    assert!(first.running(), "{}", first.stderr_so_far());
    first.signal(rustix::process::Signal::INT);
    let _ = first.finish(Duration::from_secs(30));
    let doc = |id: &str| json(&results(db, &["show", id, "--json"]))["document"].clone();
    let second_doc = doc("2");
    let named = warnings_of_kind(&second_doc, "shared_device");
    let was = format!("run 1 (pid {first_pid}) was using {name} at the same time");
    assert!(named.iter().any(|w| w.starts_with(&was)), "{named:?}");
    let first_doc = doc("1");
    let named = warnings_of_kind(&first_doc, "shared_device");
    assert!(
        named
            .iter()
            .any(|w| w.starts_with("run 2 (pid ") && w.contains(&format!("was using {name}"))),
        "{named:?}"
    );
    // The second run's own text says it too.
    assert!(stdout(&second).contains(&was), "{}", stdout(&second));
}
