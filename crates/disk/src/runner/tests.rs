//! The start gate, the offsets and directions workers pick, and which
//! I/Os a worker counts in its window.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use iomark_model::disk::{DiskJobSpec, EngineKind, RwMode};
use iomark_model::units::Bytes;

use super::gate::StartGate;
use super::live::LiveCounter;
use super::stats::CpuClock;
use super::worker::{drive, Workload};
use super::Plan;
use crate::engine::null::Null;
use crate::engine::{Dir, Done, Engine, IoUnit, Queued};
use crate::DiskError;

fn plan(rw: RwMode, bs: u64, blocks: u64, numjobs: u32) -> Plan<'static> {
    Plan {
        spec: DiskJobSpec {
            name: "t".into(),
            rw,
            bs: Bytes(bs),
            numjobs,
            size: Bytes(bs * blocks),
            runtime: None,
            engine: EngineKind::Null,
            direct: false,
            rwmix_read: 70,
            seed: 42,
            ..DiskJobSpec::example()
        },
        depth: 1,
        blocks,
        align: 4096,
        ramp: Duration::ZERO,
        runtime: None,
        bytes_per_thread: None,
        base: 0,
        ledger: None,
    }
}

#[test]
fn the_start_gate_waits_for_all_and_never_for_one_that_is_not_coming() {
    let stop = AtomicBool::new(false);
    let gate = StartGate::new(2);
    std::thread::scope(|s| {
        let h = s.spawn(|| gate.arrive(&stop));
        assert!(gate.arrive(&stop));
        assert!(h.join().unwrap());
    });
    // A party the kernel refused: the others are released.
    let gate = StartGate::new(3);
    std::thread::scope(|s| {
        let h = s.spawn(|| gate.arrive(&stop));
        std::thread::sleep(Duration::from_millis(20));
        gate.call_off();
        assert!(!h.join().unwrap());
    });
    // A stop signal releases a wait without starting.
    let t = Instant::now();
    assert!(!StartGate::new(2).arrive(&AtomicBool::new(true)));
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn random_offsets_are_aligned_in_range_and_uniform() {
    let blocks = 64;
    let p = plan(RwMode::RandRead, 4096, blocks, 1);
    let mut w = Workload::new(&p, 0);
    let mut hits = vec![0u32; blocks as usize];
    let n = 64_000;
    for _ in 0..n {
        let (off, dir) = w.next();
        assert_eq!(off % 4096, 0, "aligned to the block size");
        assert!(off + 4096 <= blocks * 4096, "inside the region");
        assert_eq!(dir, Dir::Read);
        hits[(off / 4096) as usize] += 1;
    }
    // Chi-square against uniform, 63 degrees of freedom: the 99.9%
    // quantile is about 103.4.
    let expected = f64::from(n) / blocks as f64;
    let chi2: f64 = hits
        .iter()
        .map(|&h| (f64::from(h) - expected).powi(2) / expected)
        .sum();
    assert!(chi2 < 103.4, "chi-square {chi2}");
}

#[test]
fn sequential_threads_start_spread_and_wrap() {
    let p = plan(RwMode::Read, 1 << 20, 8, 2);
    let mut first = Workload::new(&p, 0);
    let mut second = Workload::new(&p, 1);
    let offs: Vec<u64> = (0..9).map(|_| first.next().0 >> 20).collect();
    assert_eq!(offs, vec![0, 1, 2, 3, 4, 5, 6, 7, 0]);
    assert_eq!(second.next().0 >> 20, 4);
}

#[test]
fn mixes_follow_rwmix_read() {
    let p = plan(RwMode::RandRw, 4096, 1024, 1);
    let mut w = Workload::new(&p, 0);
    let reads = (0..100_000).filter(|_| w.next().1 == Dir::Read).count();
    assert!((reads as f64 / 1000.0 - 70.0).abs() < 1.0, "{reads}");
}

#[test]
fn the_same_seed_repeats_the_same_offsets() {
    let p = plan(RwMode::RandRead, 4096, 1 << 20, 1);
    let a: Vec<u64> = {
        let mut w = Workload::new(&p, 0);
        (0..100).map(|_| w.next().0).collect()
    };
    let mut w = Workload::new(&p, 0);
    assert!(a.iter().all(|&o| o == w.next().0));
}

/// The null engine (every I/O done at once), with a worker that, at its
/// first wait, is off the CPU until `stalled_until`: what the busy loops of
/// a loaded machine do to a worker across the ramp's end.
struct StalledAtFirstWait {
    device: Null,
    stalled_until: Option<Instant>,
}

impl Engine for StalledAtFirstWait {
    fn queue(&mut self, unit: IoUnit) -> Result<Queued, DiskError> {
        self.device.queue(unit)
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Done>) -> Result<usize, DiskError> {
        if let Some(until) = self.stalled_until.take() {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
        }
        self.device.reap(min, out)
    }
}

const UNIT_LEN: u32 = 4096;

/// `depth` free units of `UNIT_LEN` bytes for `dir`, as a worker starts with.
fn units(depth: u32, dir: Dir) -> Vec<IoUnit> {
    (0..depth)
        .map(|slot| IoUnit {
            buf: crate::buffer::AlignedBuf::new(4096, 4096),
            offset: 0,
            len: UNIT_LEN,
            dir,
            slot,
            issued: Instant::now(),
        })
        .collect()
}

#[test]
fn ios_issued_in_the_ramp_stay_out_of_the_window_when_the_worker_is_late_to_reap_them() {
    // The ramp ends at 50 ms; the worker reaps its first eight I/Os, done
    // at once, only at 1.05 s. Counted by reap time they would enter the
    // window with latencies over a second, which no I/O issued in it has
    // on a device that finishes each at once.
    let ramp = Duration::from_millis(50);
    let mut p = plan(RwMode::RandRead, 4096, 1024, 1);
    p.depth = 8;
    p.ramp = ramp;
    p.runtime = Some(Duration::from_millis(1200));
    let free = units(p.depth, Dir::Read);
    let mut engine = StalledAtFirstWait {
        device: Null::default(),
        stalled_until: Some(Instant::now() + ramp + Duration::from_secs(1)),
    };
    let stop = AtomicBool::new(false);
    let stats = drive(
        0,
        &p,
        &mut engine,
        free,
        &LiveCounter::default(),
        &stop,
        &AtomicBool::new(false),
    )
    .unwrap();
    let (ios, longest_ns) = stats.reads();
    assert!(ios > 0, "the window counted its own I/Os");
    assert!(
        longest_ns < 1_000_000_000,
        "a ramp I/O reaped late was counted: {longest_ns} ns"
    );
}

#[test]
fn a_window_in_which_no_io_was_issued_reports_the_depth_held_not_zero() {
    // Four I/Os go down in the ramp and the worker gets them back only
    // after the window has ended: nothing is issued inside it, so fio's
    // depth at issue has no sample. The queue was full the whole time,
    // and the depth is the time-weighted one, 4, not 0 (an IOmeter point
    // at QD4 "achieved" 0.0 on a loaded machine).
    let ramp = Duration::from_millis(50);
    let window = Duration::from_millis(300);
    let mut p = plan(RwMode::RandWrite, 4096, 1024, 1);
    p.depth = 4;
    p.ramp = ramp;
    p.runtime = Some(window);
    p.spec.engine = EngineKind::IoUring;
    p.spec.iodepth = 4;
    let free = units(p.depth, Dir::Write);
    let start = Instant::now();
    let mut engine = StalledAtFirstWait {
        device: Null::default(),
        stalled_until: Some(start + ramp + window + Duration::from_millis(100)),
    };
    let stop = AtomicBool::new(false);
    let clock = CpuClock::starting();
    let stats = drive(
        0,
        &p,
        &mut engine,
        free,
        &LiveCounter::default(),
        &stop,
        &AtomicBool::new(false),
    )
    .unwrap();
    let spec = p.spec.clone();
    let job = stats.into_result(
        &spec,
        &p,
        true,
        CpuClock::now().since(&clock),
        &stop,
        Vec::new(),
    );
    assert_eq!(
        job.write.as_ref().unwrap().ios,
        0,
        "nothing counted in the window"
    );
    assert!(
        (job.mean_depth - 4.0).abs() < 0.01,
        "depth held across the window: {}",
        job.mean_depth
    );
}
