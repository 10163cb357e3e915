//! `iomark disk`: a classic profile (CrystalDiskMark 8 by default, see
//! docs/profiles.md) or a storage job with fio's vocabulary, on a test file,
//! an existing file or a block device.
//!
//! This module hands the flags' settings to
//! [`iomark_disk::lifecycle::run_settings`] (check and plan, open, record,
//! probe, run, check, store) with the run's sink and display, and prints
//! what it measured; the arguments are in `disk_args`, the job's defaults
//! and checks in [`iomark_disk::job`], each profile's in its module of
//! [`iomark_disk::profiles`]. A job file (`--job`) runs in `fio`.

use std::sync::atomic::AtomicBool;

use iomark_disk::lifecycle::{self, RunEnd, RunError, RunOptions, VerifyFile};
use iomark_pipeline::{JsonStream, RunDisplay, RunSink};
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
    let settings = args.settings();
    run_through(&args, |options, sink, display, stop| {
        lifecycle::run_settings(settings, options, sink, display, stop)
    })
}

/// Run a disk run through `runner` ([`lifecycle::run_settings`] for
/// `iomark disk`, [`lifecycle::run`] of a job file's plan), given its
/// options, sink, display and stop flag; stored as `args` say, and
/// printed. The exit status fio would give.
pub(crate) fn run_through(
    args: &DiskArgs,
    runner: impl FnOnce(
        &RunOptions,
        &mut dyn RunSink,
        &mut dyn RunDisplay,
        &'static AtomicBool,
    ) -> Result<RunEnd, RunError>,
) -> anyhow::Result<Exit> {
    let stop = signals::stop_flag()?;
    let options = args.run_options();
    let mut sink = args.store.sink();
    let mut line = ProgressLine::new(terminal::wanted(args.quiet));
    let mut stream = None;
    let display: &mut dyn RunDisplay = if args.json_stream {
        stream.insert(JsonStream::new(std::io::stdout(), line))
    } else {
        &mut line
    };
    let ended = runner(&options, &mut sink, display, stop);
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
