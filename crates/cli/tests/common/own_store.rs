//! Every run the tests make goes to a results database of the test
//! process's own, never to the user's (`$XDG_DATA_HOME/iomark/results.db`):
//! a plain `cargo test` must not fill it with test runs. `scripts/test`
//! gives the suite a scratch `XDG_DATA_HOME` too; this covers every other
//! way the tests are run. Tests that name their own `--db` or
//! `XDG_DATA_HOME` still do.

use std::path::Path;

/// Where each test process keeps its results: `<pid>/` below this.
const ROOT: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/test-results");

// Set before `main`, while the process has one thread (so no other thread
// reads the environment as it changes), and so inherited by every iomark
// the tests start: directly, under mpirun, in a namespace or a cgroup.
#[ctor::ctor(unsafe)]
fn results_of_this_process() {
    let root = Path::new(ROOT);
    remove_stale(root);
    let mine = root.join(std::process::id().to_string());
    if std::fs::create_dir_all(&mine).is_ok() {
        std::env::set_var("XDG_DATA_HOME", &mine);
    }
}

/// The directories of test processes that are gone (finished, or killed
/// before they could clean up): removed.
fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let gone = e
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
        if gone {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
