//! The test files of killed runs: found by their exact name, owner, mode
//! and kind, and removed only when nobody holds their lock and the name
//! still leads to the file that was checked (`iomark_host::test_files`).

use std::io;
use std::path::{Path, PathBuf};

use rustix::fs::OFlags;

use super::identity::open_no_symlinks;
pub(super) use iomark_host::test_files::remove_stale_in;
pub use iomark_host::test_files::Sweep;

/// Remove test files in `dir` left by killed runs. Files of runs still
/// going (locked) are left alone, and so is anything iomark would not have
/// made: another name, another owner, another mode, not a regular file.
/// Returns what was removed.
pub fn remove_stale_test_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    Ok(sweep_test_files(dir)?.removed)
}

/// [`remove_stale_test_files`], also saying which files named as test
/// files were kept and why.
pub fn sweep_test_files(dir: &Path) -> io::Result<Sweep> {
    let resolved = std::fs::canonicalize(dir)?;
    let fd = open_no_symlinks(&resolved, OFlags::RDONLY | OFlags::DIRECTORY)
        .map_err(|e| io::Error::other(e.to_string()))?;
    iomark_host::test_files::sweep_in(&fd, dir)
}
