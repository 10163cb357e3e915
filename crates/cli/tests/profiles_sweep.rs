//! The block-size sweep on a test file: a mapped engine's jobs say the page
//! cache was used (and warn so), whatever the target's O_DIRECT; and each
//! point starts from the same cache state, so a sweep run in the reverse
//! order gives the same figures, while `--keep-cache` leaves the cache
//! warm from one point to the next.

use crate::common::*;
use serde_json::Value;

fn scratch() -> tempfile::TempDir {
    // Under /var/tmp: a real file system with O_DIRECT and a page cache
    // that POSIX_FADV_DONTNEED empties, unlike a tmpfs /tmp. The directory
    // (and the test file, which iomark removes itself) goes on drop, also
    // when an assertion fails.
    tempfile::Builder::new()
        .prefix("iomark-sweep-")
        .tempdir_in("/var/tmp")
        .or_else(|_| tempfile::tempdir())
        .unwrap()
}

/// `iomark disk DIR --profile sweep ARGS... --json` on a 256 MiB test file,
/// one second per point; its JSON document.
fn sweep(dir: &tempfile::TempDir, args: &[&str]) -> Value {
    let out = iomark_cmd(&["disk", dir.path().to_str().unwrap()])
        .args(["--profile", "sweep", "--size", "256MiB", "--json"])
        .args(args)
        .output()
        .unwrap();
    json_of(&out)
}

fn jobs(doc: &Value) -> &Vec<Value> {
    doc["body"]["jobs"].as_array().unwrap()
}

fn is_mapped(job: &Value) -> bool {
    job["spec"]["engine"].as_str().unwrap().starts_with("mmap")
}

fn has_buffered_warning(warnings: &Value) -> bool {
    warnings
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "buffered_io")
}

/// The read rate, in MB/s, of the job named `name`.
fn read_mbps(doc: &Value, name: &str) -> f64 {
    let job = jobs(doc)
        .iter()
        .find(|j| j["spec"]["name"] == name)
        .unwrap_or_else(|| panic!("no job {name}"));
    job["read"]["bw"].as_f64().unwrap() / 1e6
}

#[test]
fn mapped_jobs_report_the_page_cache_as_used_and_warn() {
    let dir = scratch();
    let doc = sweep(
        &dir,
        &["--engines", "psync,mmap-sync", "--quick", "--sizes", "4k"],
    );
    let jobs = jobs(&doc);
    // psync and mmap-sync: random read and write at 4k, sequential at 1M.
    assert_eq!(jobs.len(), 8, "{jobs:#?}");
    // Where the file system has no O_DIRECT, the target says so once.
    let target_buffered = has_buffered_warning(&doc["warnings"]);
    for job in jobs {
        let name = job["spec"]["name"].as_str().unwrap();
        if is_mapped(job) {
            assert_eq!(job["page_cache_bypassed"], false, "{name}");
            assert_eq!(job["spec"]["direct"], false, "{name}");
            assert!(
                target_buffered || has_buffered_warning(&job["warnings"]),
                "{name} has no buffered-I/O warning: {:?}",
                job["warnings"]
            );
        } else {
            assert_eq!(job["page_cache_bypassed"], !target_buffered, "{name}");
            assert!(!has_buffered_warning(&job["warnings"]), "{name}");
        }
    }
}

/// The engines of a sweep run in the order given, each through its points,
/// and a mapped engine's last points (sequential read and write of the
/// whole file) leave the file in the page cache. Run the two mapped engines
/// in both orders: each one's first random read comes first in one run and
/// after the other engine's points in the other. With `--keep-cache` the
/// second engine reads the page cache, tens of times faster here than the
/// device. With the cache dropped before each point, every random read in
/// either order must run at the device's rate, far below the cached one.
/// The two orders are not compared with each other: other I/O on the same
/// disk (a build, another test) slows a one-second device point several
/// times over, but nothing but the cache makes one faster.
#[test]
fn a_reversed_sweep_gives_the_same_figures() {
    let dir = scratch();
    let common = ["--runtime", "1s", "--sizes", "4k"];
    let forward = sweep(
        &dir,
        &[&["--engines", "mmap-sync,mmap-async"][..], &common].concat(),
    );
    let reverse = sweep(
        &dir,
        &[&["--engines", "mmap-async,mmap-sync"][..], &common].concat(),
    );
    // The control: without dropping, the second engine's random read
    // comes from the page cache the first engine's sequential read filled.
    let kept = sweep(
        &dir,
        &[
            &["--engines", "mmap-sync,mmap-async", "--keep-cache"][..],
            &common,
        ]
        .concat(),
    );
    let warm = read_mbps(&kept, "mmap-async randread 4K");
    let cold = read_mbps(&forward, "mmap-async randread 4K");
    assert!(
        warm > 10.0 * cold,
        "--keep-cache: mmap-async randread 4K read {warm:.1} MB/s after mmap-sync's \
         points, against {cold:.1} MB/s from a dropped cache: expected the page cache"
    );
    for engine in ["mmap-sync", "mmap-async"] {
        let name = format!("{engine} randread 4K");
        let (a, b) = (read_mbps(&forward, &name), read_mbps(&reverse, &name));
        eprintln!("{name}: {a:.1} and {b:.1} MB/s with the cache dropped, {warm:.1} MB/s cached");
        assert!(a > 0.0 && b > 0.0, "{name}: {a} and {b} MB/s");
        assert!(
            a.max(b) < warm / 4.0,
            "{name}: {a:.1} MB/s in one order, {b:.1} MB/s in the other, against \
             {warm:.1} MB/s from the page cache: a point found the cache warm, so it \
             depends on the points run before it"
        );
    }
}

#[test]
fn sizes_set_the_points_and_their_order() {
    let dir = scratch();
    let doc = sweep(
        &dir,
        &[
            "--engines",
            "psync",
            "--runtime",
            "200ms",
            "--sizes",
            "1M,4k",
        ],
    );
    let names: Vec<&str> = jobs(&doc)
        .iter()
        .map(|j| j["spec"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "psync randread 1M",
            "psync randwrite 1M",
            "psync randread 4K",
            "psync randwrite 4K",
            "psync read 1M",
            "psync write 1M"
        ]
    );
    // --sizes belongs to the sweep only.
    let out = iomark_cmd(&["disk", dir.path().to_str().unwrap()])
        .args(["--profile", "macbench", "--sizes", "4k"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--sizes"), "{}", stderr(&out));
}
