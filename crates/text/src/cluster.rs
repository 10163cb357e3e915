//! The per-rank table of a run across MPI ranks (docs/mpi.md), printed
//! under the merged figures by the run itself and by `iomark results show`.

use std::fmt::Write;

use iomark_model::cluster::{ClusterRun, MemCluster};
use iomark_model::mem::KernelResult;

use iomark_model::escape::escape_controls;

/// Each rank's start, end, rates and path, the slowest and fastest named,
/// and under `--stonewall` which ranks the first finish stopped.
pub fn rank_table(c: &ClusterRun) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n{} ranks, {}, aggregate over {:.3}s (first start to last end)",
        c.ranks,
        c.layout.as_str(),
        c.wall.0 as f64 / 1e9
    );
    let _ = writeln!(
        o,
        "  {:>4}  {:<16} {:>9} {:>9} {:>12} {:>12}  path",
        "rank", "host", "start s", "end s", "read", "write"
    );
    for r in &c.per_rank {
        let _ = writeln!(
            o,
            "  {:>4}  {:<16} {:>9.3} {:>9.3} {:>12} {:>12}  {}",
            r.rank,
            escape_controls(&r.host),
            r.start.0 as f64 / 1e9,
            r.end.0 as f64 / 1e9,
            r.read_bw.to_string(),
            r.write_bw.to_string(),
            escape_controls(&r.path)
        );
    }
    if let Some((slow, fast)) = c.slowest_fastest() {
        let _ = writeln!(
            o,
            "  slowest rank {}, fastest rank {}",
            slow.rank, fast.rank
        );
    }
    if c.stonewall {
        let stopped: Vec<String> = c
            .per_rank
            .iter()
            .filter(|r| r.stonewalled)
            .map(|r| r.rank.to_string())
            .collect();
        if stopped.is_empty() {
            let _ = writeln!(
                o,
                "  stonewall: every rank finished before it heard of another's finish"
            );
        } else {
            let _ = writeln!(
                o,
                "  stonewall: rank{} {} stopped at the first rank's finish, with the bytes {} managed",
                if stopped.len() > 1 { "s" } else { "" },
                stopped.join(", "),
                if stopped.len() > 1 { "they" } else { "it" }
            );
        }
    }
    o
}

/// Each rank's STREAM best rates under the summed figures of a memory run
/// across MPI ranks.
pub fn mem_rank_table(c: &MemCluster) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\n{} ranks in step (a barrier before each kernel); the figures above are their sum",
        c.ranks
    );
    let _ = writeln!(
        o,
        "  {:>4}  {:<16} {:>12} {:>12} {:>12} {:>12}",
        "rank", "host", "Copy MB/s", "Scale MB/s", "Add MB/s", "Triad MB/s"
    );
    for r in &c.per_rank {
        let _ = write!(o, "  {:>4}  {:<16}", r.rank, escape_controls(&r.host));
        if let KernelResult::Stream(s) = &r.result {
            for k in &s.kernels {
                let _ = write!(o, " {:>12.1}", k.best_rate.mb_per_sec());
            }
        }
        o.push('\n');
    }
    o
}
