//! Importing real fio and iperf3 JSON, produced by the real tools here.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::KillOnDrop;
use iomark_model::figure::Figure;
use iomark_model::net::NetDirection;
use iomark_model::units::Nanos;
use iomark_model::{RunBody, RunDocument, RunStatus};
use iomark_store::import::{import_many, import_str, ImportError};
use iomark_store::{SqliteStore, Store};
use iomark_testrig::require;
use serde_json::Value;

/// `Ok` when `tool` runs here, else why not (for `require!`).
fn have(tool: &str) -> Result<(), String> {
    let ok = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{tool} is not installed (scripts/test installs it)"
        ))
    }
}

/// fio's stdout for a job (`args`, split at spaces) on a small scratch file.
fn fio(args: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("fio")
        .arg(format!(
            "--filename={}",
            dir.path().join("fio.dat").display()
        ))
        .args(["--size=4M", "--ioengine=psync"])
        .args(args.split_whitespace())
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
    let (_dir, path) = common::scratch_db("r.db");
    let mut store = SqliteStore::open(path).unwrap();
    let id = store.insert_complete(doc).unwrap();
    common::assert_same_document(&store.load(id).unwrap(), doc);
}

#[test]
fn fio_json_becomes_a_disk_run_with_bytes_per_second() {
    require!(have("fio"));
    // iodepth with a sync engine makes fio print a note before the JSON.
    let text = fio("--name=seq --rw=read --bs=64k --iodepth=4 --output-format=json");
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
        figure(
            &figs,
            "read 64KiB QD1 T1, psync, buffered, random data, 4MiB",
            "read bw"
        )
        .value,
        r["bw_bytes"].as_f64().unwrap()
    );
    assert_eq!(
        figure(
            &figs,
            "read 64KiB QD1 T1, psync, buffered, random data, 4MiB",
            "read lat mean"
        )
        .value,
        r["clat_ns"]["mean"].as_f64().unwrap()
    );
    // Buffered fio runs say so.
    assert!(job.warnings.iter().any(|w| w.message.contains("direct=1")));
    store_round_trip(&doc);
}

#[test]
fn fios_steady_state_block_is_imported_with_the_job() {
    require!(have("fio"));
    let text = fio(
        "--name=ss --rw=read --bs=4k --time_based --runtime=3 --ss_dur=2 \
         --ss=iops_slope:0.001% --ss_ramp=1 --output-format=json",
    );
    let raw = json_of(&text);
    let block = &raw["jobs"][0]["steadystate"];
    let doc = import_str(&text).unwrap();
    let RunBody::Disk(d) = &doc.body else {
        panic!("a disk run");
    };
    let job = &d.jobs[0];
    let ss = job.steady_state.as_ref().expect("the steadystate block");
    assert_eq!(ss.spec.criterion, "iops_slope:0.001%".parse().unwrap());
    assert_eq!(ss.spec.window, Nanos::from_secs(2));
    assert_eq!(ss.spec.ramp, Nanos::from_secs(1));
    assert_eq!(job.spec.steady_state, Some(ss.spec));
    assert_eq!(u64::from(ss.attained), block["attained"].as_u64().unwrap());
    assert_eq!(ss.slope, block["slope"].as_f64().unwrap());
    let iops: Vec<f64> = block["data"]["iops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(ss.iops, iops);
    let criterion: f64 = block["criterion"]
        .as_str()
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap();
    assert_eq!(ss.criterion, Some(criterion));
    store_round_trip(&doc);
}

#[test]
fn fio_json_plus_mixed_jobs_keep_both_directions_and_threads() {
    require!(have("fio"));
    let text = fio(
        "--name=mix --rw=randrw --bs=4k --numjobs=2 --group_reporting --runtime=300ms \
         --time_based --rwmixread=70 --output-format=json+",
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
    figure(
        &figs,
        "randrw 70/30 4KiB QD1 T2, psync, buffered, random data, 4MiB",
        "read iops",
    );
    figure(
        &figs,
        "randrw 70/30 4KiB QD1 T2, psync, buffered, random data, 4MiB",
        "write iops",
    );
    store_round_trip(&doc);
}

#[test]
fn fio_clones_without_group_reporting_are_separate_single_thread_jobs() {
    require!(have("fio"));
    let text = fio("--name=w --rw=write --bs=128k --numjobs=2 --output-format=json");
    let doc = import_str(&text).unwrap();
    let RunBody::Disk(run) = &doc.body else {
        panic!("not a disk run")
    };
    assert_eq!(run.jobs.len(), 2);
    assert!(run.jobs.iter().all(|j| j.spec.numjobs == 1));
    let figs = doc.body.figures();
    figure(
        &figs,
        "write 128KiB QD1 T1, psync, buffered, random data, 4MiB",
        "write bw",
    );
    figure(
        &figs,
        "write 128KiB QD1 T1, psync, buffered, random data, 4MiB #2",
        "write bw",
    );
}

/// An iperf3 server on a free loopback port, killed on drop.
struct Server {
    port: u16,
    _process: KillOnDrop,
}

impl Server {
    fn start() -> Server {
        let port = iomark_testrig::free_port();
        let child = Command::new("iperf3")
            .args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Server {
            port,
            _process: KillOnDrop(child),
        };
        server.wait_listening();
        server
    }

    /// Waits until the server listens (read from /proc/net/tcp: a
    /// connection to find out would be a client to iperf3).
    fn wait_listening(&self) {
        let local = format!("0100007F:{:04X}", self.port);
        let start = std::time::Instant::now();
        loop {
            let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
            // Columns: sl, local address, remote address, state (0A: listen).
            let listens = table.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.get(1) == Some(&local.as_str()) && cols.get(3) == Some(&"0A")
            });
            if listens {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "iperf3 -s did not listen on {} in 30 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `iperf3 -c ... -J` output.
    fn client(&self, args: &[&str]) -> String {
        let out = Command::new("iperf3")
            .args([
                "-c",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
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
        // iperf3 3.12 can exit 0 with an "error" document.
        assert!(
            out.status.success() && !text.contains("\"error\""),
            "iperf3 -c {args:?} failed: {text}"
        );
        text
    }
}

#[test]
fn iperf3_json_becomes_a_net_run_with_the_receivers_goodput() {
    require!(have("iperf3"));
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
    require!(have("fio"));
    let text = fio("--name=seq --rw=read --bs=1M --output-format=json");
    let half = &text[..text.len() / 2];
    assert!(matches!(import_str(half), Err(ImportError::BadJson { .. })));
}

// ---- Numbers no run can have: refused, naming the field ----

/// A fio 3.33 JSON document as fio prints it (the fields the importer
/// reads, and a few it skips), with two jobs of different names.
fn fio_doc() -> Value {
    let job = |name: &str, bw: u64| {
        serde_json::json!({
            "jobname": name,
            "groupid": 0,
            "error": 0,
            "elapsed": 2,
            "job options": {"name": name, "rw": "randread", "bs": "4k", "iodepth": "8", "direct": "1"},
            "read": {
                "io_bytes": 40960, "io_kbytes": 40, "bw_bytes": bw, "bw": bw / 1024,
                "iops": 2500.5, "runtime": 16, "total_ios": 10, "short_ios": 0,
                "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
                "clat_ns": {
                    "min": 640, "max": 143472, "mean": 38789.152344, "stddev": 40169.295638, "N": 10,
                    "percentile": {"50.000000": 38144, "99.000000": 117248, "99.990000": 144384}
                },
                "bw_min": 0, "bw_dev": 0.0
            },
            "write": {"io_bytes": 0, "total_ios": 0, "runtime": 0, "bw_bytes": 0, "iops": 0.0},
            "usr_cpu": 1.5,
            "sys_cpu": 20.0,
            "iodepth_level": {"1": 0.0, "8": 100.0, ">=64": 0.0},
            "latency_us": {"2": 34.375, "4": 0.390625}
        })
    };
    serde_json::json!({
        "fio version": "fio-3.33",
        "timestamp": 1795399698,
        "timestamp_ms": 1795399698802u64,
        "time": "Mon Nov 23 02:08:18 2026",
        "global options": {"ioengine": "psync"},
        "jobs": [job("a", 2_560_000), job("b", 3_000_000)]
    })
}

/// An iperf3 3.x client's `-J` document: TCP, two streams, two intervals.
fn iperf3_doc() -> Value {
    let stream = |socket: u64, bytes: u64| {
        serde_json::json!({
            "sender": {"socket": socket, "start": 0, "end": 1.000046, "seconds": 1.000046,
                       "bytes": bytes, "bits_per_second": bytes as f64 * 8.0, "retransmits": 3, "sender": true},
            "receiver": {"socket": socket, "start": 0, "end": 1.000112, "seconds": 1.000046,
                         "bytes": bytes - 1000, "bits_per_second": bytes as f64 * 7.9, "sender": true}
        })
    };
    let interval = |start: f64, bytes: u64| {
        serde_json::json!({"sum": {"start": start, "end": start + 0.5, "seconds": 0.5, "bytes": bytes,
                                   "bits_per_second": bytes as f64 * 16.0, "retransmits": 1,
                                   "omitted": false, "sender": true}})
    };
    serde_json::json!({
        "start": {
            "connected": [],
            "version": "iperf 3.12",
            "timestamp": {"time": "Mon, 23 Nov 2026 02:08:18 GMT", "timesecs": 1795399698},
            "connecting_to": {"host": "127.0.0.1", "port": 5201},
            "sock_bufsize": 0,
            "test_start": {"protocol": "TCP", "num_streams": 2, "blksize": 131072, "omit": 0,
                           "duration": 1, "bytes": 0, "blocks": 0, "reverse": 0, "tos": 0,
                           "target_bitrate": 0, "bidir": 0, "fqrate": 0, "interval": 0.5}
        },
        "intervals": [interval(0.0, 500_000_000), interval(0.5, 520_000_000)],
        "end": {
            "streams": [stream(5, 600_000_000), stream(7, 420_000_000)],
            "sum_sent": {"start": 0, "end": 1.000046, "seconds": 1.000046, "bytes": 1_020_000_000u64, "sender": true},
            "sum_received": {"start": 0, "end": 1.000112, "seconds": 1.000112, "bytes": 1_019_998_000u64, "sender": true},
            "cpu_utilization_percent": {"host_total": 60.5, "host_user": 2.25, "host_system": 58.25,
                                        "remote_total": 40.0, "remote_user": 1.0, "remote_system": 39.0}
        }
    })
}

/// `v` with the value at JSON pointer `at` replaced, or removed for `None`;
/// a missing last key is added.
fn with(mut v: Value, at: &str, new: Option<Value>) -> Value {
    let (parent, key) = at.rsplit_once('/').unwrap();
    match (v.pointer_mut(parent).unwrap(), new) {
        (Value::Object(m), Some(n)) => {
            m.insert(key.to_string(), n);
        }
        (Value::Object(m), None) => {
            m.remove(key);
        }
        (Value::Array(a), Some(n)) => a[key.parse::<usize>().unwrap()] = n,
        (Value::Array(a), None) => {
            a.remove(key.parse::<usize>().unwrap());
        }
        (other, _) => panic!("{parent} is not an object or array: {other}"),
    }
    v
}

/// The refusal of `doc`, which must be an [`ImportError::Invalid`] naming
/// `field` on one line and saying `problem`.
fn refused(doc: &Value, field: &str, problem: &str) -> String {
    let err = import_str(&doc.to_string()).expect_err("must be refused");
    let msg = err.to_string();
    assert!(
        matches!(&err, ImportError::Invalid { field: f, .. } if f == field),
        "expected a refusal naming {field}, got: {msg}"
    );
    assert!(msg.starts_with(&format!("{field} {problem}")), "{msg}");
    assert!(!msg.contains('\n'), "not one line: {msg}");
    msg
}

/// What a stored run must satisfy: it reads back equal through the store
/// and `StoredRun::document`, with every figure finite.
fn reads_back(doc: &RunDocument) {
    store_round_trip(doc);
    for f in doc.body.figures() {
        assert!(f.value.is_finite(), "{f:?}");
    }
}

#[test]
fn fio_json_plus_bins_are_kept_for_the_histogram() {
    let bins = serde_json::json!({"38144": 6, "640": 1, "117248": 3, "500": 0});
    let doc = with(fio_doc(), "/jobs/0/read/clat_ns/bins", Some(bins));
    let run = import_str(&doc.to_string()).unwrap();
    let RunBody::Disk(d) = &run.body else {
        panic!("not a disk run")
    };
    // In order, empty buckets left out, every I/O counted.
    let clat = &d.jobs[0].read.as_ref().unwrap().clat;
    assert_eq!(clat.bins, [[640, 1], [38144, 6], [117248, 3]]);
    assert_eq!(clat.bins.iter().map(|b| b[1]).sum::<u64>(), clat.count);
    assert!(d.jobs[1].read.as_ref().unwrap().clat.bins.is_empty());
    reads_back(&run);
    let bad = with(
        fio_doc(),
        "/jobs/0/read/clat_ns/bins",
        Some(serde_json::json!({"fast": 1})),
    );
    refused(
        &bad,
        "jobs[0].read.clat_ns.bins",
        "has a key that is not a latency in ns",
    );
}

#[test]
fn the_synthetic_documents_import_and_read_back() {
    let doc = import_str(&fio_doc().to_string()).unwrap();
    let RunBody::Disk(run) = &doc.body else {
        panic!("not a disk run")
    };
    assert_eq!(run.jobs.len(), 2);
    let read = run.jobs[0].read.as_ref().unwrap();
    assert_eq!(read.bw.0, 2_560_000.0);
    assert_eq!(read.runtime.get(), 16_000_000);
    assert_eq!(read.clat.percentile(99.0), Some(117_248));
    assert_eq!(run.jobs[0].spec.iodepth, 8);
    assert_eq!(run.jobs[0].iodepth_level["8"], 100.0);
    assert_eq!(doc.finished_at_ms, 1_795_399_698_802);
    assert_eq!(doc.started_at_ms, 1_795_399_696_802);
    reads_back(&doc);

    let doc = import_str(&iperf3_doc().to_string()).unwrap();
    let RunBody::Net(run) = &doc.body else {
        panic!("not a net run")
    };
    assert_eq!(run.streams.len(), 2);
    assert_eq!(run.streams[0].retransmits, Some(3));
    assert_eq!(run.streams[1].received.get(), 419_999_000);
    assert_eq!(run.intervals.len(), 2);
    assert_eq!(run.cpu_local.unwrap().total_percent, 60.5);
    assert_eq!(doc.started_at_ms, 1_795_399_698_000);
    assert_eq!(doc.finished_at_ms, 1_795_399_699_000);
    reads_back(&doc);
}

#[test]
fn fio_rates_that_are_negative_not_finite_or_too_large_are_refused() {
    let msg = refused(
        &with(fio_doc(), "/jobs/1/read/bw_bytes", Some((-5).into())),
        "jobs[1].read.bw_bytes",
        "is negative (-5)",
    );
    assert!(msg.contains("rerun fio"), "{msg}");
    refused(
        &with(fio_doc(), "/jobs/0/read/bw_bytes", Some("NaN".into())),
        "jobs[0].read.bw_bytes",
        "is not a finite number (\"NaN\")",
    );
    refused(
        &with(fio_doc(), "/jobs/0/read/iops", Some("inf".into())),
        "jobs[0].read.iops",
        "is not a finite number",
    );
    refused(
        &with(fio_doc(), "/jobs/0/read/iops", Some(1e308.into())),
        "jobs[0].read.iops",
        "is out of range",
    );
    refused(
        &with(fio_doc(), "/jobs/0/read/clat_ns/mean", Some("fast".into())),
        "jobs[0].read.clat_ns.mean",
        "is not a number (\"fast\")",
    );
    refused(
        &with(fio_doc(), "/jobs/0/usr_cpu", Some((-1.5).into())),
        "jobs[0].usr_cpu",
        "is negative (-1.5)",
    );
    refused(
        &with(fio_doc(), "/jobs/0/iodepth_level/8", Some("NaN".into())),
        "jobs[0].iodepth_level.8",
        "is not a finite number",
    );
    // Old fio's KiB/s `bw` is refused once it is in bytes and out of range.
    let old = with(fio_doc(), "/jobs/0/read/bw_bytes", None);
    refused(
        &with(old, "/jobs/0/read/bw", Some(1e17.into())),
        "jobs[0].read.bw",
        "is out of range",
    );
}

#[test]
fn fio_counts_that_are_negative_or_fractional_are_refused() {
    refused(
        &with(fio_doc(), "/jobs/0/read/total_ios", Some(i64::MIN.into())),
        "jobs[0].read.total_ios",
        "is negative (-9223372036854775808)",
    );
    refused(
        &with(fio_doc(), "/jobs/0/read/io_bytes", Some(1.5.into())),
        "jobs[0].read.io_bytes",
        "is not a whole number (1.5)",
    );
    refused(
        &with(fio_doc(), "/jobs/0/read/clat_ns/N", Some(1e300.into())),
        "jobs[0].read.clat_ns.N",
        "is too large",
    );
}

#[test]
fn a_fio_block_size_of_0_is_refused() {
    refused(
        &with(fio_doc(), "/jobs/1/job options/bs", Some("0".into())),
        "jobs[1].job options.bs",
        "is 0 (\"0\")",
    );
    let global = with(fio_doc(), "/global options/bs", Some("0k".into()));
    let global = with(global, "/jobs/0/job options/bs", None);
    refused(&global, "global options.bs", "is 0");
}

#[test]
fn fio_percentile_keys_and_values_that_are_not_numbers_are_refused() {
    let pct = "/jobs/0/read/clat_ns/percentile";
    for key in ["NaN", "inf", "-1.000000", "100.5", "fifty"] {
        refused(
            &with(fio_doc(), &format!("{pct}/{key}"), Some(100.into())),
            &format!("jobs[0].read.clat_ns.percentile.\"{key}\""),
            "is not a percentile from 0 to 100",
        );
    }
    refused(
        &with(fio_doc(), &format!("{pct}/99.000000"), Some((-3).into())),
        "jobs[0].read.clat_ns.percentile.99.000000",
        "is negative (-3)",
    );
    refused(
        &with(fio_doc(), &format!("{pct}/99.000000"), Some(Value::Null)),
        "jobs[0].read.clat_ns.percentile.99.000000",
        "is not a latency in ns (null)",
    );
}

#[test]
fn fio_times_that_overflow_milliseconds_are_refused() {
    refused(
        &with(fio_doc(), "/jobs/0/elapsed", Some(u64::MAX.into())),
        "jobs[0].elapsed",
        "is too large for a time",
    );
    refused(
        &with(fio_doc(), "/jobs/1/read/runtime", Some(u64::MAX.into())),
        "jobs[1].read.runtime",
        "is too long",
    );
    refused(
        &with(fio_doc(), "/timestamp_ms", Some(u64::MAX.into())),
        "timestamp_ms",
        "is too large for a time",
    );
    let secs_only = with(fio_doc(), "/timestamp_ms", None);
    refused(
        &with(secs_only.clone(), "/timestamp", Some(1e17.into())),
        "timestamp",
        "is too large for a time",
    );
    refused(
        &with(secs_only.clone(), "/timestamp", Some(1e308.into())),
        "timestamp",
        "is out of range",
    );
    refused(
        &with(secs_only, "/timestamp", Some((-1).into())),
        "timestamp",
        "is negative",
    );
}

#[test]
fn fio_depths_and_thread_counts_beyond_u32_are_refused_not_truncated() {
    // 2^32 + 8 would have been stored as iodepth 8.
    refused(
        &with(
            fio_doc(),
            "/jobs/0/job options/iodepth",
            Some("4294967304".into()),
        ),
        "jobs[0].job options.iodepth",
        "is too large (4294967304 > 4294967295)",
    );
    refused(
        &with(fio_doc(), "/global options/numjobs", Some("-2".into())),
        "global options.numjobs",
        "is negative",
    );
    refused(
        &with(
            fio_doc(),
            "/jobs/0/job options/iodepth_batch",
            Some("99999999999999999999".into()),
        ),
        "jobs[0].job options.iodepth_batch",
        "is too large",
    );
    refused(
        &with(
            fio_doc(),
            "/jobs/0/job options/iodepth",
            Some("deep".into()),
        ),
        "jobs[0].job options.iodepth",
        "is not a whole number (\"deep\")",
    );
    refused(
        &with(
            fio_doc(),
            "/jobs/0/job options/size",
            Some("99999999999T".into()),
        ),
        "jobs[0].job options.size",
        "is too large",
    );
    // fio's own 1024-based suffixes and hexadecimal still read.
    let doc = with(fio_doc(), "/jobs/0/job options/iodepth", Some("1k".into()));
    let doc = with(doc, "/jobs/0/job options/randseed", Some("0x89".into()));
    let doc = import_str(&doc.to_string()).unwrap();
    let RunBody::Disk(run) = &doc.body else {
        panic!("not a disk run")
    };
    assert_eq!(run.jobs[0].spec.iodepth, 1024);
    assert_eq!(run.jobs[0].spec.seed, 0x89);
}

#[test]
fn iperf3_numbers_no_run_can_have_are_refused() {
    let cases: [(&str, Value, &str, &str); 15] = [
        (
            "/start/connecting_to/port",
            70000.into(),
            "start.connecting_to.port",
            "is too large (70000 > 65535)",
        ),
        (
            "/start/test_start/num_streams",
            (1u64 << 33).into(),
            "start.test_start.num_streams",
            "is too large",
        ),
        (
            "/start/test_start/duration",
            (-1).into(),
            "start.test_start.duration",
            "is negative (-1)",
        ),
        (
            "/start/test_start/duration",
            1e12.into(),
            "start.test_start.duration",
            "is too long a time",
        ),
        (
            "/start/test_start/interval",
            1e308.into(),
            "start.test_start.interval",
            "is out of range",
        ),
        (
            "/start/test_start/omit",
            "NaN".into(),
            "start.test_start.omit",
            "is not a finite number",
        ),
        (
            "/start/timestamp/timesecs",
            1e17.into(),
            "start.timestamp.timesecs",
            "is too large for a time",
        ),
        (
            "/end/streams/1/receiver/bytes",
            (-7).into(),
            "end.streams[1].receiver.bytes",
            "is negative (-7)",
        ),
        (
            "/end/streams/0/sender/seconds",
            "NaN".into(),
            "end.streams[0].sender.seconds",
            "is not a finite number",
        ),
        (
            "/end/streams/0/sender/retransmits",
            (-1).into(),
            "end.streams[0].sender.retransmits",
            "is negative (-1)",
        ),
        (
            "/end/streams/0/sender/socket",
            (1u64 << 40).into(),
            "end.streams[0].sender.socket",
            "is too large",
        ),
        (
            "/end/streams/0/receiver/start",
            5.into(),
            "end.streams[0].receiver.end",
            "is before the stream's start",
        ),
        (
            "/end/cpu_utilization_percent/host_total",
            1e308.into(),
            "end.cpu_utilization_percent.host_total",
            "is out of range",
        ),
        (
            "/end/sum_sent/end",
            9.223372e15.into(),
            "end.sum_sent.end",
            "ends the run too late",
        ),
        (
            "/intervals/1/sum/bytes",
            i64::MIN.into(),
            "intervals[1].sum.bytes",
            "is negative",
        ),
    ];
    for (at, value, field, problem) in cases {
        let msg = refused(&with(iperf3_doc(), at, Some(value)), field, problem);
        assert!(msg.contains("rerun iperf3"), "{msg}");
    }
}

#[test]
fn iperf3_streams_whose_sums_overflow_are_refused() {
    let doc = with(
        iperf3_doc(),
        "/end/streams/0/receiver/bytes",
        Some(u64::MAX.into()),
    );
    refused(
        &doc,
        "end.streams[1].receiver.bytes",
        "makes the streams' total received larger than",
    );
}

#[test]
fn iperf3_udp_streams_check_their_numbers_too() {
    let udp = serde_json::json!({"udp": {"socket": 5, "start": 0, "end": 1.0, "seconds": 1.0,
        "bytes": 1_000_000u64, "bits_per_second": 8e6, "jitter_ms": 0.05, "lost_packets": 10,
        "packets": 1000, "lost_percent": 1.0, "sender": true}});
    let doc = with(iperf3_doc(), "/end/streams", Some(Value::Array(vec![udp])));
    let doc = with(doc, "/start/test_start/protocol", Some("UDP".into()));
    let run = import_str(&doc.to_string()).unwrap();
    reads_back(&run);
    let RunBody::Net(net) = &run.body else {
        panic!("not a net run")
    };
    assert_eq!(net.streams[0].received.get(), 990_000);
    assert_eq!(net.streams[0].jitter.unwrap().get(), 50_000);
    refused(
        &with(
            doc.clone(),
            "/end/streams/0/udp/jitter_ms",
            Some((-0.5).into()),
        ),
        "end.streams[0].udp.jitter_ms",
        "is negative (-0.5)",
    );
    refused(
        &with(
            doc.clone(),
            "/end/streams/0/udp/packets",
            Some("many".into()),
        ),
        "end.streams[0].udp.packets",
        "is not a number",
    );
    // u64::MAX bytes of which half were lost: exact, not saturated.
    let big = with(
        doc.clone(),
        "/end/streams/0/udp/bytes",
        Some(u64::MAX.into()),
    );
    let big = with(big, "/end/streams/0/udp/lost_packets", Some(500.into()));
    let run = import_str(&big.to_string()).unwrap();
    let RunBody::Net(net) = &run.body else {
        panic!("not a net run")
    };
    assert_eq!(net.streams[0].received.get(), u64::MAX / 2);
}

#[test]
fn iomark_documents_are_checked_on_the_way_in_too() {
    let doc = import_str(&fio_doc().to_string()).unwrap();
    let mut json = serde_json::to_value(&doc).unwrap();
    json["started_at_ms"] = u64::MAX.into();
    refused(&json, "started_at_ms", "is too large");
    let many = import_many(&format!("[{json}]")).unwrap_err();
    assert!(matches!(many, ImportError::Invalid { .. }), "{many}");
    // An iomark document with a null where a figure belongs (a NaN when it
    // was written) does not parse at all.
    let mut json = serde_json::to_value(&doc).unwrap();
    json["body"]["jobs"][0]["read"]["bw"] = Value::Null;
    let err = import_str(&json.to_string()).unwrap_err();
    assert!(err.to_string().contains("cannot read"), "{err}");
    // And a clean one imports unchanged.
    let back = import_str(&serde_json::to_string(&doc).unwrap()).unwrap();
    assert_eq!(back, doc);
}

#[test]
fn iomark_documents_no_run_can_have_are_refused_naming_the_field() {
    let doc = import_str(&fio_doc().to_string()).unwrap();
    let json = serde_json::to_value(&doc).unwrap();
    let read = "/body/jobs/0/read";
    refused(
        &with(json.clone(), &format!("{read}/iops"), Some((-1).into())),
        "body.jobs[0].read.iops",
        "is negative (-1)",
    );
    refused(
        &with(json.clone(), "/body/jobs/0/spec/bs", Some(0.into())),
        "body.jobs[0].spec.bs",
        "is 0",
    );
    refused(
        &with(
            json.clone(),
            &format!("{read}/clat/percentiles/1/percent"),
            Some(150.into()),
        ),
        "body.jobs[0].read.clat.percentiles[1].percent",
        "is not a percentile from 0 to 100 (150)",
    );
    refused(
        &with(
            json.clone(),
            &format!("{read}/clat/percentiles/0/percent"),
            Some((-5).into()),
        ),
        "body.jobs[0].read.clat.percentiles[0].percent",
        "is not a percentile from 0 to 100 (-5)",
    );
    refused(
        &with(
            json.clone(),
            "/body/jobs/0/iodepth_level/>=64",
            Some((-0.5).into()),
        ),
        "body.jobs[0].iodepth_level[\">=64\"]",
        "is negative (-0.5)",
    );
    for (version, why) in [(2, "newer than this iomark reads"), (0, "not a version")] {
        let err =
            import_str(&with(json.clone(), "/schema_version", Some(version.into())).to_string())
                .unwrap_err();
        assert!(
            matches!(&err, ImportError::SchemaVersion { supported: 1, .. }),
            "{err}"
        );
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("schema_version is {version}, {why}"))
                && msg.ends_with("(this iomark reads schema version 1)"),
            "{msg}"
        );
    }
    let long = with(
        json.clone(),
        "/labels",
        Some(serde_json::json!(["ok", "l".repeat(1025)])),
    );
    let err = import_str(&long.to_string()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "labels[1] is 1025 bytes long; a label may be at most 1 KiB (1024 bytes): shorten it in the file"
    );
    let note = with(json.clone(), "/note", Some("n".repeat(1025).into()));
    let err = import_str(&note.to_string()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("note is 1025 bytes long; a note"),
        "{err}"
    );
    // In an exported array, the document is named by its place.
    let bad = with(json.clone(), &format!("{read}/bw"), Some((-2).into()));
    let err = import_many(&format!("[{json}, {bad}]")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("[1].body.jobs[0].read.bw is negative (-2)"),
        "{err}"
    );
    // At their limits, labels and notes import.
    let at = with(
        json.clone(),
        "/labels",
        Some(serde_json::json!(["l".repeat(1024)])),
    );
    let at = with(at, "/note", Some("n".repeat(1024).into()));
    reads_back(&import_str(&at.to_string()).unwrap());
}

#[test]
fn twenty_thousand_clones_of_one_job_import() {
    // numjobs=20000 without group_reporting: every clone listed on its own,
    // all named alike, which took quadratic time to count. How fast is
    // bench/import-fio's business; this checks what comes out.
    let n = 20_000;
    let base = fio_doc();
    let mut job = base["jobs"][0].clone();
    job["jobname"] = "clone".into();
    job["job options"]["numjobs"] = n.to_string().into();
    let mut doc = base;
    doc["jobs"] = Value::Array(vec![job; n]);
    let imported = import_str(&doc.to_string()).unwrap();
    let RunBody::Disk(run) = &imported.body else {
        panic!("not a disk run")
    };
    assert_eq!(run.jobs.len(), n);
    assert!(run.jobs.iter().all(|j| j.spec.numjobs == 1));
    let figs = imported.body.figures();
    // Four I/O figures and three of fio's usr/sys CPU per job.
    assert_eq!(figs.len(), n * 7);
    figure(
        &figs,
        &format!("randread 4KiB QD1 T1, psync, direct, random data #{n}"),
        "read bw",
    );
}

// ---- Any input at all: never a panic, never a document that does not read back ----

mod extremes {
    use super::*;
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngSeed};

    /// Numbers and near-numbers at and past every limit, and absence.
    fn extreme() -> impl Strategy<Value = Option<Value>> {
        prop::sample::select(vec![
            Some(Value::from(u64::MAX)),
            Some(Value::from(i64::MIN)),
            Some(Value::from(i64::MAX)),
            Some(Value::from((1u64 << 32) + 1)),
            Some(Value::from(65_536)),
            Some(Value::from(-1)),
            Some(Value::from(-5.5)),
            Some(Value::from(0)),
            Some(Value::from(1.5)),
            Some(Value::from(1e308)),
            Some(Value::from(-1e308)),
            Some(Value::from(f64::MAX)),
            Some(Value::from(f64::MIN_POSITIVE)),
            Some(Value::from(u64::MAX as f64)),
            Some(Value::from(9.3e18)),
            Some(Value::from("NaN")),
            Some(Value::from("inf")),
            Some(Value::from("-inf")),
            Some(Value::from("1e999")),
            Some(Value::from("12")),
            Some(Value::from("")),
            Some(Value::Null),
            Some(Value::Bool(true)),
            Some(serde_json::json!([])),
            Some(serde_json::json!({})),
            None,
        ])
    }

    /// Option strings fio might or might not print.
    fn option_text() -> impl Strategy<Value = Option<Value>> {
        prop::sample::select(vec![
            "4294967296",
            "18446744073709551616",
            "-1",
            "1k",
            "99999999999T",
            "NaN",
            "1e308",
            "",
            "0",
            "4k,8k",
        ])
        .prop_map(|s| Some(Value::from(s)))
    }

    /// Everything either tool's file is read for, as JSON pointers.
    const FIO_FIELDS: &[&str] = &[
        "/timestamp",
        "/timestamp_ms",
        "/jobs/0/jobname",
        "/jobs/0/elapsed",
        "/jobs/0/error",
        "/jobs/0/usr_cpu",
        "/jobs/1/sys_cpu",
        "/jobs/0/read",
        "/jobs/0/read/io_bytes",
        "/jobs/0/read/total_ios",
        "/jobs/0/read/runtime",
        "/jobs/0/read/bw_bytes",
        "/jobs/0/read/bw",
        "/jobs/1/read/iops",
        "/jobs/0/read/clat_ns",
        "/jobs/0/read/clat_ns/min",
        "/jobs/0/read/clat_ns/max",
        "/jobs/0/read/clat_ns/mean",
        "/jobs/1/read/clat_ns/stddev",
        "/jobs/0/read/clat_ns/N",
        "/jobs/0/read/clat_ns/percentile",
        "/jobs/0/read/clat_ns/percentile/99.000000",
        "/jobs/0/read/clat_ns/percentile/NaN",
        "/jobs/0/read/clat_ns/percentile/1e308",
        "/jobs/0/write/io_bytes",
        "/jobs/0/write/runtime",
        "/jobs/0/iodepth_level/8",
        "/jobs/1/iodepth_level",
    ];

    const FIO_OPTIONS: &[&str] = &[
        "/jobs/0/job options/iodepth",
        "/jobs/0/job options/numjobs",
        "/jobs/1/job options/iodepth_batch_submit",
        "/jobs/0/job options/bs",
        "/jobs/0/job options/size",
        "/jobs/0/job options/runtime",
        "/jobs/0/job options/ramp_time",
        "/jobs/0/job options/randseed",
        "/global options/numjobs",
    ];

    const IPERF3_FIELDS: &[&str] = &[
        "/start/connecting_to/port",
        "/start/test_start/num_streams",
        "/start/test_start/duration",
        "/start/test_start/omit",
        "/start/test_start/interval",
        "/start/test_start/blksize",
        "/start/test_start/target_bitrate",
        "/start/sock_bufsize",
        "/start/timestamp/timesecs",
        "/end/streams/0/sender/socket",
        "/end/streams/0/sender/bytes",
        "/end/streams/0/sender/seconds",
        "/end/streams/0/sender/retransmits",
        "/end/streams/1/receiver/bytes",
        "/end/streams/1/receiver/start",
        "/end/streams/1/receiver/end",
        "/end/streams/0/receiver",
        "/end/sum_sent/end",
        "/end/sum/end",
        "/end/cpu_utilization_percent/host_total",
        "/end/cpu_utilization_percent/remote_system",
        "/intervals/0/sum/start",
        "/intervals/0/sum/end",
        "/intervals/1/sum/bytes",
        "/intervals/1/sum/retransmits",
    ];

    /// Fixed seed and no regression files: the same cases every run, and
    /// nothing written into the source tree.
    fn config() -> Config {
        Config {
            cases: 512,
            rng_seed: RngSeed::Fixed(0x10_3a_4c),
            failure_persistence: None,
            ..Config::default()
        }
    }

    /// Set each (field, value) in turn; a field under one already replaced
    /// by a scalar is skipped.
    fn mutate(mut doc: Value, edits: &[(&str, Option<Value>)]) -> Value {
        for (at, value) in edits {
            let parent = at.rsplit_once('/').map_or("", |(p, _)| p);
            if matches!(doc.pointer(parent), Some(Value::Object(_))) {
                doc = with(doc, at, value.clone());
            }
        }
        doc
    }

    /// Import `text`; whatever comes back must be a one-line refusal or a
    /// document that reads back equal with finite figures.
    fn check(text: &str) -> Result<(), TestCaseError> {
        match import_str(text) {
            Ok(doc) => {
                let json = serde_json::to_value(&doc).unwrap().to_string();
                let back: RunDocument = serde_json::from_str(&json)
                    .map_err(|e| TestCaseError::fail(format!("does not read back: {e}")))?;
                prop_assert_eq!(&back, &doc);
                for f in doc.body.figures() {
                    prop_assert!(f.value.is_finite(), "{:?}", f);
                }
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(!msg.contains('\n'), "not one line: {}", msg);
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn fio_files_with_extreme_numbers_never_panic(
            fields in prop::collection::vec((prop::sample::select(FIO_FIELDS), extreme()), 1..5),
            options in prop::collection::vec((prop::sample::select(FIO_OPTIONS), option_text()), 0..3),
        ) {
            let mut edits: Vec<(&str, Option<Value>)> = fields;
            edits.extend(options);
            check(&mutate(fio_doc(), &edits).to_string())?;
        }

        #[test]
        fn iperf3_files_with_extreme_numbers_never_panic(
            fields in prop::collection::vec((prop::sample::select(IPERF3_FIELDS), extreme()), 1..5),
        ) {
            check(&mutate(iperf3_doc(), &fields).to_string())?;
        }
    }

    #[test]
    fn the_extremes_are_refused_often_and_accepted_sometimes() {
        // Guards the property tests against testing nothing: with the
        // same seed, some mutated files must import and some be refused.
        let mut runner = proptest::test_runner::TestRunner::new(config());
        let (mut ok, mut refused) = (0, 0);
        for _ in 0..200 {
            let edits = (prop::sample::select(FIO_FIELDS), extreme())
                .new_tree(&mut runner)
                .unwrap()
                .current();
            match import_str(&mutate(fio_doc(), &[edits]).to_string()) {
                Ok(_) => ok += 1,
                Err(_) => refused += 1,
            }
        }
        assert!(ok > 10 && refused > 10, "{ok} imported, {refused} refused");
    }
}
