//! `iomark mem stream|stencil|himeno`: memory and out-of-core kernels on the
//! heap or a file mapping, optionally under a memory cgroup limit.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use iomark_mem::{himeno, job, sys};
use iomark_model::mem::{
    Advice, Backing, HimenoLength, HimenoSpec, MemJobSpec, MemKernelSpec, MemOutcome, MemRun,
    StencilSpec, StreamSpec,
};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{now_ms, RunBody, RunDocument, RunStatus};

use crate::exit::Exit;
use crate::signals;

/// The raw arguments of `iomark mem`.
#[derive(Debug, Args)]
pub struct MemArgs {
    #[command(subcommand)]
    command: MemCommand,
}

#[derive(Debug, Subcommand)]
enum MemCommand {
    /// STREAM Copy, Scale, Add, Triad: best rate (MB/s) and avg/min/max time.
    Stream(StreamArgs),
    /// A k x k weighted-average 2D stencil (3x3 or 15x15) on two f64 arrays.
    Stencil(StencilArgs),
    /// The Himeno benchmark: Jacobi sweeps of a 19-point stencil, MFLOPS.
    Himeno(HimenoArgs),
    /// Internal: the limited child process of --mem-limit.
    #[command(name = "__child", hide = true)]
    Child,
}

/// Flags every kernel takes.
#[derive(Debug, Args)]
struct CommonArgs {
    /// Worker threads (default: the CPUs this process may use; at most 64
    /// per CPU and 4096 in all).
    #[arg(long, value_name = "N", help_heading = "Workload")]
    threads: Option<u32>,

    /// Where the arrays live: heap, or mmap:PATH for a file created in
    /// directory PATH (or as new file PATH), mapped shared, removed after.
    #[arg(
        long,
        value_name = "heap|mmap:PATH",
        default_value = "heap",
        help_heading = "Memory"
    )]
    backing: String,

    /// madvise policy of a file mapping: normal, sequential or random.
    #[arg(long, value_enum, value_name = "POLICY", default_value_t = AdviceArg::Normal, help_heading = "Memory")]
    advice: AdviceArg,

    /// Run the kernel in a memory cgroup of this size, e.g. 256MiB (root).
    #[arg(long, value_name = "SIZE", help_heading = "Memory")]
    mem_limit: Option<Bytes>,

    /// Run the all-in-memory case (heap, no limit) first and report this run
    /// as relative execution time.
    #[arg(long, help_heading = "Memory")]
    relative: bool,

    /// Print one JSON document (the result schema in docs/) instead of text.
    #[arg(long, help_heading = "Output")]
    json: bool,

    #[command(flatten)]
    store: crate::record::StoreArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum AdviceArg {
    Normal,
    Sequential,
    Random,
}

/// `iomark mem stream`.
#[derive(Debug, Args)]
struct StreamArgs {
    /// Elements (f64) per array, STREAM_ARRAY_SIZE; k/M/G are powers of 10
    /// (default: 4 x the last-level cache per array, at least 10M).
    #[arg(long, value_name = "N", value_parser = parse_count, help_heading = "Workload")]
    size: Option<u64>,

    /// Passes over the four kernels; the first is not counted.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        help_heading = "Workload"
    )]
    ntimes: u32,

    #[command(flatten)]
    common: CommonArgs,
}

/// `iomark mem stencil`.
#[derive(Debug, Args)]
struct StencilArgs {
    /// Mask width: 3 (bandwidth-bound) or 15 (compute-bound).
    #[arg(long, value_name = "K", default_value_t = 3, help_heading = "Workload")]
    mask: u32,

    /// Rows and columns of the square grid (16 x N² bytes in all).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 8192,
        help_heading = "Workload"
    )]
    n: u64,

    /// Sweeps; the first is reported apart as warm-up.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        help_heading = "Workload"
    )]
    sweeps: u32,

    #[command(flatten)]
    common: CommonArgs,
}

/// `iomark mem himeno`.
#[derive(Debug, Args)]
struct HimenoArgs {
    /// Grid: xs, s, m, l, xl, xxl (1025x1025x2049) or IxJxK.
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "m",
        help_heading = "Workload"
    )]
    grid: String,

    /// Exactly N sweeps from a fresh grid; gosa is checked where a
    /// reference exists (xs/s/m/l/xl at 3, s and m at 64).
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "seconds",
        help_heading = "Workload"
    )]
    iterations: Option<u32>,

    /// Himeno's own scheme: 3 rehearsal sweeps, then as many as fill this
    /// many seconds.
    #[arg(long, value_name = "S", help_heading = "Workload")]
    seconds: Option<f64>,

    #[command(flatten)]
    common: CommonArgs,
}

/// `80M` = 80,000,000 elements, as STREAM sizes are usually written.
fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1_000),
        Some('m' | 'M') => (&t[..t.len() - 1], 1_000_000),
        Some('g' | 'G') => (&t[..t.len() - 1], 1_000_000_000),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            format!("expected a positive element count such as 10000000 or 80M, got {s:?}")
        })
}

/// A validated job and how to present it.
#[derive(Debug)]
struct MemOptions {
    spec: MemJobSpec,
    relative: bool,
    json: bool,
    /// The directory named by mmap:PATH, for the device report.
    backing_dir: Option<PathBuf>,
    store: crate::record::StoreArgs,
}

fn invalid(msg: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{msg}")
}

/// The kernel-independent half of the validation.
fn common_options(c: CommonArgs, kernel: MemKernelSpec) -> anyhow::Result<MemOptions> {
    let threads = match c.threads {
        Some(0) => bail!("--threads must be at least 1"),
        // The upper bound (64 per CPU, at most 4096) is the mem crate's,
        // checked with the memory before anything is allocated.
        Some(t) => t,
        None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    let (backing, backing_dir) = if c.backing == "heap" {
        (Backing::Heap, None)
    } else if let Some(path) = c.backing.strip_prefix("mmap:") {
        let user = PathBuf::from(path);
        let file = iomark_mem::region::resolve_mmap_path(&user)?;
        let dir = file.parent().map(Path::to_path_buf);
        (
            Backing::Mmap {
                path: file.display().to_string(),
            },
            dir,
        )
    } else {
        bail!(
            "--backing {:?} is not heap or mmap:PATH (e.g. --backing mmap:/mnt/ssd)",
            c.backing
        );
    };
    if let Some(limit) = c.mem_limit {
        if limit.get() < 4 * Bytes::MIB {
            bail!("--mem-limit {limit} is too small for the process itself; use at least 4MiB");
        }
    }
    if c.relative && c.mem_limit.is_none() && backing == Backing::Heap {
        bail!("--relative compares a constrained run with the all-in-memory one; add --mem-limit SIZE or --backing mmap:PATH");
    }
    let advice = match c.advice {
        AdviceArg::Normal => Advice::Normal,
        AdviceArg::Sequential => Advice::Sequential,
        AdviceArg::Random => Advice::Random,
    };
    Ok(MemOptions {
        spec: MemJobSpec {
            kernel,
            threads,
            backing,
            advice,
            mem_limit: c.mem_limit,
        },
        relative: c.relative,
        json: c.json,
        backing_dir,
        store: c.store,
    })
}

/// STREAM's size rule by default: each array 4 x the last-level cache, at
/// least STREAM's 10M, and no more than half the available memory in all.
fn default_stream_len() -> u64 {
    let host = sys::host();
    let rule = host.llc.map_or(0, |l| (4 * l.get()).div_ceil(8));
    let len = rule.max(10_000_000);
    match sys::mem_available() {
        Some(avail) => len.min(avail.get() / 2 / 24).max(1_000_000),
        None => len,
    }
}

impl TryFrom<StreamArgs> for MemOptions {
    type Error = anyhow::Error;

    fn try_from(a: StreamArgs) -> anyhow::Result<Self> {
        if a.ntimes < 2 {
            return Err(invalid(format!(
                "--ntimes {} is too small: the first pass is not counted, so use at least 2",
                a.ntimes
            )));
        }
        let array_len = a.size.unwrap_or_else(default_stream_len);
        common_options(
            a.common,
            MemKernelSpec::Stream(StreamSpec {
                array_len,
                ntimes: a.ntimes,
            }),
        )
    }
}

impl TryFrom<StencilArgs> for MemOptions {
    type Error = anyhow::Error;

    fn try_from(a: StencilArgs) -> anyhow::Result<Self> {
        if a.mask != 3 && a.mask != 15 {
            return Err(invalid(format!(
                "--mask {} is not supported: use 3 or 15 (their weights are exact, which the check needs)",
                a.mask
            )));
        }
        if a.n <= a.mask as u64 {
            return Err(invalid(format!(
                "--n {} leaves no interior for a {}x{} mask; use --n {} or more",
                a.n,
                a.mask,
                a.mask,
                a.mask + 1
            )));
        }
        if a.sweeps == 0 {
            return Err(invalid("--sweeps must be at least 1"));
        }
        let spec = StencilSpec {
            n: a.n,
            mask: a.mask,
            sweeps: a.sweeps,
        };
        common_options(a.common, MemKernelSpec::Stencil(spec))
    }
}

impl TryFrom<HimenoArgs> for MemOptions {
    type Error = anyhow::Error;

    fn try_from(a: HimenoArgs) -> anyhow::Result<Self> {
        let grid = himeno::parse_grid(&a.grid).map_err(|e| invalid(format!("--grid: {e}")))?;
        let length = match (a.iterations, a.seconds) {
            (Some(0), _) => return Err(invalid("--iterations must be at least 1")),
            (Some(n), _) => HimenoLength::Iterations(n),
            (None, Some(s)) if !(s > 0.0 && s.is_finite()) => {
                return Err(invalid(format!(
                    "--seconds {s} must be a positive number, e.g. 60"
                )))
            }
            (None, Some(s)) => HimenoLength::Target(Nanos((s * 1e9) as u64)),
            (None, None) => HimenoLength::Target(Nanos::from_secs(60)),
        };
        common_options(a.common, MemKernelSpec::Himeno(HimenoSpec { grid, length }))
    }
}

/// The disk engine's SIGBUS handling, watching the mem crate's file regions
/// too: a backing file truncated by another process is then an error, not a
/// silent death by SIGBUS.
#[derive(Debug)]
struct BusWatch(iomark_disk::engine::sigbus::Watch);

impl iomark_mem::region::ShrinkWatch for BusWatch {
    fn shrank(&self) -> bool {
        self.0.shrank()
    }
}

fn watch_file(
    start: usize,
    len: usize,
) -> std::io::Result<Box<dyn iomark_mem::region::ShrinkWatch>> {
    let watch = iomark_disk::engine::sigbus::Watch::new(start, len)?;
    Ok(Box::new(BusWatch(watch)))
}

/// Run `iomark mem ...`.
pub fn run(args: MemArgs) -> anyhow::Result<Exit> {
    iomark_mem::region::watch_file_mappings(watch_file);
    let options = match args.command {
        MemCommand::Stream(a) => MemOptions::try_from(a)?,
        MemCommand::Stencil(a) => MemOptions::try_from(a)?,
        MemCommand::Himeno(a) => MemOptions::try_from(a)?,
        MemCommand::Child => {
            job::serve_child(signals::stop_flag()?)?;
            return Ok(Exit::Success);
        }
    };
    options.store.check()?;
    let started_at_ms = now_ms();
    let exe = std::env::current_exe()
        .context("cannot find the iomark binary to run the limited child")?;
    let stop = signals::stop_flag()?;
    let run = job::run(&options.spec, options.relative, stop, || {
        let mut c = Command::new(exe);
        c.args(["mem", "__child"]);
        c
    })?;
    let mut doc = run_document(
        run,
        std::env::args().collect(),
        started_at_ms,
        options.backing_dir.as_deref(),
    );
    // A mem run is one measurement: it is stored whole once it ends.
    crate::record::Recorder::begin(&options.store, &mut doc).finish(&doc);
    let text = if options.json {
        format!("{}\n", serde_json::to_string_pretty(&doc)?)
    } else {
        iomark_text::run(&doc, false).unwrap_or_default()
    };
    // A closed pipe surfaces as an error that main treats as success.
    std::io::stdout().lock().write_all(text.as_bytes())?;
    let RunBody::Mem(run) = &doc.body else {
        unreachable!("run_document makes a mem body")
    };
    match &run.outcome {
        MemOutcome::OomKilled { message } => bail!("{message}"),
        MemOutcome::Interrupted => Ok(Exit::Interrupted),
        MemOutcome::Completed { result, .. } if result.validation().is_failed() => {
            bail!("validation failed: {}", result.validation().detail)
        }
        MemOutcome::Completed { .. } => Ok(Exit::Success),
    }
}

/// The iomark result document for a finished mem run, for `--json` and the
/// store. `backing_dir` is the directory of an mmap backing file, whose
/// device chain is recorded.
pub fn run_document(
    run: MemRun,
    command_line: Vec<String>,
    started_at_ms: u64,
    backing_dir: Option<&Path>,
) -> RunDocument {
    let status = match &run.outcome {
        MemOutcome::Completed { result, .. } if !result.validation().is_failed() => {
            RunStatus::Complete
        }
        MemOutcome::Interrupted => RunStatus::Interrupted,
        _ => RunStatus::Failed,
    };
    let device = backing_dir
        .and_then(|d| iomark_host::DeviceChain::for_path(d).ok())
        .map(iomark_host::DeviceChain::into_report);
    RunDocument {
        started_at_ms,
        status,
        host: Some(<iomark_model::device::HostInfo as iomark_host::HostInfoExt>::collect()),
        device,
        ..RunDocument::iomark(command_line, RunBody::Mem(run))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(subcommand)]
        mem: MemCommand,
    }

    fn parse(args: &[&str]) -> anyhow::Result<MemOptions> {
        let mut v = vec!["t"];
        v.extend_from_slice(args);
        match T::try_parse_from(v)?.mem {
            MemCommand::Stream(a) => MemOptions::try_from(a),
            MemCommand::Stencil(a) => MemOptions::try_from(a),
            MemCommand::Himeno(a) => MemOptions::try_from(a),
            MemCommand::Child => unreachable!("not parsed here"),
        }
    }

    #[test]
    fn flags_become_a_spec() {
        let o = parse(&["stream", "--size", "80M", "--threads", "2", "--ntimes", "5"]).unwrap();
        assert_eq!(
            o.spec.kernel,
            MemKernelSpec::Stream(StreamSpec {
                array_len: 80_000_000,
                ntimes: 5
            })
        );
        assert_eq!(o.spec.threads, 2);
        let o = parse(&[
            "himeno",
            "--grid",
            "S",
            "--iterations",
            "64",
            "--mem-limit",
            "256MiB",
        ])
        .unwrap();
        assert_eq!(o.spec.mem_limit, Some(Bytes(256 << 20)));
        let MemKernelSpec::Himeno(h) = o.spec.kernel else {
            panic!("himeno")
        };
        assert_eq!(h.length, HimenoLength::Iterations(64));
        assert_eq!((h.grid.i, h.grid.j, h.grid.k), (64, 64, 128));
    }

    #[test]
    fn bad_values_name_the_fix() {
        let msg = |a: &[&str]| format!("{:#}", parse(a).unwrap_err());
        assert!(msg(&["stencil", "--mask", "5"]).contains("use 3 or 15"));
        assert!(msg(&["stencil", "--n", "10", "--mask", "15"]).contains("--n 16"));
        assert!(msg(&["stream", "--ntimes", "1"]).contains("at least 2"));
        assert!(msg(&["stream", "--backing", "disk"]).contains("mmap:PATH"));
        assert!(msg(&["stream", "--relative"]).contains("--mem-limit"));
        assert!(msg(&["himeno", "--grid", "huge"]).contains("IxJxK"));
        assert!(msg(&["stream", "--threads", "0"]).contains("at least 1"));
    }
}
