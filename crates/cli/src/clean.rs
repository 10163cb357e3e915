//! `iomark clean PATH` and `iomark engines`.

use std::path::PathBuf;

use clap::Args;

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
    let sweep = iomark_disk::target::sweep_test_files(&args.path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.path.display()))?;
    let removed = &sweep.removed;
    // Paths are printed escaped: a name may hold a newline or escape.
    let shown =
        |p: &std::path::Path| iomark_text::escape_controls(&p.display().to_string()).into_owned();
    for p in removed {
        crate::exit::print(&format!("removed {}\n", shown(p)))?;
    }
    for (p, why) in &sweep.kept {
        crate::exit::print(&format!("kept {}: {why}\n", shown(p)))?;
    }
    if removed.is_empty() && sweep.kept.is_empty() {
        crate::exit::print(&format!(
            "no stale iomark test files in {}\n",
            shown(&args.path)
        ))?;
    }
    Ok(Exit::Success)
}

/// The raw arguments of `iomark engines`.
#[derive(Debug, Args)]
pub struct EnginesArgs {
    /// Print one JSON document (docs/result-schema.md) instead of text.
    #[arg(long)]
    json: bool,
}

/// List the engines compiled in, and whether each can run here.
pub fn engines(args: EnginesArgs) -> anyhow::Result<Exit> {
    let engines = iomark_disk::engine::availability();
    if args.json {
        crate::exit::print_json(&iomark_text::json::engines(&engines))?;
    } else {
        crate::exit::print(&iomark_text::engine_list(&engines))?;
    }
    Ok(Exit::Success)
}
