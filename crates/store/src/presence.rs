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
//!
//! The name ends in the kernel names of the block devices under the run
//! (`/vda` or `/loop2,vda`: each layer of its chain), so a run finds the
//! others on its device whatever store they write to ([`sharing`]), and
//! names them: "run 12 (pid 3456) is using vda".

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};

use iomark_model::stored::RunSummary;
use iomark_model::{RunDocument, RunStatus};

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
    /// process, on the block devices named `devices` ([`devices_of`]).
    pub fn announce(location: &str, id: RunId, devices: &[String]) -> std::io::Result<Presence> {
        let name = format!(
            "{PREFIX}{}/{}/{}/{}",
            store_key(location),
            id.0,
            std::process::id(),
            devices.join(",")
        );
        let socket = UnixListener::bind_addr(&SocketAddr::from_abstract_name(name)?)?;
        Ok(Presence { _socket: socket })
    }
}

/// The kernel names of the block devices under a run: each layer of its
/// target's chain, top first (`loop2`, then the `vda` its file is on);
/// none for a run on no block device (a mem run on the heap, a net run).
pub fn devices_of(doc: &RunDocument) -> Vec<String> {
    let mut names = Vec::new();
    let mut layer = doc.device.as_ref().and_then(|d| d.device.as_ref());
    while let Some(l) = layer {
        // A name is the kernel's (`sda1`, `nvme0n1`): never a comma or a
        // slash, which the presence's name uses.
        if !l.name.is_empty() && !l.name.contains([',', '/']) && !names.contains(&l.name) {
            names.push(l.name.clone());
        }
        layer = l.lower.first();
    }
    names
}

/// Another iomark run going on this machine on a device this one uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sharer {
    /// Its run id (in its own store).
    pub run: RunId,
    /// Its process.
    pub pid: u32,
    /// The device both use.
    pub device: String,
}

impl Sharer {
    /// `run 12 (pid 3456) is using vda`.
    pub fn words(&self) -> String {
        format!(
            "run {} (pid {}) is using {}",
            self.run, self.pid, self.device
        )
    }
}

/// The runs of other processes going on this machine on one of `devices`.
pub fn sharing(devices: &[String]) -> Vec<Sharer> {
    if devices.is_empty() {
        return Vec::new();
    }
    std::fs::read_to_string("/proc/net/unix")
        .map(|table| sharers(&table, devices, std::process::id()))
        .unwrap_or_default()
}

/// [`sharing`] of `/proc/net/unix`'s `table`, leaving out process `own`.
fn sharers(table: &str, devices: &[String], own: u32) -> Vec<Sharer> {
    let prefix = format!("@{PREFIX}");
    let mut found: Vec<Sharer> = table
        .lines()
        .filter_map(|l| l.split_whitespace().nth(7)?.strip_prefix(prefix.as_str()))
        .filter_map(|rest| {
            let mut parts = rest.splitn(4, '/');
            let (_store, id, pid) = (parts.next()?, parts.next()?, parts.next()?);
            let pid: u32 = pid.parse().ok()?;
            let device = parts
                .next()?
                .split(',')
                .find(|d| devices.iter().any(|mine| mine == d))?;
            let run = RunId(id.parse().ok()?);
            (pid != own).then(|| Sharer {
                run,
                pid,
                device: device.to_string(),
            })
        })
        .collect();
    found.dedup();
    found
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
            let mut parts = rest.split('/');
            let (id, pid) = (parts.next()?, parts.next()?);
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
        let presence = Presence::announce(&location, RunId(12), &["vda".into()]).unwrap();
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
            0000000000000000: 00000002 00000000 00010000 0001 01 29713 @iomark-run/00000000000000ff/7/4242/loop2,vda\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 29714 @iomark-run/00000000000000aa/8/4243\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 29715 /run/systemd/notify\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 29716\n";
        assert_eq!(announced(table, key), [(RunId(7), 4242)]);
        // Whatever its store, a run on vda shares it with one on vda; not
        // with itself, nor with one on another device.
        let vda = Sharer {
            run: RunId(7),
            pid: 4242,
            device: "vda".into(),
        };
        assert_eq!(
            sharers(table, &["vda".into()], 1),
            std::slice::from_ref(&vda)
        );
        assert_eq!(vda.words(), "run 7 (pid 4242) is using vda");
        assert!(sharers(table, &["vda".into()], 4242).is_empty());
        assert!(sharers(table, &["sdb".into()], 1).is_empty());
        // A presence of a run that names no device shares nothing.
        assert!(sharers(table, &[String::new()], 1).is_empty());
    }
}
