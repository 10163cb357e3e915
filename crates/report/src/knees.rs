//! The queue-depth knees of the runs: per sweep, where throughput stops
//! rising and why, in the sentence the terminal prints.

use std::fmt::Write;

use iomark_model::RunBody;

use crate::svg::esc;
use crate::ReportRun;

/// `<h2>Queue-depth knees</h2>` and one item per sweep of every run; nothing
/// when no run has a sweep.
pub(crate) fn section(o: &mut String, runs: &[ReportRun]) {
    let knees: Vec<_> = runs
        .iter()
        .flat_map(|r| match &r.doc.body {
            RunBody::Disk(d) => d.knees.iter().map(move |k| (r, k)).collect(),
            _ => Vec::new(),
        })
        .collect();
    if knees.is_empty() {
        return;
    }
    o.push_str("<h2>Queue-depth knees</h2><ul class=\"knees\" id=\"knees\">");
    for (r, k) in knees {
        let _ = write!(
            o,
            "<li data-run=\"{}\" data-series=\"{}\" data-knee=\"{}\" data-cause=\"{}\"><b>{}</b>, {}: {}</li>",
            esc(&r.id),
            esc(&k.series),
            k.depth,
            k.cause.map_or("", |c| c.as_str()),
            esc(&r.name),
            esc(&k.series),
            esc(&iomark_text::knee_sentence(k))
        );
    }
    o.push_str("</ul>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::disk::{DiskRun, DiskTarget, TargetKind};
    use iomark_model::knee::{Knee, KneeShape};
    use iomark_model::units::Bytes;
    use iomark_model::RunDocument;

    fn run_with(knees: Vec<Knee>) -> ReportRun {
        let body = RunBody::Disk(DiskRun {
            rounds_so_far: Vec::new(),
            profile: "iometer".into(),
            target: DiskTarget {
                given: "/dev/loop9".into(),
                path: "/dev/loop9".into(),
                kind: TargetKind::BlockDevice,
                size: Bytes(1 << 30),
                logical_block_size: 512,
                size_from_device: false,
            },
            jobs: vec![],
            profile_result: None,
            cgroup: None,
            probe: None,
            knees,
            cluster: None,
        });
        ReportRun::new(7, RunDocument::iomark(vec!["iomark".into()], body))
    }

    #[test]
    fn each_sweep_gets_its_sentence_and_none_means_no_section() {
        let mut o = String::new();
        section(&mut o, &[run_with(vec![])]);
        assert!(o.is_empty());
        let k = Knee {
            series: "4 KiB random read".into(),
            shape: KneeShape::StillRising,
            depth: 8,
            gain_threshold_pct: 10.0,
            cause: None,
            evidence: None,
        };
        section(&mut o, &[run_with(vec![k])]);
        assert!(o.starts_with("<h2>Queue-depth knees</h2>"));
        assert!(o.contains("data-series=\"4 KiB random read\" data-knee=\"8\" data-cause=\"\""));
        assert!(o.contains("Throughput is still rising at QD8"));
    }
}
