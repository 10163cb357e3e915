//! Skipped tests, counted and, where every rig should be there, refused.
//!
//! A test that cannot find what it needs (root, a loop device, a cgroup,
//! io_uring, a peer tool) returns early, and libtest counts it as passed.
//! That is right on a developer's laptop and wrong in CI, where a missing
//! rig would hide a gap behind a green run. So a skip goes through
//! [`skipped`]: it fails the test under [`REQUIRE_RIGS`], and otherwise
//! writes a line to [`SKIP_LOG`] so that scripts/test can say how many
//! tests of those it counted as passed were skipped.

use std::fs::OpenOptions;
use std::io::Write;

/// The switch under which a skip is a failure: `IOMARK_REQUIRE_RIGS=1`.
pub const REQUIRE_RIGS: &str = "IOMARK_REQUIRE_RIGS";

/// The file each skip appends its line to, when set: `IOMARK_SKIP_LOG`.
pub const SKIP_LOG: &str = "IOMARK_SKIP_LOG";

/// Whether a missing rig fails the test rather than skipping it.
pub fn rigs_required() -> bool {
    std::env::var_os(REQUIRE_RIGS).is_some_and(|v| v == "1")
}

/// Skips the current test, or the part of it that needs what is missing
/// (`reason`): panics under [`REQUIRE_RIGS`], else prints `skipped: REASON`
/// and appends `BINARY TEST: REASON` to [`SKIP_LOG`] (scripts/test counts
/// each test once). The caller returns, or goes on without that part;
/// [`require!`] returns.
///
/// [`require!`]: crate::require
pub fn skipped(reason: &str) {
    if rigs_required() {
        let thread = std::thread::current();
        let test = thread.name().unwrap_or("a test");
        panic!("{test} needs what is missing here ({REQUIRE_RIGS}=1): {reason}");
    }
    log_skip(reason);
}

/// Skips the part of a test that needs a peer built from a source that is
/// not on this machine and that no package registry has (iperf 3.21's
/// release tarball, looked for in `$IOMARK_PEER_TARBALLS`): never a
/// failure, since nothing the project or scripts/test can do brings it, but
/// printed and counted in [`SKIP_LOG`] as every skip is.
pub fn skipped_for_want_of_source(reason: &str) {
    log_skip(reason);
}

fn log_skip(reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    // The test binary too: two binaries may have tests of the same name.
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    eprintln!("skipped: {reason}");
    if let Some(log) = std::env::var_os(SKIP_LOG) {
        // One write of one line with O_APPEND: lines of tests running at
        // once do not interleave.
        let line = format!("{binary} {test}: {}\n", reason.replace('\n', " "));
        let written = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!("cannot record the skip in {}: {e}", log.to_string_lossy());
        }
    }
}
