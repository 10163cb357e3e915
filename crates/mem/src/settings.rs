//! A memory job from what the user gave: the defaults and every check in
//! one place, so the command line only parses.
//!
//! The messages name the flags of `iomark mem` (`--threads`, `--backing`,
//! ...): they are the vocabulary of the job, whatever front end fills it in.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;

use iomark_model::device::HostInfo;
use iomark_model::mem::{
    Advice, Backing, HimenoSpec, MemJobSpec, MemKernelSpec, MemOutcome, MemRun, StencilSpec,
    StreamSpec, SweepAxis,
};
use iomark_model::units::Bytes;
use iomark_model::{RunBody, RunDocument, RunStatus};

use crate::swap::SwapTarget;
use crate::sweep::SweepSpec;
use crate::MemError;

mod kernel;
pub use kernel::{
    default_stream_len, himeno, parse_count, stencil, stream, HimenoSettings, KernelSettings,
    StencilSettings, StreamSettings,
};

/// The smallest `--mem-limit`: the process itself must fit.
pub const MIN_MEM_LIMIT: Bytes = Bytes(4 * Bytes::MIB);

/// Himeno's own measured time when neither sweeps nor seconds are given.
pub const DEFAULT_HIMENO_SECONDS: u64 = 60;

/// What the user said about where and how any kernel runs: the flags
/// every kernel of `iomark mem` takes (with the `clap` feature, their
/// definitions; the doc comments are their help).
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct MemSettings {
    /// Worker threads (default: the CPUs this process may use; at most 64
    /// per CPU and 4096 in all).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "N", help_heading = "Workload")
    )]
    pub threads: Option<u32>,

    /// Where the arrays live: heap; mmap:PATH for a file created in
    /// directory PATH (or as new file PATH), mapped shared, removed after;
    /// or swap:PATH, the heap with a swap area iomark sets up in directory
    /// PATH (or on block device PATH, with --allow-write) for the run only
    /// (needs --mem-limit). A comma list with --sizes or --ratios, which
    /// may name several swap areas on different devices
    /// (swap:/dev/zram0,swap:/mnt/ssd,mmap:/mnt/ssd), each active for its
    /// own points only.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "heap|mmap:PATH|swap:PATH",
            default_value = "heap",
            help_heading = "Memory"
        )
    )]
    pub backing: String,

    /// Sweep over these data sizes (e.g. 256MiB,512MiB,1GiB), each point
    /// against the all-in-memory run of the same size; overrides the
    /// kernel's size flag.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "LIST",
            value_delimiter = ',',
            help_heading = "Sweep"
        )
    )]
    pub sizes: Vec<Bytes>,

    /// Sweep over data sizes of these multiples of --mem-limit (e.g.
    /// 0.5,1,2,4).
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "LIST",
            value_delimiter = ',',
            help_heading = "Sweep"
        )
    )]
    pub ratios: Vec<f64>,

    /// A block device that --backing swap:DEVICE may overwrite.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "DEVICE", help_heading = "Memory")
    )]
    pub allow_write: Vec<PathBuf>,

    /// madvise policy of a file mapping: normal, sequential or random.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "POLICY",
            default_value = "normal",
            help_heading = "Memory"
        )
    )]
    pub advice: Advice,

    /// Run the kernel in a memory cgroup of this size, e.g. 256MiB (root).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "SIZE", help_heading = "Memory")
    )]
    pub mem_limit: Option<Bytes>,

    /// Run the all-in-memory case (heap, no limit) first and report this run
    /// as relative execution time.
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Memory"))]
    pub relative: bool,

    /// Alternate N all-in-memory and constrained runs (each point of a
    /// sweep, or a --relative run) and report the median relative time and
    /// its spread.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", help_heading = "Memory"))]
    pub repeat: Option<u32>,

    /// Read each mmap backing file through once before measuring, so the
    /// kernel finds it in the page cache (the file-fits-in-memory case);
    /// part of the test's name ("mmap warm").
    #[cfg_attr(feature = "clap", arg(long, help_heading = "Memory"))]
    pub warm: bool,
}

/// The most `--repeat` pairs.
pub const MAX_REPEAT: u32 = 100;

/// A checked memory job.
#[derive(Debug, Clone)]
pub struct MemPlan {
    /// The job.
    pub spec: MemJobSpec,
    /// Report the run as relative to the all-in-memory one.
    pub relative: bool,
    /// The directory of an mmap backing file or swap file (or the swap
    /// device), whose device chain is recorded.
    pub backing_dir: Option<PathBuf>,
    /// Where a swap backing's area goes.
    pub swap: Option<SwapTarget>,
    /// Pairs of all-in-memory and constrained runs, alternated (1: one
    /// baseline, one run).
    pub repeat: u32,
    /// With `--sizes` or `--ratios`: the sweep; `spec` is then its first
    /// point.
    pub sweep: Option<SweepSpec>,
}

/// One `--backing` value, checked; `warm` marks a file mapping `--warm`.
fn parse_backing(
    text: &str,
    allow_write: &[PathBuf],
    warm: bool,
) -> Result<(Backing, Option<PathBuf>, Option<SwapTarget>), MemError> {
    if text == "heap" {
        Ok((Backing::Heap, None, None))
    } else if let Some(path) = text.strip_prefix("mmap:") {
        let file = crate::region::resolve_mmap_path(Path::new(path))?;
        let dir = file.parent().map(Path::to_path_buf);
        let path = file.display().to_string();
        Ok((Backing::Mmap { path, warm }, dir, None))
    } else if let Some(path) = text.strip_prefix("swap:") {
        let target = SwapTarget::check(Path::new(path), allow_write)?;
        let (path, dir) = match &target {
            SwapTarget::File(f) => (f.clone(), f.parent().map(Path::to_path_buf)),
            SwapTarget::Device(d) => (d.clone(), Some(d.clone())),
        };
        let path = path.display().to_string();
        let device = target.device_name();
        Ok((Backing::Swap { path, device }, dir, Some(target)))
    } else {
        invalid(format!(
            "--backing {text:?} is not heap, mmap:PATH or swap:PATH (e.g. --backing mmap:/mnt/ssd)"
        ))
    }
}

/// `kernel` resized so its data is about `bytes`: STREAM's three arrays,
/// the stencil's square grid, Himeno's grid scaled in all three extents
/// (its proportions kept).
pub fn sized(kernel: &MemKernelSpec, bytes: Bytes) -> Result<MemKernelSpec, MemError> {
    let b = bytes.get();
    let out = match kernel {
        MemKernelSpec::Stream(s) => MemKernelSpec::Stream(StreamSpec {
            array_len: (b / 24).max(1),
            ..*s
        }),
        MemKernelSpec::Stencil(s) => MemKernelSpec::Stencil(StencilSpec {
            n: ((b / 16) as f64).sqrt() as u64,
            ..*s
        }),
        MemKernelSpec::Himeno(h) => {
            let f = ((b / 56) as f64 / h.grid.points() as f64).cbrt();
            let scale = |e: u64| ((e as f64 * f).round() as u64).max(5);
            MemKernelSpec::Himeno(HimenoSpec {
                grid: iomark_model::mem::HimenoGrid {
                    name: None,
                    i: scale(h.grid.i),
                    j: scale(h.grid.j),
                    k: scale(h.grid.k),
                },
                length: h.length,
            })
        }
    };
    if let MemKernelSpec::Stencil(s) = &out {
        if s.n <= u64::from(s.mask) {
            return invalid(format!(
                "a size of {bytes} leaves no interior for the {m}x{m} mask; use larger --sizes",
                m = s.mask
            ));
        }
    }
    Ok(out)
}

impl MemSettings {
    /// Check the settings and fill in the defaults for `kernel`.
    pub fn build(&self, kernel: MemKernelSpec) -> Result<MemPlan, MemError> {
        let threads = match self.threads {
            Some(0) => return invalid("--threads must be at least 1"),
            // The upper bound (64 per CPU, at most 4096) is checked with the
            // memory before anything is allocated (job::check_limits).
            Some(t) => t,
            None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        };
        let backings = self
            .backing
            .split(',')
            .map(|b| parse_backing(b.trim(), &self.allow_write, self.warm))
            .collect::<Result<Vec<_>, _>>()?;
        let sweeping = !self.sizes.is_empty() || !self.ratios.is_empty();
        if backings.len() > 1 && !sweeping {
            return invalid("several --backing values make a sweep; add --sizes LIST or --ratios LIST (or give one backing)");
        }
        check_distinct(&backings)?;
        let swaps = backings.iter().filter(|b| b.2.is_some()).count();
        if swaps > 0 && self.mem_limit.is_none() {
            return invalid(
                "--backing swap:PATH swaps what outgrows a memory limit; add --mem-limit SIZE",
            );
        }
        if self.warm && !backings.iter().any(|b| matches!(b.0, Backing::Mmap { .. })) {
            return invalid("--warm reads a file mapping's file before measuring; add --backing mmap:PATH (or drop --warm)");
        }
        let repeat = match self.repeat {
            None => 1,
            Some(0) => return invalid("--repeat must be at least 1"),
            Some(n) if n > MAX_REPEAT => {
                return invalid(format!(
                    "--repeat {n} is more than {MAX_REPEAT} pairs; use fewer"
                ))
            }
            Some(n) => n,
        };
        if repeat > 1 && !self.relative && !sweeping {
            return invalid("--repeat alternates the all-in-memory run with the constrained one; add --relative (or a sweep: --sizes or --ratios)");
        }
        let swap = backings.iter().find_map(|b| b.2.clone());
        let backing_dir = backings.iter().find_map(|b| b.1.clone());
        let columns: Vec<(Backing, Option<SwapTarget>)> =
            backings.into_iter().map(|b| (b.0, b.2)).collect();
        let backing = columns[0].0.clone();
        let sweep = match (&self.sizes[..], &self.ratios[..], self.mem_limit) {
            ([], [], _) => None,
            ([_, ..], [_, ..], _) => return invalid("give --sizes or --ratios, not both"),
            ([], [_, ..], None) => {
                return invalid("--ratios are data sizes over the memory limit; add --mem-limit SIZE (or use --sizes)")
            }
            (sizes @ [_, ..], [], _) => Some((
                SweepAxis::Size,
                sizes.iter().map(|&b| (b.get() as f64, b)).collect::<Vec<_>>(),
            )),
            ([], ratios, Some(limit)) => {
                if let Some(r) = ratios.iter().find(|r| !(**r > 0.0 && r.is_finite())) {
                    return invalid(format!("--ratios {r} must be positive, e.g. 0.5,1,2,4"));
                }
                Some((
                    SweepAxis::Ratio,
                    ratios
                        .iter()
                        .map(|&r| (r, Bytes((limit.get() as f64 * r) as u64)))
                        .collect(),
                ))
            }
        };
        let sweep = match sweep {
            None => None,
            Some((axis, xs)) => Some(SweepSpec {
                axis,
                points: xs
                    .into_iter()
                    .map(|(x, b)| sized(&kernel, b).map(|k| (x, k)))
                    .collect::<Result<_, _>>()?,
                backings: columns,
            }),
        };
        let kernel = match &sweep {
            Some(s) => s.points[0].1.clone(),
            None => kernel,
        };
        if let Some(limit) = self.mem_limit {
            if limit < MIN_MEM_LIMIT {
                return invalid(format!(
                    "--mem-limit {limit} is too small for the process itself; use at least 4MiB"
                ));
            }
        }
        if self.relative && self.mem_limit.is_none() && backing == Backing::Heap && sweep.is_none()
        {
            return invalid("--relative compares a constrained run with the all-in-memory one; add --mem-limit SIZE or --backing mmap:PATH");
        }
        Ok(MemPlan {
            spec: MemJobSpec {
                kernel,
                threads,
                backing,
                advice: self.advice,
                mem_limit: self.mem_limit,
            },
            relative: self.relative,
            backing_dir,
            swap,
            repeat,
            sweep,
        })
    }
}

/// Each backing once: a sweep's columns, its points' test names and its
/// swap areas (one per device, each active for its column alone) are told
/// apart by their labels (`swap on zram0`).
fn check_distinct(
    backings: &[(Backing, Option<PathBuf>, Option<SwapTarget>)],
) -> Result<(), MemError> {
    for (i, (b, ..)) in backings.iter().enumerate() {
        if let Some((other, ..)) = backings[..i].iter().find(|(o, ..)| o.label() == b.label()) {
            let fix = match b {
                Backing::Swap { .. } => "name swap areas on different devices",
                _ => "give each backing once",
            };
            return invalid(format!(
                "--backing lists {} twice ({} and {}); {fix}",
                b.label(),
                other,
                b
            ));
        }
    }
    Ok(())
}

pub(crate) fn invalid<T>(msg: impl Into<String>) -> Result<T, MemError> {
    Err(MemError::BadSpec(msg.into()))
}

impl MemPlan {
    /// The run as it stands before anything is measured: stored so at the
    /// start, it reads back as interrupted until the run's end replaces it
    /// (so a viewer sees it in progress, and a killed run stays so).
    pub fn begun(&self) -> MemRun {
        MemRun {
            spec: self.spec.clone(),
            host: crate::sys::host(),
            outcome: MemOutcome::Interrupted,
            cgroup: None,
            baseline: None,
            warnings: Vec::new(),
            sweep: None,
            cpu: None,
            cluster: None,
        }
    }

    /// Run the job: each point of the sweep, or the one run (against the
    /// all-in-memory one when relative); `child` is the command of the
    /// limited child process ([`crate::job::serve_child`]).
    pub fn run(&self, stop: &AtomicBool, child: impl Fn() -> Command) -> Result<MemRun, MemError> {
        self.run_observed(stop, child, &mut crate::observe::Quiet)
    }

    /// [`MemPlan::run`], telling `obs` of each kernel run as it ends and
    /// of each point of a sweep as it begins (`--json-stream`).
    pub fn run_observed(
        &self,
        stop: &AtomicBool,
        child: impl Fn() -> Command,
        obs: &mut dyn crate::observe::MemObserver,
    ) -> Result<MemRun, MemError> {
        match &self.sweep {
            Some(sweep) => {
                crate::sweep::run_sweep(&self.spec, sweep, self.repeat, stop, child, obs)
            }
            None => crate::relative::run(
                &self.spec,
                self.relative,
                self.repeat,
                self.swap.as_ref(),
                stop,
                child,
                obs,
            ),
        }
    }

    /// Refuse what runs alone only, for a STREAM run across MPI ranks:
    /// every rank's arrays on the heap, no limit, one point.
    pub fn check_across_ranks(&self) -> Result<(), MemError> {
        if self.sweep.is_some() {
            return invalid("--sizes and --ratios run alone, not across MPI ranks: leave them out");
        }
        if self.relative {
            return invalid("--relative runs alone, not across MPI ranks: leave it out");
        }
        if self.spec.mem_limit.is_some() {
            return invalid("--mem-limit is not applied across MPI ranks: leave it out");
        }
        if self.spec.backing != Backing::Heap {
            return invalid(
                "under MPI every rank's STREAM arrays are on the heap: leave out --backing",
            );
        }
        Ok(())
    }

    /// The result document of a finished run, for `--json` and the store;
    /// the device chain of an mmap backing file's directory is recorded.
    pub fn document(
        &self,
        run: MemRun,
        command_line: Vec<String>,
        started_at_ms: u64,
    ) -> RunDocument {
        let status = match &run.outcome {
            MemOutcome::Completed { result, .. } if !result.validation().is_failed() => {
                RunStatus::Complete
            }
            MemOutcome::Swept => {
                let failed = run.sweep.iter().flat_map(|s| &s.points).any(|p| {
                    matches!(&p.run.outcome, MemOutcome::Completed { result, .. } if result.validation().is_failed())
                });
                if failed {
                    RunStatus::Failed
                } else {
                    RunStatus::Complete
                }
            }
            MemOutcome::Interrupted => RunStatus::Interrupted,
            _ => RunStatus::Failed,
        };
        let device = self
            .backing_dir
            .as_deref()
            .and_then(|d| iomark_host::DeviceChain::for_path(d).ok())
            .map(iomark_host::DeviceChain::into_report);
        RunDocument {
            started_at_ms,
            status,
            host: Some(<HostInfo as iomark_host::HostInfoExt>::collect()),
            device,
            ..RunDocument::iomark(command_line, RunBody::Mem(run))
        }
    }
}
