//! A custom job from what the user gave: the defaults and every check in
//! one place, so the command line only parses.
//!
//! The names are fio's (`rw`, `bs`, `iodepth`, ...), and so are the flags
//! the messages name: they are the vocabulary of the job, whatever front
//! end fills it in.

use std::str::FromStr;

use iomark_model::disk::{DataPattern, DiskJobSpec, EngineKind, RwMode};
use iomark_model::units::{Bytes, Nanos};

use crate::target::DirectMode;
use crate::verify::writes::VerifyWrites;
use crate::DiskError;

/// Default access pattern.
pub const DEFAULT_RW: RwMode = RwMode::RandRead;
/// Default block size.
pub const DEFAULT_BS: Bytes = Bytes(4096);
/// Default queue depth per thread.
pub const DEFAULT_IODEPTH: u32 = 32;
/// Default measured time.
pub const DEFAULT_RUNTIME: Nanos = Nanos(10_000_000_000);
/// Default read share of mixed jobs, in percent.
pub const DEFAULT_RWMIX_READ: u8 = 70;
/// Default engine.
pub const DEFAULT_ENGINE: EngineKind = EngineKind::IoUring;

/// What the user said about a custom job; `None` takes the default.
#[derive(Debug, Clone, Default)]
pub struct JobSettings {
    /// Access pattern.
    pub rw: Option<RwMode>,
    /// Bytes per I/O.
    pub bs: Option<Bytes>,
    /// I/Os in flight per thread (with several depths, the deepest).
    pub iodepth: Option<u32>,
    /// Several depths (`--iodepth 1,2,4,8`): the job runs once at each, in
    /// order, and the run reports where throughput stops rising. Empty
    /// for one depth.
    pub depth_sweep: Vec<u32>,
    /// I/Os per submission.
    pub iodepth_batch: Option<u32>,
    /// Threads.
    pub numjobs: Option<u32>,
    /// Test-file size or region; `None` leaves it to the target.
    pub size: Option<Bytes>,
    /// Measured time; zero means one pass over the region.
    pub runtime: Option<Nanos>,
    /// Unmeasured time first.
    pub ramp: Option<Nanos>,
    /// I/O engine.
    pub engine: Option<EngineKind>,
    /// Read share of mixed jobs, in percent.
    pub rwmix_read: Option<u8>,
    /// What is written.
    pub data: DataPattern,
    /// Seed for offsets and data.
    pub seed: u64,
    /// `Some(true)`: direct I/O or an error; `Some(false)`: the page
    /// cache; `None`: direct where the file system can.
    pub direct: Option<bool>,
    /// `--verify`: stamp every write and check it after the run.
    pub verify: Option<VerifyWrites>,
}

/// A checked custom job: its spec (the size is the target's, filled in
/// once it is open) and how its target is to be opened.
#[derive(Debug, Clone)]
pub struct CustomJob {
    /// The job.
    pub spec: DiskJobSpec,
    /// Page cache or not.
    pub direct: DirectMode,
    /// The size asked for, if any.
    pub size: Option<Bytes>,
    /// The depths to run the job at, one job each, when several were given.
    pub depth_sweep: Vec<u32>,
    /// Whether the writes are checked after the run.
    pub verify: Option<VerifyWrites>,
}

/// `--iodepth`: one depth, or several as a list `1,2,4,8` or a range
/// `1..32` (powers of two) for a depth sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IodepthList(pub Vec<u32>);

impl FromStr for IodepthList {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // One number, even 0, is the job's depth and is checked with the
        // rest of the job, which names the fix.
        if let Ok(n) = s.trim().parse::<u32>() {
            return Ok(IodepthList(vec![n]));
        }
        crate::profiles::settings::parse_depths_for("--iodepth", s).map(IodepthList)
    }
}

impl IodepthList {
    /// The job's `iodepth` (the deepest, which sizes its buffers) and the
    /// sweep's depths (empty for one depth).
    pub fn split(&self) -> (Option<u32>, Vec<u32>) {
        let deepest = self.0.iter().copied().max();
        let sweep = if self.0.len() > 1 {
            self.0.clone()
        } else {
            Vec::new()
        };
        (deepest, sweep)
    }
}

impl JobSettings {
    /// The workload settings given, by flag: any of them makes a custom
    /// job unless a profile is named.
    pub fn given(&self) -> Vec<&'static str> {
        let given = [
            ("--rw", self.rw.is_some()),
            ("--bs", self.bs.is_some()),
            ("--iodepth", self.iodepth.is_some()),
            ("--iodepth-batch", self.iodepth_batch.is_some()),
            ("--numjobs", self.numjobs.is_some()),
            ("--runtime", self.runtime.is_some()),
            ("--ramp", self.ramp.is_some()),
            ("--engine", self.engine.is_some()),
            ("--rwmix-read", self.rwmix_read.is_some()),
            ("--verify", self.verify.is_some()),
        ];
        given.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect()
    }

    /// Fill in the defaults and check everything that can be checked
    /// before a target is opened ([`crate::validate_spec`] included).
    pub fn build(&self) -> Result<CustomJob, DiskError> {
        let invalid = |m: String| Err(DiskError::Invalid(m));
        let iodepth = self.iodepth.unwrap_or(DEFAULT_IODEPTH);
        let engine = self.engine.unwrap_or(DEFAULT_ENGINE);
        if self.size == Some(Bytes(0)) {
            return invalid("--size must be larger than 0: try --size 1GiB".into());
        }
        if engine == EngineKind::IoUring {
            crate::engine::io_uring_available()
                .map_err(|e| DiskError::Invalid(format!("{e}: use --engine psync")))?;
        }
        let mapped = engine.is_mapped();
        if mapped && self.direct == Some(true) {
            return invalid(format!(
                "--engine {engine} copies through a file mapping, which always uses the \
                 page cache: drop --direct, or use --engine psync or io_uring"
            ));
        }
        let direct = if mapped {
            DirectMode::Buffered
        } else {
            DirectMode::from_choice(self.direct)
        };
        let runtime = self.runtime.unwrap_or(DEFAULT_RUNTIME);
        let spec = DiskJobSpec {
            name: "custom".into(),
            rw: self.rw.unwrap_or(DEFAULT_RW),
            bs: self.bs.unwrap_or(DEFAULT_BS),
            iodepth,
            iodepth_batch: self.iodepth_batch.unwrap_or(DiskJobSpec::ADAPTIVE_BATCH),
            numjobs: self.numjobs.unwrap_or(1),
            // Filled in from the target once it is open.
            size: self.size.unwrap_or(Bytes(0)),
            runtime: (runtime.get() > 0).then_some(runtime),
            ramp: self.ramp.unwrap_or(Nanos(0)),
            engine,
            direct: direct != DirectMode::Buffered,
            data: self.data,
            rwmix_read: self.rwmix_read.unwrap_or(DEFAULT_RWMIX_READ),
            seed: self.seed,
        };
        crate::validate_spec(&spec)?;
        // Every depth of a sweep, before anything is created.
        for &depth in &self.depth_sweep {
            crate::validate_spec(&DiskJobSpec {
                iodepth: depth,
                ..spec.clone()
            })?;
        }
        if let Some(size) = self.size.filter(|s| *s < spec.bs) {
            return invalid(format!(
                "--size {size} is smaller than one block (--bs {}): raise --size or lower --bs",
                spec.bs
            ));
        }
        if self.iodepth_batch.is_some_and(|b| b == 0 || b > iodepth) {
            return invalid(format!(
                "--iodepth-batch must be 1 to --iodepth ({iodepth})"
            ));
        }
        if let Some(v) = &self.verify {
            v.check_spec(&spec)?;
        }
        Ok(CustomJob {
            spec,
            direct,
            size: self.size,
            depth_sweep: self.depth_sweep.clone(),
            verify: self.verify,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn psync() -> JobSettings {
        JobSettings {
            engine: Some(EngineKind::Psync),
            ..JobSettings::default()
        }
    }

    #[test]
    fn defaults_are_fios_where_fio_has_one() {
        let job = psync().build().unwrap();
        assert_eq!(job.spec.rw, RwMode::RandRead);
        assert_eq!(job.spec.bs, Bytes(4096));
        assert_eq!(
            (job.spec.iodepth, job.spec.iodepth_batch),
            (32, DiskJobSpec::ADAPTIVE_BATCH)
        );
        assert_eq!(job.spec.runtime, Some(DEFAULT_RUNTIME));
        assert_eq!(job.direct, DirectMode::Auto);
    }

    #[test]
    fn each_bad_setting_names_its_fix() {
        let cases: Vec<(JobSettings, &str)> = vec![
            (
                JobSettings {
                    bs: Some(Bytes(0)),
                    ..psync()
                },
                "--bs must be larger than 0",
            ),
            (
                JobSettings {
                    size: Some(Bytes(0)),
                    ..psync()
                },
                "--size must be larger than 0",
            ),
            (
                JobSettings {
                    iodepth: Some(8),
                    iodepth_batch: Some(16),
                    ..psync()
                },
                "1 to --iodepth (8)",
            ),
            (
                JobSettings {
                    engine: Some(EngineKind::MmapSync),
                    direct: Some(true),
                    ..psync()
                },
                "page cache",
            ),
            (
                JobSettings {
                    rwmix_read: Some(101),
                    ..psync()
                },
                "0 to 100",
            ),
        ];
        for (settings, needle) in cases {
            let err = settings.build().unwrap_err().to_string();
            assert!(err.contains(needle), "{settings:?}: {err}");
        }
    }

    #[test]
    fn mapped_engines_run_buffered_and_runtime_zero_is_one_pass() {
        let job = JobSettings {
            engine: Some(EngineKind::MmapAsync),
            runtime: Some(Nanos(0)),
            ..psync()
        }
        .build()
        .unwrap();
        assert_eq!(job.direct, DirectMode::Buffered);
        assert!(!job.spec.direct);
        assert_eq!(job.spec.runtime, None);
    }

    #[test]
    fn iodepth_takes_one_depth_or_a_sweep() {
        let split = |s: &str| s.parse::<IodepthList>().map(|l| l.split());
        assert_eq!(split("8"), Ok((Some(8), vec![])));
        // Zero passes here; the job's check names the fix.
        assert_eq!(split("0"), Ok((Some(0), vec![])));
        assert_eq!(split("1,2,4,8"), Ok((Some(8), vec![1, 2, 4, 8])));
        assert_eq!(split("8,1"), Ok((Some(8), vec![8, 1])));
        assert_eq!(split("1..8"), Ok((Some(8), vec![1, 2, 4, 8])));
        let err = split("1,x").unwrap_err();
        assert!(err.starts_with("--iodepth '1,x': give a list"), "{err}");
    }
}
