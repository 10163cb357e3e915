//! The process exit codes, in one place.

use std::process::ExitCode;

/// How a command ended, as the shell sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything went as asked.
    Success,
    /// A comparison found a regression past its threshold.
    Regression,
    /// Bad input, refused, or failed.
    Error,
    /// `--verify` read back blocks that differ from what was written (fio
    /// too exits non-zero when its verify fails).
    DataErrors,
    /// The run measured, and its figures were printed, but the store
    /// failed (full, read-only, locked, gone): scripts that gate on stored
    /// runs must not take the silence for a stored result.
    NotStored,
    /// A comparison found no regression but could not judge every figure
    /// against its threshold: the samples can neither show a loss past it
    /// nor rule one out. Not a pass: a CI job that took it for one would
    /// let a 25% loss through (issue 46).
    CannotTell,
    /// Stopped by Ctrl-C, SIGTERM or SIGHUP (all three raise the same flag).
    Interrupted,
}

impl Exit {
    /// The number the shell sees.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Regression => 1,
            Exit::Error => 2,
            Exit::DataErrors => 3,
            Exit::NotStored => 4,
            Exit::CannotTell => 5,
            Exit::Interrupted => 130,
        }
    }

    /// How a disk run that finished without an error ended: a stop wins
    /// over bad blocks (a stopped check is not a complete one).
    pub fn of_disk_run(interrupted: bool, verify_failed: bool) -> Exit {
        if interrupted {
            Exit::Interrupted
        } else if verify_failed {
            Exit::DataErrors
        } else {
            Exit::Success
        }
    }
}

impl Exit {
    /// A success becomes [`Exit::NotStored`] when a run's store failed on
    /// the way (`crate::record`); every other outcome says more already.
    pub fn or_not_stored(self) -> Exit {
        if self == Exit::Success && crate::record::a_run_was_lost() {
            Exit::NotStored
        } else {
            self
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e.code())
    }
}

/// Writes `text` to standard output. Unlike `print!`, which panics, a
/// closed pipe (`iomark ... | head`) comes back as an error that
/// [`is_broken_pipe`] recognises, and the run ends quietly.
pub fn print(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Writes one JSON document and a newline to standard output, a closed
/// pipe coming back as [`print()`]'s does.
pub fn print_json(v: &impl serde::Serialize) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    iomark_text::json::write(&mut out, v)?;
    std::io::Write::flush(&mut out)
}

/// Whether the error chain ends in a broken pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
