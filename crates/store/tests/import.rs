//! Importing real fio and iperf3 JSON, produced by the real tools here.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use iomark_model::figure::Figure;
use iomark_model::net::NetDirection;
use iomark_model::{RunBody, RunDocument, RunStatus};
use iomark_store::import::{import_str, ImportError};
use iomark_store::{SqliteStore, Store};
use serde_json::Value;

fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: {tool} is not installed (scripts/test installs it)");
    }
    ok
}

/// fio's stdout for a job on a small file in `dir`.
fn fio(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("fio")
        .arg(format!("--filename={}", dir.join("fio.dat").display()))
        .args(["--size=4M", "--ioengine=psync"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap()
}

fn figure<'a>(figs: &'a [Figure], test: &str, metric: &str) -> &'a Figure {
    figs.iter()
        .find(|f| f.test == test && f.metric == metric)
        .unwrap_or_else(|| panic!("no {test} / {metric} in {figs:#?}"))
}

/// Store the document and read it back, to show an import survives the store.
fn store_round_trip(doc: &RunDocument) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(dir.path().join("r.db")).unwrap();
    let id = store.insert_complete(doc).unwrap();
    common::assert_same_document(&store.load(id).unwrap(), doc);
}

#[test]
fn fio_json_becomes_a_disk_run_with_bytes_per_second() {
    if !have("fio") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // iodepth with a sync engine makes fio print a note before the JSON.
    let text = fio(
        dir.path(),
        &[
            "--name=seq",
            "--rw=read",
            "--bs=64k",
            "--iodepth=4",
            "--output-format=json",
        ],
    );
    let raw = json_of(&text);
    let doc = import_str(&text).unwrap();
    assert_eq!(doc.tool, "fio");
    assert_eq!(
        doc.tool_version,
        raw["fio version"]
            .as_str()
            .unwrap()
            .trim_start_matches("fio-")
    );
    assert_eq!(doc.status, RunStatus::Complete);
    assert_eq!(doc.finished_at_ms, raw["timestamp_ms"].as_u64().unwrap());
    let RunBody::Disk(run) = &doc.body else {
        panic!("not a disk run")
    };
    assert_eq!(run.jobs.len(), 1);
    let job = &run.jobs[0];
    assert_eq!(job.spec.bs.get(), 65536);
    assert_eq!(job.spec.iodepth, 4);
    let read = job.read.as_ref().unwrap();
    let r = &raw["jobs"][0]["read"];
    assert_eq!(read.io_bytes.get(), r["io_bytes"].as_u64().unwrap());
    assert_eq!(read.io_bytes.get(), 4 << 20);
    assert_eq!(read.ios, r["total_ios"].as_u64().unwrap());
    // bw_bytes, not the KiB/s `bw`.
    assert_eq!(read.bw.0, r["bw_bytes"].as_f64().unwrap());
    assert_eq!(
        read.clat.percentile(99.0).unwrap(),
        r["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap()
    );
    assert!(job.write.is_none());
    let figs = doc.body.figures();
    assert_eq!(
        figure(&figs, "read 64K Q4T1", "read bw").value,
        r["bw_bytes"].as_f64().unwrap()
    );
    assert_eq!(
        figure(&figs, "read 64K Q4T1", "read lat mean").value,
        r["clat_ns"]["mean"].as_f64().unwrap()
    );
    // Buffered fio runs say so.
    assert!(job.warnings.iter().any(|w| w.message.contains("direct=1")));
    store_round_trip(&doc);
}

#[test]
fn fio_json_plus_mixed_jobs_keep_both_directions_and_threads() {
    if !have("fio") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = fio(
        dir.path(),
        &[
            "--name=mix",
            "--rw=randrw",
            "--bs=4k",
            "--numjobs=2",
            "--group_reporting",
            "--runtime=300ms",
            "--time_based",
            "--rwmixread=70",
            "--output-format=json+",
        ],
    );
    let raw = json_of(&text);
    assert!(
        raw["jobs"][0]["read"]["clat_ns"].get("bins").is_some(),
        "not json+"
    );
    let doc = import_str(&text).unwrap();
    let RunBody::Disk(run) = &doc.body else {
        panic!("not a disk run")
    };
    assert_eq!(run.jobs.len(), 1, "group_reporting merges the threads");
    let job = &run.jobs[0];
    assert_eq!(job.spec.numjobs, 2);
    assert_eq!(job.spec.rwmix_read, 70);
    let (r, w) = (job.read.as_ref().unwrap(), job.write.as_ref().unwrap());
    assert_eq!(r.bw.0, raw["jobs"][0]["read"]["bw_bytes"].as_f64().unwrap());
    assert_eq!(
        w.bw.0,
        raw["jobs"][0]["write"]["bw_bytes"].as_f64().unwrap()
    );
    let figs = doc.body.figures();
    figure(&figs, "randrw 4K Q1T2", "read iops");
    figure(&figs, "randrw 4K Q1T2", "write iops");
    store_round_trip(&doc);
}

#[test]
fn fio_clones_without_group_reporting_are_separate_single_thread_jobs() {
    if !have("fio") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = fio(
        dir.path(),
        &[
            "--name=w",
            "--rw=write",
            "--bs=128k",
            "--numjobs=2",
            "--output-format=json",
        ],
    );
    let doc = import_str(&text).unwrap();
    let RunBody::Disk(run) = &doc.body else {
        panic!("not a disk run")
    };
    assert_eq!(run.jobs.len(), 2);
    assert!(run.jobs.iter().all(|j| j.spec.numjobs == 1));
    let figs = doc.body.figures();
    figure(&figs, "write 128K Q1T1", "write bw");
    figure(&figs, "write 128K Q1T1 #2", "write bw");
}

/// An iperf3 server on a free loopback port, killed on drop.
struct Server(Child, u16);

impl Server {
    fn start() -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("iperf3")
            .args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Server(child, port)
    }

    /// `iperf3 -c ... -J` output, retried while the server starts.
    fn client(&self, args: &[&str]) -> String {
        for _ in 0..50 {
            let out = Command::new("iperf3")
                .args([
                    "-c",
                    "127.0.0.1",
                    "-p",
                    &self.1.to_string(),
                    "-J",
                    "-t",
                    "1",
                    "-i",
                    "0.25",
                ])
                .args(args)
                .output()
                .unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            // iperf3 3.12 can exit 0 with an "error" document when the
            // server is not listening yet.
            if out.status.success() && !text.contains("\"error\"") {
                return text;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("iperf3 client never got through");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn iperf3_json_becomes_a_net_run_with_the_receivers_goodput() {
    if !have("iperf3") {
        return;
    }
    let server = Server::start();
    let text = server.client(&["-P", "2"]);
    let raw = json_of(&text);
    let doc = import_str(&text).unwrap();
    assert_eq!(doc.tool, "iperf3");
    assert_eq!(
        doc.tool_version,
        raw["start"]["version"]
            .as_str()
            .unwrap()
            .trim_start_matches("iperf ")
    );
    let RunBody::Net(run) = &doc.body else {
        panic!("not a net run")
    };
    assert_eq!(run.spec.parallel, 2);
    assert_eq!(run.spec.host, "127.0.0.1");
    assert_eq!(run.streams.len(), 2);
    assert!(run
        .streams
        .iter()
        .all(|s| s.direction == NetDirection::Upload));
    let received = raw["end"]["sum_received"]["bytes"].as_u64().unwrap();
    assert_eq!(
        run.streams.iter().map(|s| s.received.get()).sum::<u64>(),
        received
    );
    let figs = doc.body.figures();
    let goodput = figure(&figs, "tcp P2", "upload goodput");
    let expect = raw["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    assert!(
        (goodput.value - expect).abs() / expect < 0.01,
        "goodput {} vs iperf3's {expect}",
        goodput.value
    );
    assert!(goodput.spread.is_some(), "per-interval spread expected");
    store_round_trip(&doc);

    let text = server.client(&["-R"]);
    let doc = import_str(&text).unwrap();
    let RunBody::Net(run) = &doc.body else {
        panic!("not a net run")
    };
    assert!(run.spec.reverse);
    assert!(run
        .streams
        .iter()
        .all(|s| s.direction == NetDirection::Download));
    figure(&doc.body.figures(), "tcp P1 reverse", "download goodput");
}

#[test]
fn garbage_truncated_and_foreign_json_are_refused_with_reasons() {
    let garbage = import_str("\u{0}\u{1}binary junk").unwrap_err();
    assert!(matches!(garbage, ImportError::NoJson), "{garbage}");
    let truncated =
        import_str("{\"fio version\": \"fio-3.33\", \"jobs\": [{\"jobname\": \"x\"").unwrap_err();
    assert!(matches!(truncated, ImportError::BadJson { .. }));
    assert!(truncated.to_string().contains("truncated"));
    let foreign = import_str("{\"results\": [1, 2, 3]}").unwrap_err();
    assert!(matches!(foreign, ImportError::UnknownFormat));
    assert!(foreign.to_string().contains("iperf3 -J"));
    let no_jobs = import_str("{\"fio version\": \"fio-3.33\", \"timestamp\": 1}").unwrap_err();
    assert!(matches!(no_jobs, ImportError::Missing { .. }), "{no_jobs}");
    let failed =
        import_str("{\"start\": {}, \"end\": {}, \"error\": \"unable to connect to server\"}")
            .unwrap_err();
    assert!(failed.to_string().contains("unable to connect"));
}

#[test]
fn a_real_fio_file_cut_in_half_is_refused() {
    if !have("fio") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = fio(
        dir.path(),
        &["--name=seq", "--rw=read", "--bs=1M", "--output-format=json"],
    );
    let half = &text[..text.len() / 2];
    assert!(matches!(import_str(half), Err(ImportError::BadJson { .. })));
}
