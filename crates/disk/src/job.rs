//! A custom job from what the user gave: the defaults and every check in
//! one place, so the command line only parses.
//!
//! The names are fio's (`rw`, `bs`, `iodepth`, ...), and so are the flags
//! the messages name: they are the vocabulary of the job, whatever front
//! end fills it in.

use std::str::FromStr;
use std::time::Duration;

use iomark_model::disk::{DataPattern, DiskJobSpec, EngineKind, RwMode};
use iomark_model::steady::{Criterion, SteadyStateSpec};
use iomark_model::units::{Bytes, Nanos};

use crate::profiles::Setting;
use crate::target::DirectMode;
use crate::verify::writes::VerifyWrites;
use crate::DiskError;

/// Default access pattern.
const DEFAULT_RW: RwMode = RwMode::RandRead;
/// Default block size.
const DEFAULT_BS: Bytes = Bytes(4096);
/// Default queue depth per thread.
const DEFAULT_IODEPTH: u32 = 32;
/// Default measured time.
const DEFAULT_RUNTIME: Nanos = Nanos(10_000_000_000);
/// Default read share of mixed jobs, in percent.
const DEFAULT_RWMIX_READ: u8 = 70;
/// Default engine.
const DEFAULT_ENGINE: EngineKind = EngineKind::IoUring;

/// The workload flags [`JobSettings::given`] names, spelled once: the clap
/// attributes take their long names from here (the profiles' shared
/// ones, `--runtime`, `--ramp` and `--engine`, are [`Setting`]s).
mod flags {
    /// `--rw`
    pub(super) const RW: &str = "--rw";
    /// `--bs`
    pub(super) const BS: &str = "--bs";
    /// `--iodepth`
    pub(super) const IODEPTH: &str = "--iodepth";
    /// `--iodepth-batch`
    pub(super) const IODEPTH_BATCH: &str = "--iodepth-batch";
    /// `--numjobs`
    pub(super) const NUMJOBS: &str = "--numjobs";
    /// `--rwmix-read`
    pub(super) const RWMIX_READ: &str = "--rwmix-read";
    /// `--verify`
    pub(super) const VERIFY: &str = "--verify";
    /// `--steady-state`
    pub(super) const STEADY_STATE: &str = "--steady-state";
    /// `--ss-dur`
    pub(super) const SS_DUR: &str = "--ss-dur";
    /// `--ss-ramp`
    pub(super) const SS_RAMP: &str = "--ss-ramp";

    /// The long name clap takes: the flag without its dashes.
    #[cfg(feature = "clap")]
    pub(super) fn long(flag: &'static str) -> &'static str {
        flag.trim_start_matches('-')
    }
}

/// What the user said about a custom job; `None` takes the default.
///
/// With the `clap` feature these are the arguments of `iomark disk`'s
/// workload (flattened into the command): each field's help below is the
/// flag's.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct JobSettings {
    /// Access pattern: read, write, randread, randwrite, readwrite, randrw
    /// (default randread). Any workload flag makes a custom workload
    /// instead of the cdm profile.
    #[cfg_attr(feature = "clap", arg(long = flags::long(flags::RW), value_name = "MODE", value_parser = iomark_model::values::RW, help_heading = "Workload"))]
    pub rw: Option<RwMode>,

    /// Bytes per I/O, e.g. 4k, 128k, 1M (k/M/G are 1024-based; default 4k).
    #[cfg_attr(feature = "clap", arg(long = flags::long(flags::BS), value_name = "SIZE", help_heading = "Workload"))]
    pub(crate) bs: Option<Bytes>,

    /// I/Os each thread keeps in flight (needs an asynchronous engine;
    /// default 32). Several depths, a list 1,2,4,8 or a range 1..32, run
    /// the job once at each and report where throughput stops rising.
    #[cfg_attr(feature = "clap", arg(long = flags::long(flags::IODEPTH), value_name = "N", help_heading = "Workload"))]
    pub(crate) iodepth: Option<IodepthList>,

    /// I/Os queued before they are handed to the kernel in one system call
    /// (fio's iodepth_batch_submit). Default: chosen from the completions,
    /// each I/O at once while they complete later (a device, kept evenly
    /// fed), a whole refill at once while they complete within the call
    /// (page cache, zram). A value forces that batch.
    #[cfg_attr(feature = "clap", arg(long = flags::long(flags::IODEPTH_BATCH), value_name = "N", help_heading = "Workload"))]
    pub(crate) iodepth_batch: Option<u32>,

    /// Threads, each with its own queue; results are merged (default 1).
    #[cfg_attr(feature = "clap", arg(long = flags::long(flags::NUMJOBS), value_name = "N", help_heading = "Workload"))]
    pub(crate) numjobs: Option<u32>,

    /// Size of the test file, or of the region of an existing file or
    /// device (default: 1GiB test file, the whole file or device).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "SIZE", help_heading = "Workload")
    )]
    pub size: Option<Bytes>,

    /// Measured time, e.g. 10s, 1m (default 10s). 0 means one pass over
    /// --size per thread. With iometer, macbench and sweep: time per point;
    /// pts-iops, pts-tp, pts-lat: time per cell of a round (default 1m).
    #[cfg_attr(feature = "clap", arg(long = Setting::Runtime.long(), value_name = "TIME", help_heading = "Workload"))]
    pub(crate) runtime: Option<Nanos>,

    /// Accepted for fio's sake: --runtime is always time-based (the job
    /// goes over --size again until the time is up).
    #[cfg_attr(
        feature = "clap",
        arg(long = "time_based", alias = "time-based", help_heading = "Workload")
    )]
    #[cfg(feature = "clap")]
    pub(crate) time_based: bool,

    /// Time run before measuring starts, not counted (default 0s; iometer
    /// 2s). fio's --ramp_time too.
    #[cfg_attr(feature = "clap", arg(long = Setting::Ramp.long(), alias = "ramp_time", value_name = "TIME", help_heading = "Workload"))]
    pub(crate) ramp: Option<Nanos>,

    /// End the job once steady by fio's criterion: iops, bw or lat, with
    /// _slope for the least-squares slope, and a limit, e.g. iops:10%
    /// (every second within 10% of the window's mean) or bw_slope:1%.
    /// Judged once a second over the last --ss-dur (docs/fio.md). fio's
    /// --ss and --steadystate too.
    #[cfg_attr(feature = "clap", arg(long = flags::long(flags::STEADY_STATE), aliases = ["ss", "steadystate"], value_name = "CRITERION", help_heading = "Workload"))]
    pub(crate) steady_state: Option<iomark_model::steady::Criterion>,

    /// The window a steady state is judged over, e.g. 30s; given alone it
    /// judges fio's default, iops_slope:0.01%. fio's --ss_dur too.
    #[cfg_attr(feature = "clap", arg(long = flags::long(flags::SS_DUR), aliases = ["ss_dur", "steadystate_duration"], value_name = "TIME", help_heading = "Workload"))]
    pub(crate) ss_dur: Option<Nanos>,

    /// Time after the measured start before the steady-state window takes
    /// samples (default 0s). fio's --ss_ramp too.
    #[cfg_attr(feature = "clap", arg(long = flags::long(flags::SS_RAMP), aliases = ["ss_ramp", "steadystate_ramp_time"], value_name = "TIME", help_heading = "Workload"))]
    pub(crate) ss_ramp: Option<Nanos>,

    /// Percentage of reads in readwrite and randrw (default 70). fio's
    /// --rwmixread too.
    #[cfg_attr(feature = "clap", arg(long = flags::long(flags::RWMIX_READ), alias = "rwmixread", value_name = "PCT", help_heading = "Workload"))]
    pub(crate) rwmix_read: Option<u8>,

    /// Stamp every block written with a header (offset, run seed,
    /// sequence, crc32c, as fio's verify=crc32c) and, after the run, read
    /// back and check every block written (docs/verify.md). Write
    /// workloads only; the check's reads are not in the figures. A failed
    /// check exits with 3. fio's --verify=crc32c and --verify=1 too
    /// (--verify=0 is off).
    #[cfg_attr(feature = "clap", arg(
        long = flags::long(flags::VERIFY),
        value_name = "crc32c",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "crc32c",
        value_parser = parse_verify,
        help_heading = "Workload"
    ))]
    pub(crate) verify: Option<bool>,

    /// With --verify: report the check's read rate as its own figure
    /// (test `verify`, read bw).
    #[cfg_attr(
        feature = "clap",
        arg(long, requires = "verify", help_heading = "Workload")
    )]
    pub(crate) verify_timed: bool,

    /// Data written: random, zeros, repeat (the same 4 KiB in every block,
    /// as a deduplicating device sees copies of one file), or compressible:N
    /// (N% of each block compresses away, N from 0 to 100).
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "PATTERN",
            default_value = "random",
            value_parser = iomark_model::values::DATA,
            help_heading = "Workload"
        )
    )]
    pub(crate) data: DataPattern,

    /// Seed for offsets and data; the same seed repeats the same run.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "N", default_value_t = 1, help_heading = "Workload")
    )]
    pub seed: u64,

    /// I/O engine: psync, io_uring, mmap-sync, mmap-async, null (default
    /// io_uring); fio's --ioengine with sync (psync), mmap (mmap-sync) and
    /// libaio (runs as io_uring). With a CrystalDiskMark profile, iometer
    /// or macbench: the engine of every test.
    #[cfg_attr(feature = "clap", arg(long = Setting::Engine.long(), alias = "ioengine", value_name = "ENGINE", value_parser = ENGINES, help_heading = "Engine"))]
    pub engine: Option<EngineChoice>,

    /// Bypass the page cache (O_DIRECT); an error where the file system
    /// cannot. The default is direct where supported. fio's --direct=1 and
    /// --direct=0 (the page cache) too.
    #[cfg_attr(feature = "clap", arg(
        long,
        value_name = "0|1",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1",
        value_parser = parse_direct,
        conflicts_with = "buffered",
        help_heading = "Engine"
    ))]
    pub(crate) direct: Option<bool>,

    /// Go through the page cache.
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Engine"))]
    pub(crate) buffered: bool,
}

/// fio's `--direct=0|1` (also true/false).
#[cfg(feature = "clap")]
fn parse_direct(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err("--direct takes 1 (bypass the page cache) or 0 (use it), e.g. --direct=1".into()),
    }
}

/// fio's `verify=` values iomark checks with: crc32c (its default), 1 or
/// 0.
#[cfg(feature = "clap")]
fn parse_verify(s: &str) -> Result<bool, String> {
    crate::verify::writes::fio_verify_on(s).ok_or_else(|| {
        format!("iomark checks with crc32c (fio's verify=crc32c), not {s}: use --verify")
    })
}

/// A checked custom job: its spec (the size is the target's, filled in
/// once it is open) and how its target is to be opened.
#[derive(Debug, Clone)]
pub(crate) struct CustomJob {
    /// The job.
    pub(crate) spec: DiskJobSpec,
    /// Page cache or not.
    pub(crate) direct: DirectMode,
    /// The size asked for, if any.
    pub(crate) size: Option<Bytes>,
    /// The depths to run the job at, one job each, when several were given.
    pub(crate) depth_sweep: Vec<u32>,
    /// Whether the writes are checked after the run.
    pub(crate) verify: Option<VerifyWrites>,
}

/// An engine named the way fio names it, and the note for a stand-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineChoice {
    /// The engine that runs.
    pub kind: EngineKind,
    /// Said once before the run when `kind` stands in for fio's engine.
    pub note: Option<&'static str>,
}

/// `--engine`: iomark's engines, then fio's names for them.
#[cfg(feature = "clap")]
const ENGINES: iomark_model::values::Named<EngineChoice> = iomark_model::values::Named::new(
    || {
        let mut names = EngineKind::ALL.map(EngineKind::as_str).to_vec();
        names.extend(["sync", "pvsync", "mmap", "libaio"]);
        names
    },
    str::parse,
);

/// What `libaio` runs as, and why it may.
pub(crate) const LIBAIO_NOTE: &str =
    "ioengine libaio runs as io_uring: both keep iodepth I/Os in flight \
     from one thread, and iomark has no libaio engine";

impl From<EngineKind> for EngineChoice {
    /// iomark's own name for it: nothing to note.
    fn from(kind: EngineKind) -> Self {
        EngineChoice { kind, note: None }
    }
}

impl std::str::FromStr for EngineChoice {
    type Err = String;

    /// iomark's engine names and fio's: `sync` and `pvsync` are psync
    /// (one I/O at a time), `mmap` is mmap-sync, `libaio` io_uring.
    fn from_str(s: &str) -> Result<Self, String> {
        let plain = |kind| EngineChoice { kind, note: None };
        match s {
            "sync" | "pvsync" => Ok(plain(EngineKind::Psync)),
            "mmap" => Ok(plain(EngineKind::MmapSync)),
            "libaio" => Ok(EngineChoice {
                kind: EngineKind::IoUring,
                note: Some(LIBAIO_NOTE),
            }),
            _ => s.parse::<EngineKind>().map(plain).map_err(|_| {
                format!(
                    "unknown engine '{s}': use psync, io_uring, mmap-sync, mmap-async, null \
                     (or fio's sync, libaio, mmap)"
                )
            }),
        }
    }
}

/// `--iodepth`: one depth, or several as a list `1,2,4,8` or a range
/// `1..32` (powers of two) for a depth sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IodepthList(pub(crate) Vec<u32>);

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
    fn split(&self) -> (Option<u32>, Vec<u32>) {
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
            (flags::RW, self.rw.is_some()),
            (flags::BS, self.bs.is_some()),
            (flags::IODEPTH, self.iodepth.is_some()),
            (flags::IODEPTH_BATCH, self.iodepth_batch.is_some()),
            (flags::NUMJOBS, self.numjobs.is_some()),
            (Setting::Runtime.flag(), self.runtime.is_some()),
            (Setting::Ramp.flag(), self.ramp.is_some()),
            (Setting::Engine.flag(), self.engine.is_some()),
            (flags::RWMIX_READ, self.rwmix_read.is_some()),
            (flags::VERIFY, self.verify_writes().is_some()),
            (flags::STEADY_STATE, self.steady_state.is_some()),
            (flags::SS_DUR, self.ss_dur.is_some()),
            (flags::SS_RAMP, self.ss_ramp.is_some()),
        ];
        given.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect()
    }

    /// The steady-state settings a job runs with: none without a window
    /// (fio's `ss_dur`, 0 being off), fio's default criterion without one.
    fn steady_state_spec(&self) -> Result<Option<SteadyStateSpec>, DiskError> {
        let Some(window) = self.ss_dur.filter(|w| w.get() > 0) else {
            if self.steady_state.is_some() || self.ss_ramp.is_some() {
                return Err(DiskError::Invalid(
                    "--steady-state and --ss-ramp (fio's ss, ss_ramp) need --ss-dur, the window \
                     steady state is judged over (fio's ss_dur): add e.g. --ss-dur 30s"
                        .into(),
                ));
            }
            return Ok(None);
        };
        if window.as_duration() < Duration::from_secs(2) {
            return Err(DiskError::Invalid(format!(
                "--ss-dur {window} holds fewer than two one-second samples: give at least 2s"
            )));
        }
        Ok(Some(SteadyStateSpec {
            criterion: self.steady_state.unwrap_or(Criterion::FIO_DEFAULT),
            window,
            ramp: self.ss_ramp.unwrap_or(Nanos(0)),
        }))
    }

    /// The engine asked for, if any.
    pub(crate) fn engine_kind(&self) -> Option<EngineKind> {
        self.engine.map(|e| e.kind)
    }

    /// `Some(true)` for --direct, `Some(false)` for --buffered or
    /// --direct=0, `None` for neither.
    pub fn direct_choice(&self) -> Option<bool> {
        self.direct.or(self.buffered.then_some(false))
    }

    /// `--verify` (and how), when on.
    pub(crate) fn verify_writes(&self) -> Option<VerifyWrites> {
        (self.verify == Some(true)).then_some(VerifyWrites {
            timed: self.verify_timed,
        })
    }

    /// The job's `iodepth` (the deepest, which sizes its buffers) and the
    /// sweep's depths (empty for one depth).
    fn depths(&self) -> (Option<u32>, Vec<u32>) {
        self.iodepth
            .as_ref()
            .map(IodepthList::split)
            .unwrap_or_default()
    }

    /// Fill in the defaults and check everything that can be checked
    /// before a target is opened ([`crate::validate_spec`] included).
    pub(crate) fn build(&self) -> Result<CustomJob, DiskError> {
        let invalid = |m: String| Err(DiskError::Invalid(m));
        let (deepest, depth_sweep) = self.depths();
        let iodepth = deepest.unwrap_or(DEFAULT_IODEPTH);
        let engine = self.engine_kind().unwrap_or(DEFAULT_ENGINE);
        let direct_choice = self.direct_choice();
        let verify = self.verify_writes();
        if self.size == Some(Bytes(0)) {
            return invalid("--size must be larger than 0: try --size 1GiB".into());
        }
        if engine == EngineKind::IoUring {
            crate::engine::io_uring_available()
                .map_err(|e| DiskError::Invalid(format!("{e}: use --engine psync")))?;
        }
        let mapped = engine.is_mapped();
        if mapped && direct_choice == Some(true) {
            return invalid(format!(
                "--engine {engine} copies through a file mapping, which always uses the \
                 page cache: drop --direct, or use --engine psync or io_uring"
            ));
        }
        let direct = if mapped {
            DirectMode::Buffered
        } else {
            DirectMode::from_choice(direct_choice)
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
            steady_state: self.steady_state_spec()?,
        };
        crate::validate_spec(&spec)?;
        // Every depth of a sweep, before anything is created.
        for &depth in &depth_sweep {
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
        if let Some(v) = &verify {
            v.check_spec(&spec)?;
        }
        Ok(CustomJob {
            spec,
            direct,
            size: self.size,
            depth_sweep,
            verify,
        })
    }
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
