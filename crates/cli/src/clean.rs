//! `iomark clean PATH`: stale test files of killed runs removed.

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
