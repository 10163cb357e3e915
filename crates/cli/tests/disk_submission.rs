//! How io_uring I/Os are handed to the kernel: chosen from the completions
//! by default (recorded with the job), forced by `--iodepth-batch`.

use std::io::Write;

use crate::common::*;
use serde_json::Value;

/// A 16 MiB file written just now, so its pages are in the page cache,
/// removed with its directory when the guard drops.
fn cached_file() -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new()
        .prefix("iomark-i20-submission")
        .tempdir_in("/var/tmp")
        .expect("a scratch directory in /var/tmp");
    let path = dir.path().join("cached.bin");
    let mut f = std::fs::File::create(&path).unwrap();
    let block: Vec<u8> = (0..1 << 20).map(|i| (i * 7 + 3) as u8).collect();
    for _ in 0..16 {
        f.write_all(&block).unwrap();
    }
    let path = path.to_str().unwrap().to_string();
    (dir, path)
}

/// The submission record of a 1s 4k random read at QD16 from the cache.
fn submission(path: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "disk",
        path,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "16",
        "--engine",
        "io_uring",
        "--buffered",
        "--keep-cache",
        "--runtime",
        "1s",
        "--json",
        "--no-store",
    ];
    args.extend_from_slice(extra);
    let doc = json_of(&iomark(&args));
    let job = &doc["body"]["jobs"][0];
    assert!(job["read"]["ios"].as_u64().unwrap() > 0, "it read: {job}");
    job["submission"].clone()
}

#[test]
fn page_cache_reads_are_batched_by_default_and_a_given_batch_is_kept() {
    require!(iomark_disk::io_uring_available());
    let (_dir, path) = cached_file();

    // Page-cache hits complete within the call that submits them: the
    // runner sees it and submits whole refills.
    let chosen = submission(&path, &[]);
    assert_eq!(chosen["adaptive"], true, "{chosen}");
    assert_eq!(chosen["mode"], "batched", "{chosen}");
    let inline = chosen["inline_pct"].as_f64().unwrap();
    assert!(inline >= 90.0, "hits complete inline: {chosen}");

    // --iodepth-batch 1 forces one submission per I/O, whatever the
    // completions do.
    let per_io = submission(&path, &["--iodepth-batch", "1"]);
    assert_eq!(per_io["adaptive"], false, "{per_io}");
    assert_eq!(per_io["mode"], "per_io", "{per_io}");
    assert_eq!(per_io["batched_pct"].as_f64(), Some(0.0), "{per_io}");

    let forced = submission(&path, &["--iodepth-batch", "8"]);
    assert_eq!(forced["adaptive"], false, "{forced}");
    assert_eq!(forced["mode"], "batched", "{forced}");
}

#[test]
fn direct_reads_from_a_disk_are_submitted_one_at_a_time() {
    require!(iomark_disk::io_uring_available());
    let (_dir, path) = cached_file();
    // Through O_DIRECT every read goes to the disk and completes later,
    // from its interrupt: none within its submission, so the runner keeps
    // one submission per I/O and the device's queue evenly fed.
    let mut args = vec!["disk", &path, "--rw", "randread", "--bs", "4k"];
    args.extend(["--iodepth", "16", "--engine", "io_uring", "--direct"]);
    args.extend(["--runtime", "1s", "--json", "--no-store"]);
    let doc = json_of(&iomark(&args));
    let job = &doc["body"]["jobs"][0];
    assert!(job["read"]["ios"].as_u64().unwrap() > 0, "it read: {job}");
    let chosen = &job["submission"];
    assert_eq!(chosen["adaptive"], true, "{chosen}");
    assert_eq!(chosen["mode"], "per_io", "{chosen}");
    let inline = chosen["inline_pct"].as_f64().unwrap();
    assert!(inline < 25.0, "a disk's reads complete later: {chosen}");
}

#[test]
fn a_batch_beyond_the_depth_is_refused() {
    let out = iomark(&[
        "disk",
        "/var/tmp",
        "--iodepth",
        "4",
        "--iodepth-batch",
        "8",
        "--no-store",
    ]);
    fails_with(&out, "--iodepth-batch must be 1 to --iodepth (4)");
    let out = iomark(&["disk", "/var/tmp", "--iodepth-batch", "0", "--no-store"]);
    fails_with(&out, "--iodepth-batch must be 1 to --iodepth");
}
