//! The outline of every profile (its test count and expected time against
//! docs/profiles.md's figures), the outline against what each profile
//! really begins, and the tracker's time left.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use iomark_model::disk::{DataPattern, DiskJobSpec, EngineKind};
use iomark_model::units::Nanos;

use super::super::settings::{Depths, MixList, Setting, SizeList};
use super::super::{plan, ProfileName, ProfileObserver, ProfileSettings};
use super::*;
use crate::runner::Observer;
use crate::target::{DirectMode, OpenTarget, TargetRequest, TestFilePrep};
use iomark_pipeline::outline::{Eta, Tracker};
use iomark_pipeline::Progress;

const GIB: Bytes = Bytes(Bytes::GIB);

fn outline_of(name: ProfileName, s: ProfileSettings) -> Outline {
    plan(name, &s).unwrap().outline(GIB)
}

/// iometer checks io_uring unless an engine is named.
fn psync() -> ProfileSettings {
    ProfileSettings {
        engine: Some(EngineKind::Psync),
        ..ProfileSettings::default()
    }
}

fn secs(s: u64) -> Option<Duration> {
    Some(Duration::from_secs(s))
}

#[test]
fn cdm_is_eight_tests_of_a_prep_and_five_passes_with_pauses_between() {
    let o = outline_of(ProfileName::Cdm, ProfileSettings::default());
    assert_eq!(o.tests(), 8);
    // 8 x (5 s prep + 5 x 5 s) + 7 pauses of 5 s.
    assert_eq!(o.expected(None), secs(8 * 30 + 7 * 5));
    assert_eq!(o.steps[0].label, "SEQ1M Q8T1 read prep");
    assert_eq!(o.steps[1].label, "SEQ1M Q8T1 read 1/5");
    assert_eq!(o.steps[6].label, "interval");
    assert_eq!(o.steps[6].test, 2);
    let mix = outline_of(
        ProfileName::Cdm,
        ProfileSettings {
            mix: Some(70),
            ..ProfileSettings::default()
        },
    );
    assert_eq!(mix.tests(), 12);
    let quick = outline_of(
        ProfileName::Cdm,
        ProfileSettings {
            quick: true,
            ..ProfileSettings::default()
        },
    );
    // No pause at all: --quick's interval is 0, which begins nothing.
    assert_eq!(quick.expected(None), secs(8 * 3));
    assert!(quick.steps.iter().all(|s| s.label != "interval"));
}

#[test]
fn cdm3_and_the_other_cdm_presets() {
    let o = outline_of(ProfileName::Cdm3, ProfileSettings::default());
    assert_eq!(o.tests(), 8);
    assert_eq!(o.expected(None), secs(8 * (6 + 5 * 6) + 7 * 5));
    assert_eq!(
        outline_of(ProfileName::CdmPeak, ProfileSettings::default()).tests(),
        4
    );
    assert_eq!(
        outline_of(ProfileName::CdmNvme, ProfileSettings::default()).tests(),
        8
    );
    let real = outline_of(
        ProfileName::CdmReal,
        ProfileSettings {
            passes: Some(2),
            pass_time: Some(Nanos::from_secs(1)),
            interval: Some(Nanos(0)),
            ..ProfileSettings::default()
        },
    );
    // --pass-time sets the preparation pass too (cdm::plan).
    assert_eq!(real.expected(None), secs(4 * (1 + 2)));
}

#[test]
fn iometer_is_a_test_per_pattern_and_depth() {
    let o = outline_of(ProfileName::Iometer, psync());
    assert_eq!(o.tests(), 16);
    assert_eq!(o.expected(None), secs(16 * 12));
    assert_eq!(o.steps[0].label, "2 MiB sequential read QD1");
    let o = outline_of(
        ProfileName::Iometer,
        ProfileSettings {
            qd: Some(Depths(vec![1, 32])),
            ..psync()
        },
    );
    assert_eq!(o.tests(), 8);
}

#[test]
fn macbench_and_sweep_are_timed_points() {
    let o = outline_of(ProfileName::Macbench, ProfileSettings::default());
    assert_eq!((o.tests(), o.expected(None)), (4, secs(40)));
    let o = outline_of(ProfileName::Sweep, ProfileSettings::default());
    // 11 random sizes read and written, then sequential read and write.
    assert_eq!((o.tests(), o.expected(None)), (24, secs(120)));
    let o = outline_of(
        ProfileName::Sweep,
        ProfileSettings {
            sizes: Some(SizeList(vec![Bytes(4096)])),
            quick: true,
            ..ProfileSettings::default()
        },
    );
    assert_eq!((o.tests(), o.expected(None)), (4, secs(4)));
}

#[test]
fn gnome_and_artefacts_are_bound_by_size() {
    let o = outline_of(ProfileName::Gnome, ProfileSettings::default());
    assert_eq!(o.tests(), 2);
    assert_eq!(o.sized(), 100 * (10 << 20) + 1000 * 4096);
    assert_eq!(o.expected(None), None, "no rate, no estimate");
    let at = o.expected(Some(100e6)).unwrap().as_secs_f64();
    assert!((at - o.sized() as f64 / 100e6).abs() < 1e-6, "{at}");

    // The probe's region is the whole test file (256 MiB by default).
    let p = plan(ProfileName::Artefacts, &ProfileSettings::default()).unwrap();
    let o = p.outline(p.default_size());
    assert_eq!(o.tests(), 12, "3 rounds of 4 patterns");
    assert_eq!(o.sized(), 24 * (256 << 20));
    // A target smaller than the region: the region is the target.
    let small = plan(ProfileName::Artefacts, &ProfileSettings::default())
        .unwrap()
        .outline(Bytes(8 << 20));
    assert_eq!(small.sized(), 24 * (8 << 20));
}

fn progress(
    elapsed_ms: u64,
    total_ms: Option<u64>,
    bytes: u64,
    bytes_total: Option<u64>,
) -> Progress {
    Progress {
        elapsed: Duration::from_millis(elapsed_ms),
        total: total_ms.map(Duration::from_millis),
        ramping: false,
        bytes,
        bytes_total,
    }
}

#[test]
fn the_tracker_counts_tests_and_time_left_from_the_plan() {
    let o = outline_of(ProfileName::Cdm, ProfileSettings::default());
    let mut t = Tracker::new(o);
    assert_eq!(t.test(), None);
    assert_eq!(
        t.left(),
        Eta {
            left: Duration::from_secs(275),
            at_least: false,
            at_most: false,
        }
    );
    t.begin("SEQ1M Q8T1 read prep");
    t.progress(&progress(2000, Some(5000), 1 << 30, None));
    assert_eq!(t.test(), Some((1, 8)));
    assert_eq!(t.left().left, Duration::from_secs(273));
    t.end();
    for pass in 1..=5 {
        t.begin(&format!("SEQ1M Q8T1 read {pass}/5"));
        t.end();
    }
    t.begin("interval");
    assert_eq!(t.test(), Some((2, 8)));
    // Six tests of 30 s and six pauses after this one, plus this pause and test.
    assert_eq!(t.left().left, Duration::from_secs(6 * 35 + 5 + 30));
    // A label the plan does not know moves nothing.
    t.begin("something else");
    assert_eq!(t.test(), Some((2, 8)));
}

#[test]
fn size_bound_steps_are_priced_by_the_rate_at_their_block_size() {
    let o = outline_of(ProfileName::Gnome, ProfileSettings::default());
    let mut t = Tracker::new(o);
    assert!(t.left().at_least, "nothing measured: a lower bound");
    t.begin("transfer rate");
    let total = 100 * (10 << 20);
    // A quarter done in 5 s: 15 s left in this phase; the access phase
    // has another block size, so it adds an unknown.
    t.progress(&progress(5000, None, total / 4, Some(total)));
    let eta = t.left();
    assert_eq!(eta.left, Duration::from_secs(15));
    assert!(eta.at_least);
    t.end();
    t.begin("access time");
    t.progress(&progress(1000, None, 4096 * 100, Some(4096 * 1000)));
    let eta = t.left();
    assert_eq!((eta.left, eta.at_least), (Duration::from_secs(9), false));
    assert_eq!(t.test(), Some((2, 2)));
}

#[test]
fn a_custom_job_is_one_test() {
    let mut spec = DiskJobSpec {
        name: "job".into(),
        rw: iomark_model::disk::RwMode::RandRead,
        bs: Bytes(4096),
        iodepth: 32,
        numjobs: 2,
        size: Bytes(1 << 30),
        runtime: Some(Nanos::from_secs(10)),
        ramp: Nanos::from_secs(2),
        engine: EngineKind::Psync,
        rwmix_read: 70,
        ..DiskJobSpec::example()
    };
    let o = Outline::job(&spec);
    assert_eq!((o.tests(), o.expected(None)), (1, secs(12)));
    // --runtime 0: one pass over --size per thread.
    spec.runtime = None;
    assert_eq!(Outline::job(&spec).sized(), 2 << 30);
}

/// Records what a profile begins.
#[derive(Default)]
struct Labels(Vec<String>);

impl Observer for Labels {
    fn progress(&mut self, _p: &Progress) {}
}

impl ProfileObserver for Labels {
    fn begin(&mut self, label: &str) {
        self.0.push(label.to_string());
    }
    fn end(&mut self) {}
}

/// A 4 MiB test file in `dir`, filled, buffered: the profiles' runs of a
/// few milliseconds per step.
fn small_test_file(dir: &std::path::Path) -> TargetRequest {
    TargetRequest {
        path: dir.to_path_buf(),
        size: Some(Bytes(4 << 20)),
        default_size: Bytes(4 << 20),
        write: true,
        allow_write: Vec::new(),
        direct: DirectMode::Buffered,
        data: DataPattern::Random,
        seed: 1,
        io_sizes: vec![Bytes(4096)],
        prep: TestFilePrep::Filled,
    }
}

/// The outline is only as good as its match with the run: every profile,
/// run for a few milliseconds per step on a small test file, begins
/// exactly the outline's steps, in order.
#[test]
fn every_profile_begins_the_steps_of_its_outline() {
    let dir = tempfile::tempdir().unwrap();
    let request = small_test_file(dir.path());
    let stop = AtomicBool::new(false);
    let target = OpenTarget::open(&request, &stop).unwrap();
    let short = Some(Nanos(20_000_000));
    for name in ProfileName::ALL {
        let takes = name.settings();
        let mut s = ProfileSettings::default();
        let mut give = |setting: Setting, apply: &mut dyn FnMut(&mut ProfileSettings)| {
            if takes.contains(&setting) {
                apply(&mut s);
            }
        };
        give(Setting::Engine, &mut |s| s.engine = Some(EngineKind::Psync));
        give(Setting::Passes, &mut |s| s.passes = Some(1));
        give(Setting::PassTime, &mut |s| s.pass_time = short);
        give(Setting::Interval, &mut |s| s.interval = short);
        give(Setting::Mix, &mut |s| s.mix = Some(50));
        give(Setting::Runtime, &mut |s| s.runtime = short);
        give(Setting::Ramp, &mut |s| s.ramp = Some(Nanos(0)));
        give(Setting::Qd, &mut |s| s.qd = Some(Depths(vec![1, 2])));
        give(Setting::Sizes, &mut |s| {
            s.sizes = Some(SizeList(vec![Bytes(4096)]))
        });
        give(Setting::Samples, &mut |s| s.samples = Some(2));
        give(Setting::SampleSize, &mut |s| {
            s.sample_size = Some(Bytes(64 << 10))
        });
        give(Setting::AccessSamples, &mut |s| s.access_samples = Some(4));
        // PTS runs its five-round window at least, at one depth; the
        // outline lists every round, which five rounds fill.
        give(Setting::Mixes, &mut |s| {
            s.passes = Some(5);
            s.mixes = Some(MixList(vec![0]));
        });
        if takes.contains(&Setting::Mixes) && takes.contains(&Setting::Qd) {
            s.qd = Some(Depths(vec![1]));
        }
        if name == ProfileName::PtsWsat {
            s.qd = Some(Depths(vec![1]));
        }
        let p = plan(name, &s).unwrap();
        let outline = p.outline(target.info.size);
        let mut seen = Labels::default();
        let out = p.run(&target, &stop, &mut seen).unwrap();
        assert!(!out.interrupted, "{name}");
        let planned: Vec<&str> = outline.steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(seen.0, planned, "{name}");
    }
}

/// Stands in for a merge across ranks: each job handed to `measured` comes
/// back renamed and three times as fast, as three ranks' sum would.
#[derive(Default)]
struct Merging {
    measured: usize,
    kept: usize,
}

impl Observer for Merging {
    fn progress(&mut self, _p: &Progress) {}
}

impl ProfileObserver for Merging {
    fn begin(&mut self, _label: &str) {}
    fn end(&mut self) {}
    fn finished(&mut self, jobs: &[iomark_model::disk::DiskJobResult]) {
        self.kept = jobs.len();
    }
    fn measured(
        &mut self,
        job: Result<iomark_model::disk::DiskJobResult, crate::DiskError>,
    ) -> Result<iomark_model::disk::DiskJobResult, crate::DiskError> {
        self.measured += 1;
        let mut job = job?;
        job.spec.name.push_str(" merged");
        for d in [&mut job.read, &mut job.write].into_iter().flatten() {
            d.bw.0 *= 3.0;
            d.io_bytes.0 *= 3;
        }
        Ok(job)
    }
}

/// Every profile that runs across MPI ranks hands each job it runs to
/// `ProfileObserver::measured` and keeps what comes back: its jobs are
/// the returned ones, its own statistic is made of them, and `finished`
/// names them (CrystalDiskMark's preparation passes are measured, not
/// kept).
#[test]
fn profiles_across_ranks_keep_what_measured_returns() {
    let dir = tempfile::tempdir().unwrap();
    let request = small_test_file(dir.path());
    let stop = AtomicBool::new(false);
    let target = OpenTarget::open(&request, &stop).unwrap();
    let short = Some(Nanos(20_000_000));
    let across = ProfileName::ALL
        .into_iter()
        .filter(|p| p.across_ranks().is_ok());
    for name in across {
        let takes = name.settings();
        let mut s = ProfileSettings::default();
        for setting in takes {
            match setting {
                Setting::Engine => s.engine = Some(EngineKind::Psync),
                Setting::Passes => s.passes = Some(2),
                Setting::PassTime => s.pass_time = short,
                Setting::Interval => s.interval = Some(Nanos(0)),
                Setting::Runtime => s.runtime = short,
                Setting::Ramp => s.ramp = Some(Nanos(0)),
                Setting::Qd => s.qd = Some(Depths(vec![1, 2])),
                Setting::Sizes => s.sizes = Some(SizeList(vec![Bytes(4096)])),
                _ => {}
            }
        }
        let p = plan(name, &s).unwrap();
        let mut obs = Merging::default();
        let out = p.run(&target, &stop, &mut obs).unwrap();
        assert!(!out.interrupted, "{name}");
        assert!(!out.jobs.is_empty(), "{name}");
        assert_eq!(obs.kept, out.jobs.len(), "{name}");
        for j in &out.jobs {
            assert!(j.spec.name.ends_with(" merged"), "{name}: {}", j.spec.name);
        }
        if let iomark_model::profile::ProfileResult::Cdm(c) = &out.result {
            // One preparation pass per test, measured and dropped.
            assert_eq!(obs.measured, out.jobs.len() + c.tests.len(), "{name}");
            for t in &c.tests {
                let dir = |j: &iomark_model::disk::DiskJobResult| match t.dir {
                    iomark_model::profile::TestDir::Read => j.read.clone(),
                    iomark_model::profile::TestDir::Write => j.write.clone(),
                    iomark_model::profile::TestDir::Mix => None,
                };
                let best = out.jobs[t.first_job..t.first_job + 2]
                    .iter()
                    .filter_map(|j| dir(j).map(|d| d.bw.0))
                    .fold(0.0, f64::max);
                assert_eq!(t.bw.0, best, "{name} {}: the merged passes' best", t.row);
            }
        } else {
            assert_eq!(obs.measured, out.jobs.len(), "{name}");
        }
    }
}

#[test]
fn a_repeated_outline_counts_every_run() {
    let once = outline_of(ProfileName::Cdm, psync());
    let tests = once.tests();
    let thrice = once.clone().repeated(3);
    assert_eq!(thrice.steps.len(), 3 * once.steps.len());
    assert_eq!(thrice.tests(), 3 * tests);
    // The second run's first step is the test after the first run's last.
    assert_eq!(thrice.steps[once.steps.len()].test, tests + 1);
    assert_eq!(thrice.steps[once.steps.len()].label, once.steps[0].label);
    assert_eq!(once.clone().repeated(1), once);
}

/// A whole CrystalDiskMark run on a fake clock: every step reports each
/// 100 ms up to its deadline and twice more while its in-flight I/O
/// finishes (bytes no longer counted), and between steps the run does
/// 300 ms of work the outline does not know (a step it begins under
/// another label, then none). The time left read at each report never
/// goes up and never falls faster than the clock, and ends at zero.
#[test]
fn the_time_left_counts_down_with_the_clock_across_steps() {
    let o = outline_of(ProfileName::Cdm, ProfileSettings::default());
    let steps = o.steps.clone();
    let mut t = Tracker::new(o);
    let mut clock = Duration::ZERO;
    let mut last: Option<(Duration, Duration)> = None;
    let mut check = |t: &Tracker, clock: Duration| {
        let eta = t.left();
        assert!(!eta.at_least, "every CDM step is timed");
        if let Some((was_at, was)) = last {
            let slack = Duration::from_millis(1);
            assert!(
                eta.left <= was + slack,
                "up from {was:?} to {:?} at {clock:?}",
                eta.left
            );
            assert!(
                was.saturating_sub(eta.left) <= clock - was_at + slack,
                "down from {was:?} to {:?} in {:?} at {clock:?}",
                eta.left,
                clock - was_at
            );
        }
        last = Some((clock, eta.left));
    };
    let tick = Duration::from_millis(100);
    for step in &steps {
        let Cost::Time(total) = step.cost else {
            panic!("{step:?} is not timed")
        };
        t.begin(&step.label);
        let mut elapsed = Duration::ZERO;
        while elapsed < total + Duration::from_millis(200) {
            elapsed += tick;
            clock += tick;
            let counted = elapsed.min(total);
            let bytes = step
                .block
                .map_or(0, |_| counted.as_millis() as u64 * 100_000);
            t.progress(&Progress {
                elapsed,
                total: Some(total),
                ramping: step.block.is_none(),
                bytes,
                bytes_total: None,
            });
            check(&t, clock);
        }
        t.end();
        t.begin("flush the file");
        clock += Duration::from_millis(300);
        check(&t, clock);
    }
    assert_eq!(t.left().left, Duration::ZERO);
}

/// A size-bound step at a steady rate: its first report, a tenth of a
/// second in, does not swing the time left away from what the earlier
/// steps at its block size priced it at.
#[test]
fn a_size_bound_step_starts_from_the_rate_seen_before() {
    let step = |label: &str| Step {
        label: label.into(),
        test: 1,
        cost: Cost::Bytes(1_000_000_000),
        block: Some(1 << 20),
        optional: false,
    };
    let mut t = Tracker::new(Outline {
        steps: vec![step("write"), step("read")],
    });
    t.begin("write");
    t.progress(&progress(10_000, None, 1_000_000_000, Some(1_000_000_000)));
    t.end();
    // 100 MB/s: the read is priced at 10 s.
    assert_eq!(t.left().left, Duration::from_secs(10));
    t.begin("read");
    // Its first tenth of a second moved a little less (the queue filling).
    t.progress(&progress(100, None, 5_000_000, Some(1_000_000_000)));
    let left = t.left().left.as_secs_f64();
    assert!((9.85..=10.0).contains(&left), "{left} s left");
}

/// Issue 49: steady state may end a PTS test at any round from the first
/// window's, so its time left is the most it can take ("at most") until
/// no round that may be skipped is left.
#[test]
fn a_pts_tests_time_left_is_the_most_it_can_take_until_no_round_may_be_skipped() {
    let o = outline_of(
        ProfileName::PtsIops,
        ProfileSettings {
            passes: Some(7),
            mixes: Some(MixList(vec![100, 0])),
            sizes: Some(SizeList(vec![Bytes(4096)])),
            precondition: Some(Bytes(0)),
            runtime: Some(Nanos(1_000_000_000)),
            ..ProfileSettings::default()
        },
    );
    // Two cells a round: a round after the fifth may be skipped as a
    // whole, so its first cell is the optional step.
    let optional: Vec<bool> = o.steps.iter().map(|s| s.optional).collect();
    let mut expected = [false; 14];
    (expected[10], expected[12]) = (true, true);
    assert_eq!(optional, expected);
    let mut t = Tracker::new(o);
    let left = t.left();
    assert!(left.at_most && !left.at_least, "{left:?}");
    assert_eq!(left.left, Duration::from_secs(14));
    let cell = |round, read_pct| crate::profiles::pts::cell_label(round, read_pct, Bytes(4096));
    for round in 1..=6 {
        for read_pct in [100, 0] {
            t.begin(&cell(round, read_pct));
            t.progress(&progress(500, Some(1000), 1 << 20, None));
            // Round 7 is still to come, and may not.
            assert!(t.left().at_most, "round {round}: {:?}", t.left());
            t.end();
        }
    }
    // Round 7 began: all of it runs.
    t.begin(&cell(7, 100));
    t.progress(&progress(500, Some(1000), 1 << 20, None));
    let last = t.left();
    assert!(!last.at_most, "{last:?}");
    assert_eq!(last.left, Duration::from_millis(1500));
}
