//! The arguments of `iomark disk` (and of `iomark fio`, which flattens
//! them), and how a finished run is printed as they ask. A leaf of the
//! command layer: the disk run, the job-file run, the MPI run and verify
//! all read these, and this module reads none of them.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use iomark_disk::fio_job::EngineChoice;
use iomark_disk::job::{IodepthList, JobSettings};
use iomark_disk::plan::DiskSettings;
use iomark_disk::profiles::settings::{Depths, EngineList, SizeList};
use iomark_disk::profiles::{ProfileName, ProfileSettings};
use iomark_disk::verify::writes::VerifyWrites;
use iomark_model::artefact::RatedSpeed;
use iomark_model::disk::{DataPattern, RwMode};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::RunDocument;
use iomark_text::Output;

/// The raw arguments of `iomark disk`.
#[derive(Debug, Args)]
pub struct DiskArgs {
    /// A directory (a test file is created there and removed afterwards),
    /// an existing file, or a block device (default: the current
    /// directory; with --job, the file's filename= or directory=).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,

    /// The same as PATH, as fio spells it.
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "path",
        help_heading = "Target"
    )]
    pub filename: Option<PathBuf>,

    /// Run a fio job file (the common subset, docs/fio.md): its jobs one
    /// after another, stored as one run. PATH or --filename, if given,
    /// replaces the file's filename= and directory=.
    #[arg(long, value_name = "FILE", help_heading = "Workload")]
    pub job: Option<PathBuf>,

    /// Access pattern: read, write, randread, randwrite, readwrite, randrw
    /// (default randread). Any workload flag makes a custom workload
    /// instead of the cdm profile.
    #[arg(long, value_name = "MODE", help_heading = "Workload")]
    pub rw: Option<RwMode>,

    /// Bytes per I/O, e.g. 4k, 128k, 1M (k/M/G are 1024-based; default 4k).
    #[arg(long, value_name = "SIZE", help_heading = "Workload")]
    pub bs: Option<Bytes>,

    /// I/Os each thread keeps in flight (needs an asynchronous engine;
    /// default 32). Several depths, a list 1,2,4,8 or a range 1..32, run
    /// the job once at each and report where throughput stops rising.
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub iodepth: Option<IodepthList>,

    /// I/Os queued before they are handed to the kernel in one system call
    /// (fio's iodepth_batch_submit). Default: chosen from the completions,
    /// each I/O at once while they complete later (a device, kept evenly
    /// fed), a whole refill at once while they complete within the call
    /// (page cache, zram). A value forces that batch.
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub iodepth_batch: Option<u32>,

    /// Threads, each with its own queue; results are merged (default 1).
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub numjobs: Option<u32>,

    /// Size of the test file, or of the region of an existing file or
    /// device (default: 1GiB test file, the whole file or device).
    #[arg(long, value_name = "SIZE", help_heading = "Workload")]
    pub size: Option<Bytes>,

    /// Measured time, e.g. 10s, 1m (default 10s). 0 means one pass over
    /// --size per thread. With iometer, macbench and sweep: time per point.
    #[arg(long, value_name = "TIME", help_heading = "Workload")]
    pub runtime: Option<Nanos>,

    /// Accepted for fio's sake: --runtime is always time-based (the job
    /// goes over --size again until the time is up).
    #[arg(long = "time_based", alias = "time-based", help_heading = "Workload")]
    pub time_based: bool,

    /// Time run before measuring starts, not counted (default 0s; iometer
    /// 2s). fio's --ramp_time too.
    #[arg(
        long,
        alias = "ramp_time",
        value_name = "TIME",
        help_heading = "Workload"
    )]
    pub ramp: Option<Nanos>,

    /// Percentage of reads in readwrite and randrw (default 70). fio's
    /// --rwmixread too.
    #[arg(
        long,
        alias = "rwmixread",
        value_name = "PCT",
        help_heading = "Workload"
    )]
    pub rwmix_read: Option<u8>,

    /// Stamp every block written with a header (offset, run seed,
    /// sequence, crc32c, as fio's verify=crc32c) and, after the run, read
    /// back and check every block written (docs/verify.md). Write
    /// workloads only; the check's reads are not in the figures. A failed
    /// check exits with 3. fio's --verify=crc32c and --verify=1 too
    /// (--verify=0 is off).
    #[arg(
        long,
        value_name = "crc32c",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "crc32c",
        value_parser = parse_verify,
        help_heading = "Workload"
    )]
    pub verify: Option<bool>,

    /// With --verify: report the check's read rate as its own figure
    /// (test `verify`, read bw).
    #[arg(long, requires = "verify", help_heading = "Workload")]
    pub verify_timed: bool,

    /// Data written: random, zeros, or compressible:N (N% compressible).
    #[arg(
        long,
        value_name = "PATTERN",
        default_value = "random",
        help_heading = "Workload"
    )]
    pub data: DataPattern,

    /// Seed for offsets and data; the same seed repeats the same run.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Workload")]
    pub seed: u64,

    /// Run the custom job N times and store it as one run: the median run's
    /// figures with the spread of all N, which `results compare
    /// --fail-if-worse` judges against (as hyperfine runs a command).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = "Workload")]
    pub repeat: Option<u32>,

    /// I/O engine: psync, io_uring, mmap-sync, mmap-async, null (default
    /// io_uring); fio's --ioengine with sync (psync), mmap (mmap-sync) and
    /// libaio (runs as io_uring). With a CrystalDiskMark profile, iometer
    /// or macbench: the engine of every test.
    #[arg(
        long,
        alias = "ioengine",
        value_name = "ENGINE",
        help_heading = "Engine"
    )]
    pub engine: Option<EngineChoice>,

    /// Bypass the page cache (O_DIRECT); an error where the file system
    /// cannot. The default is direct where supported. fio's --direct=1 and
    /// --direct=0 (the page cache) too.
    #[arg(
        long,
        value_name = "0|1",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1",
        value_parser = parse_direct,
        conflicts_with = "buffered",
        help_heading = "Engine"
    )]
    pub direct: Option<bool>,

    /// Go through the page cache.
    #[arg(long, help_heading = "Engine")]
    pub buffered: bool,

    /// Keep the target's pages in the page cache before the job, and
    /// between a profile's jobs (fio's --invalidate=0); with --buffered this
    /// measures the cache on purpose.
    #[arg(long, help_heading = "Engine")]
    pub keep_cache: bool,

    /// Run in a memory cgroup of this size, e.g. 512MiB (root): the page
    /// cache and file mappings of the run are held to it, as on a machine
    /// with that much memory (the out-of-memory case of the sweep).
    #[arg(long, value_name = "SIZE", help_heading = "Engine")]
    pub mem_limit: Option<Bytes>,

    /// The speed the device is rated at, per pattern in MB/s or IOPS, e.g.
    /// read=550MB/s,write=520MB/s,randread=90kIOPS,randwrite=80kIOPS (MB/s
    /// is 10^6 bytes/s). Remembered per device in the results store, so
    /// later runs there are checked too: a figure more than 5% above its
    /// rating is flagged.
    #[arg(long, value_name = "RATES", help_heading = "Target")]
    pub rated: Option<RatedSpeed>,

    /// Allow writes to this existing file or block device (repeatable).
    /// A device must not be mounted or held; it is opened exclusively.
    #[arg(long, value_name = "PATH", help_heading = "Target")]
    pub allow_write: Vec<PathBuf>,

    /// Print one JSON document (the result schema in docs/) instead of text.
    #[arg(long, help_heading = "Output")]
    pub json: bool,

    /// No progress line (it is shown only when stderr is a terminal).
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,

    /// normal (text), json or json+: fio's JSON layout, in fio's units, for
    /// what reads fio's output (json+ adds the latency histogram bins).
    #[arg(
        long,
        value_name = "FORMAT",
        conflicts_with = "json",
        help_heading = "Output"
    )]
    pub output_format: Option<OutputFormat>,

    /// The profile options, boxed to keep the command enum small.
    #[command(flatten)]
    pub prof: Box<ProfileArgs>,

    #[command(flatten)]
    pub store: crate::record::StoreArgs,

    #[command(flatten)]
    pub cluster: crate::cluster_args::ClusterArgs,
}

/// The options of the classic profiles (see docs/profiles.md).
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Show the spread over passes, the series behind the averages and
    /// what the device saw per test (its requests, merges, utilisation).
    #[arg(long, short = 'v', help_heading = "Output")]
    pub verbose: bool,

    /// A classic test: cdm (the default without workload flags), cdm-nvme,
    /// cdm-peak, cdm-real, cdm3, iometer, gnome, macbench, sweep,
    /// artefacts, sustained; verify checks the data (docs/verify.md).
    #[arg(long, value_name = "NAME", help_heading = "Profile")]
    pub profile: Option<ProfileName>,

    /// Shorter passes, intervals and sample counts for a first look; the
    /// result says it was shortened.
    #[arg(long, help_heading = "Profile")]
    pub quick: bool,

    /// CrystalDiskMark: measured passes per test (default 5).
    #[arg(long, value_name = "N", help_heading = "Profile")]
    pub passes: Option<u32>,

    /// CrystalDiskMark: length of each pass (default 5s; cdm3 6s).
    #[arg(long, value_name = "TIME", help_heading = "Profile")]
    pub pass_time: Option<Nanos>,

    /// CrystalDiskMark: pause between tests (default 5s).
    #[arg(long, value_name = "TIME", help_heading = "Profile")]
    pub interval: Option<Nanos>,

    /// CrystalDiskMark: add the mix test with this read percentage (70
    /// when given without a value).
    #[arg(long, value_name = "PCT", num_args = 0..=1, default_missing_value = "70", value_parser = parse_mix, help_heading = "Profile")]
    pub mix: Option<u8>,

    /// iometer: queue depths, a list (1,2,4,8, the default) or a range
    /// (1..32, powers of two).
    #[arg(long, value_name = "LIST", help_heading = "Profile")]
    pub qd: Option<Depths>,

    /// gnome: transfer-rate samples (default 100).
    #[arg(long, value_name = "N", help_heading = "Profile")]
    pub samples: Option<u32>,

    /// gnome: bytes per transfer-rate sample (default 10MiB).
    #[arg(long, value_name = "SIZE", help_heading = "Profile")]
    pub sample_size: Option<Bytes>,

    /// gnome: access-time samples (default 1000).
    #[arg(long, value_name = "N", help_heading = "Profile")]
    pub access_samples: Option<u32>,

    /// gnome: write each sample back (the data just read, fsynced); only
    /// on a test file or a target named with --allow-write.
    #[arg(long, help_heading = "Profile")]
    pub write: bool,

    /// sweep: engines to compare (default psync), e.g. psync,mmap-sync,mmap-async.
    #[arg(long, value_name = "LIST", help_heading = "Profile")]
    pub engines: Option<EngineList>,

    /// Skip the short artefacts probe (does this device compress?) that
    /// runs before the default profile when the store has no verdict for
    /// the device yet.
    #[arg(long, help_heading = "Profile")]
    pub no_probe: bool,

    /// verify: write, read or both (default): --phase write fills the
    /// target and leaves it; --phase read later checks what it left, e.g.
    /// after the device was unplugged and plugged back in.
    #[arg(long, value_name = "PHASE", help_heading = "Profile")]
    pub phase: Option<iomark_model::verify::VerifyPhase>,

    /// verify: keep the file a --phase write left in a directory after
    /// --phase read has checked it (it is removed otherwise).
    #[arg(long, help_heading = "Profile")]
    pub keep_verify_file: bool,

    /// sweep: random block sizes, run in the order given (default every
    /// power of two from 4k to 4M), e.g. 4k,64k,1M.
    #[arg(long, value_name = "LIST", help_heading = "Profile")]
    pub sizes: Option<SizeList>,

    /// sustained: stop once the rate has fallen and then held steady this
    /// long (default 20s; write --until-steady=30s with a value), instead
    /// of writing the whole region.
    #[arg(long, value_name = "TIME", num_args = 0..=1, require_equals = true, default_missing_value = "20s", help_heading = "Profile")]
    pub until_steady: Option<Nanos>,

    /// sustained: after the first pass idle this long (e.g. 60s), then write
    /// again and report how much of the fast cache came back.
    #[arg(long, value_name = "TIME", help_heading = "Profile")]
    pub recover: Option<Nanos>,
}

/// `--mix` takes an optional value, so it also swallows a path that follows
/// it; say how to write it.
fn parse_mix(s: &str) -> Result<u8, String> {
    match s.parse::<u8>() {
        Ok(p) if p <= 100 => Ok(p),
        _ => Err(
            "--mix takes a read percentage from 0 to 100; to use the default 70 \
                  before a path, write --mix=70 or put --mix after the path"
                .into(),
        ),
    }
}

/// fio's `verify=` values iomark checks with: crc32c (its default), 1 or
/// 0.
fn parse_verify(s: &str) -> Result<bool, String> {
    iomark_disk::verify::writes::fio_verify_on(s).ok_or_else(|| {
        format!("iomark checks with crc32c (fio's verify=crc32c), not {s}: use --verify")
    })
}

impl DiskArgs {
    /// `Some(true)` for --direct, `Some(false)` for --buffered or
    /// --direct=0.
    fn direct(&self) -> Option<bool> {
        self.direct.or(self.buffered.then_some(false))
    }

    /// PATH or --filename, when given.
    pub(crate) fn path_given(&self) -> Option<&std::path::Path> {
        self.path.as_deref().or(self.filename.as_deref())
    }

    /// What the user said, for the library to check.
    pub(crate) fn settings(&self) -> DiskSettings {
        let p = &self.prof;
        DiskSettings {
            path: self
                .path_given()
                .map_or_else(|| PathBuf::from("."), PathBuf::from),
            job: JobSettings {
                rw: self.rw,
                bs: self.bs,
                iodepth: self.iodepth.as_ref().and_then(|d| d.split().0),
                depth_sweep: self
                    .iodepth
                    .as_ref()
                    .map(|d| d.split().1)
                    .unwrap_or_default(),
                iodepth_batch: self.iodepth_batch,
                numjobs: self.numjobs,
                size: self.size,
                runtime: self.runtime,
                ramp: self.ramp,
                engine: self.engine.map(|e| e.kind),
                rwmix_read: self.rwmix_read,
                data: self.data,
                seed: self.seed,
                direct: self.direct(),
                verify: (self.verify == Some(true)).then_some(VerifyWrites {
                    timed: self.verify_timed,
                }),
            },
            profile: p.profile,
            profile_settings: ProfileSettings {
                quick: p.quick,
                passes: p.passes,
                pass_time: p.pass_time,
                interval: p.interval,
                mix: p.mix,
                qd: p.qd.clone(),
                engines: p.engines.clone(),
                sizes: p.sizes.clone(),
                samples: p.samples,
                sample_size: p.sample_size,
                access_samples: p.access_samples,
                write: p.write,
                until_steady: p.until_steady,
                recover: p.recover,
                phase: p.phase,
                keep_cache: self.keep_cache,
                // --runtime, --ramp, --engine, --data, --seed: the job's.
                ..ProfileSettings::default()
            },
            allow_write: self.allow_write.clone(),
            repeat: self.repeat.unwrap_or(1),
        }
    }
}

/// What `--output-format` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// iomark's text.
    Normal,
    /// fio's JSON layout.
    Json,
    /// fio's JSON layout with each latency histogram's bins.
    #[value(name = "json+")]
    JsonPlus,
}

impl DiskArgs {
    /// What `--output-format` and `--json` ask to print: fio's layout
    /// first, then the document, else iomark's text.
    pub fn output(&self, verbose: bool) -> Output {
        match self.output_format {
            Some(OutputFormat::Json) => Output::FioJson { plus: false },
            Some(OutputFormat::JsonPlus) => Output::FioJson { plus: true },
            Some(OutputFormat::Normal) | None if self.json => Output::Document,
            Some(OutputFormat::Normal) | None => Output::Text { verbose },
        }
    }
}

/// fio's `--direct=0|1` (also true/false).
pub fn parse_direct(s: &str) -> Result<bool, String> {
    match s {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err("--direct takes 1 (bypass the page cache) or 0 (use it), e.g. --direct=1".into()),
    }
}

/// Print a finished run as asked: text, iomark's document or fio's layout.
pub fn print_run(args: &DiskArgs, doc: &RunDocument, verbose: bool) -> anyhow::Result<()> {
    crate::exit::print(&args.output(verbose).render(doc)?)?;
    Ok(())
}

#[cfg(test)]
#[path = "disk_args_tests.rs"]
mod tests;
