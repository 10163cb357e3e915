//! A kernel run under `--mem-limit` runs in a child process in its own
//! memory cgroup; its passes still reach iomark as the child measures
//! them: streamed by `--json-stream` while the child runs, in order before
//! the run's end, and stored as seconds whose bytes are the counted
//! passes'. Needs root and a memory cgroup.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::common::*;
use crate::mem_json_stream::{event, the_rest};
use crate::mem_limits::assert_no_groups_left;
use iomark_testrig::require;

#[test]
fn a_limited_runs_passes_stream_and_are_stored_as_the_child_measures_them() {
    require!(memory_cgroup());
    let db = ScratchDb::new();
    // 96 MiB of arrays in a 256 MiB group, 150 passes of several ms each:
    // about a second on an idle machine, more on a busy one.
    let mut iomark = iomark_cmd(&[
        "mem",
        "stream",
        "--size",
        "4M",
        "--ntimes",
        "150",
        "--threads",
        "1",
        "--mem-limit",
        "256MiB",
        "--json-stream",
        "--db",
        db.db(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .expect("iomark starts");
    let mut lines = BufReader::new(iomark.stdout.take().unwrap()).lines();
    let mut next = || lines.next().map(|l| l.expect("a line of text"));
    assert_eq!(event(&next().expect("a start line")).0, "start");
    let (name, first) = event(&next().expect("a pass line"));
    assert_eq!(
        (name.as_str(), &first["kind"]),
        ("interval", &"pass".into())
    );
    assert!(
        iomark.try_wait().unwrap().is_none(),
        "iomark ended before the child's first pass was read"
    );
    let (intervals, end) = the_rest(first, next);
    assert!(iomark.wait().unwrap().success());
    let end = end.expect("an end line");
    assert_eq!(end["body"]["outcome"]["kind"], "completed", "{end}");

    // The child's 150 passes in order, each of the limited run, then its end.
    let (run, passes) = intervals.split_last().expect("intervals");
    assert_eq!(
        (&run["kind"], &run["outcome"]),
        (&"run".into(), &"completed".into())
    );
    assert_eq!(passes.len(), 150, "{passes:#?}");
    let mut counted = 0;
    for (i, p) in passes.iter().enumerate() {
        assert_eq!(p["kind"], "pass", "{p}");
        assert_eq!(p["trial"], i + 1, "{p}");
        assert_eq!((&p["role"], &p["run"]), (&"run".into(), &1.into()), "{p}");
        assert_eq!(p["mem_limit"], 256u64 << 20, "{p}");
        assert_eq!(p["counted"], i > 0, "{p}");
        let bytes = p["bytes"].as_u64().expect("bytes");
        assert!(bytes > 0 && p["seconds"].as_f64().unwrap() > 0.0, "{p}");
        if i > 0 {
            counted += bytes;
        }
    }
    assert_eq!(Some(counted), run["bytes"].as_u64(), "{run}");

    // Stored as seconds: all the counted bytes, none twice.
    let mut store = iomark_store::open_read_only(Some(db.db())).unwrap();
    let stored = store.list(&iomark_store::RunQuery::default()).unwrap();
    assert_eq!(stored[0].status, iomark_model::RunStatus::Complete);
    let seconds = store.samples(stored[0].id, None).unwrap();
    assert!(!seconds.is_empty());
    for (_, s) in &seconds {
        assert!(s.label.starts_with("stream "), "{s:?}");
        assert_eq!((s.step, s.ios, s.latency), (1, 0, None), "{s:?}");
        assert!(s.duration_ms > 0, "{s:?}");
    }
    assert_eq!(seconds.iter().map(|(_, s)| s.bytes).sum::<u64>(), counted);
    assert_no_groups_left();
}
