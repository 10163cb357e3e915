//! What the device saw during each test of the runs: the block device's own
//! counters (requests, mean size, merges, time, utilisation, queue), as the
//! terminal's `-v` and `results show` print them.

use std::fmt::Write;

use iomark_model::blockio::DeviceDirection;
use iomark_model::RunBody;

use crate::svg::esc;
use crate::ReportRun;

/// `<h2>What the device saw</h2>` and a row per test of every run whose
/// jobs ran on a block device; nothing when none did.
pub(crate) fn section(o: &mut String, runs: &[ReportRun]) {
    let rows: Vec<_> = runs
        .iter()
        .flat_map(|r| match &r.doc.body {
            RunBody::Disk(d) => iomark_text::device_by_test(&d.jobs)
                .into_iter()
                .map(move |t| (r, t))
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    o.push_str(
        "<h2>What the device saw</h2><table id=\"device-seen\"><tr><th>run</th><th>test</th>\
         <th>device</th><th>reads</th><th>writes</th><th>util</th><th>aqu-sz</th></tr>",
    );
    for (r, (test, seen)) in rows {
        let device = match &seen.partition_of {
            Some(disk) => format!("{} (partition of {disk})", seen.name),
            None => seen.name.clone(),
        };
        let _ = write!(
            o,
            "<tr data-run=\"{}\" data-test=\"{}\" data-read-requests=\"{}\" data-write-requests=\"{}\">\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.1}</td></tr>",
            esc(&r.id),
            esc(&test),
            seen.read.requests,
            seen.write.requests,
            esc(&r.name),
            esc(&test),
            esc(&device),
            cell(&seen.read),
            cell(&seen.write),
            seen.utilization_pct(),
            seen.queue_size()
        );
    }
    o.push_str("</table>");
}

/// `8192 requests of 128 KiB, 0 merged, 520.0 µs each`, or `-`.
fn cell(d: &DeviceDirection) -> String {
    match (d.mean_request(), d.mean_time()) {
        (Some(size), Some(time)) => esc(&format!(
            "{} requests of {size}, {} merged, {time} each",
            d.requests, d.merges
        )),
        _ => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::blockio::{DeviceIo, QueueLimits};
    use iomark_model::disk::{DiskJobResult, DiskRun, DiskTarget, TargetKind};
    use iomark_model::units::{Bytes, Nanos};
    use iomark_model::RunDocument;

    fn run_with(jobs: Vec<DiskJobResult>) -> ReportRun {
        let body = RunBody::Disk(DiskRun {
            rounds_so_far: Vec::new(),
            profile: "custom".into(),
            target: DiskTarget {
                given: "/dev/loop9".into(),
                path: "/dev/loop9".into(),
                kind: TargetKind::BlockDevice,
                size: Bytes(1 << 30),
                logical_block_size: 512,
                size_from_device: false,
            },
            jobs,
            profile_result: None,
            cgroup: None,
            probe: None,
            knees: vec![],
            cluster: None,
        });
        ReportRun::new(7, RunDocument::iomark(vec!["iomark".into()], body))
    }

    #[test]
    fn a_row_per_test_on_a_device_and_none_means_no_section() {
        let mut job: DiskJobResult =
            serde_json::from_str(include_str!("../tests/fixtures/disk_job.json")).unwrap();
        let mut o = String::new();
        section(&mut o, &[run_with(vec![job.clone()])]);
        assert!(o.is_empty());
        job.device_io = Some(DeviceIo {
            name: "loop9".into(),
            partition_of: None,
            wall: Nanos::from_secs(1),
            read: DeviceDirection {
                requests: 64,
                merges: 0,
                bytes: Bytes(64 << 17),
                time: Nanos(64_000_000),
            },
            write: DeviceDirection::default(),
            busy: Nanos(500_000_000),
            in_queue: Nanos(1_000_000_000),
            stalled: Nanos(0),
            limits: QueueLimits::default(),
        });
        section(&mut o, &[run_with(vec![job])]);
        assert!(o.starts_with("<h2>What the device saw</h2>"), "{o}");
        assert!(
            o.contains("data-read-requests=\"64\" data-write-requests=\"0\""),
            "{o}"
        );
        assert!(
            o.contains("64 requests of 128 KiB, 0 merged, 1.00 ms each"),
            "{o}"
        );
        assert!(
            o.contains("<td class=\"num\">50.0%</td><td class=\"num\">1.0</td>"),
            "{o}"
        );
    }
}
