//! Why SQLite failed, in words that name a fix, and the waits out of
//! another process's lock.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;
use rustix::io::Errno;

use super::BUSY_TIMEOUT;
use crate::StoreError;

/// SQLite's answers when this user may not write the file, its directory
/// or the mount it is on.
pub(super) fn is_not_writable(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(
            rusqlite::ErrorCode::ReadOnly
                | rusqlite::ErrorCode::CannotOpen
                | rusqlite::ErrorCode::PermissionDenied
        )
    )
}

/// Whether a read-write open failed because the database cannot be
/// written here, so reading it read-only may still work.
pub(super) fn not_writable(e: &StoreError) -> bool {
    match e {
        StoreError::Sqlite { cause, .. } => is_not_writable(cause),
        StoreError::ReadOnly { .. } => true,
        StoreError::CreateDir { cause, .. } => matches!(
            cause.kind(),
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        ),
        _ => false,
    }
}

pub(super) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Run `f` again while another connection holds the lock it needs, for up
/// to [`BUSY_TIMEOUT`].
pub(super) fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = std::time::Instant::now();
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// [`retry_busy`] for an operation that already wrapped its error.
pub(super) fn retry_busy_store<T>(
    mut f: impl FnMut() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let start = std::time::Instant::now();
    loop {
        match f() {
            Err(StoreError::Sqlite { cause, .. })
                if is_busy(&cause) && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Why SQLite failed on `conn`, the database at `path`, as a
/// [`StoreError`] ([`explain`]).
pub(super) fn sqlite_err<'a>(
    conn: &'a Connection,
    path: &'a Path,
) -> impl Fn(rusqlite::Error) -> StoreError + 'a {
    move |cause| explain(path, cause, system_errno(conn))
}

/// What the system said when SQLite last failed on `conn` (the ENOSPC
/// behind a "disk I/O error"); `None` when it said nothing.
pub(super) fn system_errno(conn: &Connection) -> Option<i32> {
    // SAFETY: the handle is that of an open connection, borrowed for the
    // call; sqlite3_system_errno only reads a field of it.
    let errno = unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) };
    (errno != 0).then_some(errno)
}

/// Whether SQLite failed because the file system is full (or the user's
/// quota on it): SQLITE_FULL, or an I/O error the system gave ENOSPC or
/// EDQUOT for (growing the -shm file, syncing).
pub(super) fn is_full(cause: &rusqlite::Error, errno: Option<i32>) -> bool {
    let full = [Errno::NOSPC, Errno::DQUOT].map(|e| Some(e.raw_os_error()));
    cause.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
        || (matches!(
            cause.sqlite_error_code(),
            Some(rusqlite::ErrorCode::SystemIoFailure | rusqlite::ErrorCode::CannotOpen)
        ) && full.contains(&errno))
}

/// Whether `path`, or the nearest directory above it that exists, is on
/// a file system mounted read-only.
pub(super) fn on_read_only_mount(path: &Path) -> bool {
    path.ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .find_map(|p| rustix::fs::statvfs(p).ok())
        .is_some_and(|s| s.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY))
}

/// What a SQLite failure on the database at `path` means, in words where
/// it has a plain cause, since SQLite's own ("disk I/O error", "unable to
/// open database file") name neither it nor a fix: a full file system is
/// [`StoreError::Full`]; a read-only mount, or a database SQLite may only
/// read, is [`StoreError::ReadOnly`]; anything else is
/// [`StoreError::Sqlite`]. `errno` is what the system said, when known.
pub(super) fn explain(path: &Path, cause: rusqlite::Error, errno: Option<i32>) -> StoreError {
    let location = path.display().to_string();
    let code = cause.sqlite_error_code();
    if is_full(&cause, errno) {
        return StoreError::Full {
            location,
            cause: cause.to_string(),
        };
    }
    let may_be_read_only = errno == Some(Errno::ROFS.raw_os_error())
        || matches!(
            code,
            Some(
                rusqlite::ErrorCode::ReadOnly
                    | rusqlite::ErrorCode::CannotOpen
                    | rusqlite::ErrorCode::SystemIoFailure
            )
        );
    if may_be_read_only && on_read_only_mount(path) {
        return StoreError::ReadOnly {
            location,
            why: "the file system it is on is mounted read-only".into(),
        };
    }
    if code == Some(rusqlite::ErrorCode::ReadOnly) {
        return StoreError::ReadOnly {
            location,
            why: cause.to_string(),
        };
    }
    StoreError::Sqlite {
        path: location,
        cause,
    }
}
