//! The classic profiles: tests people already know from another tool, run
//! the way that tool runs them and reported with its statistic
//! (../shared/PROFILES.md).
//!
//! * `cdm`: CrystalDiskMark 8 (`cdm`, `cdm-nvme`, `cdm-peak`, `cdm-real`)
//!   and 3.0 (`cdm3`): a discarded preparation pass, N measured passes, the
//!   maximum over them.
//! * `iometer`: IOmeter's queue-depth sweep.
//! * `gnome`: GNOME Disks' transfer-rate and access-time benchmark.
//! * `macbench`: MacBench 5.0's disk test.
//! * `sweep`: the block-size sweep of the PCIe SSD paper, per engine.
//! * `artefacts`: the compression and deduplication probe.
//! * `sustained`: sustained writes, where the write cache runs out.
//! * `verify`: the data check: corruption and fake capacity (f3, h2testw).
//!
//! Each profile is a module: data (its rows, sizes, depths and defaults),
//! the [`Setting`]s it takes (`SETTINGS`), a `plan` function that turns the
//! user's [`ProfileSettings`] into its options, and a `run` function that
//! runs it on an [`OpenTarget`]. [`ProfileName`] and [`ProfilePlan`]
//! register them; every match over them is exhaustive, so a new profile
//! is its own file plus one variant in each, and the compiler points at
//! every place that must learn it. A raised stop flag (Ctrl-C) ends a
//! profile after the tests already finished, which are kept.

mod artefacts;
mod cdm;
mod common;
mod gnome;
mod iometer;
mod macbench;
mod outline;
mod pts;
pub(crate) mod settings;
pub(crate) mod sustained;
mod sweep;
mod verify;

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iomark_model::disk::{DiskJobResult, DiskJobSpec, EngineKind};
use iomark_model::profile::ProfileResult;
use iomark_model::pts::{PtsRoundStatus, PtsTest};
use iomark_model::sustained::{SummedSeries, WrittenAt};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::Warning;

use crate::runner::{self, Observer, Quiet};
use crate::target::{OpenTarget, TestFilePrep};
use crate::DiskError;
pub use artefacts::ArtefactsOptions;
use iomark_pipeline::Progress;
pub use settings::{parse_mix, ProfileSettings, Setting};

/// The profiles by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProfileName {
    /// CrystalDiskMark 8, preset "Default".
    Cdm,
    /// CrystalDiskMark 8, preset "NVMe SSD".
    CdmNvme,
    /// CrystalDiskMark 8, "Peak Performance".
    CdmPeak,
    /// CrystalDiskMark 8, "Real World Performance".
    CdmReal,
    /// CrystalDiskMark 3.0.
    Cdm3,
    /// IOmeter's queue-depth sweep.
    Iometer,
    /// GNOME Disks' benchmark.
    Gnome,
    /// MacBench 5.0's disk test.
    Macbench,
    /// The block-size sweep.
    Sweep,
    /// The compression and deduplication probe.
    Artefacts,
    /// Sustained writes: where the write cache runs out.
    Sustained,
    /// The data check: corruption and fake capacity.
    Verify,
    /// SNIA PTS's IOPS test.
    PtsIops,
    /// SNIA PTS's write-saturation test.
    PtsWsat,
    /// SNIA PTS's throughput test.
    PtsTp,
    /// SNIA PTS's latency test.
    PtsLat,
}

impl ProfileName {
    /// Every profile, in the order `--help` lists them.
    pub(crate) const ALL: [ProfileName; 16] = [
        ProfileName::Cdm,
        ProfileName::CdmNvme,
        ProfileName::CdmPeak,
        ProfileName::CdmReal,
        ProfileName::Cdm3,
        ProfileName::Iometer,
        ProfileName::Gnome,
        ProfileName::Macbench,
        ProfileName::Sweep,
        ProfileName::Artefacts,
        ProfileName::Sustained,
        ProfileName::Verify,
        ProfileName::PtsIops,
        ProfileName::PtsWsat,
        ProfileName::PtsTp,
        ProfileName::PtsLat,
    ];

    /// The name on the command line and in results.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ProfileName::Cdm => "cdm",
            ProfileName::CdmNvme => "cdm-nvme",
            ProfileName::CdmPeak => "cdm-peak",
            ProfileName::CdmReal => "cdm-real",
            ProfileName::Cdm3 => "cdm3",
            ProfileName::Iometer => "iometer",
            ProfileName::Gnome => "gnome",
            ProfileName::Macbench => "macbench",
            ProfileName::Sweep => "sweep",
            ProfileName::Artefacts => "artefacts",
            ProfileName::Sustained => "sustained",
            ProfileName::Verify => "verify",
            ProfileName::PtsIops => "pts-iops",
            ProfileName::PtsWsat => "pts-wsat",
            ProfileName::PtsTp => "pts-tp",
            ProfileName::PtsLat => "pts-lat",
        }
    }

    /// Whether the profile runs across MPI ranks (each of its jobs on
    /// every rank at once, merged), or why it runs alone.
    pub(crate) fn across_ranks(self) -> Result<(), &'static str> {
        match self {
            ProfileName::Cdm
            | ProfileName::CdmNvme
            | ProfileName::CdmPeak
            | ProfileName::CdmReal
            | ProfileName::Cdm3
            | ProfileName::Iometer
            | ProfileName::Macbench
            | ProfileName::Sweep
            | ProfileName::Sustained => Ok(()),
            ProfileName::Gnome => Err("it samples one device's transfer-rate curve"),
            ProfileName::Artefacts => Err("it probes one device's compression and deduplication"),
            ProfileName::Verify => Err("it checks one device's data and capacity"),
            ProfileName::PtsIops
            | ProfileName::PtsWsat
            | ProfileName::PtsTp
            | ProfileName::PtsLat => Err("it brings one device to its steady state"),
        }
    }

    /// The settings the profile takes.
    fn settings(self) -> &'static [Setting] {
        match self {
            ProfileName::Cdm
            | ProfileName::CdmNvme
            | ProfileName::CdmPeak
            | ProfileName::CdmReal
            | ProfileName::Cdm3 => cdm::SETTINGS,
            ProfileName::Iometer => iometer::SETTINGS,
            ProfileName::Gnome => gnome::SETTINGS,
            ProfileName::Macbench => macbench::SETTINGS,
            ProfileName::Sweep => sweep::SETTINGS,
            ProfileName::Artefacts => artefacts::SETTINGS,
            ProfileName::Sustained => sustained::SETTINGS,
            ProfileName::Verify => verify::SETTINGS,
            ProfileName::PtsIops | ProfileName::PtsTp => pts::SETTINGS,
            ProfileName::PtsLat => pts::LAT_SETTINGS,
            ProfileName::PtsWsat => sustained::WSAT_SETTINGS,
        }
    }
}

/// A profile with its options, ready to run.
#[derive(Debug, Clone)]
pub enum ProfilePlan {
    /// A CrystalDiskMark profile.
    Cdm(Box<(cdm::CdmDef, cdm::CdmOptions)>),
    /// IOmeter's queue-depth sweep.
    Iometer(iometer::IometerOptions),
    /// GNOME Disks' benchmark.
    Gnome(gnome::GnomeOptions),
    /// MacBench's disk test.
    Macbench(macbench::MacbenchOptions),
    /// The block-size sweep.
    Sweep(sweep::SweepOptions),
    /// The artefacts probe.
    Artefacts(artefacts::ArtefactsOptions),
    /// Sustained writes.
    Sustained(sustained::SustainedOptions),
    /// The data check.
    Verify(verify::VerifyOptions),
    /// SNIA PTS's IOPS, throughput or latency test.
    Pts(pts::PtsOptions),
}

/// Check the user's settings against what profile `name` takes and turn
/// them into its plan.
pub(crate) fn plan(name: ProfileName, s: &ProfileSettings) -> Result<ProfilePlan, DiskError> {
    let takes = name.settings();
    if let Some(extra) = Setting::ALL
        .into_iter()
        .find(|setting| setting.given(s) && !takes.contains(setting))
    {
        return Err(DiskError::Invalid(format!(
            "{} does not apply to the {name} profile: see `iomark disk --help` for its options",
            extra.flag()
        )));
    }
    if s.runtime == Some(Nanos(0)) {
        return Err(DiskError::Invalid(
            "--runtime must be longer than 0 for a profile: try --runtime 10s".into(),
        ));
    }
    if s.engine == Some(EngineKind::IoUring) {
        crate::engine::io_uring_available()
            .map_err(|e| DiskError::Invalid(format!("{e}: use --engine psync")))?;
    }
    Ok(match name {
        ProfileName::Cdm
        | ProfileName::CdmNvme
        | ProfileName::CdmPeak
        | ProfileName::CdmReal
        | ProfileName::Cdm3 => ProfilePlan::Cdm(Box::new(cdm::plan(name, s)?)),
        ProfileName::Iometer => ProfilePlan::Iometer(iometer::plan(s)?),
        ProfileName::Gnome => ProfilePlan::Gnome(gnome::plan(s)?),
        ProfileName::Macbench => ProfilePlan::Macbench(macbench::plan(s)?),
        ProfileName::Sweep => ProfilePlan::Sweep(sweep::plan(s)?),
        ProfileName::Artefacts => ProfilePlan::Artefacts(artefacts::plan(s)?),
        ProfileName::Sustained => ProfilePlan::Sustained(sustained::plan(s)?),
        ProfileName::Verify => ProfilePlan::Verify(verify::plan(s)?),
        ProfileName::PtsIops => ProfilePlan::Pts(pts::plan(PtsTest::Iops, s)?),
        ProfileName::PtsTp => ProfilePlan::Pts(pts::plan(PtsTest::Throughput, s)?),
        ProfileName::PtsLat => ProfilePlan::Pts(pts::plan(PtsTest::Latency, s)?),
        ProfileName::PtsWsat => ProfilePlan::Sustained(sustained::plan_wsat(s)?),
    })
}

impl ProfilePlan {
    /// The test-file size when none is given.
    pub(crate) fn default_size(&self) -> Bytes {
        match self {
            ProfilePlan::Cdm(b) => b.0.size,
            ProfilePlan::Iometer(_)
            | ProfilePlan::Gnome(_)
            | ProfilePlan::Macbench(_)
            | ProfilePlan::Sweep(_) => Bytes(Bytes::GIB),
            ProfilePlan::Artefacts(_) => artefacts::DEFAULT_REGION,
            ProfilePlan::Sustained(_) => Bytes(Bytes::GIB),
            ProfilePlan::Verify(_) => Bytes(Bytes::GIB),
            ProfilePlan::Pts(_) => Bytes(Bytes::GIB),
        }
    }

    /// Every I/O size the profile uses, so direct-I/O alignment is checked
    /// before a test file is created.
    pub(crate) fn io_sizes(&self) -> Vec<Bytes> {
        let sizes: Vec<u64> = match self {
            ProfilePlan::Cdm(b) => b.0.rows.iter().map(|r| r.bs).collect(),
            ProfilePlan::Iometer(_) => iometer::PATTERNS.iter().map(|p| p.2).collect(),
            ProfilePlan::Gnome(o) => vec![o.sample_size.get(), gnome::PAGE],
            ProfilePlan::Macbench(_) => vec![macbench::TRANSFER],
            ProfilePlan::Sweep(o) => sweep::points(&o.sizes)
                .into_iter()
                .map(|(_, bs)| bs)
                .collect(),
            ProfilePlan::Artefacts(_) => vec![artefacts::BLOCK],
            ProfilePlan::Sustained(o) => vec![o.pattern.bs.get()],
            ProfilePlan::Verify(_) => {
                vec![crate::verify::GROUP, crate::verify::block::BLOCK as u64]
            }
            ProfilePlan::Pts(o) => o
                .block_sizes
                .iter()
                .map(|b| b.get())
                .chain([pts::PRECONDITION_BS])
                .collect(),
        };
        sizes.into_iter().map(Bytes).collect()
    }

    /// How a new test file is made ready: filled before the jobs, except
    /// for the sustained-write test, whose own writes are the measurement,
    /// and the data check, which writes every block itself.
    pub(crate) fn test_file_prep(&self) -> TestFilePrep {
        match self {
            ProfilePlan::Sustained(_) => TestFilePrep::Unwritten(sustained::FREE_SPACE_MARGIN),
            ProfilePlan::Verify(_) => TestFilePrep::Unwritten(verify::FREE_SPACE_MARGIN),
            ProfilePlan::Cdm(_)
            | ProfilePlan::Iometer(_)
            | ProfilePlan::Gnome(_)
            | ProfilePlan::Macbench(_)
            | ProfilePlan::Sweep(_)
            | ProfilePlan::Artefacts(_)
            | ProfilePlan::Pts(_) => TestFilePrep::Filled,
        }
    }

    /// Whether the profile writes to its target (GNOME Disks only with
    /// `--write`).
    pub(crate) fn writes(&self) -> bool {
        match self {
            ProfilePlan::Gnome(o) => o.write,
            ProfilePlan::Verify(o) => o.phase.writes(),
            ProfilePlan::Cdm(_)
            | ProfilePlan::Iometer(_)
            | ProfilePlan::Macbench(_)
            | ProfilePlan::Sweep(_)
            | ProfilePlan::Artefacts(_)
            | ProfilePlan::Sustained(_)
            | ProfilePlan::Pts(_) => true,
        }
    }

    /// Run the profile on `target`.
    pub(crate) fn run(
        &self,
        target: &OpenTarget,
        stop: &AtomicBool,
        obs: &mut dyn ProfileObserver,
    ) -> Result<ProfileOutcome, DiskError> {
        match self {
            ProfilePlan::Cdm(b) => cdm::run(&b.0, &b.1, target, stop, obs),
            ProfilePlan::Iometer(o) => iometer::run(o, target, stop, obs),
            ProfilePlan::Gnome(o) => gnome::run(o, target, stop, obs),
            ProfilePlan::Macbench(o) => macbench::run(o, target, stop, obs),
            ProfilePlan::Sweep(o) => sweep::run(o, target, stop, obs),
            ProfilePlan::Artefacts(o) => artefacts::run(o, target, stop, obs),
            ProfilePlan::Sustained(o) => sustained::run(o, target, stop, obs),
            ProfilePlan::Verify(o) => verify::run(o, target, stop, obs),
            ProfilePlan::Pts(o) => pts::run(o, target, stop, obs),
        }
    }
}

/// `--profile`: every profile's name.
#[cfg(feature = "clap")]
pub const PROFILES: iomark_model::values::Named<ProfileName> = iomark_model::values::Named::new(
    || ProfileName::ALL.map(ProfileName::as_str).to_vec(),
    str::parse,
);

impl FromStr for ProfileName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProfileName::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = ProfileName::ALL.iter().map(|p| p.as_str()).collect();
                format!("unknown profile '{s}': use {}", names.join(", "))
            })
    }
}

impl fmt::Display for ProfileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Watches a profile: a label when each job or phase begins, progress
/// while it runs, and its end.
pub(crate) trait ProfileObserver: Observer {
    /// A job or phase called `label` starts.
    fn begin(&mut self, label: &str);
    /// The current job or phase ended.
    fn end(&mut self);
    /// A test finished; `jobs` is every job measured so far, so a caller
    /// can keep them even if the run is killed before its end.
    fn finished(&mut self, _jobs: &[DiskJobResult]) {}
    /// A job just ran (or failed to): what the profile is to make of it.
    /// The default is the job as measured; a run across MPI ranks gathers
    /// every rank's job here and returns them merged, so the profile's own
    /// statistics (the CrystalDiskMark grid, a sweep's knee) are the
    /// merged jobs'. Called for every job a profile runs, kept or not (a
    /// discarded preparation pass too); the jobs a profile keeps are the
    /// ones the next [`finished`](Self::finished) adds.
    fn measured(
        &mut self,
        job: Result<DiskJobResult, DiskError>,
    ) -> Result<DiskJobResult, DiskError> {
        job
    }
    /// The bytes-written series of the job just [`measured`](Self::measured)
    /// (the sustained-write test finds its cliff in it): the default is
    /// the series as measured; across MPI ranks, every rank's summed on
    /// one time base.
    fn series(&mut self, pass: PassSeries) -> Result<SummedSeries, DiskError> {
        Ok(SummedSeries::alone(pass.points))
    }
    /// A round of a PTS test ended: where its steady state stands, for
    /// the person watching a test that may take hours.
    fn round(&mut self, _status: &PtsRoundStatus) {}
}

impl ProfileObserver for Quiet {
    fn begin(&mut self, _label: &str) {}
    fn end(&mut self) {}
}

/// A job's bytes-written series as this process measured it, and when the
/// job's clock started: the points' times count from that start, which
/// differs between processes that left the same barrier (one may take
/// longer to set its job going), so series from several line up on it.
#[derive(Debug, Clone)]
pub struct PassSeries {
    /// The instant of the points' time 0.
    pub started: Instant,
    /// Bytes written by each time.
    pub points: Vec<WrittenAt>,
}

/// What a profile produced: every measured job, the profile's own result,
/// and its doubts.
#[derive(Debug, Clone)]
pub(crate) struct ProfileOutcome {
    /// Every measured job, in order (discarded preparation passes excluded).
    pub(crate) jobs: Vec<DiskJobResult>,
    /// The profile's statistic and series.
    pub(crate) result: ProfileResult,
    /// Doubts about the figures (shortened runs, spread over passes).
    pub(crate) warnings: Vec<Warning>,
    /// Whether Ctrl-C ended the profile before all its tests finished.
    pub(crate) interrupted: bool,
}

/// Run one job under a label; `None` when the stop flag ended it early (its
/// partial figures are not kept).
///
/// Unless `keep_cache` (`--keep-cache`), the target's pages are dropped
/// from the page cache first, as fio invalidates before each job: every
/// job starts cold, so a buffered or mapped job does not read what the
/// jobs before it left in the cache, and a profile's figures do not depend
/// on the order of its points. The previous job's mapping is gone by then
/// (an engine unmaps when its thread ends), so nothing pins the pages.
/// For direct I/O this changes nothing.
fn measure(
    spec: &DiskJobSpec,
    target: &OpenTarget,
    keep_cache: bool,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
    label: &str,
) -> Result<Option<DiskJobResult>, DiskError> {
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let valid = crate::validate_job(spec, target);
    if valid.is_ok() && !keep_cache {
        target.invalidate_cache();
    }
    // begin and measured are called whether or not the job could run, so
    // an observer that keeps ranks in step (MPI) sees every job.
    obs.begin(label);
    let result = valid.and_then(|()| runner::run_job(spec, target, stop, obs));
    obs.end();
    let job = obs.measured(result)?;
    Ok((!job.interrupted).then_some(job))
}

/// Sleep for `d` unless the stop flag rises; false when it did.
fn pause(d: Duration, stop: &AtomicBool, obs: &mut dyn ProfileObserver) -> bool {
    if d.is_zero() {
        return !stop.load(Ordering::Relaxed);
    }
    obs.begin("interval");
    let start = Instant::now();
    while start.elapsed() < d {
        if stop.load(Ordering::Relaxed) {
            obs.end();
            return false;
        }
        obs.progress(&Progress {
            elapsed: start.elapsed(),
            total: Some(d),
            ramping: true,
            bytes: 0,
            bytes_total: None,
        });
        std::thread::sleep(Duration::from_millis(50).min(d));
    }
    obs.end();
    !stop.load(Ordering::Relaxed)
}

/// The block sizes of a power-of-two range, both ends included.
fn powers_of_two(from: u64, to: u64) -> Vec<u64> {
    std::iter::successors(Some(from), |b| b.checked_mul(2))
        .take_while(|b| *b <= to)
        .collect()
}

#[cfg(test)]
mod tests;
