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
use iomark_model::now_ms;
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
    Stream(KernelArgs<StreamSettings>),
    /// A k x k weighted-average 2D stencil (3x3 or 15x15) on two f64 arrays.
    Stencil(KernelArgs<StencilSettings>),
    /// The Himeno benchmark: Jacobi sweeps of a 19-point stencil, MFLOPS.
    Himeno(KernelArgs<HimenoSettings>),
    /// Internal: the limited child process of --mem-limit.
    #[command(name = "__child", hide = true)]
    Child,
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

    #[command(flatten)]
    store: crate::record::StoreArgs,
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

impl<K: Args + KernelSettings> KernelArgs<K> {
    fn options(self) -> Result<MemOptions, MemError> {
        Ok(MemOptions {
            plan: self.settings.build(self.kernel.kernel()?)?,
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
        match self {
            MemCommand::Stream(a) => a.options(),
            MemCommand::Stencil(a) => a.options(),
            MemCommand::Himeno(a) => a.options(),
            MemCommand::Child => return Ok(None),
        }
        .map(Some)
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
    let child = || {
        let mut c = Command::new(&exe);
        c.args(["mem", "__child"]);
        c
    };
    let run = options.plan.run(signals::stop_flag()?, child)?;
    let mut doc = options
        .plan
        .document(run, crate::record::command_line(), started_at_ms);
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
    use iomark_model::mem::{HimenoLength, MemJobSpec, MemKernelSpec, StreamSpec};
    use iomark_model::units::Bytes;

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
