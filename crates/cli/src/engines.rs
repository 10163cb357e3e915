//! `iomark engines`: the I/O engines compiled in, and whether each can
//! run here.

use clap::Args;

use crate::exit::Exit;

/// The raw arguments of `iomark engines`.
#[derive(Debug, Args)]
pub struct EnginesArgs {
    /// Print one JSON document (docs/result-schema.md) instead of text.
    #[arg(long)]
    json: bool,
}

/// List the engines compiled in, and whether each can run here.
pub fn run(args: EnginesArgs) -> anyhow::Result<Exit> {
    let engines = iomark_disk::engine_availability();
    if args.json {
        crate::exit::print_json(&iomark_text::json::engines(&engines))?;
    } else {
        crate::exit::print(&iomark_text::engine_list(&engines))?;
    }
    Ok(Exit::Success)
}
