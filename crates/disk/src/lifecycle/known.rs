//! What the results store knows about the device a disk run is on: the
//! speed the user rated it at (`--rated`, kept per disk), the artefacts
//! probe's verdict (kept per disk, file system and I/O mode) and the verify
//! profile's verdict (kept per disk: wrong data is the disk's, whatever the
//! file system). All become warnings on every run there; a new `--rated`,
//! probe or verify verdict is remembered.

use iomark_model::artefact::{ProbeVerdict, RatedSpeed};
use iomark_model::device::DeviceReport;
use iomark_model::disk::DiskJobResult;
use iomark_model::profile::ProfileResult;
use iomark_model::stored::{DeviceMemory, RememberedProbe, RememberedVerify};
use iomark_model::verify::VerifyVerdict;
use iomark_model::{now_ms, Warning};

use super::RunSink;
use crate::plan::DiskOutcome;

/// The store's memory of one run's device.
#[derive(Debug, Default)]
pub(crate) struct Known {
    /// The rated speed: given now, or remembered.
    rated: Option<RatedSpeed>,
    /// What is remembered under the probe's key; none when the run has no
    /// device report.
    probe_slot: Option<DeviceMemory>,
    /// What is remembered under the disk's key (the verify verdict).
    disk_slot: Option<DeviceMemory>,
}

impl Known {
    /// Recall what the store knows about `report`'s device for a run that
    /// does (`direct`) or does not bypass the page cache, remembering a
    /// rated speed given now.
    pub(crate) fn recall(
        rec: &mut dyn RunSink,
        report: Option<&DeviceReport>,
        direct: bool,
        rated: Option<RatedSpeed>,
    ) -> Known {
        let Some(report) = report else {
            return Known {
                rated,
                ..Known::default()
            };
        };
        let describe = report.describe();
        let recall = |rec: &mut dyn RunSink, key: String| {
            rec.recall(&key)
                .unwrap_or_else(|| DeviceMemory::new(&key, &describe))
        };
        let mut disk = report.disk_key().map(|k| recall(rec, k));
        if let (Some(disk), Some(r)) = (&mut disk, &rated) {
            disk.rated = Some(r.clone());
            rec.remember(disk);
        }
        Known {
            rated: rated.or_else(|| disk.as_ref().and_then(|d| d.rated.clone())),
            probe_slot: report.probe_key(direct).map(|k| recall(rec, k)),
            disk_slot: disk,
        }
    }

    /// The verdict of an earlier probe here, if one is remembered.
    pub(crate) fn probe(&self) -> Option<&ProbeVerdict> {
        Some(&self.probe_slot.as_ref()?.probe.as_ref()?.verdict)
    }

    /// Remember what a probe of this run found.
    pub(crate) fn learned(&mut self, rec: &mut dyn RunSink, verdict: ProbeVerdict) {
        let Some(slot) = &mut self.probe_slot else {
            return;
        };
        slot.probe = Some(RememberedProbe {
            verdict,
            run: rec.run_id(),
            at_ms: now_ms(),
        });
        rec.remember(slot);
    }

    /// Remember what a verify run found here, replacing an earlier
    /// verdict (a clean one clears the warning).
    fn verified(&mut self, rec: &mut dyn RunSink, verdict: VerifyVerdict) {
        let Some(slot) = &mut self.disk_slot else {
            return;
        };
        slot.verify = Some(RememberedVerify {
            verdict,
            run: rec.run_id(),
            at_ms: now_ms(),
        });
        rec.remember(slot);
    }

    /// What a finished run teaches and is told, alone or across MPI ranks
    /// alike: a full probe's verdict (`--profile artefacts`) and a verify
    /// run's are remembered (a clean verify replaces an old warning), and
    /// the run gets the warnings of what is known here. An interrupted
    /// run's verdicts are not remembered.
    pub(crate) fn after_run(&mut self, rec: &mut dyn RunSink, outcome: &mut DiskOutcome) {
        if !outcome.interrupted {
            match &outcome.result {
                Some(ProfileResult::Artefacts(a)) => {
                    if let Some(v) = &a.verdict {
                        self.learned(rec, v.clone());
                    }
                }
                Some(ProfileResult::Verify(v)) => {
                    if let Some(verdict) = v.verdict() {
                        self.verified(rec, verdict);
                    }
                }
                _ => {}
            }
        }
        let warnings = self.warnings(&outcome.jobs, outcome.result.as_ref());
        outcome.warnings.extend(warnings);
    }

    /// The warnings of a run with `jobs` (and its profile's `result`) here:
    /// figures above the rated speed, each test once (a PTS cell's rounds
    /// are one test), and what a probe found.
    fn warnings(&self, jobs: &[DiskJobResult], result: Option<&ProfileResult>) -> Vec<Warning> {
        let mut out = Vec::new();
        if let Some(rated) = &self.rated {
            let test_of = |job: &DiskJobResult| match result {
                // Every job of a PTS run is a cell's (preconditioning is
                // not kept as one).
                Some(ProfileResult::Pts(r)) => iomark_model::figure::pts::test_of_job(r, &job.spec),
                _ => crate::checks::named_by_job(job),
            };
            out.extend(crate::checks::above_rated(rated, jobs, &test_of));
        }
        if let Some(p) = self.probe_slot.as_ref().and_then(|s| s.probe.as_ref()) {
            let source = match p.run {
                Some(id) => format!("artefacts probe of run {id}"),
                None => "artefacts probe".to_string(),
            };
            out.extend(p.verdict.warning(&source));
        }
        if let Some(v) = self.disk_slot.as_ref().and_then(|s| s.verify.as_ref()) {
            let source = match v.run {
                Some(id) => format!("verify run {id}"),
                None => "verify run".to_string(),
            };
            out.extend(v.verdict.warning(&date(v.at_ms), &source));
        }
        out
    }
}

/// The local date of `ms` since the epoch, as 2026-11-23.
fn date(ms: u64) -> String {
    let Ok(t) = jiff::Timestamp::from_millisecond(ms as i64) else {
        return "an unknown date".into();
    };
    t.to_zoned(jiff::tz::TimeZone::system())
        .strftime("%Y-%m-%d")
        .to_string()
}
