//! fio's habits on `iomark disk`: `--output-format`, `--direct=0|1`, and
//! job files (`--job FILE`, `iomark fio FILE`), run one job after another
//! and stored as one run. The job file's format and checks live in
//! [`iomark_disk::fio_job`], fio's JSON layout in [`iomark_text::fio_json`];
//! this module reads the file, runs the plans and prints.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use iomark_disk::fio_job;
use iomark_disk::lifecycle::{RunJob, RunOptions, RunPlan};
use iomark_host::cgroup::SelfLimit;

use crate::disk_args::DiskArgs;
use crate::exit::Exit;
use crate::record::command_line;

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
    // Every job checked before anything is opened or written; --repeat
    // runs each job of the file that many times.
    let repeat = args.repeat.unwrap_or(1);
    let jobs = parsed
        .jobs
        .iter()
        .map(|j| j.run_job(args.path_given(), &args.allow_write, repeat))
        .collect::<Result<Vec<RunJob>, _>>()
        .with_context(|| file.display().to_string())?;
    let first = &jobs[0].plan.request.path;
    if let Some((j, p)) = parsed
        .jobs
        .iter()
        .zip(&jobs)
        .find(|(_, p)| &p.plan.request.path != first)
    {
        bail!(
            "{}: job [{}] (line {}) runs on {}, the first job on {}: iomark stores one target \
             per run; give PATH to run every job on one, or split the file",
            file.display(),
            j.name,
            j.line,
            p.plan.request.path.display(),
            first.display()
        );
    }
    say_notes(&parsed);
    let limit = args.mem_limit.map(SelfLimit::enter).transpose()?;
    let options = RunOptions {
        keep_cache: args.prof.settings.keep_cache,
        rated: args.rated.clone(),
        probe_first: None,
        keep_verify_file: args.prof.settings.keep_verify_file,
        limit: limit.as_ref(),
        command_line: command_line(),
    };
    let plan = RunPlan {
        name: PROFILE,
        jobs,
    };
    crate::disk::run_plan(args, &plan, &options, false)
}

/// The profile name a job file's run is stored under.
const PROFILE: &str = "fio-job";

/// Say once where iomark runs the file differently from fio.
fn say_notes(parsed: &fio_job::FioJobFile) {
    let mut said: Vec<&str> = Vec::new();
    for j in &parsed.jobs {
        for n in &j.notes {
            if !said.contains(&n.as_str()) {
                eprintln!("iomark: note: {n}");
                said.push(n);
            }
        }
    }
    let together = parsed.concurrent_in_fio();
    if !together.is_empty() {
        // Named up to a few: a file of thousands of jobs gets one line.
        const NAMED: usize = 5;
        let mut names = together[..together.len().min(NAMED)].join(", ");
        if together.len() > NAMED {
            names.push_str(&format!(" and {} more", together.len() - NAMED));
        }
        eprintln!(
            "iomark: note: fio would start {} together with the job before (no stonewall); \
             iomark runs one job at a time, each on its own",
            iomark_text::escape_controls(&names)
        );
    }
}
