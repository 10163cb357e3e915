//! `iomark clean PATH` and `iomark engines`.

use std::path::PathBuf;

use clap::Args;
use iomark_model::disk::EngineKind;

use crate::exit::Exit;

/// The raw arguments of `iomark clean`.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// The directory to clean.
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: PathBuf,
}

/// Remove stale test files; files of runs still going are kept.
pub fn run(args: CleanArgs) -> anyhow::Result<Exit> {
    if !args.path.is_dir() {
        anyhow::bail!(
            "{} is not a directory: name the directory a killed run tested in",
            args.path.display()
        );
    }
    let removed = iomark_disk::target::remove_stale_test_files(&args.path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.path.display()))?;
    for p in &removed {
        println!("removed {}", p.display());
    }
    if removed.is_empty() {
        println!("no stale iomark test files in {}", args.path.display());
    }
    Ok(Exit::Success)
}

/// List the engines compiled in.
pub fn engines() -> anyhow::Result<Exit> {
    for e in EngineKind::ALL {
        let note = match (e, iomark_disk::engine::io_uring_available()) {
            (EngineKind::IoUring, Err(why)) => format!(" [{why}]"),
            _ => String::new(),
        };
        println!(
            "{:<11} {}{note}",
            e.as_str(),
            iomark_disk::engine::describe(e)
        );
    }
    Ok(Exit::Success)
}
