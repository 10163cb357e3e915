use iomark_model::blockio::{DeviceDirection, DeviceIo, QueueLimits};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::WarningKind;

use super::{check, OwnIo};

const MIB: u64 = 1 << 20;

/// 1024 direct 1 MiB reads at depth 4.
fn reads_1m() -> OwnIo {
    OwnIo {
        bs: Bytes(MIB),
        direct: true,
        on_file: false,
        in_flight: 4,
        read: Some((1024, Bytes(1024 * MIB))),
        write: None,
    }
}

fn dir(requests: u64, merges: u64, bytes: u64) -> DeviceDirection {
    DeviceDirection {
        requests,
        merges,
        bytes: Bytes(bytes),
        time: Nanos(requests * 100_000),
    }
}

fn limits(max_kib: u64) -> QueueLimits {
    QueueLimits {
        max_request: Some(Bytes(max_kib << 10)),
        max_hw_request: Some(Bytes(32_767 << 10)),
        max_segments: Some(512),
        max_segment_size: Some(Bytes(65_536)),
        memory_page: Some(Bytes(4096)),
        scheduler: Some("mq-deadline".into()),
    }
}

fn seen(read: DeviceDirection, write: DeviceDirection, max_kib: u64) -> DeviceIo {
    DeviceIo {
        name: "sdz1".into(),
        partition_of: Some("sdz".into()),
        wall: Nanos::from_secs(1),
        read,
        write,
        busy: Nanos(900_000_000),
        in_queue: Nanos(3_000_000_000),
        stalled: Nanos(0),
        limits: limits(max_kib),
    }
}

fn kinds(w: &[iomark_model::Warning]) -> Vec<WarningKind> {
    w.iter().map(|w| w.kind).collect()
}

#[test]
fn what_the_job_did_and_nothing_else_is_no_warning() {
    // The device counted the job's I/O plus the four in flight at the end.
    let s = seen(dir(1028, 0, 1028 * MIB), dir(0, 0, 0), 1024);
    assert!(check(&reads_1m(), &s).is_empty());
}

#[test]
fn a_split_names_the_limit_below_the_block_size() {
    // max_sectors_kb 128: each 1 MiB read is eight requests.
    let s = seen(dir(8 * 1024, 0, 1024 * MIB), dir(0, 0, 0), 128);
    let w = check(&reads_1m(), &s);
    assert_eq!(kinds(&w), [WarningKind::RequestSizeChanged]);
    let m = &w[0].message;
    assert!(
        m.contains("reads reached sdz1 (on sdz) as 128 KiB requests"),
        "{m}"
    );
    assert!(m.contains("not the 1 MiB asked for"), "{m}");
    assert!(
        m.contains("split each I/O at max_sectors_kb (128 KiB)"),
        "{m}"
    );
    assert!(
        m.contains("(a job with --bs 128k measures the same)"),
        "{m}"
    );
}

#[test]
fn a_split_no_limit_explains_blames_the_layout() {
    let s = seen(dir(2 * 1024, 0, 1024 * MIB), dir(0, 0, 0), 1024);
    let w = check(&reads_1m(), &s);
    assert_eq!(kinds(&w), [WarningKind::RequestSizeChanged]);
    assert!(
        w[0].message
            .contains("no queue limit of sdz1 (on sdz) is below 1 MiB"),
        "{}",
        w[0].message
    );
}

#[test]
fn a_merge_names_the_scheduler_and_needs_merges_counted() {
    let s = seen(dir(480, 544, 1024 * MIB), dir(0, 0, 0), 4096);
    let w = check(&reads_1m(), &s);
    assert_eq!(kinds(&w), [WarningKind::RequestSizeChanged]);
    assert!(
        w[0].message.contains("merged adjacent I/Os"),
        "{}",
        w[0].message
    );
    assert!(
        w[0].message.contains("scheduler mq-deadline"),
        "{}",
        w[0].message
    );
    // Large requests without a merge counted are not called merged.
    let s = seen(dir(480, 0, 1024 * MIB), dir(0, 0, 0), 4096);
    assert!(check(&reads_1m(), &s).is_empty());
}

#[test]
fn buffered_io_is_shown_never_judged() {
    let own = OwnIo {
        direct: false,
        ..reads_1m()
    };
    // Readahead in 128 KiB requests, and a writeback of someone's data.
    let s = seen(dir(8 * 1024, 0, 1024 * MIB), dir(900, 0, 900 * MIB), 128);
    assert!(check(&own, &s).is_empty());
}

#[test]
fn too_few_ios_say_nothing_about_sizes() {
    let own = OwnIo {
        read: Some((4, Bytes(4 * MIB))),
        ..reads_1m()
    };
    let s = seen(dir(32, 0, 4 * MIB), dir(0, 0, 0), 128);
    assert!(check(&own, &s).is_empty());
}

#[test]
fn foreign_writes_are_named_with_their_size() {
    // The job read 1 GiB; someone wrote 300 MiB meanwhile.
    let s = seen(dir(1024, 0, 1024 * MIB), dir(300, 0, 300 * MIB), 1024);
    let w = check(&reads_1m(), &s);
    assert_eq!(kinds(&w), [WarningKind::ForeignIo]);
    let m = &w[0].message;
    assert!(
        m.contains("other I/O reached sdz1 (on sdz) during the job"),
        "{m}"
    );
    assert!(
        m.contains("0 B read and 300 MiB written beyond the job's own 1 GiB"),
        "{m}"
    );
    assert!(m.contains("about 292 requests not the job's"), "{m}");
}

#[test]
fn a_file_systems_own_writes_never_cry_wolf() {
    // A small job (16 MiB) on ext4: journal commits and an extent
    // conversion wrote 3 MiB in 700 small requests: under the floor.
    let own = OwnIo {
        read: Some((16, Bytes(16 * MIB))),
        ..reads_1m()
    };
    let s = seen(dir(16, 0, 16 * MIB), dir(700, 0, 3 * MIB), 1024);
    assert!(check(&own, &s).is_empty());
    // A large job: 90 MiB of metadata against 1 GiB is under a tenth.
    let s = seen(dir(1024, 0, 1024 * MIB), dir(2000, 0, 90 * MIB), 1024);
    assert!(check(&reads_1m(), &s).is_empty());
    // The I/Os in flight at both edges are the job's, however deep.
    let deep = OwnIo {
        in_flight: 128,
        read: Some((64, Bytes(64 * MIB))),
        ..reads_1m()
    };
    let s = seen(dir(64 + 256, 0, (64 + 256) * MIB), dir(0, 0, 0), 1024);
    assert!(check(&deep, &s).is_empty());
}

#[test]
fn foreign_io_in_the_same_direction_hides_the_request_size() {
    // Someone else's 4 KiB reads beside the job's: the mean is nobody's,
    // so no size warning, only the foreign one.
    let s = seen(
        dir(1024 + 100_000, 0, 1024 * MIB + 400 * MIB),
        dir(0, 0, 0),
        1024,
    );
    let w = check(&reads_1m(), &s);
    assert_eq!(kinds(&w), [WarningKind::ForeignIo]);
}

#[test]
fn writes_are_judged_as_reads_are() {
    let own = OwnIo {
        read: None,
        write: Some((1024, Bytes(1024 * MIB))),
        ..reads_1m()
    };
    let s = seen(dir(0, 0, 0), dir(4 * 1024, 0, 1024 * MIB), 256);
    let w = check(&own, &s);
    assert_eq!(kinds(&w), [WarningKind::RequestSizeChanged]);
    assert!(
        w[0].message.starts_with("writes reached sdz1"),
        "{}",
        w[0].message
    );
}

#[test]
fn the_passes_of_a_test_say_a_split_in_the_same_words() {
    // Two passes, different counts, the same split: one message to show.
    let a = check(
        &reads_1m(),
        &seen(dir(2 * 1028, 0, 1028 * MIB), dir(0, 0, 0), 1024),
    );
    let other = OwnIo {
        read: Some((700, Bytes(700 * MIB))),
        ..reads_1m()
    };
    let b = check(
        &other,
        &seen(dir(2 * 703, 0, 703 * MIB), dir(0, 0, 0), 1024),
    );
    assert_eq!(kinds(&a), [WarningKind::RequestSizeChanged]);
    assert_eq!(a, b);
    assert!(
        a[0].message.starts_with(
            "reads reached sdz1 (on sdz) as 512 KiB requests on average, not the 1 MiB asked for: \
             no queue limit"
        ),
        "{}",
        a[0].message
    );
}

#[test]
fn on_a_file_a_writing_jobs_extra_writes_are_its_file_systems() {
    // 4 KiB random writes to a file on btrfs: a 16 KiB leaf copied for
    // each, four times the data, all of it the job's doing.
    let writes = OwnIo {
        bs: Bytes(4096),
        on_file: true,
        read: None,
        write: Some((25_600, Bytes(100 * MIB))),
        ..reads_1m()
    };
    let s = seen(dir(0, 0, 0), dir(25_600 * 2, 0, 500 * MIB), 1024);
    assert!(check(&writes, &s).is_empty());
    // The same on the device itself is someone else's.
    let raw = OwnIo {
        on_file: false,
        ..writes.clone()
    };
    assert_eq!(kinds(&check(&raw, &s)), [WarningKind::ForeignIo]);
    // Reads beside a write job on a file are still foreign, and writes
    // beside a read job.
    let s = seen(dir(3000, 0, 300 * MIB), dir(25_600, 0, 100 * MIB), 1024);
    assert_eq!(kinds(&check(&writes, &s)), [WarningKind::ForeignIo]);
    let reads = OwnIo {
        on_file: true,
        ..reads_1m()
    };
    let s = seen(dir(1024, 0, 1024 * MIB), dir(300, 0, 300 * MIB), 1024);
    assert_eq!(kinds(&check(&reads, &s)), [WarningKind::ForeignIo]);
}

#[test]
fn a_tenth_of_the_time_stalled_is_named_with_its_seconds_buffered_or_not() {
    let mut s = seen(dir(1028, 0, 1028 * MIB), dir(0, 0, 0), 1024);
    s.wall = Nanos::from_secs(3);
    s.stalled = Nanos(290_000_000);
    assert!(check(&reads_1m(), &s).is_empty(), "under a tenth");
    s.stalled = Nanos(800_000_000);
    let w = check(&reads_1m(), &s);
    assert_eq!(kinds(&w), [WarningKind::DeviceStalled]);
    assert!(
        w[0].message
            .starts_with("sdz1 (on sdz) held requests for 0.8 s of the 3.0 s measured"),
        "{}",
        w[0].message
    );
    let buffered = OwnIo {
        direct: false,
        ..reads_1m()
    };
    assert_eq!(kinds(&check(&buffered, &s)), [WarningKind::DeviceStalled]);
}
