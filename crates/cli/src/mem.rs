//! `iomark mem stream|stencil|himeno`: memory and out-of-core kernels on the
//! heap or a file mapping, optionally under a memory cgroup limit.

use std::io::Write;
use std::process::Command;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use iomark_mem::settings::{self, MemPlan, MemSettings};
use iomark_mem::{job, MemError};
use iomark_model::mem::{Advice, MemKernelSpec, MemOutcome};
use iomark_model::now_ms;
use iomark_model::units::Bytes;
use iomark_model::RunBody;
use iomark_text::Output;

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

    /// Where the arrays live: heap; mmap:PATH for a file created in
    /// directory PATH (or as new file PATH), mapped shared, removed after;
    /// or swap:PATH, the heap with a swap area iomark sets up in directory
    /// PATH (or on block device PATH, with --allow-write) for the run only
    /// (needs --mem-limit). A comma list with --sizes or --ratios, which
    /// may name several swap areas on different devices
    /// (swap:/dev/zram0,swap:/mnt/ssd,mmap:/mnt/ssd), each active for its
    /// own points only.
    #[arg(
        long,
        value_name = "heap|mmap:PATH|swap:PATH",
        default_value = "heap",
        help_heading = "Memory"
    )]
    backing: String,

    /// Sweep over these data sizes (e.g. 256MiB,512MiB,1GiB), each point
    /// against the all-in-memory run of the same size; overrides the
    /// kernel's size flag.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        help_heading = "Sweep"
    )]
    sizes: Vec<Bytes>,

    /// Sweep over data sizes of these multiples of --mem-limit (e.g.
    /// 0.5,1,2,4).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        help_heading = "Sweep"
    )]
    ratios: Vec<f64>,

    /// A block device that --backing swap:DEVICE may overwrite.
    #[arg(long, value_name = "DEVICE", help_heading = "Memory")]
    allow_write: Vec<std::path::PathBuf>,

    /// madvise policy of a file mapping: normal, sequential or random.
    #[arg(
        long,
        value_name = "POLICY",
        default_value = "normal",
        help_heading = "Memory"
    )]
    advice: Advice,

    /// Run the kernel in a memory cgroup of this size, e.g. 256MiB (root).
    #[arg(long, value_name = "SIZE", help_heading = "Memory")]
    mem_limit: Option<Bytes>,

    /// Run the all-in-memory case (heap, no limit) first and report this run
    /// as relative execution time.
    #[arg(long, help_heading = "Memory")]
    relative: bool,

    /// Alternate N all-in-memory and constrained runs (each point of a
    /// sweep, or a --relative run) and report the median relative time and
    /// its spread.
    #[arg(long, value_name = "N", help_heading = "Memory")]
    repeat: Option<u32>,

    /// Read each mmap backing file through once before measuring, so the
    /// kernel finds it in the page cache (the file-fits-in-memory case);
    /// part of the test's name ("mmap warm").
    #[arg(long, help_heading = "Memory")]
    warm: bool,

    /// Print one JSON document (the result schema in docs/) instead of text.
    #[arg(long, help_heading = "Output")]
    json: bool,

    #[command(flatten)]
    store: crate::record::StoreArgs,
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

    /// Non-temporal (streaming) stores in Scale, Add and Triad: on or off
    /// (alone: on). Default: on when an array is larger than the
    /// last-level cache (STREAM's sizes always are), as STREAM builds with
    /// streaming stores; the output says which stores were used.
    #[arg(
        long,
        value_name = "on|off",
        num_args = 0..=1,
        default_missing_value = "on",
        value_parser = clap::builder::BoolishValueParser::new(),
        help_heading = "Workload"
    )]
    nt_stores: Option<bool>,

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
pub(crate) struct MemOptions {
    pub(crate) plan: MemPlan,
    /// The document under `--json`, else the kernel's text.
    pub(crate) output: Output,
    pub(crate) store: crate::record::StoreArgs,
}

// Read only by the MPI run.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
impl MemArgs {
    /// Whether this is `iomark mem stream`, the kernel that runs across
    /// MPI ranks.
    pub(crate) fn is_stream(&self) -> bool {
        matches!(self.command, MemCommand::Stream(_))
    }

    /// The checked job (STREAM's, under MPI); `None` for the internal child.
    pub(crate) fn options(self) -> Result<Option<MemOptions>, MemError> {
        self.command.options()
    }
}

impl CommonArgs {
    fn options(self, kernel: MemKernelSpec) -> Result<MemOptions, MemError> {
        let settings = MemSettings {
            threads: self.threads,
            backing: self.backing,
            advice: self.advice,
            mem_limit: self.mem_limit,
            relative: self.relative,
            sizes: self.sizes,
            ratios: self.ratios,
            allow_write: self.allow_write,
            warm: self.warm,
            repeat: self.repeat,
        };
        Ok(MemOptions {
            plan: settings.build(kernel)?,
            output: if self.json {
                Output::Document
            } else {
                Output::Text { verbose: false }
            },
            store: self.store,
        })
    }
}

impl MemCommand {
    /// The checked job; `None` for the internal child.
    fn options(self) -> Result<Option<MemOptions>, MemError> {
        let (kernel, common) = match self {
            MemCommand::Stream(a) => (settings::stream(a.size, a.ntimes, a.nt_stores), a.common),
            MemCommand::Stencil(a) => (settings::stencil(a.mask, a.n, a.sweeps), a.common),
            MemCommand::Himeno(a) => (settings::himeno(&a.grid, a.iterations, a.seconds), a.common),
            MemCommand::Child => return Ok(None),
        };
        common.options(kernel?).map(Some)
    }
}

/// Run `iomark mem ...`.
pub fn run(args: MemArgs) -> anyhow::Result<Exit> {
    let Some(options) = args.command.options()? else {
        job::serve_child(signals::stop_flag()?)?;
        return Ok(Exit::Success);
    };
    options.store.check()?;
    let started_at_ms = now_ms();
    let exe = std::env::current_exe()
        .context("cannot find the iomark binary to run the limited child")?;
    let stop = signals::stop_flag()?;
    let plan = &options.plan;
    let child = || {
        let mut c = Command::new(&exe);
        c.args(["mem", "__child"]);
        c
    };
    let run = match &plan.sweep {
        Some(sweep) => iomark_mem::sweep::run_sweep(&plan.spec, sweep, plan.repeat, stop, child)?,
        None => iomark_mem::relative::run(
            &plan.spec,
            plan.relative,
            plan.repeat,
            plan.swap.as_ref(),
            stop,
            child,
        )?,
    };
    let mut doc = plan.document(run, crate::record::command_line(), started_at_ms);
    // A mem run is one measurement: it is stored whole once it ends.
    crate::record::Recorder::begin(&options.store, &mut doc).finish(&doc);
    let text = options.output.render(&doc)?;
    // A closed pipe surfaces as an error that main treats as success.
    std::io::stdout().lock().write_all(text.as_bytes())?;
    let RunBody::Mem(run) = &doc.body else {
        unreachable!("a mem plan makes a mem body")
    };
    match &run.outcome {
        MemOutcome::OomKilled { message } => bail!("{message}"),
        MemOutcome::Interrupted => Ok(Exit::Interrupted),
        MemOutcome::Completed { result, .. } if result.validation().is_failed() => {
            bail!("validation failed: {}", result.validation().detail)
        }
        MemOutcome::Completed { .. } => Ok(Exit::Success),
        // Killed points are data; a wrong computation is not.
        MemOutcome::Swept if doc.status == iomark_model::RunStatus::Failed => {
            bail!("validation failed at a point of the sweep (see its table)")
        }
        MemOutcome::Swept => Ok(Exit::Success),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use iomark_model::mem::{HimenoLength, MemJobSpec, StreamSpec};

    #[derive(Parser)]
    struct T {
        #[command(subcommand)]
        mem: MemCommand,
    }

    fn parse(args: &[&str]) -> anyhow::Result<MemJobSpec> {
        let mut v = vec!["t"];
        v.extend_from_slice(args);
        let options = T::try_parse_from(v)?.mem.options()?;
        Ok(options.expect("not the child").plan.spec)
    }

    #[test]
    fn flags_become_a_spec() {
        let o = parse(&["stream", "--size", "80M", "--threads", "2", "--ntimes", "5"]).unwrap();
        assert_eq!(
            o.kernel,
            MemKernelSpec::Stream(StreamSpec {
                array_len: 80_000_000,
                ntimes: 5,
                // 640 MB arrays are beyond any last-level cache.
                nt_stores: true,
            })
        );
        assert_eq!(o.threads, 2);
        for (flags, nt) in [
            (&["--nt-stores"][..], true),
            (&["--nt-stores", "off"][..], false),
            (&["--nt-stores=on"][..], true),
        ] {
            let mut args = vec!["stream", "--size", "1k"];
            args.extend_from_slice(flags);
            let o = parse(&args).unwrap();
            let MemKernelSpec::Stream(s) = o.kernel else {
                panic!("stream")
            };
            assert_eq!(s.nt_stores, nt, "{flags:?}");
        }
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
        assert_eq!(o.mem_limit, Some(Bytes(256 << 20)));
        let MemKernelSpec::Himeno(h) = o.kernel else {
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
        assert!(msg(&["stream", "--warm"]).contains("mmap:PATH"));
        assert!(msg(&["stream", "--repeat", "3"]).contains("--relative"));
        assert!(msg(&[
            "stream",
            "--repeat",
            "0",
            "--relative",
            "--mem-limit",
            "64MiB"
        ])
        .contains("at least 1"));
        let twice = msg(&["stream", "--backing", "heap,heap", "--sizes", "1MiB"]);
        assert!(twice.contains("lists heap twice"), "{twice}");
    }
}
