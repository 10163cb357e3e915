//! What the device saw during each job (its own counters), as fio's "Disk
//! stats" and iostat's columns: requests, their mean size and time,
//! merges, utilisation and queue size, per direction.

use std::fmt::Write;

use iomark_model::blockio::{DeviceDirection, DeviceIo};
use iomark_model::disk::{DiskJobResult, DiskRun};

/// One device's counters as a line: `loop0: reads 8192 x 128 KiB (0
/// merged, 0.52 ms each), writes none; util 99.8%, aqu-sz 4.1`.
pub fn device_line(d: &DeviceIo) -> String {
    format!("{}: {}", device_name(d), counters(d))
}

/// `sda1 (partition of sda)`, `loop0`.
fn device_name(d: &DeviceIo) -> String {
    match &d.partition_of {
        Some(disk) => format!("{} (partition of {disk})", d.name),
        None => d.name.clone(),
    }
}

/// The counters without the device's name.
fn counters(d: &DeviceIo) -> String {
    format!(
        "reads {}, writes {}; util {:.1}%, aqu-sz {:.1}",
        direction(&d.read),
        direction(&d.write),
        d.utilization_pct(),
        d.queue_size()
    )
}

fn direction(d: &DeviceDirection) -> String {
    match (d.mean_request(), d.mean_time()) {
        (Some(size), Some(time)) => {
            format!("{} x {size} ({} merged, {time} each)", d.requests, d.merges)
        }
        _ => "none".into(),
    }
}

/// The counters of a run's jobs added up per test (the passes of a
/// profile's test are jobs of one name), in the order the tests ran.
pub fn device_by_test(jobs: &[DiskJobResult]) -> Vec<(String, DeviceIo)> {
    let mut tests: Vec<(String, DeviceIo)> = Vec::new();
    for job in jobs {
        let Some(seen) = &job.device_io else { continue };
        match tests.iter_mut().find(|(name, _)| *name == job.spec.name) {
            Some((_, sum)) => sum.add(seen),
            None => tests.push((job.spec.name.clone(), seen.clone())),
        }
    }
    tests
}

/// `What the device saw:` and a line per test; nothing when no job ran on
/// a block device.
pub(crate) fn section(out: &mut String, run: &DiskRun) {
    let tests = device_by_test(&run.jobs);
    if tests.is_empty() {
        return;
    }
    // A run's jobs share one target, so one device, named once.
    let one = tests.iter().all(|(_, d)| d.name == tests[0].1.name);
    if one {
        let _ = writeln!(out, "\nWhat the device saw ({}):", device_name(&tests[0].1));
    } else {
        let _ = writeln!(out, "\nWhat the device saw:");
    }
    for (test, seen) in &tests {
        let line = if one {
            counters(seen)
        } else {
            device_line(seen)
        };
        let _ = writeln!(out, "  {test}: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::blockio::QueueLimits;
    use iomark_model::units::{Bytes, Nanos};

    fn seen(requests: u64, partition_of: Option<&str>) -> DeviceIo {
        DeviceIo {
            name: "sdz1".into(),
            partition_of: partition_of.map(String::from),
            wall: Nanos::from_secs(1),
            read: DeviceDirection {
                requests,
                merges: 3,
                bytes: Bytes(requests * (128 << 10)),
                time: Nanos(requests * 520_000),
            },
            write: DeviceDirection::default(),
            busy: Nanos(998_000_000),
            in_queue: Nanos(4_100_000_000),
            stalled: Nanos(0),
            limits: QueueLimits::default(),
        }
    }

    #[test]
    fn a_line_reads_like_iostat() {
        assert_eq!(
            device_line(&seen(8192, Some("sdz"))),
            "sdz1 (partition of sdz): reads 8192 x 128 KiB (3 merged, 520.0 µs each), \
             writes none; util 99.8%, aqu-sz 4.1"
        );
    }

    #[test]
    fn passes_of_one_test_add_up() {
        let mut a: DiskJobResult =
            serde_json::from_str(include_str!("../tests/fixtures/disk_job.json")).unwrap();
        a.device_io = Some(seen(100, None));
        let mut b = a.clone();
        b.device_io = Some(seen(300, None));
        let mut other = a.clone();
        other.spec.name = "other".into();
        let mut none = a.clone();
        none.device_io = None;
        let tests = device_by_test(&[a, none, other, b]);
        let names: Vec<&str> = tests.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), 2);
        assert_eq!(names[1], "other");
        assert_eq!(tests[0].1.read.requests, 400);
        assert_eq!(tests[0].1.wall, Nanos::from_secs(2));
        assert_eq!(tests[1].1.read.requests, 100);
        let mut run: DiskRun = serde_json::from_value(serde_json::json!({
            "profile": "cdm",
            "target": {"given": "/dev/sdz1", "path": "/dev/sdz1", "kind": "block_device",
                       "size": 1073741824u64, "logical_block_size": 512},
            "jobs": [], "profile_result": null
        }))
        .unwrap();
        let mut out = String::new();
        section(&mut out, &run);
        assert_eq!(out, "");
        let mut job = tests_job();
        job.device_io = Some(seen(8, Some("sdz")));
        run.jobs = vec![job];
        section(&mut out, &run);
        assert_eq!(
            out,
            "\nWhat the device saw (sdz1 (partition of sdz)):\n  SEQ128K Q32T1 read: reads 8 x \
             128 KiB (3 merged, 520.0 µs each), writes none; util 99.8%, aqu-sz 4.1\n"
        );
    }

    fn tests_job() -> DiskJobResult {
        serde_json::from_str(include_str!("../tests/fixtures/disk_job.json")).unwrap()
    }
}
