//! `iomark disk`: a classic profile (CrystalDiskMark 8 by default, see
//! docs/profiles.md) or a storage job with fio's vocabulary, on a test file,
//! an existing file or a block device.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::Args;
use iomark_disk::profiles::cdm::{self, CdmDef, CdmOptions};
use iomark_disk::profiles::gnome::{self, GnomeOptions};
use iomark_disk::profiles::iometer::{self, IometerOptions};
use iomark_disk::profiles::macbench::{self, MacbenchOptions};
use iomark_disk::profiles::sweep::{self, SweepOptions};
use iomark_disk::profiles::{ProfileName, ProfileObserver};
use iomark_disk::target::{DirectMode, OpenTarget, TargetRequest};
use iomark_disk::{runner, DiskError};
use iomark_mem::cgroup::SelfLimit;
use iomark_model::disk::{DataPattern, DiskJobResult, DiskJobSpec, DiskRun, EngineKind, RwMode};
use iomark_model::profile::ProfileResult;
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{RunBody, RunDocument, RunStatus, Warning, SCHEMA_VERSION};

use crate::exit::Exit;
use crate::{profile_text, progress, signals, text};

/// The raw arguments of `iomark disk`.
#[derive(Debug, Args)]
pub struct DiskArgs {
    /// A directory (a test file is created there and removed afterwards),
    /// an existing file, or a block device.
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: PathBuf,

    /// Access pattern: read, write, randread, randwrite, readwrite, randrw
    /// (default randread). Any workload flag makes a custom workload
    /// instead of the cdm profile.
    #[arg(long, value_name = "MODE", help_heading = "Workload")]
    pub rw: Option<String>,

    /// Bytes per I/O, e.g. 4k, 128k, 1M (k/M/G are 1024-based; default 4k).
    #[arg(long, value_name = "SIZE", help_heading = "Workload")]
    pub bs: Option<String>,

    /// I/Os each thread keeps in flight (needs an asynchronous engine;
    /// default 32).
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub iodepth: Option<u32>,

    /// I/Os queued before they are handed to the kernel in one system call
    /// (fio's iodepth_batch_submit; default 1: each I/O at once, which keeps
    /// a device evenly fed; larger saves calls on page-cache runs).
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub iodepth_batch: Option<u32>,

    /// Threads, each with its own queue; results are merged (default 1).
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub numjobs: Option<u32>,

    /// Size of the test file, or of the region of an existing file or
    /// device (default: 1GiB test file, the whole file or device).
    #[arg(long, value_name = "SIZE", help_heading = "Workload")]
    pub size: Option<String>,

    /// Measured time, e.g. 10s, 1m (default 10s). 0 means one pass over
    /// --size per thread. With iometer, macbench and sweep: time per point.
    #[arg(long, value_name = "TIME", help_heading = "Workload")]
    pub runtime: Option<String>,

    /// Time run before measuring starts, not counted (default 0s; iometer 2s).
    #[arg(long, value_name = "TIME", help_heading = "Workload")]
    pub ramp: Option<String>,

    /// Percentage of reads in readwrite and randrw (default 70).
    #[arg(long, value_name = "PCT", help_heading = "Workload")]
    pub rwmix_read: Option<u8>,

    /// Data written: random, zeros, or compressible:N (N% compressible).
    #[arg(
        long,
        value_name = "PATTERN",
        default_value = "random",
        help_heading = "Workload"
    )]
    pub data: String,

    /// Seed for offsets and data; the same seed repeats the same run.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Workload")]
    pub seed: u64,

    /// I/O engine: psync, io_uring, mmap-sync, mmap-async, null (default
    /// io_uring). With a CrystalDiskMark profile, iometer or macbench: the
    /// engine of every test.
    #[arg(long, value_name = "ENGINE", help_heading = "Engine")]
    pub engine: Option<String>,

    /// Bypass the page cache (O_DIRECT); an error where the file system
    /// cannot. The default is direct where supported.
    #[arg(long, conflicts_with = "buffered", help_heading = "Engine")]
    pub direct: bool,

    /// Go through the page cache.
    #[arg(long, help_heading = "Engine")]
    pub buffered: bool,

    /// Keep the target's pages in the page cache before the job (fio's
    /// --invalidate=0); with --buffered this measures the cache on purpose.
    #[arg(long, help_heading = "Engine")]
    pub keep_cache: bool,

    /// Run in a memory cgroup of this size, e.g. 512MiB (root): the page
    /// cache and file mappings of the run are held to it, as on a machine
    /// with that much memory (the out-of-memory case of the sweep).
    #[arg(long, value_name = "SIZE", help_heading = "Engine")]
    pub mem_limit: Option<Bytes>,

    /// Allow writes to this existing file or block device (repeatable).
    /// A device must not be mounted or held; it is opened exclusively.
    #[arg(long, value_name = "PATH", help_heading = "Target")]
    pub allow_write: Vec<PathBuf>,

    /// Print one JSON document (the result schema in docs/) instead of text.
    #[arg(long, help_heading = "Output")]
    pub json: bool,

    /// The profile options, boxed to keep the command enum small.
    #[command(flatten)]
    pub prof: Box<ProfileArgs>,

    #[command(flatten)]
    pub store: crate::record::StoreArgs,
}

/// The options of the classic profiles (see docs/profiles.md).
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Show the spread over passes and the series behind the averages.
    #[arg(long, short = 'v', help_heading = "Output")]
    pub verbose: bool,

    /// A classic test: cdm (the default without workload flags), cdm-nvme,
    /// cdm-peak, cdm-real, cdm3, iometer, gnome, macbench, sweep.
    #[arg(long, value_name = "NAME", help_heading = "Profile")]
    pub profile: Option<String>,

    /// Shorter passes, intervals and sample counts for a first look; the
    /// result says it was shortened.
    #[arg(long, help_heading = "Profile")]
    pub quick: bool,

    /// CrystalDiskMark: measured passes per test (default 5).
    #[arg(long, value_name = "N", help_heading = "Profile")]
    pub passes: Option<u32>,

    /// CrystalDiskMark: length of each pass (default 5s; cdm3 6s).
    #[arg(long, value_name = "TIME", help_heading = "Profile")]
    pub pass_time: Option<String>,

    /// CrystalDiskMark: pause between tests (default 5s).
    #[arg(long, value_name = "TIME", help_heading = "Profile")]
    pub interval: Option<String>,

    /// CrystalDiskMark: add the mix test with this read percentage (70
    /// when given without a value).
    #[arg(long, value_name = "PCT", num_args = 0..=1, default_missing_value = "70", value_parser = parse_mix, help_heading = "Profile")]
    pub mix: Option<u8>,

    /// iometer: queue depths, a list (1,2,4,8, the default) or a range
    /// (1..32, powers of two).
    #[arg(long, value_name = "LIST", help_heading = "Profile")]
    pub qd: Option<String>,

    /// gnome: transfer-rate samples (default 100).
    #[arg(long, value_name = "N", help_heading = "Profile")]
    pub samples: Option<u32>,

    /// gnome: bytes per transfer-rate sample (default 10MiB).
    #[arg(long, value_name = "SIZE", help_heading = "Profile")]
    pub sample_size: Option<String>,

    /// gnome: access-time samples (default 1000).
    #[arg(long, value_name = "N", help_heading = "Profile")]
    pub access_samples: Option<u32>,

    /// gnome: write each sample back (the data just read, fsynced); only
    /// on a test file or a target named with --allow-write.
    #[arg(long, help_heading = "Profile")]
    pub write: bool,

    /// sweep: engines to compare (default psync), e.g. psync,mmap-sync,mmap-async.
    #[arg(long, value_name = "LIST", help_heading = "Profile")]
    pub engines: Option<String>,
}

/// A validated disk job and where it runs.
#[derive(Debug)]
struct DiskOptions {
    spec: DiskJobSpec,
    request: TargetRequest,
    keep_cache: bool,
    json: bool,
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

fn invalid(msg: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{msg}")
}

impl TryFrom<DiskArgs> for DiskOptions {
    type Error = anyhow::Error;

    fn try_from(a: DiskArgs) -> anyhow::Result<Self> {
        let rw: RwMode =
            a.rw.as_deref()
                .unwrap_or("randread")
                .parse()
                .map_err(invalid)?;
        let bs: Bytes =
            a.bs.as_deref()
                .unwrap_or("4k")
                .parse()
                .map_err(|e| invalid(format!("--bs: {e}")))?;
        let size = a
            .size
            .as_deref()
            .map(|s| {
                s.parse::<Bytes>()
                    .map_err(|e| invalid(format!("--size: {e}")))
            })
            .transpose()?;
        let runtime: Nanos = a
            .runtime
            .as_deref()
            .unwrap_or("10s")
            .parse()
            .map_err(|e| invalid(format!("--runtime: {e}")))?;
        let ramp: Nanos = a
            .ramp
            .as_deref()
            .unwrap_or("0s")
            .parse()
            .map_err(|e| invalid(format!("--ramp: {e}")))?;
        let engine: EngineKind = a
            .engine
            .as_deref()
            .unwrap_or("io_uring")
            .parse()
            .map_err(invalid)?;
        let (iodepth, numjobs) = (a.iodepth.unwrap_or(32), a.numjobs.unwrap_or(1));
        let rwmix_read = a.rwmix_read.unwrap_or(70);
        let data: DataPattern = a.data.parse().map_err(invalid)?;
        let iodepth_batch = a.iodepth_batch.unwrap_or(1);
        if size == Some(Bytes(0)) {
            return Err(invalid("--size must be larger than 0: try --size 1GiB"));
        }
        if engine == EngineKind::IoUring {
            iomark_disk::engine::io_uring_available()
                .map_err(|e| invalid(format!("{e}: use --engine psync")))?;
        }
        let mapped = engine.is_mapped();
        if mapped && a.direct {
            return Err(invalid(format!(
                "--engine {engine} copies through a file mapping, which always uses the \
                 page cache: drop --direct, or use --engine psync or io_uring"
            )));
        }
        let direct = if a.buffered || mapped {
            DirectMode::Buffered
        } else if a.direct {
            DirectMode::Direct
        } else {
            DirectMode::Auto
        };
        let spec = DiskJobSpec {
            name: "custom".into(),
            rw,
            bs,
            iodepth,
            iodepth_batch,
            numjobs,
            // Filled in from the target once it is open.
            size: size.unwrap_or(Bytes(0)),
            runtime: (runtime.get() > 0).then_some(runtime),
            ramp,
            engine,
            direct: direct != DirectMode::Buffered,
            data,
            rwmix_read,
            seed: a.seed,
        };
        // Everything about the job is checked before the target is opened,
        // so a job that cannot run never creates or fills a test file.
        iomark_disk::validate_spec(&spec)?;
        if iodepth_batch == 0 || iodepth_batch > iodepth {
            return Err(invalid(format!(
                "--iodepth-batch must be 1 to --iodepth ({iodepth})"
            )));
        }
        let request = TargetRequest {
            path: a.path,
            size,
            default_size: Bytes(Bytes::GIB),
            write: rw.writes(),
            allow_write: a.allow_write,
            direct,
            data,
            seed: a.seed,
            io_sizes: vec![bs],
        };
        Ok(DiskOptions {
            spec,
            request,
            keep_cache: a.keep_cache,
            json: a.json,
        })
    }
}

/// A validated profile run.
#[derive(Debug)]
struct ProfileOptions {
    name: ProfileName,
    plan: ProfilePlan,
    request: TargetRequest,
    keep_cache: bool,
    json: bool,
    verbose: bool,
}

/// Each profile family's own options.
#[derive(Debug)]
enum ProfilePlan {
    Cdm(Box<(CdmDef, CdmOptions)>),
    Iometer(IometerOptions),
    Gnome(GnomeOptions),
    Macbench(MacbenchOptions),
    Sweep(SweepOptions),
}

fn parse_time(flag: &str, v: &Option<String>) -> anyhow::Result<Option<Nanos>> {
    v.as_deref()
        .map(|s| {
            s.parse::<Nanos>()
                .map_err(|e| invalid(format!("{flag}: {e}")))
        })
        .transpose()
}

fn parse_engine(v: &Option<String>) -> anyhow::Result<Option<EngineKind>> {
    let engine = v
        .as_deref()
        .map(|s| s.parse::<EngineKind>().map_err(invalid))
        .transpose()?;
    if engine == Some(EngineKind::IoUring) {
        iomark_disk::engine::io_uring_available()
            .map_err(|e| invalid(format!("{e}: use --engine psync")))?;
    }
    Ok(engine)
}

impl TryFrom<DiskArgs> for ProfileOptions {
    type Error = anyhow::Error;

    fn try_from(a: DiskArgs) -> anyhow::Result<Self> {
        let name: ProfileName = a
            .prof
            .profile
            .as_deref()
            .unwrap_or("cdm")
            .parse()
            .map_err(invalid)?;
        let n = name.as_str();
        // Workload flags that only make sense for a custom workload.
        for (flag, given) in [
            ("--rw", a.rw.is_some()),
            ("--bs", a.bs.is_some()),
            ("--iodepth", a.iodepth.is_some()),
            ("--iodepth-batch", a.iodepth_batch.is_some()),
            ("--numjobs", a.numjobs.is_some()),
            ("--rwmix-read", a.rwmix_read.is_some()),
        ] {
            if given {
                return Err(invalid(format!(
                    "{flag} sets a custom workload and cannot be combined with --profile {n}: drop one of them"
                )));
            }
        }
        let cdm = name.is_cdm();
        let is = |p: ProfileName| name == p;
        let allowed = [
            ("--passes", a.prof.passes.is_some(), cdm),
            ("--pass-time", a.prof.pass_time.is_some(), cdm),
            ("--interval", a.prof.interval.is_some(), cdm),
            ("--mix", a.prof.mix.is_some(), cdm),
            ("--qd", a.prof.qd.is_some(), is(ProfileName::Iometer)),
            ("--ramp", a.ramp.is_some(), is(ProfileName::Iometer)),
            (
                "--runtime",
                a.runtime.is_some(),
                matches!(
                    name,
                    ProfileName::Iometer | ProfileName::Macbench | ProfileName::Sweep
                ),
            ),
            (
                "--engine",
                a.engine.is_some(),
                cdm || matches!(name, ProfileName::Iometer | ProfileName::Macbench),
            ),
            (
                "--samples",
                a.prof.samples.is_some(),
                is(ProfileName::Gnome),
            ),
            (
                "--sample-size",
                a.prof.sample_size.is_some(),
                is(ProfileName::Gnome),
            ),
            (
                "--access-samples",
                a.prof.access_samples.is_some(),
                is(ProfileName::Gnome),
            ),
            ("--write", a.prof.write, is(ProfileName::Gnome)),
            (
                "--engines",
                a.prof.engines.is_some(),
                is(ProfileName::Sweep),
            ),
        ];
        for (flag, given, ok) in allowed {
            if given && !ok {
                return Err(invalid(format!(
                    "{flag} does not apply to the {n} profile: see `iomark disk --help` for its options"
                )));
            }
        }
        let data: DataPattern = a.data.parse().map_err(invalid)?;
        let size = a
            .size
            .as_deref()
            .map(|s| {
                s.parse::<Bytes>()
                    .map_err(|e| invalid(format!("--size: {e}")))
            })
            .transpose()?;
        if size == Some(Bytes(0)) {
            return Err(invalid("--size must be larger than 0: try --size 1GiB"));
        }
        let engine = parse_engine(&a.engine)?;
        let runtime = parse_time("--runtime", &a.runtime)?;
        if runtime == Some(Nanos(0)) {
            return Err(invalid(
                "--runtime must be longer than 0 for a profile: try --runtime 10s",
            ));
        }
        let quick = a.prof.quick;
        let mut default_size = Bytes(Bytes::GIB);
        let plan = match name {
            _ if cdm => {
                let def = cdm::definition(name).expect("a CrystalDiskMark profile");
                default_size = def.size;
                let mut o = CdmOptions::defaults(&def, quick);
                if let Some(p) = a.prof.passes {
                    if p == 0 {
                        return Err(invalid("--passes must be at least 1"));
                    }
                    o.passes = p;
                }
                if let Some(t) = parse_time("--pass-time", &a.prof.pass_time)? {
                    if t == Nanos(0) {
                        return Err(invalid(
                            "--pass-time must be longer than 0: try --pass-time 5s",
                        ));
                    }
                    // CDM 3.0's preparation pass is one pass long.
                    if !quick && def.prep_time == def.pass_time {
                        o.prep_time = t;
                    }
                    o.pass_time = t;
                }
                if let Some(t) = parse_time("--interval", &a.prof.interval)? {
                    o.interval = t;
                }
                if let Some(m) = a.prof.mix {
                    if m > 100 {
                        return Err(invalid("--mix is a read percentage: give 0 to 100"));
                    }
                }
                o.mix = a.prof.mix;
                o.engine = engine;
                o.data = data;
                o.seed = a.seed;
                ProfilePlan::Cdm(Box::new((def, o)))
            }
            ProfileName::Iometer => {
                let mut o = IometerOptions::defaults(quick);
                if let Some(q) = &a.prof.qd {
                    o.depths = iometer::parse_depths(q).map_err(invalid)?;
                }
                if let Some(r) = parse_time("--ramp", &a.ramp)? {
                    o.ramp = r;
                }
                if let Some(r) = runtime {
                    o.runtime = r;
                }
                if let Some(e) = engine {
                    o.engine = e;
                } else {
                    iomark_disk::engine::io_uring_available()
                        .map_err(|e| invalid(format!("{e}: use --engine psync")))?;
                }
                o.data = data;
                o.seed = a.seed;
                ProfilePlan::Iometer(o)
            }
            ProfileName::Gnome => {
                let mut o = GnomeOptions::defaults(quick);
                if let Some(s) = a.prof.samples {
                    o.samples = s;
                }
                if let Some(s) = &a.prof.sample_size {
                    o.sample_size = s
                        .parse()
                        .map_err(|e| invalid(format!("--sample-size: {e}")))?;
                }
                if let Some(s) = a.prof.access_samples {
                    o.access_samples = s;
                }
                if o.sample_size.get() == 0 || !o.sample_size.get().is_multiple_of(4096) {
                    return Err(invalid(
                        "--sample-size must be a whole number of 4 KiB pages: try --sample-size 10MiB",
                    ));
                }
                if o.samples == 0 && o.access_samples == 0 {
                    return Err(invalid(
                        "--samples and --access-samples are both 0: nothing to measure",
                    ));
                }
                o.write = a.prof.write;
                ProfilePlan::Gnome(o)
            }
            ProfileName::Macbench => {
                let mut o = MacbenchOptions::defaults(quick);
                if let Some(r) = runtime {
                    o.runtime = r;
                }
                if let Some(e) = engine {
                    o.engine = e;
                }
                o.data = data;
                o.seed = a.seed;
                ProfilePlan::Macbench(o)
            }
            _ => {
                let mut o = SweepOptions::defaults(quick);
                if let Some(e) = &a.prof.engines {
                    o.engines = sweep::parse_engines(e).map_err(invalid)?;
                }
                if let Some(r) = runtime {
                    o.runtime = r;
                }
                o.data = data;
                o.seed = a.seed;
                ProfilePlan::Sweep(o)
            }
        };
        let direct = if a.buffered {
            DirectMode::Buffered
        } else if a.direct {
            DirectMode::Direct
        } else {
            DirectMode::Auto
        };
        let request = TargetRequest {
            path: a.path,
            size,
            default_size,
            write: name.writes(a.prof.write),
            allow_write: a.allow_write,
            direct,
            data,
            seed: a.seed,
            // Each profile's sizes are fixed multiples of 4 KiB, checked
            // per job against the target.
            io_sizes: Vec::new(),
        };
        Ok(ProfileOptions {
            name,
            plan,
            request,
            keep_cache: a.keep_cache,
            json: a.json,
            verbose: a.prof.verbose,
        })
    }
}

/// One progress bar per job or phase of a profile; each finished test is
/// written to the store, so a killed run keeps what it measured.
struct ProfileProgress {
    json: bool,
    bar: Option<progress::JobProgress>,
    recorder: crate::record::Recorder,
    partial: RunDocument,
}

impl runner::Observer for ProfileProgress {
    fn progress(&mut self, p: &runner::Progress) {
        if let Some(bar) = &mut self.bar {
            bar.progress(p);
        }
    }
}

impl ProfileObserver for ProfileProgress {
    fn begin(&mut self, label: &str) {
        self.end();
        self.bar = Some(progress::JobProgress::new(label, self.json));
    }

    fn end(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish();
        }
    }

    fn finished(&mut self, jobs: &[DiskJobResult]) {
        if let RunBody::Disk(run) = &mut self.partial.body {
            run.jobs = jobs.to_vec();
        }
        self.recorder.update(&self.partial);
    }
}

fn run_profile(
    opts: ProfileOptions,
    store: &crate::record::StoreArgs,
    limit: Option<&SelfLimit>,
) -> anyhow::Result<Exit> {
    let stop = signals::stop_flag()?;
    let started_at_ms = now_ms();
    let Some(target) = open_target(&opts.request, stop)? else {
        return Ok(Exit::Interrupted);
    };
    if !opts.keep_cache {
        target.invalidate_cache();
    }
    let (recorder, partial) = begin_record(store, &target, started_at_ms, opts.name.as_str());
    let mut obs = ProfileProgress {
        json: opts.json,
        bar: None,
        recorder,
        partial,
    };
    let outcome = match &opts.plan {
        ProfilePlan::Cdm(b) => cdm::run(&b.0, &b.1, &target, stop, &mut obs),
        ProfilePlan::Iometer(o) => iometer::run(o, &target, stop, &mut obs),
        ProfilePlan::Gnome(o) => gnome::run(o, &target, stop, &mut obs),
        ProfilePlan::Macbench(o) => macbench::run(o, &target, stop, &mut obs),
        ProfilePlan::Sweep(o) => sweep::run(o, &target, stop, &mut obs),
    };
    obs.end();
    let outcome =
        outcome.with_context(|| format!("profile {} on {}", opts.name, target.info.path))?;
    let interrupted = outcome.interrupted;
    let mut doc = document(
        &target,
        outcome.jobs,
        started_at_ms,
        interrupted,
        (opts.name.as_str(), Some(outcome.result), outcome.warnings),
    );
    drop(target);
    attach_cgroup(&mut doc, limit);
    store.apply(&mut doc);
    obs.recorder.finish(&doc);

    if opts.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", profile_text::profile_run(&doc, opts.verbose));
    }
    Ok(if interrupted {
        Exit::Interrupted
    } else {
        Exit::Success
    })
}

/// Milliseconds since the Unix epoch, for result documents.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Run `iomark disk`: a custom workload when a workload flag is given,
/// otherwise a profile (cdm by default).
pub fn run(args: DiskArgs) -> anyhow::Result<Exit> {
    let store = args.store.clone();
    let mem_limit = args.mem_limit;
    if args.prof.profile.is_none() && !custom_flags(&args).is_empty() {
        let opts = DiskOptions::try_from(args)?;
        let limit = enter_mem_limit(mem_limit)?;
        run_custom(opts, &store, limit.as_ref())
    } else {
        let opts = ProfileOptions::try_from(args)?;
        let limit = enter_mem_limit(mem_limit)?;
        run_profile(opts, &store, limit.as_ref())
    }
}

/// The smallest `--mem-limit`: iomark's own buffers and tables must fit.
const MIN_MEM_LIMIT: Bytes = Bytes(32 << 20);

/// Move this process into a memory cgroup of `limit` for the run.
fn enter_mem_limit(limit: Option<Bytes>) -> anyhow::Result<Option<SelfLimit>> {
    let Some(limit) = limit else { return Ok(None) };
    if limit < MIN_MEM_LIMIT {
        return Err(invalid(format!(
            "--mem-limit {limit} is too small for iomark itself: use at least {MIN_MEM_LIMIT}"
        )));
    }
    Ok(Some(SelfLimit::enter(limit)?))
}

/// Put what the memory cgroup recorded into the run document.
fn attach_cgroup(doc: &mut RunDocument, limit: Option<&SelfLimit>) {
    if let (RunBody::Disk(run), Some(limit)) = (&mut doc.body, limit) {
        run.cgroup = Some(Box::new(limit.usage()));
    }
}

/// Open the target (creating and filling a test file), saying which stale
/// files were removed; `None` when Ctrl-C came first.
fn open_target(
    request: &TargetRequest,
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<Option<OpenTarget>> {
    let target = match OpenTarget::open(request, stop) {
        Ok(t) => t,
        Err(DiskError::Interrupted) => {
            eprintln!("iomark: interrupted before measuring; the test file was removed");
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    for p in &target.removed_stale {
        eprintln!("iomark: removed {} left by a killed run", p.display());
    }
    Ok(Some(target))
}

/// Record the run in the store as soon as its target is open, so a run
/// that is killed reads back as interrupted; [`Recorder::finish`] replaces
/// it with the final document.
///
/// [`Recorder::finish`]: crate::record::Recorder::finish
fn begin_record(
    store: &crate::record::StoreArgs,
    target: &OpenTarget,
    started_at_ms: u64,
    profile: &'static str,
) -> (crate::record::Recorder, RunDocument) {
    let mut doc = document(
        target,
        Vec::new(),
        started_at_ms,
        true,
        (profile, None, Vec::new()),
    );
    let recorder = crate::record::Recorder::begin(store, &mut doc);
    (recorder, doc)
}

/// The workload flags given, by name: any of them makes a custom workload.
fn custom_flags(a: &DiskArgs) -> Vec<&'static str> {
    let given = [
        ("--rw", a.rw.is_some()),
        ("--bs", a.bs.is_some()),
        ("--iodepth", a.iodepth.is_some()),
        ("--iodepth-batch", a.iodepth_batch.is_some()),
        ("--numjobs", a.numjobs.is_some()),
        ("--runtime", a.runtime.is_some()),
        ("--ramp", a.ramp.is_some()),
        ("--engine", a.engine.is_some()),
        ("--rwmix-read", a.rwmix_read.is_some()),
    ];
    given.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect()
}

fn run_custom(
    opts: DiskOptions,
    store: &crate::record::StoreArgs,
    limit: Option<&SelfLimit>,
) -> anyhow::Result<Exit> {
    let stop = signals::stop_flag()?;
    let started_at_ms = now_ms();
    let Some(target) = open_target(&opts.request, stop)? else {
        return Ok(Exit::Interrupted);
    };
    let mut spec = opts.spec.clone();
    spec.size = target.info.size;
    spec.direct = target.direct;
    iomark_disk::validate_job(&spec, &target)?;
    if !opts.keep_cache {
        target.invalidate_cache();
    }

    let (recorder, _) = begin_record(store, &target, started_at_ms, "custom");
    let mut bar = progress::JobProgress::new(&spec.name, opts.json);
    let job = runner::run_job(&spec, &target, stop, &mut bar)
        .with_context(|| format!("{} on {}", describe(&spec), target.info.path))?;
    bar.finish();
    let interrupted = job.interrupted;
    let mut doc = document(
        &target,
        vec![job],
        started_at_ms,
        interrupted,
        ("custom", None, Vec::new()),
    );
    drop(target);
    attach_cgroup(&mut doc, limit);
    store.apply(&mut doc);
    recorder.finish(&doc);

    if opts.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", text::disk_run(&doc));
    }
    Ok(if interrupted {
        Exit::Interrupted
    } else {
        Exit::Success
    })
}

fn describe(spec: &DiskJobSpec) -> String {
    format!(
        "{} bs={} iodepth={} numjobs={} engine={}",
        spec.rw, spec.bs, spec.iodepth, spec.numjobs, spec.engine
    )
}

/// A profile's name, its result and its warnings, for [`document`].
type ProfilePart = (&'static str, Option<ProfileResult>, Vec<Warning>);

fn document(
    target: &OpenTarget,
    jobs: Vec<DiskJobResult>,
    started_at_ms: u64,
    interrupted: bool,
    (profile, profile_result, profile_warnings): ProfilePart,
) -> RunDocument {
    let chain = iomark_host::DeviceChain::for_path(&target.info.path).ok();
    let mut warnings: Vec<Warning> = target.warnings.clone();
    warnings.extend(profile_warnings);
    if let Some(chain) = &chain {
        for job in &jobs {
            let dirs = [("read", job.read.as_ref()), ("write", job.write.as_ref())];
            for (what, d) in dirs {
                let Some(d) = d else { continue };
                let what = format!("{} {what}", job.spec.name);
                warnings.extend(iomark_host::check_ceiling(chain, d.bw, &what));
            }
        }
    }
    RunDocument {
        schema_version: SCHEMA_VERSION,
        tool: "iomark".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line: std::env::args().collect(),
        started_at_ms,
        finished_at_ms: now_ms(),
        status: if interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        },
        labels: Vec::new(),
        note: None,
        warnings,
        host: Some(<iomark_model::device::HostInfo as iomark_host::HostInfoExt>::collect()),
        device: chain.map(iomark_host::DeviceChain::into_report),
        body: RunBody::Disk(DiskRun {
            profile: profile.into(),
            target: target.info.clone(),
            jobs,
            profile_result,
            cgroup: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Wrap {
        #[command(flatten)]
        disk: DiskArgs,
    }

    fn parse(args: &[&str]) -> anyhow::Result<DiskOptions> {
        let mut all = vec!["disk"];
        all.extend_from_slice(args);
        DiskOptions::try_from(Wrap::try_parse_from(all)?.disk)
    }

    #[test]
    fn fio_vocabulary_becomes_a_spec() {
        let o = parse(&[
            "/tmp",
            "--rw",
            "randrw",
            "--bs",
            "64k",
            "--iodepth",
            "8",
            "--numjobs",
            "2",
            "--size",
            "256MiB",
            "--runtime",
            "5s",
            "--engine",
            "psync",
            "--rwmix-read",
            "30",
            "--data",
            "compressible:50",
        ])
        .unwrap();
        assert_eq!(o.spec.rw, RwMode::RandRw);
        assert_eq!(o.spec.bs, Bytes(65536));
        assert_eq!((o.spec.iodepth, o.spec.numjobs), (8, 2));
        assert_eq!(o.request.size, Some(Bytes(256 << 20)));
        assert_eq!(o.spec.runtime, Some(Nanos::from_secs(5)));
        assert_eq!(o.spec.data, DataPattern::Compressible(50));
        assert!(o.request.write);
    }

    #[test]
    fn bad_values_name_the_fix() {
        for (args, needle) in [
            (vec!["--bs", "0"], "--bs must be larger than 0"),
            (vec!["--bs", "4q"], "unknown unit"),
            (vec!["--iodepth", "0"], "--iodepth must be at least 1"),
            (vec!["--rw", "sideways"], "use read, write"),
            (vec!["--engine", "libaio"], "use psync"),
            (vec!["--runtime", "10x"], "--runtime"),
            (vec!["--size", "0"], "--size must be larger than 0"),
            (vec!["--rwmix-read", "101"], "0 to 100"),
            (vec!["--iodepth-batch", "0"], "--iodepth-batch must be 1 to"),
            (
                vec!["--iodepth", "8", "--iodepth-batch", "16"],
                "1 to --iodepth (8)",
            ),
        ] {
            let err = parse(&args).unwrap_err().to_string();
            assert!(err.contains(needle), "{args:?}: {err}");
        }
    }

    #[test]
    fn mmap_engines_go_through_the_page_cache() {
        let o = parse(&["--engine", "mmap-sync"]).unwrap();
        assert_eq!(o.request.direct, DirectMode::Buffered);
        assert!(!o.spec.direct);
        let err = parse(&["--engine", "mmap-async", "--direct"]).unwrap_err();
        assert!(err.to_string().contains("page cache"), "{err}");
    }

    #[test]
    fn each_io_is_submitted_alone_unless_a_batch_is_asked_for() {
        assert_eq!(parse(&[]).unwrap().spec.iodepth_batch, 1);
        let o = parse(&["--iodepth", "32", "--iodepth-batch", "8"]).unwrap();
        assert_eq!(o.spec.iodepth_batch, 8);
    }

    #[test]
    fn mix_swallowing_a_path_says_how_to_write_it() {
        assert_eq!(parse_mix("60"), Ok(60));
        let err = parse_mix("/mnt/usb").unwrap_err();
        assert!(err.contains("--mix=70"), "{err}");
        assert!(parse_mix("101").is_err());
    }

    #[test]
    fn runtime_zero_means_size_based() {
        let o = parse(&["--runtime", "0"]).unwrap();
        assert_eq!(o.spec.runtime, None);
    }
}
