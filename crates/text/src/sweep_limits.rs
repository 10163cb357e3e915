//! A memory sweep's memory-limit record, point by point: each point runs
//! in a memory cgroup of its own, whose peak, limit hits and major faults
//! say how hard the limit bound (a point whose data fit never hits it).
//! `results show` prints it under the sweep's table and the report page
//! draws the same rows.

use iomark_model::mem::{MemSweep, MemSweepPoint};

/// The columns of [`rows`].
pub const HEADER: [&str; 7] = [
    "point",
    "data",
    "backing",
    "peak",
    "limit hits",
    "major faults",
    "OOM kills",
];

/// One row per point that ran under a limit, in the sweep's order:
/// `0.5`, `31.99 MiB`, `swap on zram0`, `40 MiB`, `12`, `3456`, `0`
/// (`n/a` where the kernel does not offer a figure). Empty when no point
/// recorded one (a sweep without `--mem-limit`).
pub fn rows(sweep: &MemSweep) -> Vec<[String; 7]> {
    sweep.points.iter().filter_map(|p| row(sweep, p)).collect()
}

fn row(sweep: &MemSweep, p: &MemSweepPoint) -> Option<[String; 7]> {
    let cg = p.run.cgroup.as_deref()?;
    let na = |v: Option<String>| v.unwrap_or_else(|| "n/a".into());
    Some([
        sweep.x_label(p.x),
        p.data.to_string(),
        p.run.spec.backing.label(),
        na(cg.peak.map(|b| b.to_string())),
        na(cg.limit_hits.map(|n| n.to_string())),
        na(cg.major_faults.map(|n| n.to_string())),
        cg.oom_kills.to_string(),
    ])
}

/// [`rows`] as an aligned table under a heading naming the limit; none
/// when no point recorded one.
pub fn table(sweep: &MemSweep) -> Option<String> {
    let rows = rows(sweep);
    let limit = sweep
        .points
        .iter()
        .find_map(|p| p.run.cgroup.as_deref())?
        .limit;
    let all: Vec<Vec<String>> = std::iter::once(HEADER.map(String::from).to_vec())
        .chain(rows.into_iter().map(|r| r.to_vec()))
        .collect();
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|c| all.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!("memory limit {limit}, each point's cgroup:\n");
    for r in &all {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| match i {
                0 | 2 => format!("{cell:<w$}"),
                _ => format!("{cell:>w$}"),
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::mem::{
        Advice, Backing, CgroupUsage, MemHost, MemJobSpec, MemKernelSpec, MemOutcome, MemRun,
        StencilSpec, SweepAxis,
    };
    use iomark_model::units::Bytes;

    fn point(x: f64, backing: Backing, cg: Option<CgroupUsage>) -> MemSweepPoint {
        MemSweepPoint {
            x,
            data: Bytes(((x * 64.0) as u64) << 20),
            run: MemRun {
                spec: MemJobSpec {
                    kernel: MemKernelSpec::Stencil(StencilSpec {
                        n: 64,
                        mask: 3,
                        sweeps: 2,
                    }),
                    threads: 1,
                    backing,
                    advice: Advice::Normal,
                    mem_limit: Some(Bytes(64 << 20)),
                },
                host: MemHost::default(),
                outcome: MemOutcome::OomKilled {
                    message: "killed".into(),
                },
                cgroup: cg.map(Box::new),
                baseline: None,
                warnings: Vec::new(),
                sweep: None,
                cpu: None,
                cluster: None,
            },
        }
    }

    #[test]
    fn each_point_shows_its_cgroup_record_and_its_backing() {
        let cg = |peak: u64, hits, faults, kills| CgroupUsage {
            version: "v1".into(),
            limit: Bytes(64 << 20),
            peak: Some(Bytes(peak << 20)),
            oom_kills: kills,
            limit_hits: Some(hits),
            major_faults: faults,
        };
        let swap = Backing::Swap {
            path: "/dev/zram0".into(),
            device: Some("zram0".into()),
        };
        let sweep = MemSweep {
            axis: SweepAxis::Ratio,
            backings: vec![swap.clone(), Backing::Heap],
            points: vec![
                point(0.5, swap.clone(), Some(cg(33, 0, Some(0), 0))),
                point(2.0, swap, Some(cg(64, 1234, Some(5678), 0))),
                point(2.0, Backing::Heap, Some(cg(64, 99, None, 1))),
            ],
        };
        let text = table(&sweep).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0], "memory limit 64 MiB, each point's cgroup:",
            "{text}"
        );
        assert!(
            lines[1].starts_with("point") && lines[1].ends_with("OOM kills"),
            "{text}"
        );
        assert!(
            lines[2].starts_with("0.5 ") && lines[2].contains("swap on zram0"),
            "{text}"
        );
        assert!(
            lines[3].contains("64 MiB") && lines[3].contains("1234") && lines[3].contains("5678"),
            "{text}"
        );
        assert!(
            lines[4].contains("heap") && lines[4].contains("n/a") && lines[4].ends_with('1'),
            "{text}"
        );
        // No limit, no record: no table.
        let mut none = sweep.clone();
        none.points.iter_mut().for_each(|p| p.run.cgroup = None);
        assert!(table(&none).is_none());
        assert!(rows(&none).is_empty());
    }
}
