//! `mpirun -np N iomark disk DIR --rw write ...`: every rank checks the
//! arguments (a collective status: every rank stops on one's refusal),
//! then runs the plan through the run's lifecycle
//! ([`iomark_disk::lifecycle`]) as a run alone does, with the MPI
//! coordinator ([`iomark_cluster::ranks`]) between the ranks; rank 0
//! records and prints the run with the per-rank table, and under
//! `--json-stream` prints the job's seconds (every rank's summed) as they
//! come.

use anyhow::bail;
use iomark_cluster::ranks::RankCoordinator;
use iomark_cluster::World;
use iomark_disk::lifecycle::{self, RunEnd, RunOptions, RunPlan};
use iomark_disk::plan::{DiskPlan, Workload};
use iomark_pipeline::JsonStream;
use iomark_pipeline::RunDisplay;
use iomark_text::terminal::ProgressLine;

use crate::disk_args::{print_run, DiskArgs};
use crate::exit::Exit;
use crate::signals;

/// Run `iomark disk` as rank `world.rank()` of the job.
pub fn run(args: DiskArgs) -> anyhow::Result<Exit> {
    let world = World::init()?;
    let stop = signals::stop_flag()?;
    let out = run_rank(&args, &world, stop);
    super::leave(&world, out)
}

/// One rank's part; errors are the job's (every rank returns one).
fn run_rank(
    args: &DiskArgs,
    world: &World,
    stop: &'static std::sync::atomic::AtomicBool,
) -> anyhow::Result<Exit> {
    let checked = check(args, world);
    world.all_ok(checked.as_ref().map(drop).map_err(|e| format!("{e:#}")))?;
    let plan = checked?;
    if world.is_root() {
        if let Some(note) = args.workload.engine.and_then(|e| e.note) {
            eprintln!("iomark: note: {note}");
        }
    }
    let profile = matches!(plan.workload, Workload::Profile(..));
    let mut coordinator = RankCoordinator::new(
        world,
        args.cluster.layout(),
        args.cluster.stonewall,
        profile,
        stop,
    );
    let _signals_raise_halt = signals::also_raise(coordinator.halt())?;
    // --mem-limit is refused across ranks (check): none is entered.
    let options = RunOptions {
        mem_limit: None,
        ..args.run_options()
    };
    let mut sink = args.store.sink();
    // No progress line across ranks: only what a rank has to say, and on
    // rank 0 the job's seconds under --json-stream.
    let mut line = ProgressLine::new(false);
    let mut stream = (args.json_stream && world.is_root())
        .then(|| JsonStream::new(std::io::stdout(), ProgressLine::new(false)));
    let display: &mut dyn RunDisplay = match stream.as_mut() {
        Some(stream) => stream,
        None => &mut line,
    };
    let end = lifecycle::run_coordinated(
        &RunPlan::single(plan),
        &options,
        &mut sink,
        display,
        &mut coordinator,
        stop,
    )?;
    Ok(match end {
        RunEnd::Finished(run) => {
            match stream {
                Some(stream) => stream.end(&serde_json::to_value(&run.doc)?)?,
                // The text carries the rank table; fio's layout and the
                // document do not.
                None => print_run(args, &run.doc)?,
            }
            Exit::of_disk_run(run.interrupted(), run.verify_failed)
        }
        RunEnd::Elsewhere => Exit::Success,
        RunEnd::NotStarted | RunEnd::Stopped => Exit::Interrupted,
    })
}

/// The plan (a custom workload, or a profile that runs across ranks) with
/// this rank's target, or why not.
fn check(args: &DiskArgs, world: &World) -> anyhow::Result<DiskPlan> {
    if args.job.is_some() {
        bail!(
            "--job files run alone, not across MPI ranks: use the workload flags (--rw, --bs, ...)"
        );
    }
    if world.is_root() {
        args.store.check()?;
    }
    let mut settings = args.settings();
    if let Some(path) = args.cluster.path_of(world.rank()) {
        if args.path_given().is_some() {
            bail!("--per-rank-path names every rank's path: leave out PATH");
        }
        settings.path = path;
    }
    let plan = settings.build()?;
    plan.check_across_ranks(args.cluster.layout(), args.cluster.stonewall)?;
    if args.mem_limit.is_some() {
        bail!("--mem-limit is not applied across MPI ranks: leave it out");
    }
    if args.rated.is_some() && args.cluster.per_rank_path.is_some() {
        bail!("--rated rates one device, and with --per-rank-path each rank has a path of its own: rate the device in a run on it alone, or lay the ranks out in one directory");
    }
    Ok(plan)
}
