//! `iomark mem stream|stencil|himeno`: memory and out-of-core kernels on the
//! heap or a file mapping, optionally under a memory cgroup limit.

use std::io::Write;
use std::process::Command;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use iomark_mem::settings::{
    HimenoSettings, KernelSettings, MemPlan, MemSettings, StencilSettings, StreamSettings,
};
use iomark_mem::{job, MemError};
use iomark_model::mem::MemOutcome;
use iomark_model::{now_ms, RunBody};
use iomark_pipeline::{RunDisplay, RunSink};
use iomark_text::terminal::{self, ProgressLine};
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
    Stream(KernelArgs<StreamSettings>),
    /// A k x k weighted-average 2D stencil (3x3 or 15x15) on two f64 arrays.
    Stencil(KernelArgs<StencilSettings>),
    /// The Himeno benchmark: Jacobi sweeps of a 19-point stencil, MFLOPS.
    Himeno(KernelArgs<HimenoSettings>),
}

/// The arguments of the limited child of `--mem-limit`: not a command a
/// person types, so not one of clap's (no help, page or completion names
/// it).
const CHILD: [&str; 2] = ["mem", "__child"];

/// Whether this process is the limited child of `--mem-limit`.
pub fn is_child() -> bool {
    std::env::args().skip(1).eq(CHILD)
}

/// Serve the parent's job as its limited child.
pub fn serve_child() -> anyhow::Result<Exit> {
    job::serve_child(signals::stop_flag()?)?;
    Ok(Exit::Success)
}

/// A kernel's flags, those every kernel takes (both the mem crate's), and
/// where the result goes.
#[derive(Debug, Args)]
struct KernelArgs<K: Args> {
    #[command(flatten)]
    kernel: K,

    #[command(flatten)]
    settings: MemSettings,

    /// Print one JSON document (the result schema in docs/) instead of text.
    #[arg(long, help_heading = "Output")]
    json: bool,

    /// Print one JSON object per line as the run goes: a start (what
    /// runs), an interval per pass and per kernel run as soon as each is
    /// measured (each sweep point, each all-in-memory run), and an end
    /// holding the document --json prints (docs/mem.md)
    #[arg(long = "json-stream", help_heading = "Output")]
    json_stream: bool,

    #[command(flatten)]
    store: crate::record::StoreArgs,
}

/// A validated job and how to present it.
#[derive(Debug)]
pub(crate) struct MemOptions {
    pub(crate) plan: MemPlan,
    /// The document under `--json`, else the kernel's text.
    pub(crate) output: Output,
    /// `--json-stream`: lines as the run goes instead of `output`.
    pub(crate) stream: bool,
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

    /// The checked job (STREAM's, under MPI).
    pub(crate) fn options(self) -> Result<MemOptions, MemError> {
        self.command.options()
    }
}

impl<K: Args + KernelSettings> KernelArgs<K> {
    fn options(self) -> Result<MemOptions, MemError> {
        if self.json && self.json_stream {
            return Err(MemError::BadSpec(
                "--json and --json-stream are two JSON layouts: give one".into(),
            ));
        }
        Ok(MemOptions {
            plan: self.settings.build(self.kernel.kernel()?)?,
            output: if self.json {
                Output::Document
            } else {
                Output::Text { verbose: false }
            },
            stream: self.json_stream,
            store: self.store,
        })
    }
}

impl MemCommand {
    /// The checked job.
    fn options(self) -> Result<MemOptions, MemError> {
        match self {
            MemCommand::Stream(a) => a.options(),
            MemCommand::Stencil(a) => a.options(),
            MemCommand::Himeno(a) => a.options(),
        }
    }
}

/// Run `iomark mem ...`.
pub fn run(args: MemArgs) -> anyhow::Result<Exit> {
    let options = args.command.options()?;
    options.store.check()?;
    let started_at_ms = now_ms();
    let exe = std::env::current_exe()
        .context("cannot find the iomark binary to run the limited child")?;
    let child = || {
        let mut c = Command::new(&exe);
        c.args(CHILD);
        c
    };
    let stop = signals::stop_flag()?;
    let mut stream = options
        .stream
        .then(|| iomark_mem::json_stream::JsonStream::start(&options.plan));
    // Stored from the start, so the run shows in progress with its seconds
    // (`iomark serve`), and a killed one stays interrupted.
    let mut begun = options.plan.document(
        options.plan.begun(),
        crate::record::command_line(),
        started_at_ms,
    );
    let mut sink = options.store.sink();
    sink.begin(&mut begun);
    // Where the run is, on a terminal's status line (as disk's progress).
    let mut line = ProgressLine::new(stream.is_none() && terminal::wanted(false));
    let run = {
        let mut watch =
            iomark_mem::live::MemWatch::new(&mut sink, stream.as_mut()).showing(&mut line);
        options.plan.run_observed(stop, child, &mut watch)
    };
    line.close();
    let run = run?;
    let mut doc = options
        .plan
        .document(run, crate::record::command_line(), started_at_ms);
    sink.finish(&mut doc);
    match stream {
        Some(s) => s.end(&doc),
        None => {
            let text = options
                .output
                .render_for(&doc, Some(terminal::text_width()))?;
            // A closed pipe surfaces as an error that main treats as success.
            std::io::stdout().lock().write_all(text.as_bytes())?;
        }
    }
    ended(&doc)
}

/// How a printed and stored mem run ends, alone or across MPI ranks: a
/// killed kernel or a failed check is an error, a stop is 130.
pub(crate) fn ended(doc: &iomark_model::RunDocument) -> anyhow::Result<Exit> {
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
#[path = "mem_tests.rs"]
mod tests;
