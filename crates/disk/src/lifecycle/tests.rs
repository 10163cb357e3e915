//! The whole lifecycle with the null engine and an in-memory sink: what is
//! recorded, remembered and returned, with no store and no real I/O cost.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use iomark_model::artefact::RatedSpeed;
use iomark_model::disk::{EngineKind, RwMode};
use iomark_model::live::LiveSample;
use iomark_model::stored::RunId;
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{RunBody, RunStatus, WarningKind};

use super::*;
use crate::job::JobSettings;
use crate::plan::DiskSettings;
use crate::profiles::{ProfileName, ProfileSettings};
use iomark_pipeline::{Eta, MemorySink, Outline};

/// A display that keeps what it was asked to show.
#[derive(Default)]
struct Seen {
    followed: Vec<&'static str>,
    begun: Vec<String>,
    said: Vec<String>,
    closed: usize,
}

impl RunDisplay for Seen {
    fn follow(&mut self, _: Outline, prefix: &'static str, _: Option<Eta>) {
        self.followed.push(prefix);
    }
    fn begin(&mut self, label: &str) {
        self.begun.push(label.to_string());
    }
    fn close(&mut self) {
        self.closed += 1;
    }
    fn say(&mut self, line: &str) {
        self.said.push(line.to_string());
    }
}

/// A 1 MiB job on a test file in `dir`, 50 ms on the null engine.
fn custom(dir: &Path, rw: RwMode) -> DiskPlan {
    DiskSettings {
        path: dir.to_path_buf(),
        job: JobSettings {
            rw: Some(rw),
            bs: Some(Bytes(64 << 10)),
            size: Some(Bytes(1 << 20)),
            engine: Some(EngineKind::Null.into()),
            runtime: Some(Nanos(50_000_000)),
            direct: Some(false),
            ..JobSettings::default()
        },
        ..DiskSettings::default()
    }
    .build()
    .unwrap()
}

fn run_with(
    plan: &RunPlan,
    opts: &RunOptions,
    sink: &mut MemorySink,
    seen: &mut Seen,
) -> Result<RunEnd, RunError> {
    run(plan, opts, sink, seen, &AtomicBool::new(false))
}

fn finished(end: RunEnd) -> Finished {
    match end {
        RunEnd::Finished(f) => *f,
        other => panic!("the run did not finish here: {other:?}"),
    }
}

fn jobs(doc: &RunDocument) -> usize {
    match &doc.body {
        RunBody::Disk(run) => run.jobs.len(),
        _ => panic!("not a disk run"),
    }
}

#[test]
fn a_run_is_begun_finished_and_labelled_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = MemorySink {
        labels: vec!["usb3".into()],
        ..MemorySink::default()
    };
    let mut seen = Seen::default();
    let plan = RunPlan::single(custom(dir.path(), RwMode::Write));
    let run = finished(run_with(&plan, &RunOptions::default(), &mut sink, &mut seen).unwrap());
    assert_eq!(run.doc.status, RunStatus::Complete);
    assert_eq!(jobs(&run.doc), 1);
    assert_eq!(run.doc.labels, ["usb3"]);
    assert!(sink.finished);
    assert_eq!(sink.status(), Some(RunStatus::Complete));
    assert_eq!(sink.doc.as_ref().map(jobs), Some(1));
    assert_eq!(seen.followed, ["test"], "no probe was asked for");
    assert_eq!(seen.closed, 1);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_stop_before_the_target_is_open_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = MemorySink::default();
    let mut seen = Seen::default();
    let plan = RunPlan::single(custom(dir.path(), RwMode::Write));
    let end = run(
        &plan,
        &RunOptions::default(),
        &mut sink,
        &mut seen,
        &AtomicBool::new(true),
    )
    .unwrap();
    assert!(matches!(end, RunEnd::NotStarted));
    assert!(sink.doc.is_none());
    assert_eq!(
        seen.said,
        ["interrupted before measuring; the test file was removed"]
    );
}

#[test]
fn a_failed_check_names_the_job_and_leaves_the_run_unfinished() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = custom(dir.path(), RwMode::Write);
    // A block size the target's cannot divide fails once the target is open.
    if let crate::plan::Workload::Custom(spec) = &mut plan.workload {
        spec.bs = Bytes(1000);
        spec.direct = true;
    }
    plan.request.direct = crate::target::DirectMode::Direct;
    let mut jobs = RunPlan::single(plan.clone()).jobs;
    jobs[0].origin = Some(JobOrigin {
        name: "odd".into(),
        line: 3,
    });
    let plan = RunPlan {
        name: "fio-job",
        jobs,
        probe_first: None,
    };
    let mut sink = MemorySink::default();
    let err = run_with(
        &plan,
        &RunOptions::default(),
        &mut sink,
        &mut Seen::default(),
    );
    let Err(RunError::In { what, .. }) = err else {
        panic!("expected a named failure, got {err:?}");
    };
    assert!(what.starts_with("job [odd] (line 3): "), "{what}");
    assert!(!sink.finished, "an unfinished run reads back as failed");
}

#[test]
fn a_job_files_jobs_share_one_target_and_one_record() {
    let dir = tempfile::tempdir().unwrap();
    let job = |name: &str, line, rw| RunJob {
        plan: custom(dir.path(), rw),
        keep_cache: false,
        origin: Some(JobOrigin {
            name: name.into(),
            line,
        }),
    };
    let plan = RunPlan {
        name: "fio-job",
        jobs: vec![job("fill", 1, RwMode::Write), job("read", 5, RwMode::Read)],
        probe_first: None,
    };
    let mut sink = MemorySink::default();
    let mut seen = Seen::default();
    let run = finished(run_with(&plan, &RunOptions::default(), &mut sink, &mut seen).unwrap());
    assert_eq!(jobs(&run.doc), 2);
    assert_eq!(
        seen.followed,
        ["test", "test"],
        "each job is a run of its own on the line"
    );
    assert_eq!(sink.checkpoints, 2, "each job is checkpointed");
    assert!(sink.finished);
}

#[test]
fn a_rated_speed_is_remembered_and_judges_later_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = MemorySink::default();
    let opts = RunOptions {
        // The null engine moves bytes far faster than 1 MB/s.
        rated: Some("write=1MB/s".parse::<RatedSpeed>().unwrap()),
        ..RunOptions::default()
    };
    let plan = RunPlan::single(custom(dir.path(), RwMode::Write));
    let first = finished(run_with(&plan, &opts, &mut sink, &mut Seen::default()).unwrap());
    let above = |doc: &RunDocument| {
        doc.warnings
            .iter()
            .any(|w| w.kind == WarningKind::AboveRated)
    };
    assert!(above(&first.doc), "{:?}", first.doc.warnings);
    assert!(sink.devices.values().any(|d| d.rated.is_some()));
    // Not given again: remembered for the device.
    let again = finished(
        run_with(
            &plan,
            &RunOptions::default(),
            &mut sink,
            &mut Seen::default(),
        )
        .unwrap(),
    );
    assert!(above(&again.doc), "{:?}", again.doc.warnings);
}

#[test]
fn the_short_probe_runs_once_and_its_verdict_is_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = MemorySink::default();
    let plan = RunPlan {
        probe_first: Some(ArtefactsOptions {
            rounds: 1,
            region: Some(Bytes(1 << 20)),
            engine: EngineKind::Null,
            quick: true,
            seed: 1,
        }),
        ..RunPlan::single(custom(dir.path(), RwMode::Write))
    };
    let opts = RunOptions::default();
    let mut seen = Seen::default();
    let first = finished(run_with(&plan, &opts, &mut sink, &mut seen).unwrap());
    assert_eq!(seen.followed, ["probe", "test"]);
    let RunBody::Disk(disk) = &first.doc.body else {
        panic!("not a disk run")
    };
    let verdict = disk.probe.clone().expect("the probe gave a verdict");
    let remembered = sink
        .devices
        .values()
        .find_map(|d| d.probe.as_ref())
        .expect("remembered");
    assert_eq!(remembered.verdict, verdict);
    assert_eq!(remembered.run, Some(RunId(1)));
    // The next run on the device is told the verdict without probing.
    let mut seen = Seen::default();
    let again = finished(run_with(&plan, &opts, &mut sink, &mut seen).unwrap());
    assert_eq!(seen.followed, ["test"]);
    let RunBody::Disk(disk) = &again.doc.body else {
        panic!("not a disk run")
    };
    assert_eq!(disk.probe.as_ref(), Some(&verdict));
}

/// A coordinator of a job of several processes, played by one: it can
/// refuse the start, record elsewhere, or stop the job at its end, and
/// counts the steps it was called at.
#[derive(Default)]
struct Peers {
    refuse_start: bool,
    elsewhere: bool,
    stop_at_end: bool,
    /// Hold the seconds until the run is gathered, as rank 0 holds a
    /// second until every rank's share came.
    hold_seconds: bool,
    held: Vec<LiveSample>,
    calls: Vec<&'static str>,
}

impl Coordinator for Peers {
    fn records(&self) -> bool {
        !self.elsewhere
    }
    fn records_failed_starts(&self) -> bool {
        true
    }
    fn agree(&mut self, status: Result<(), String>) -> Result<(), CoordinationError> {
        self.calls.push("agree");
        status?;
        if self.refuse_start {
            return Err("rank 1 (h): r1: does not exist".into());
        }
        Ok(())
    }
    fn start(&mut self, _target: &OpenTarget) {
        self.calls.push("start");
    }
    fn job_start(&mut self, _label: &str) {
        self.calls.push("job_start");
    }
    fn job_done(&mut self) {
        self.calls.push("job_done");
    }
    fn sample(&mut self, sample: LiveSample, _: &crate::runner::LatencyCounts) -> Vec<LiveSample> {
        if !self.hold_seconds {
            return vec![sample];
        }
        self.held.push(sample);
        Vec::new()
    }
    fn samples_ready(&mut self) -> Vec<LiveSample> {
        if self.calls.contains(&"gather") {
            self.calls.push("samples_ready");
            return std::mem::take(&mut self.held);
        }
        Vec::new()
    }
    fn gather(
        &mut self,
        outcome: Result<DiskOutcome, RunError>,
        _target: &OpenTarget,
        _stop: &AtomicBool,
    ) -> Result<Gathered, RunError> {
        self.calls.push("gather");
        let outcome = outcome?;
        Ok(if self.stop_at_end {
            Gathered::Stopped(iomark_model::Warning::new(WarningKind::Other, "stopped"))
        } else if self.elsewhere {
            Gathered::Elsewhere
        } else {
            Gathered::Run {
                outcome,
                cluster: None,
            }
        })
    }
}

fn coordinated(dir: &Path, peers: &mut Peers, sink: &mut MemorySink) -> Result<RunEnd, RunError> {
    let plan = RunPlan::single(custom(dir, RwMode::Write));
    run_coordinated(
        &plan,
        &RunOptions::default(),
        sink,
        &mut Seen::default(),
        peers,
        &AtomicBool::new(false),
    )
}

#[test]
fn the_coordinator_is_called_at_each_step_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut peers = Peers::default();
    let mut sink = MemorySink::default();
    let end = coordinated(dir.path(), &mut peers, &mut sink).unwrap();
    assert!(matches!(end, RunEnd::Finished(_)));
    assert_eq!(
        peers.calls,
        [
            "agree",
            "start",
            "job_start",
            "job_done",
            "gather",
            "samples_ready"
        ]
    );
    assert!(sink.finished);
}

#[test]
fn seconds_a_coordinator_holds_to_the_end_are_stored_once_it_lets_them_go() {
    let dir = tempfile::tempdir().unwrap();
    let mut peers = Peers {
        hold_seconds: true,
        ..Peers::default()
    };
    let mut sink = MemorySink::default();
    let end = coordinated(dir.path(), &mut peers, &mut sink).unwrap();
    let run = finished(end);
    assert_eq!(sink.samples.len(), 1, "the 50 ms job's one second");
    assert!(peers.held.is_empty());
    assert_eq!(
        peers.calls,
        [
            "agree",
            "start",
            "job_start",
            "job_done",
            "gather",
            "samples_ready"
        ]
    );
    let RunBody::Disk(disk) = &run.doc.body else {
        panic!("not a disk run")
    };
    let written = disk.jobs[0].write.as_ref().unwrap();
    assert_eq!(sink.samples[0].bytes, written.io_bytes.get());
}

#[test]
fn another_process_failing_at_the_start_is_recorded_as_failed() {
    let dir = tempfile::tempdir().unwrap();
    let mut peers = Peers {
        refuse_start: true,
        ..Peers::default()
    };
    let mut sink = MemorySink::default();
    let err = coordinated(dir.path(), &mut peers, &mut sink).unwrap_err();
    assert_eq!(err.to_string(), "rank 1 (h): r1: does not exist");
    assert!(
        sink.doc.is_some() && !sink.finished,
        "begun, never finished"
    );
    assert_eq!(peers.calls, ["agree"]);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_process_that_does_not_record_leaves_the_sink_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut peers = Peers {
        elsewhere: true,
        ..Peers::default()
    };
    let mut sink = MemorySink::default();
    let end = coordinated(dir.path(), &mut peers, &mut sink).unwrap();
    assert!(matches!(end, RunEnd::Elsewhere));
    assert!(sink.doc.is_none());
}

#[test]
fn a_job_stopped_before_gathering_is_recorded_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let mut peers = Peers {
        stop_at_end: true,
        ..Peers::default()
    };
    let mut sink = MemorySink::default();
    let end = coordinated(dir.path(), &mut peers, &mut sink).unwrap();
    assert!(matches!(end, RunEnd::Stopped));
    assert_eq!(sink.status(), Some(RunStatus::Interrupted));
    let doc = sink.doc.as_ref().unwrap();
    assert_eq!(jobs(doc), 0, "no figures were gathered");
    assert!(doc.warnings.iter().any(|w| w.message == "stopped"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn each_second_of_a_test_reaches_the_sink_and_the_seconds_add_up_to_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let mut sink = MemorySink::default();
    let mut seen = Seen::default();
    let plan = DiskSettings {
        path: dir.path().to_path_buf(),
        job: JobSettings {
            rw: Some(RwMode::Read),
            bs: Some(Bytes(64 << 10)),
            size: Some(Bytes(1 << 20)),
            engine: Some(EngineKind::Null.into()),
            runtime: Some(Nanos(1_300_000_000)),
            direct: Some(false),
            ..JobSettings::default()
        },
        ..DiskSettings::default()
    }
    .build()
    .unwrap();
    let run = finished(
        run_with(
            &RunPlan::single(plan),
            &RunOptions::default(),
            &mut sink,
            &mut seen,
        )
        .unwrap(),
    );
    let RunBody::Disk(disk) = &run.doc.body else {
        panic!("not a disk run")
    };
    let read = disk.jobs[0].read.as_ref().unwrap();
    let first = &sink.samples[0];
    assert_eq!((first.step, first.steps), (1, 1));
    assert_eq!(first.label, seen.begun[0]);
    assert!(first.latency.is_some() && first.ios > 0);
    // The first counts from the job's start.
    assert_eq!(first.offset_ms, first.duration_ms, "{first:?}");
    match sink.samples.as_slice() {
        // A second, then the 0.3 s left. The second is cut where the
        // watching thread woke for it: never before its end, and later by
        // however long a loaded machine kept that thread waiting (6 ms in
        // one fresh-machine check).
        [first, last] => {
            assert!((1000..1300).contains(&first.duration_ms), "{first:?}");
            assert!(first.left_ms.is_some_and(|l| l <= 300), "{first:?}");
            // Cut at the deadline, or a little before when the workers
            // passed the start gate before the watching thread took its
            // time.
            assert!((1000..=1300).contains(&last.offset_ms), "{last:?}");
            assert!(last.duration_ms.abs_diff(last.offset_ms - first.offset_ms) <= 1);
        }
        // Woken only past the deadline (kept waiting 300 ms): the whole
        // job is the last interval's, cut at the deadline.
        [whole] => assert!((1000..=1300).contains(&whole.duration_ms), "{whole:?}"),
        more => panic!("a 1.3 s job in {} intervals: {more:?}", more.len()),
    }
    // However they were cut, the seconds add up to the job.
    let bytes: u64 = sink.samples.iter().map(|s| s.bytes).sum();
    let ios: u64 = sink.samples.iter().map(|s| s.ios).sum();
    assert_eq!((bytes, ios), (read.io_bytes.get(), read.ios));
}

#[test]
fn the_short_probe_comes_first_only_for_the_default_profile() {
    let dir = tempfile::tempdir().unwrap();
    let settings = |profile: Option<ProfileName>, job: JobSettings, no_probe: bool| DiskSettings {
        path: dir.path().to_path_buf(),
        job,
        profile,
        profile_settings: ProfileSettings {
            no_probe,
            ..ProfileSettings::default()
        },
        ..DiskSettings::default()
    };
    let probes = |s: DiskSettings| RunPlan::of_settings(s).unwrap().probe_first;
    let none = JobSettings::default;
    let default = probes(settings(None, none(), false)).expect("the default profile probes");
    assert_eq!(default, ArtefactsOptions::short(EngineKind::IoUring, 0));
    assert!(probes(settings(None, none(), true)).is_none(), "--no-probe");
    let named = settings(Some(ProfileName::Cdm), none(), false);
    assert!(probes(named).is_none(), "a profile named");
    // Any workload flag, the engine too, makes a custom job.
    for custom in [
        JobSettings {
            rw: Some(RwMode::Read),
            ..JobSettings::default()
        },
        JobSettings {
            engine: Some(EngineKind::Psync.into()),
            ..JobSettings::default()
        },
    ] {
        assert!(
            probes(settings(None, custom, false)).is_none(),
            "a custom job"
        );
    }
}
