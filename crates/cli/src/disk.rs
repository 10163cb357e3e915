//! `iomark disk`: a classic profile (CrystalDiskMark 8 by default, see
//! docs/profiles.md) or a storage job with fio's vocabulary, on a test file,
//! an existing file or a block device.
//!
//! This module builds the plan, runs it through
//! [`iomark_disk::lifecycle`] (open, record, probe, run, check, store) and
//! prints it; the arguments are in `disk_args`, the job's defaults and checks in
//! [`iomark_disk::job`], each profile's in its module of
//! [`iomark_disk::profiles`]. A job file (`--job`) runs in `fio`.

use iomark_disk::lifecycle::{self, RunEnd, RunOptions, RunPlan, VerifyFile};
use iomark_host::cgroup::SelfLimit;
use iomark_pipeline::JsonStream;
use iomark_text::terminal::{self, ProgressLine};

use crate::disk_args::{print_run, DiskArgs};
use crate::exit::Exit;
use crate::signals;

/// Run `iomark disk`: a custom workload when a workload flag is given,
/// otherwise a profile (cdm by default).
pub fn run(args: DiskArgs) -> anyhow::Result<Exit> {
    args.cluster.check_alone()?;
    args.store.check()?;
    if let Some(note) = args.workload.engine.and_then(|e| e.note) {
        eprintln!("iomark: note: {note}");
    }
    let plan = RunPlan::of_settings(args.settings())?;
    let limit = args.mem_limit.map(SelfLimit::enter).transpose()?;
    let options = args.run_options(limit.as_ref());
    run_plan(&args, &plan, &options)
}

/// Run `plan` through the lifecycle, stored as `args` say, and print it;
/// the exit status fio would give.
pub(crate) fn run_plan(
    args: &DiskArgs,
    plan: &RunPlan,
    options: &RunOptions<'_>,
) -> anyhow::Result<Exit> {
    let stop = signals::stop_flag()?;
    let mut sink = args.store.sink();
    let mut line = ProgressLine::new(terminal::wanted(args.quiet));
    let (ended, stream) = if args.json_stream {
        let mut stream = JsonStream::new(std::io::stdout(), line);
        let ended = lifecycle::run(plan, options, &mut sink, &mut stream, stop);
        (ended, Some(stream))
    } else {
        (
            lifecycle::run(plan, options, &mut sink, &mut line, stop),
            None,
        )
    };
    let run = match ended? {
        RunEnd::Finished(run) => run,
        // Alone, no other process records the run, and a stop always
        // leaves what was measured.
        RunEnd::NotStarted | RunEnd::Elsewhere | RunEnd::Stopped => return Ok(Exit::Interrupted),
    };
    match &run.verify_file {
        Some(VerifyFile::Kept(kept)) => eprintln!(
            "iomark: kept {} for the read phase: iomark disk {} --profile verify --phase read",
            kept.display(),
            args.path_given()
                .map_or_else(|| ".".into(), |p| p.display().to_string())
        ),
        Some(VerifyFile::Removed(path)) => eprintln!("iomark: removed {path}"),
        None => {}
    }
    match stream {
        Some(stream) => stream.end(&serde_json::to_value(&run.doc)?)?,
        None => print_run(args, &run.doc)?,
    }
    // fio exits non-zero when its verify fails; so do a --verify run and
    // the verify profile (bad blocks, or a smaller real size).
    Ok(Exit::of_disk_run(run.interrupted(), run.verify_failed))
}
