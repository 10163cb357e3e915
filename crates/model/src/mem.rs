//! Memory and out-of-core job specs and results: STREAM, the 2D stencil and
//! Himeno, on the heap or in a file mapping, optionally under a memory limit.
//!
//! Every figure is kept in base units (bytes, nanoseconds, element counts);
//! rates and MFLOPS are stored as the kernels' own conventions define them and
//! each convention is documented on its field.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::cgroup::CgroupUsage;
pub use kernel_result::{
    HimenoResult, KernelResult, StencilResult, StreamKernelResult, StreamOp, StreamResult,
};
pub use sweep::{
    median, MemBaseline, MemSweep, MemSweepPoint, RepeatPair, SweepAxis, SweepCell, SweepRow,
};

mod kernel_result;
mod sweep;
use crate::units::{Bytes, Nanos};
use crate::warning::Warning;

/// Where the kernel's arrays live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Backing {
    /// Anonymous private memory, as `malloc` returns for large blocks.
    Heap,
    /// One file mapped `MAP_SHARED`, created for the run and removed after it.
    Mmap {
        /// The backing file's path (a file inside the directory the user named).
        path: String,
        /// `--warm`: the file was read through once before the measured
        /// part, so the kernel found it in the page cache (the paper's "the
        /// file fits in memory" case); else it started with none of it
        /// cached. Part of the test's identity. Runs stored before this
        /// existed started cold.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        warm: bool,
    },
    /// Anonymous memory, as the heap, with a swap area that iomark set up at
    /// `path` for the run only (a new file, or a block device named with
    /// `--allow-write`) and removed after it; the memory cgroup lets the
    /// run's pages go there and nowhere else beyond the limit.
    Swap {
        /// The swap file iomark created, or the block device.
        path: String,
        /// The kernel name of the block device that holds the area
        /// (`zram0`, `loop3`, `nvme0n1p2`): the device itself, or the one
        /// under the swap file's file system; `None` where it has none
        /// (btrfs) and in runs stored before it was recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        device: Option<String>,
    },
}

impl Backing {
    /// `heap`, `mmap` or `swap`: what kind of memory it is.
    pub fn kind(&self) -> &'static str {
        match self {
            Backing::Heap => "heap",
            Backing::Mmap { .. } => "mmap",
            Backing::Swap { .. } => "swap",
        }
    }

    /// How a table column, a chart legend and a test name call it:
    /// `heap`, `mmap`, `mmap warm`, `swap on zram0` (`swap` where the
    /// device is unknown).
    pub fn label(&self) -> String {
        match self {
            Backing::Mmap { warm: true, .. } => "mmap warm".into(),
            Backing::Swap {
                device: Some(d), ..
            } => format!("swap on {d}"),
            other => other.kind().into(),
        }
    }
}

impl fmt::Display for Backing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backing::Heap => f.write_str("heap"),
            Backing::Mmap { path, warm } => {
                write!(f, "mmap:{path}")?;
                if *warm {
                    f.write_str(" (warm: read once before measuring)")?;
                }
                Ok(())
            }
            Backing::Swap { path, device } => {
                write!(f, "swap:{path}")?;
                match device {
                    // A device named by its own node says it already.
                    Some(d) if path.strip_prefix("/dev/") != Some(d.as_str()) => {
                        write!(f, " (on {d})")
                    }
                    _ => Ok(()),
                }
            }
        }
    }
}

/// The `madvise` policy applied to a file mapping (readahead decides the
/// speed of out-of-core runs, so it is recorded with each result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Advice {
    /// No advice: the kernel's default readahead.
    #[default]
    Normal,
    /// `MADV_SEQUENTIAL`: aggressive readahead, early reclaim.
    Sequential,
    /// `MADV_RANDOM`: no readahead.
    Random,
}

impl Advice {
    /// The name used on the command line and in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Advice::Normal => "normal",
            Advice::Sequential => "sequential",
            Advice::Random => "random",
        }
    }
}

impl std::str::FromStr for Advice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Advice::Normal, Advice::Sequential, Advice::Random]
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| format!("unknown advice {s:?}: use normal, sequential or random"))
    }
}

/// STREAM's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamSpec {
    /// Elements (f64) per array; STREAM's `STREAM_ARRAY_SIZE`.
    pub array_len: u64,
    /// Passes over the four kernels; the first is not counted (minimum 2).
    pub ntimes: u32,
    /// Non-temporal (streaming) stores in Scale, Add and Triad, where the
    /// CPU has them: what STREAM builds with streaming-store options do.
    /// Runs stored before this existed used ordinary stores.
    #[serde(default)]
    pub nt_stores: bool,
}

/// The 2D stencil's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StencilSpec {
    /// Rows and columns of the square f64 grid.
    pub n: u64,
    /// Mask width k (3 or 15): a k x k weighted average.
    pub mask: u32,
    /// Sweeps, `src` and `dst` swapped after each.
    pub sweeps: u32,
}

/// A Himeno grid: array extents including the boundary layers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HimenoGrid {
    /// The class name (`xs`, `s`, `m`, `l`, `xl`, `xxl`), or `None` for IxJxK.
    pub name: Option<String>,
    /// Extent in i (outermost).
    pub i: u64,
    /// Extent in j.
    pub j: u64,
    /// Extent in k (innermost, contiguous).
    pub k: u64,
}

impl HimenoGrid {
    /// Grid points, boundary included.
    pub fn points(&self) -> u64 {
        self.i * self.j * self.k
    }
}

impl fmt::Display for HimenoGrid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(n) => write!(f, "{} ({}x{}x{})", n.to_uppercase(), self.i, self.j, self.k),
            None => write!(f, "{}x{}x{}", self.i, self.j, self.k),
        }
    }
}

/// How long Himeno runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum HimenoLength {
    /// Exactly this many sweeps from a fresh grid (gosa is then checkable).
    Iterations(u32),
    /// The original's scheme: 3 rehearsal sweeps, then as many as fill this time.
    Target(Nanos),
}

/// Himeno's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HimenoSpec {
    /// The grid.
    pub grid: HimenoGrid,
    /// Fixed sweeps or a time target.
    pub length: HimenoLength,
}

/// Which kernel, with its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kernel", rename_all = "snake_case")]
pub enum MemKernelSpec {
    /// STREAM Copy, Scale, Add, Triad.
    Stream(StreamSpec),
    /// The k x k 2D stencil.
    Stencil(StencilSpec),
    /// The Himeno Jacobi benchmark.
    Himeno(HimenoSpec),
}

impl MemKernelSpec {
    /// The kernel's name.
    pub fn name(&self) -> &'static str {
        match self {
            MemKernelSpec::Stream(_) => "stream",
            MemKernelSpec::Stencil(_) => "stencil",
            MemKernelSpec::Himeno(_) => "himeno",
        }
    }

    /// Byte sizes of the arrays the kernel needs.
    pub fn array_sizes(&self) -> Vec<usize> {
        match self {
            MemKernelSpec::Stream(s) => s.array_sizes(),
            MemKernelSpec::Stencil(s) => s.array_sizes(),
            MemKernelSpec::Himeno(s) => s.array_sizes(),
        }
    }

    /// Total bytes of the kernel's arrays.
    pub fn data_bytes(&self) -> Bytes {
        Bytes(self.array_sizes().iter().map(|&s| s as u64).sum())
    }
}

impl StreamSpec {
    /// Byte sizes of the three arrays.
    pub fn array_sizes(&self) -> Vec<usize> {
        vec![self.array_len as usize * 8; 3]
    }
}

impl StencilSpec {
    /// Byte sizes of the two arrays.
    pub fn array_sizes(&self) -> Vec<usize> {
        vec![(self.n * self.n) as usize * 8; 2]
    }
}

/// Himeno's arrays of f32 per grid point: p, a0..a3, b0..b2, c0..c2, bnd,
/// wrk1, wrk2.
pub const HIMENO_ARRAYS: usize = 14;

impl HimenoSpec {
    /// Byte sizes of the 14 arrays.
    pub fn array_sizes(&self) -> Vec<usize> {
        vec![self.grid.points() as usize * 4; HIMENO_ARRAYS]
    }
}

/// One memory job: a kernel, its threads and where its data lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemJobSpec {
    /// The kernel.
    pub kernel: MemKernelSpec,
    /// Worker threads; each owns one contiguous block of every array.
    pub threads: u32,
    /// Heap or file mapping.
    pub backing: Backing,
    /// `madvise` policy for a file mapping (ignored on the heap).
    pub advice: Advice,
    /// The memory cgroup limit the kernel ran under, if any.
    pub mem_limit: Option<Bytes>,
}

/// How a kernel's own correctness check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// The results match what they must be.
    Passed,
    /// They do not: the figures describe a wrong computation.
    Failed,
    /// Nothing to check against (for example Himeno with a time target).
    Unchecked,
}

/// A kernel's own correctness check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    /// How it came out.
    pub outcome: CheckOutcome,
    /// What was checked and, on failure, by how much it missed.
    pub detail: String,
}

impl Validation {
    /// A check that passed.
    pub fn passed(detail: impl Into<String>) -> Self {
        Validation {
            outcome: CheckOutcome::Passed,
            detail: detail.into(),
        }
    }

    /// A check that failed.
    pub fn failed(detail: impl Into<String>) -> Self {
        Validation {
            outcome: CheckOutcome::Failed,
            detail: detail.into(),
        }
    }

    /// No check was possible.
    pub fn unchecked(detail: impl Into<String>) -> Self {
        Validation {
            outcome: CheckOutcome::Unchecked,
            detail: detail.into(),
        }
    }

    /// Whether the check failed.
    pub fn is_failed(&self) -> bool {
        self.outcome == CheckOutcome::Failed
    }
}

/// How the measured part of a job ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MemOutcome {
    /// The kernel ran to its end.
    Completed {
        /// Its figures.
        result: KernelResult,
        /// What `--relative` compares: wall time of the initialisation plus
        /// the counted work (STREAM: the timing probe and all passes; the
        /// stencil: all sweeps; Himeno: the timed sweeps, rehearsal
        /// excluded). The final msync is not in it.
        execution: Nanos,
        /// Time of the final `msync` of a file mapping (not part of `execution`).
        msync: Option<Nanos>,
    },
    /// Ctrl-C (SIGINT, SIGTERM, SIGHUP) stopped it between passes or sweeps;
    /// partial figures are not kept.
    Interrupted,
    /// The memory cgroup's OOM killer ended it (SIGKILL, `oom_kill` counter up).
    OomKilled {
        /// The explanation shown to the user.
        message: String,
    },
    /// A sweep (`--sizes` or `--ratios`): each point's outcome is in
    /// [`MemRun::sweep`]; this run has no figures of its own.
    Swept,
}

/// Swap as the kernel reports it (`/proc/swaps`, `/proc/meminfo`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SwapInfo {
    /// `SwapTotal`.
    pub total: Bytes,
    /// `SwapTotal - SwapFree`.
    pub used: Bytes,
    /// Active swap areas, as `/proc/swaps` names them.
    pub devices: Vec<String>,
}

/// The memory-related facts of the machine at the time of the run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemHost {
    /// The last-level cache of cpu0 (sysfs), if known.
    pub llc: Option<Bytes>,
    /// `MemTotal`.
    pub mem_total: Bytes,
    /// Swap in use.
    pub swap: SwapInfo,
}

/// One memory run: the job, the machine, the outcome and, with `--relative`,
/// the all-in-memory baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemRun {
    /// What ran, as asked. With a baseline and a Himeno time target, the
    /// target applies to the baseline and this run repeats exactly the
    /// baseline's timed sweeps (its result shows the count, no rehearsal).
    pub spec: MemJobSpec,
    /// The machine's memory facts.
    pub host: MemHost,
    /// How it ended.
    pub outcome: MemOutcome,
    /// The memory cgroup's record, when a limit was set (boxed, like the
    /// baseline, to keep `RunBody` variants of similar size).
    pub cgroup: Option<Box<CgroupUsage>>,
    /// With `--relative`: the same kernel on the heap without a limit.
    pub baseline: Option<Box<MemBaseline>>,
    /// Doubts about the figures.
    pub warnings: Vec<Warning>,
    /// With `--sizes` or `--ratios`: every point of the sweep, each an
    /// ordinary run of its own (outcome [`MemOutcome::Swept`] here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Box<MemSweep>>,
    /// CPU over the measured run (the baseline excluded): the process's,
    /// its limited child's included, as percent of one CPU (a stencil on
    /// twelve threads shows about 1200 %), and the machine's; none in runs
    /// stored before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<crate::cpu::CpuRecord>,
    /// A run across MPI ranks (`mpirun -np N iomark mem stream`): each
    /// rank's own result; the outcome holds their sum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Box<MemCluster>>,
}

/// The ranks of a memory run across MPI ranks (`mpirun -np N iomark mem
/// stream`): each ran the kernel on its own arrays, in step with the others
/// (a barrier before each kernel), and the run's figures are the sum of
/// their rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemCluster {
    /// How many ranks ran.
    pub ranks: u32,
    /// Each rank, by rank number.
    pub per_rank: Vec<MemRankResult>,
}

/// One rank's memory kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemRankResult {
    /// The rank number (0 stores the run).
    pub rank: u32,
    /// The host it ran on.
    pub host: String,
    /// Its own result.
    pub result: KernelResult,
    /// Its execution time (initialisation and every pass).
    pub execution: Nanos,
}

#[cfg(test)]
mod tests;
