//! `mpirun -np N iomark mem stream ...`: every rank runs STREAM on its own
//! arrays, in step with the others, and rank 0 prints and stores the one
//! run merged from the ranks' ([`iomark_cluster::ranks::mem`]).

use std::io::Write;
use std::sync::atomic::AtomicBool;

use anyhow::bail;
use iomark_cluster::ranks::mem::{self, StreamEnd};
use iomark_cluster::World;
use iomark_model::now_ms;
use iomark_pipeline::RunSink;

use crate::exit::Exit;
use crate::mem::{MemArgs, MemOptions};
use crate::signals;

/// Run `iomark mem stream` as rank `world.rank()` of the job.
pub fn run(args: MemArgs) -> anyhow::Result<Exit> {
    let world = World::init()?;
    let stop = signals::stop_flag()?;
    super::leave(&world, run_rank(args, &world, stop))
}

/// The job, checked: what runs alone only is refused.
fn check(args: MemArgs, world: &World) -> anyhow::Result<MemOptions> {
    let options = args.options()?;
    options.plan.check_across_ranks()?;
    if options.stream {
        bail!("--json-stream runs alone, not across MPI ranks: use --json");
    }
    if world.is_root() {
        options.store.check()?;
    }
    Ok(options)
}

fn run_rank(args: MemArgs, world: &World, stop: &AtomicBool) -> anyhow::Result<Exit> {
    let checked = check(args, world);
    world.all_ok(checked.as_ref().map(drop).map_err(|e| format!("{e:#}")))?;
    let options = checked.expect("checked on every rank");
    let started_at_ms = now_ms();
    let run = match mem::stream(world, &options.plan.spec, stop)? {
        StreamEnd::Merged(run) => *run,
        StreamEnd::Sent => return Ok(Exit::Success),
        StreamEnd::Stopped => return Ok(Exit::Interrupted),
    };
    let mut doc = options
        .plan
        .document(run, crate::record::command_line(), started_at_ms);
    let mut sink = options.store.sink();
    sink.begin(&mut doc);
    sink.finish(&mut doc);
    let width = iomark_text::terminal::text_width();
    let text = options.output.render_for(&doc, Some(width))?;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    crate::mem::ended(&doc)
}
