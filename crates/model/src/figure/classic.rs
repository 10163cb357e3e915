//! Figures of the classic profiles that report their own statistic:
//! CrystalDiskMark (the best pass per test) and GNOME Disks (averages and
//! series by position).

use super::disk_names::{disk_job_test_name_on, disk_test_name, size_label, Namer};
use super::*;

/// Figures of a CrystalDiskMark result without its jobs: tests named from
/// the result's own settings (engine and direct I/O unknown).
pub fn cdm_figures(cdm: &CdmResult) -> Vec<Figure> {
    cdm_run_figures(cdm, &[], None)
}

/// Figures of a CrystalDiskMark run: per test the best pass's bandwidth,
/// IOPS and the lowest mean latency, each with the spread over the passes.
/// A test is named from its first pass's job ([`disk_job_test_name_on`]),
/// so the test size (CDM 3.0 at 100 MiB or 1000 MiB), engine and data
/// pattern are part of it, but not a device's whole size when no test size
/// was given; without the job, from the result's settings.
pub(super) fn cdm_run_figures(
    cdm: &CdmResult,
    jobs: &[DiskJobResult],
    target: Option<&DiskTarget>,
) -> Vec<Figure> {
    let mut out = Vec::new();
    for (t, test) in cdm.tests.iter().zip(cdm_names(cdm, jobs, target)) {
        let dir = t.dir.as_str();
        let bws: Vec<f64> = t.pass_bw.iter().map(|b| b.0).collect();
        let bw_spread = Spread::of(&bws);
        let bs = t.bs.get().max(1) as f64;
        let iops_spread = bw_spread.map(|b| b / bs);
        let mut figs = TestFigures::new(&mut out, &test, dir);
        figs.push("bw", FigureUnit::BytesPerSec, t.bw.0, bw_spread);
        figs.push("iops", FigureUnit::Iops, t.iops.0, iops_spread);
        if t.lat_mean_ns > 0.0 {
            let lat_spread = Spread::of(&t.pass_lat_mean_ns);
            figs.push("lat mean", FigureUnit::Nanos, t.lat_mean_ns, lat_spread);
        }
    }
    out
}

/// The test name of each of a CrystalDiskMark result's tests, in order, as
/// its figures are named: from the test's first pass's job
/// ([`disk_job_test_name_on`]); without the job, from the result's own
/// settings. What a CDM test lines up on wherever runs are compared.
pub(super) fn cdm_names(
    cdm: &CdmResult,
    jobs: &[DiskJobResult],
    target: Option<&DiskTarget>,
) -> Vec<String> {
    let mut namer = Namer::default();
    cdm.tests
        .iter()
        .map(|t| {
            namer.name(match jobs.get(t.first_job) {
                Some(j) => match target {
                    Some(target) => disk_job_test_name_on(&j.spec, target),
                    None => disk_test_name(j),
                },
                None => {
                    // CDM 8 rows are SEQ*/RND*; CDM 3.0's are "Seq", "512K", "4K", "4K QD32".
                    let random = !(t.row.starts_with("SEQ") || t.row == "Seq");
                    let rw = match (t.dir, random) {
                        (TestDir::Read, false) => "read".to_string(),
                        (TestDir::Read, true) => "randread".to_string(),
                        (TestDir::Write, false) => "write".to_string(),
                        (TestDir::Write, true) => "randwrite".to_string(),
                        (TestDir::Mix, r) => {
                            let m = cdm.mix_read.unwrap_or(70);
                            let rw = if r { "randrw" } else { "readwrite" };
                            format!("{rw} {m}/{}", 100u8.saturating_sub(m))
                        }
                    };
                    let size = match target.and_then(DiskTarget::chosen_size) {
                        Some(s) => format!(", {}", size_label(s)),
                        None if target.is_some() => String::new(),
                        None => format!(", {}", size_label(cdm.size)),
                    };
                    format!(
                        "{rw} {} QD{} T{}, {} data{size}",
                        size_label(t.bs),
                        t.queues,
                        t.threads,
                        cdm.data,
                    )
                }
            })
        })
        .collect()
}

/// Figures of a GNOME Disks run, as GNOME Disks shows them. The test
/// carries the sampling (count and size of the samples) and, when the user
/// chose it (`--size`, a test file), the region's size (`chosen_size`); a
/// whole device's size is the device's, so GNOME on a 96 MiB emulator and
/// on a 4.3 GB disk is the same test:
///
/// - `GNOME transfer rate, 100 x 10MiB samples`: `read bw` and `write bw`
///   (the averages, spread over the samples), then the series, `read bw at
///   12.5%` per sample position;
/// - `GNOME access time, 1000 samples`: `access mean` (spread over the
///   samples) and `access median`.
///
/// With a chosen size the names end ` of 1GiB`.
pub fn gnome_figures(g: &GnomeResult, chosen_size: Option<Bytes>) -> Vec<Figure> {
    let mut out = Vec::new();
    let of = chosen_size.map_or_else(String::new, |s| format!(" of {}", size_label(s)));
    let test = format!(
        "GNOME transfer rate, {} x {} samples{of}",
        g.samples_requested,
        size_label(g.sample_size)
    );
    let reads: Vec<f64> = g.transfer.iter().map(|s| s.read.0).collect();
    let writes: Vec<f64> = g
        .transfer
        .iter()
        .filter_map(|s| s.write.map(|w| w.0))
        .collect();
    let mut figs = TestFigures::new(&mut out, &test, "");
    if let Some(r) = g.avg_read {
        figs.push("read bw", FigureUnit::BytesPerSec, r.0, Spread::of(&reads));
    }
    if let Some(w) = g.avg_write {
        figs.push(
            "write bw",
            FigureUnit::BytesPerSec,
            w.0,
            Spread::of(&writes),
        );
    }
    for s in &g.transfer {
        let at = format!("at {:.1}%", s.position_pct);
        figs.push(
            &format!("read bw {at}"),
            FigureUnit::BytesPerSec,
            s.read.0,
            None,
        );
        if let Some(w) = s.write {
            figs.push(
                &format!("write bw {at}"),
                FigureUnit::BytesPerSec,
                w.0,
                None,
            );
        }
    }
    let test = format!(
        "GNOME access time, {} samples{of}",
        g.access_samples_requested
    );
    let mut times: Vec<f64> = g.access.iter().map(|a| a.time.get() as f64).collect();
    let mut figs = TestFigures::new(&mut out, &test, "");
    if let Some(a) = g.avg_access {
        figs.push(
            "access mean",
            FigureUnit::Nanos,
            a.get() as f64,
            // The access times themselves, not only their range: the
            // comparison judges their mean (issue 46: times 2-5x apart
            // were "within noise" by overlapping ranges).
            Spread {
                range: min_max(&times),
                noise: min_max(&times),
                sampled: Sampled::of(&times),
            },
        );
    }
    if !times.is_empty() {
        times.sort_by(f64::total_cmp);
        let n = times.len();
        let median = if n % 2 == 1 {
            times[n / 2]
        } else {
            (times[n / 2 - 1] + times[n / 2]) / 2.0
        };
        figs.push("access median", FigureUnit::Nanos, median, None);
    }
    out
}
