//! The start gate and the offsets and directions workers pick.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use iomark_model::disk::{DiskJobSpec, EngineKind, RwMode};
use iomark_model::units::Bytes;

use super::gate::StartGate;
use super::worker::Workload;
use super::Plan;
use crate::engine::Dir;

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
