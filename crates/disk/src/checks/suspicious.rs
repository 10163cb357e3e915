//! Figures that are not measurements: a job that completed no I/O, and
//! samples of one test that spread so far that their mean describes none
//! of them (issue 33: an IOmeter point stored as 0.00 MB/s, 0 IOPS, depth
//! 0.0; a GNOME run whose samples ranged from 12.4 to 1602 MB/s).

use iomark_model::disk::DiskJobResult;
use iomark_model::figure::disk_job_test_name;
use iomark_model::profile::ProfileResult;
use iomark_model::units::{BytesPerSec, Nanos};
use iomark_model::{Warning, WarningKind};

/// Samples of one test further apart than this factor are flagged.
const SPREAD_FACTOR: f64 = 10.0;

/// Intervals shorter than this share of a full one (the last, cut short by
/// the end of the job) are left out of the spread: a few I/Os in 50 ms say
/// little of the rate.
const FULL_INTERVAL_SHARE: f64 = 0.5;

/// Jobs that ran and completed no I/O: their zeros would be stored and
/// drawn as if the device had delivered nothing. An interrupted job is
/// left out: Ctrl-C before its first I/O says so already.
pub(crate) fn no_io(jobs: &[DiskJobResult]) -> Vec<Warning> {
    jobs.iter()
        .filter(|j| !j.interrupted)
        .filter(|j| {
            let dirs = [j.read.as_ref(), j.write.as_ref()];
            dirs.into_iter().flatten().all(|d| d.ios == 0)
        })
        .map(|j| {
            let ran = [j.read.as_ref(), j.write.as_ref()]
                .into_iter()
                .flatten()
                .map(|d| d.runtime)
                .max()
                .unwrap_or(Nanos(0));
            Warning::new(
                WarningKind::NoIo,
                format!(
                    "{} completed no I/O in its {ran}: its 0 MB/s and 0 IOPS are not a \
                     measurement (the device stalled for the whole job, or the job ended \
                     before its first I/O); rerun it with a longer --runtime",
                    disk_job_test_name(&j.spec)
                ),
            )
        })
        .collect()
}

/// Tests whose samples spread over more than [`SPREAD_FACTOR`]: each job's
/// per-second rates, and GNOME's transfer-rate samples. The sustained-write
/// profile is left out: a rate that falls off a cliff is what it measures.
pub(crate) fn wide_spread(result: Option<&ProfileResult>, jobs: &[DiskJobResult]) -> Vec<Warning> {
    let mut out = Vec::new();
    match result {
        Some(ProfileResult::Sustained(_)) => return out,
        Some(ProfileResult::Gnome(g)) => {
            let reads: Vec<BytesPerSec> = g.transfer.iter().map(|s| s.read).collect();
            let writes: Vec<BytesPerSec> = g.transfer.iter().filter_map(|s| s.write).collect();
            for (what, rates) in [("read", reads), ("write", writes)] {
                out.extend(spread_warning(
                    &format!("GNOME {what} rate"),
                    "samples",
                    &rates,
                ));
            }
            return out;
        }
        _ => {}
    }
    for job in jobs {
        for (what, is_read) in [("read", true), ("write", false)] {
            let has = if is_read { &job.read } else { &job.write };
            if has.is_none() {
                continue;
            }
            let rates = interval_rates(job, is_read, FULL_INTERVAL_SHARE);
            let name = format!("{} {what}", disk_job_test_name(&job.spec));
            out.extend(spread_warning(&name, "per-second samples", &rates));
        }
    }
    out
}

/// A job's rate in each interval at least `share` of a second long (the
/// last, cut short by the job's end, may be left out), reads or writes.
pub(crate) fn interval_rates(job: &DiskJobResult, is_read: bool, share: f64) -> Vec<BytesPerSec> {
    job.samples
        .iter()
        .filter(|s| s.length.as_secs_f64() >= share)
        .map(|s| {
            let bytes = if is_read { s.read_bytes } else { s.write_bytes };
            BytesPerSec(bytes as f64 / s.length.as_secs_f64())
        })
        .collect()
}

fn spread_warning(what: &str, samples: &str, rates: &[BytesPerSec]) -> Option<Warning> {
    if rates.len() < 2 {
        return None;
    }
    let lo = rates.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
    let hi = rates.iter().map(|r| r.0).fold(0.0, f64::max);
    if hi <= 0.0 || (lo > 0.0 && hi / lo <= SPREAD_FACTOR) {
        return None;
    }
    let how = if lo > 0.0 {
        format!("{:.0}x apart", hi / lo)
    } else {
        let stalled = rates.iter().filter(|r| r.0 == 0.0).count();
        format!("{stalled} of {} with nothing done", rates.len())
    };
    Some(Warning::new(
        WarningKind::WideSpread,
        format!(
            "{what}: the {} {samples} range from {:.1} to {:.1} MB/s ({how}): one figure \
             cannot describe them (a cache that filled, a device that stalled, or other \
             load); look at the series in `iomark report` before trusting the mean",
            rates.len(),
            lo / 1e6,
            hi / 1e6
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::disk::{DirectionResult, IntervalSample};
    use iomark_model::profile::{GnomeResult, GnomeTransferSample};
    use iomark_model::units::{Bytes, Iops};

    fn job(per_second_mb: &[f64]) -> DiskJobResult {
        let mut j = DiskJobResult::example(iomark_model::disk::DiskJobSpec::example());
        let runtime = Nanos::from_secs(per_second_mb.len() as u64);
        let bytes: f64 = per_second_mb.iter().sum::<f64>() * 1e6;
        j.read = Some(DirectionResult {
            io_bytes: Bytes(bytes as u64),
            ios: (bytes / 4096.0) as u64,
            runtime,
            bw: BytesPerSec(bytes / runtime.as_secs_f64()),
            iops: Iops(bytes / 4096.0 / runtime.as_secs_f64()),
            clat: Default::default(),
        });
        j.write = None;
        j.samples = per_second_mb
            .iter()
            .enumerate()
            .map(|(i, mb)| IntervalSample {
                start: Nanos::from_secs(i as u64),
                length: Nanos::from_secs(1),
                read_bytes: (mb * 1e6) as u64,
                read_ios: (mb * 1e6 / 4096.0) as u64,
                ..IntervalSample::default()
            })
            .collect();
        j
    }

    #[test]
    fn a_job_with_no_io_is_flagged_unless_interrupted() {
        let mut zero = job(&[0.0, 0.0]);
        if let Some(r) = zero.read.as_mut() {
            r.ios = 0;
        }
        let w = no_io(std::slice::from_ref(&zero));
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].kind, WarningKind::NoIo);
        assert!(
            w[0].message.contains("completed no I/O in its 2 s"),
            "{}",
            w[0]
        );
        zero.interrupted = true;
        assert!(no_io(&[zero]).is_empty());
        assert!(no_io(&[job(&[10.0, 11.0])]).is_empty());
    }

    #[test]
    fn samples_more_than_ten_times_apart_are_flagged() {
        let steady = job(&[100.0, 90.0, 110.0, 12.0]);
        assert!(wide_spread(None, &[steady]).is_empty(), "9x is inside");
        let w = wide_spread(None, &[job(&[1602.0, 800.0, 12.4])]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].kind, WarningKind::WideSpread);
        assert!(
            w[0].message
                .contains("range from 12.4 to 1602.0 MB/s (129x apart)"),
            "{}",
            w[0]
        );
        // A second with nothing done is a stall, whatever the others did.
        let w = wide_spread(None, &[job(&[50.0, 0.0, 50.0])]);
        assert!(
            w[0].message.contains("1 of 3 with nothing done"),
            "{}",
            w[0]
        );
        // A short last interval does not count.
        let mut tail = job(&[100.0, 100.0, 1.0]);
        tail.samples[2].length = Nanos(100_000_000);
        assert!(wide_spread(None, &[tail]).is_empty());
    }

    #[test]
    fn gnome_samples_are_checked_and_a_sustained_cliff_is_not() {
        let sample = |mb: f64| GnomeTransferSample {
            offset: 0,
            position_pct: 0.0,
            read: BytesPerSec(mb * 1e6),
            write: None,
        };
        let g = GnomeResult {
            sample_size: Bytes(10 << 20),
            samples_requested: 3,
            access_samples_requested: 0,
            write: false,
            avg_read: None,
            avg_write: None,
            avg_access: None,
            transfer: vec![sample(1602.0), sample(12.4), sample(13.0)],
            access: Vec::new(),
        };
        let w = wide_spread(Some(&ProfileResult::Gnome(g)), &[]);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.starts_with("GNOME read rate: the 3 samples"),
            "{}",
            w[0]
        );
    }
}
