//! Which stored runs are going now. A run being recorded holds an
//! abstract Unix socket named after its store, its id and its process
//! (`@iomark-run/STORE/ID/PID`): it leaves no file, and the kernel takes it
//! away with the process however that ends, `kill -9` included. Readers on
//! the same machine list them from `/proc/net/unix`, and such a run reads
//! back as [`RunStatus::Running`]; once its process is gone, as the
//! interrupted run it is stored as, at once. Abstract sockets belong to a
//! network namespace, and a fleet's runs are on other machines: those read
//! back as interrupted while they go, and only `in_progress` (serve's live
//! pages) also counts a run that stored a second in the last [`FRESH_MS`].

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

use iomark_model::stored::RunSummary;
use iomark_model::RunStatus;

use crate::RunId;

/// A run that stored a second this recently is in progress (`in_progress`).
pub const FRESH_MS: u64 = 10_000;

const PREFIX: &str = "iomark-run/";

/// A run's presence while it is recorded: its name goes with it.
#[derive(Debug)]
pub struct Presence {
    _socket: UnixListener,
}

impl Presence {
    /// Say that run `id` of the store at `location` is going, in this
    /// process.
    pub fn announce(location: &str, id: RunId) -> std::io::Result<Presence> {
        let name = format!(
            "{PREFIX}{}/{}/{}",
            store_key(location),
            id.0,
            std::process::id()
        );
        let socket = UnixListener::bind_addr(&SocketAddr::from_abstract_name(name)?)?;
        Ok(Presence { _socket: socket })
    }
}

/// The runs of the store at `location` going on this machine (in this
/// network namespace), each with its process's id.
pub fn running_here(location: &str) -> Vec<(RunId, u32)> {
    std::fs::read_to_string("/proc/net/unix")
        .map(|table| announced(&table, &store_key(location)))
        .unwrap_or_default()
}

/// `summaries` read back as running where their runs are going here.
pub(crate) fn mark_running(location: &str, summaries: &mut [RunSummary]) {
    if !summaries.iter().any(|s| s.status == RunStatus::Interrupted) {
        return;
    }
    let here = running_here(location);
    for s in summaries
        .iter_mut()
        .filter(|s| s.status == RunStatus::Interrupted)
    {
        if here.iter().any(|(id, _)| *id == s.id) {
            s.status = RunStatus::Running;
        }
    }
}

/// The runs `/proc/net/unix`'s `table` lists for the store `key`: its
/// last column is the path, `@` and the name for an abstract socket.
fn announced(table: &str, key: &str) -> Vec<(RunId, u32)> {
    let prefix = format!("@{PREFIX}{key}/");
    table
        .lines()
        .filter_map(|l| l.split_whitespace().nth(7)?.strip_prefix(prefix.as_str()))
        .filter_map(|rest| {
            let (id, pid) = rest.split_once('/')?;
            Some((RunId(id.parse().ok()?), pid.parse().ok()?))
        })
        .collect()
}

/// A name for a store that is the same in every iomark build (FNV-1a, 64
/// bits, of its canonical path, or of the URL as given).
fn store_key(location: &str) -> String {
    let canonical = std::fs::canonicalize(location)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| location.to_string());
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in canonical.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_presence_is_listed_while_held_and_gone_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        std::fs::write(&db, b"").unwrap();
        let location = db.display().to_string();
        let presence = Presence::announce(&location, RunId(12)).unwrap();
        assert_eq!(running_here(&location), [(RunId(12), std::process::id())]);
        // The same store by another spelling of its path.
        let other = format!("{}/./r.db", dir.path().display());
        assert_eq!(running_here(&other), [(RunId(12), std::process::id())]);
        // Another store's runs are not this one's.
        assert!(running_here("/nonexistent/other.db").is_empty());
        drop(presence);
        assert!(running_here(&location).is_empty());
    }

    #[test]
    fn the_table_s_abstract_names_are_read_and_others_skipped() {
        let key = "00000000000000ff";
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 29713 @iomark-run/00000000000000ff/7/4242\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 29714 @iomark-run/00000000000000aa/8/4243\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 29715 /run/systemd/notify\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 29716\n";
        assert_eq!(announced(table, key), [(RunId(7), 4242)]);
    }
}
