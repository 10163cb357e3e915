//! `iomark disk`: a storage job with fio's vocabulary, on a test file, an
//! existing file or a block device.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::Args;
use iomark_disk::target::{DirectMode, OpenTarget, TargetRequest};
use iomark_disk::{runner, DiskError};
use iomark_model::disk::{DataPattern, DiskJobResult, DiskJobSpec, DiskRun, EngineKind, RwMode};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{RunBody, RunDocument, RunStatus, Warning, SCHEMA_VERSION};

use crate::exit::Exit;
use crate::{progress, signals, text};

/// The raw arguments of `iomark disk`.
#[derive(Debug, Args)]
pub struct DiskArgs {
    /// A directory (a test file is created there and removed afterwards),
    /// an existing file, or a block device.
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: PathBuf,

    /// Access pattern: read, write, randread, randwrite, readwrite, randrw.
    #[arg(
        long,
        value_name = "MODE",
        default_value = "randread",
        help_heading = "Workload"
    )]
    pub rw: String,

    /// Bytes per I/O, e.g. 4k, 128k, 1M (k/M/G are 1024-based).
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "4k",
        help_heading = "Workload"
    )]
    pub bs: String,

    /// I/Os each thread keeps in flight (needs an asynchronous engine).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 32,
        help_heading = "Workload"
    )]
    pub iodepth: u32,

    /// Threads, each with its own queue; results are merged.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Workload")]
    pub numjobs: u32,

    /// Size of the test file, or of the region of an existing file or
    /// device (default: 1GiB test file, the whole file or device).
    #[arg(long, value_name = "SIZE", help_heading = "Workload")]
    pub size: Option<String>,

    /// Measured time, e.g. 10s, 1m. 0 means one pass over --size per thread.
    #[arg(
        long,
        value_name = "TIME",
        default_value = "10s",
        help_heading = "Workload"
    )]
    pub runtime: String,

    /// Time run before measuring starts, not counted.
    #[arg(
        long,
        value_name = "TIME",
        default_value = "0s",
        help_heading = "Workload"
    )]
    pub ramp: String,

    /// Percentage of reads in readwrite and randrw.
    #[arg(
        long,
        value_name = "PCT",
        default_value_t = 70,
        help_heading = "Workload"
    )]
    pub rwmix_read: u8,

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

    /// I/O engine: psync, io_uring, mmap-sync, mmap-async, null.
    #[arg(
        long,
        value_name = "ENGINE",
        default_value = "io_uring",
        help_heading = "Engine"
    )]
    pub engine: String,

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

    /// Allow writes to this existing file or block device (repeatable).
    /// A device must not be mounted or held; it is opened exclusively.
    #[arg(long, value_name = "PATH", help_heading = "Target")]
    pub allow_write: Vec<PathBuf>,

    /// Print one JSON document (the result schema in docs/) instead of text.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
}

/// A validated disk job and where it runs.
#[derive(Debug)]
struct DiskOptions {
    spec: DiskJobSpec,
    request: TargetRequest,
    keep_cache: bool,
    json: bool,
}

fn invalid(msg: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{msg}")
}

impl TryFrom<DiskArgs> for DiskOptions {
    type Error = anyhow::Error;

    fn try_from(a: DiskArgs) -> anyhow::Result<Self> {
        let rw: RwMode = a.rw.parse().map_err(invalid)?;
        let bs: Bytes = a.bs.parse().map_err(|e| invalid(format!("--bs: {e}")))?;
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
            .parse()
            .map_err(|e| invalid(format!("--runtime: {e}")))?;
        let ramp: Nanos = a
            .ramp
            .parse()
            .map_err(|e| invalid(format!("--ramp: {e}")))?;
        let engine: EngineKind = a.engine.parse().map_err(invalid)?;
        let data: DataPattern = a.data.parse().map_err(invalid)?;
        if bs.get() == 0 {
            return Err(invalid("--bs must be larger than 0: try --bs 4k"));
        }
        if a.iodepth == 0 {
            return Err(invalid("--iodepth must be at least 1"));
        }
        if a.numjobs == 0 {
            return Err(invalid("--numjobs must be at least 1"));
        }
        if a.rwmix_read > 100 {
            return Err(invalid("--rwmix-read is a percentage: give 0 to 100"));
        }
        if size == Some(Bytes(0)) {
            return Err(invalid("--size must be larger than 0: try --size 1GiB"));
        }
        if engine == EngineKind::IoUring {
            iomark_disk::engine::io_uring_available()
                .map_err(|e| invalid(format!("{e}: use --engine psync")))?;
        }
        let direct = if a.buffered {
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
            iodepth: a.iodepth,
            numjobs: a.numjobs,
            // Filled in from the target once it is open.
            size: size.unwrap_or(Bytes(0)),
            runtime: (runtime.get() > 0).then_some(runtime),
            ramp,
            engine,
            direct: direct != DirectMode::Buffered,
            data,
            rwmix_read: a.rwmix_read,
            seed: a.seed,
        };
        let request = TargetRequest {
            path: a.path,
            size,
            default_size: Bytes(Bytes::GIB),
            write: rw.writes(),
            allow_write: a.allow_write,
            direct,
            data,
            seed: a.seed,
        };
        Ok(DiskOptions {
            spec,
            request,
            keep_cache: a.keep_cache,
            json: a.json,
        })
    }
}

/// Milliseconds since the Unix epoch, for result documents.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Run `iomark disk`.
pub fn run(args: DiskArgs) -> anyhow::Result<Exit> {
    let opts = DiskOptions::try_from(args)?;
    let stop = signals::stop_flag()?;
    let started_at_ms = now_ms();
    let target = match OpenTarget::open(&opts.request, stop) {
        Ok(t) => t,
        Err(DiskError::Interrupted) => {
            eprintln!("iomark: interrupted before measuring; the test file was removed");
            return Ok(Exit::Interrupted);
        }
        Err(e) => return Err(e.into()),
    };
    for p in &target.removed_stale {
        eprintln!("iomark: removed {} left by a killed run", p.display());
    }
    let mut spec = opts.spec.clone();
    spec.size = target.info.size;
    spec.direct = target.direct;
    iomark_disk::validate_job(&spec, &target)?;
    if !opts.keep_cache {
        target.invalidate_cache();
    }

    let mut bar = progress::JobProgress::new(&spec.name, opts.json);
    let job = runner::run_job(&spec, &target, stop, &mut bar)
        .with_context(|| format!("{} on {}", describe(&spec), target.info.path))?;
    bar.finish();
    let interrupted = job.interrupted;
    let doc = document(&target, vec![job], started_at_ms, interrupted);
    drop(target);

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

fn document(
    target: &OpenTarget,
    jobs: Vec<DiskJobResult>,
    started_at_ms: u64,
    interrupted: bool,
) -> RunDocument {
    let chain = iomark_host::DeviceChain::for_path(&target.info.path).ok();
    let mut warnings: Vec<Warning> = target.warnings.clone();
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
            profile: "custom".into(),
            target: target.info.clone(),
            jobs,
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
        ] {
            let err = parse(&args).unwrap_err().to_string();
            assert!(err.contains(needle), "{args:?}: {err}");
        }
    }

    #[test]
    fn runtime_zero_means_size_based() {
        let o = parse(&["--runtime", "0"]).unwrap();
        assert_eq!(o.spec.runtime, None);
    }
}
