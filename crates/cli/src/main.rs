//! The `iomark` binary: parse, run, map the outcome to an exit code.
//!
//! Exit codes:
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | success |
//! | 1    | a comparison found a regression past its threshold |
//! | 2    | error: bad input, refused, or failed |
//! | 3    | `--verify` or the verify profile found bad or missing blocks |
//! | 4    | measured and printed, but not stored: the store failed midway |
//! | 130  | interrupted (Ctrl-C); what was measured so far is printed and kept |

mod app;
mod clean;
mod cluster;
mod cluster_args;
mod disk;
mod disk_args;
mod engines;
mod exit;
mod fio;
mod info;
mod mem;
mod net;
mod record;
mod report;
mod results;
mod serve;
mod shell;
mod signals;

use std::process::ExitCode;

fn main() -> ExitCode {
    let outcome = if mem::is_child() {
        mem::serve_child()
    } else {
        app::run(app::parse())
    };
    match outcome {
        Ok(code) => code.or_not_stored().into(),
        Err(err) => {
            // A closed pipe (`iomark ... | head`) is not an error.
            if exit::is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            // Messages quote paths and names the user or a file gave:
            // never let their control characters drive the terminal.
            eprintln!(
                "iomark: {}",
                iomark_text::escape_controls(&format!("{err:#}"))
            );
            exit::Exit::Error.into()
        }
    }
}
