//! fio's job files on iomark (`--job FILE`, `iomark fio FILE`; fio's
//! flags, `--output-format` and `--direct=0|1` among them, are
//! `disk_args.rs`'s), run one job after another
//! and stored as one run. The job file's format and checks live in
//! [`iomark_disk::fio_job`] (the file's run plan and notes too), fio's JSON
//! layout in [`iomark_text::fio_json`]; this module reads the file, runs
//! the plan and prints.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use iomark_disk::fio_job;
use iomark_disk::lifecycle;

use crate::disk_args::DiskArgs;
use crate::exit::Exit;

/// `iomark fio FILE [PATH]`: `iomark disk --job FILE [PATH]`.
#[derive(Debug, Args)]
pub struct FioArgs {
    /// The fio job file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub disk: DiskArgs,
}

/// Run `iomark fio`.
pub fn run(mut args: FioArgs) -> anyhow::Result<Exit> {
    args.disk.store.check()?;
    let file = args.file.clone();
    args.disk.job = Some(file.clone());
    run_job_file(&args.disk, &file)
}

/// `iomark disk --job FILE`: the checks `iomark disk` makes first, then
/// the job file.
pub fn run_disk_job(args: &DiskArgs, file: &Path) -> anyhow::Result<Exit> {
    args.cluster.check_alone()?;
    args.store.check()?;
    run_job_file(args, file)
}

/// Refuse what a job file sets itself: workload flags and profiles.
fn check_flags(args: &DiskArgs) -> anyhow::Result<()> {
    let mut given = args.settings().job.given();
    if args.workload.size.is_some() {
        given.push("--size");
    }
    if args.workload.direct_choice().is_some() {
        given.push("--direct/--buffered");
    }
    if let Some(flag) = given.first() {
        bail!("{flag} cannot be combined with --job: set it in the job file instead");
    }
    if args.prof.profile.is_some() {
        bail!("--profile cannot be combined with --job: run one of them");
    }
    Ok(())
}

/// Run every job of a fio job file, one after another, as one stored run.
pub fn run_job_file(args: &DiskArgs, file: &Path) -> anyhow::Result<Exit> {
    check_flags(args)?;
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read job file {}", file.display()))?;
    let parsed = fio_job::parse(&text).with_context(|| file.display().to_string())?;
    // --repeat runs each job of the file that many times.
    let plan = parsed
        .run_plan(
            args.path_given(),
            &args.allow_write,
            args.repeat.unwrap_or(1),
        )
        .with_context(|| file.display().to_string())?;
    for note in parsed.notes() {
        eprintln!("iomark: note: {}", iomark_text::escape_controls(&note));
    }
    crate::disk::run_through(args, |options, sink, display, stop| {
        lifecycle::run(&plan, options, sink, display, stop)
    })
}
