//! A memory cgroup for one run: created with a limit, joined by the child
//! process before it allocates, read for its record, removed when dropped.
//!
//! cgroup v1 (`/sys/fs/cgroup/memory`, `memory.limit_in_bytes`) is preferred
//! where mounted, as on the research VM whose v2 mount has no memory
//! controller; v2 (`memory.max`) is used where it offers memory. Swap is not
//! limited (`memsw` / `memory.swap.max` untouched), so a heap run can swap if
//! the machine has swap.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use iomark_model::mem::CgroupUsage;
use iomark_model::units::Bytes;

/// Why a memory cgroup could not be made, joined or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CgroupError {
    /// Memory limits need root.
    #[error("--mem-limit needs root to create a memory cgroup (run as root or drop --mem-limit)")]
    NeedsRoot,
    /// No usable memory cgroup controller.
    #[error("--mem-limit needs the memory cgroup controller, found neither {v1} nor memory in {v2} (mount the memory controller or drop --mem-limit)")]
    NoMemoryCgroup {
        /// Where v1 was looked for.
        v1: &'static str,
        /// Where v2 was looked for.
        v2: &'static str,
    },
    /// A cgroup file operation failed.
    #[error("memory cgroup {path}: {what}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The system's answer.
        source: io::Error,
    },
    /// The limit is below what a process needs to run at all.
    #[error("--mem-limit {limit} is too small for iomark itself: use at least {min}")]
    TooSmall {
        /// The limit asked for.
        limit: Bytes,
        /// The smallest that works.
        min: Bytes,
    },
}

const V1_ROOT: &str = "/sys/fs/cgroup/memory";
const V2_ROOT: &str = "/sys/fs/cgroup";
const PREFIX: &str = "iomark-mem-";

/// Which cgroup interface is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// Per-controller hierarchies.
    V1,
    /// The unified hierarchy.
    V2,
}

impl Version {
    /// `v1` or `v2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V2 => "v2",
        }
    }
}

/// The memory cgroup interface this machine offers, if any.
pub fn detect() -> Option<Version> {
    if Path::new(V1_ROOT).join("memory.limit_in_bytes").exists() {
        return Some(Version::V1);
    }
    let controllers = fs::read_to_string(Path::new(V2_ROOT).join("cgroup.controllers")).ok()?;
    controllers
        .split_whitespace()
        .any(|c| c == "memory")
        .then_some(Version::V2)
}

/// The interface to use, or why a limit cannot be set here (checked before
/// any work starts, so a refusal comes in the first second).
pub fn available() -> Result<Version, CgroupError> {
    if !rustix::process::geteuid().is_root() {
        return Err(CgroupError::NeedsRoot);
    }
    detect().ok_or(CgroupError::NoMemoryCgroup {
        v1: V1_ROOT,
        v2: "/sys/fs/cgroup/cgroup.controllers",
    })
}

/// One memory cgroup, removed on drop.
#[derive(Debug)]
pub struct MemCgroup {
    dir: PathBuf,
    version: Version,
    limit: Bytes,
    oom_before: u64,
}

impl MemCgroup {
    /// Create a group limited to `limit` bytes. Needs root and a memory
    /// controller.
    pub fn create(limit: Bytes) -> Result<MemCgroup, CgroupError> {
        let version = available()?;
        let root = match version {
            Version::V1 => Path::new(V1_ROOT),
            Version::V2 => {
                enable_v2_memory();
                Path::new(V2_ROOT)
            }
        };
        remove_stale(root);
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let dir = root.join(name);
        fs::create_dir(&dir).map_err(|source| CgroupError::Io {
            path: dir.clone(),
            what: "create",
            source,
        })?;
        // From here on Drop removes the directory.
        let mut group = MemCgroup {
            dir,
            version,
            limit,
            oom_before: 0,
        };
        let file = match version {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        };
        group.write(file, &limit.get().to_string(), "set the limit")?;
        group.oom_before = group.oom_kills();
        Ok(group)
    }

    /// Let the group's pages go to swap up to `swap` bytes beyond the limit
    /// (v1 `memory.memsw.limit_in_bytes` = limit + swap, v2
    /// `memory.swap.max`). `false` where the kernel does not account swap
    /// (v1 without `memsw`), in which case swap is bounded only by the area.
    pub fn allow_swap(&self, swap: Bytes) -> Result<bool, CgroupError> {
        let (file, value) = match self.version {
            Version::V1 => (
                "memory.memsw.limit_in_bytes",
                self.limit.get().saturating_add(swap.get()),
            ),
            Version::V2 => ("memory.swap.max", swap.get()),
        };
        if !self.dir.join(file).exists() {
            return Ok(false);
        }
        self.write(file, &value.to_string(), "allow swap")?;
        Ok(true)
    }

    /// The file a process writes `0` to, to move itself into the group.
    pub fn procs_path(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// The interface in use.
    pub fn version(&self) -> Version {
        self.version
    }

    /// OOM kills recorded by the group since it was created.
    pub fn oom_kills(&self) -> u64 {
        let (file, key) = match self.version {
            Version::V1 => ("memory.oom_control", "oom_kill"),
            Version::V2 => ("memory.events", "oom_kill"),
        };
        self.keyed(file, key)
            .unwrap_or(0)
            .saturating_sub(self.oom_before)
    }

    /// What the group recorded about the run.
    pub fn usage(&self) -> CgroupUsage {
        let (peak, hits) = match self.version {
            Version::V1 => (
                self.single("memory.max_usage_in_bytes"),
                self.single("memory.failcnt"),
            ),
            Version::V2 => (
                self.single("memory.peak"),
                self.keyed("memory.events", "max"),
            ),
        };
        CgroupUsage {
            version: self.version.as_str().to_string(),
            limit: self.limit,
            peak: peak.map(Bytes),
            oom_kills: self.oom_kills(),
            limit_hits: hits,
            major_faults: self.keyed("memory.stat", "pgmajfault"),
        }
    }

    fn write(&self, file: &str, value: &str, what: &'static str) -> Result<(), CgroupError> {
        let path = self.dir.join(file);
        fs::write(&path, value).map_err(|source| CgroupError::Io { path, what, source })
    }

    fn single(&self, file: &str) -> Option<u64> {
        fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn keyed(&self, file: &str, key: &str) -> Option<u64> {
        let text = fs::read_to_string(self.dir.join(file)).ok()?;
        text.lines().find_map(|l| {
            let mut it = l.split_whitespace();
            (it.next()? == key).then(|| it.next()?.parse().ok())?
        })
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        // A killed child may take a moment to leave the group.
        for _ in 0..50 {
            match fs::remove_dir(&self.dir) {
                Ok(()) => return,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return,
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

/// Move the calling process into the group whose `cgroup.procs` is `procs`.
pub fn join(procs: &Path) -> Result<(), CgroupError> {
    fs::write(procs, "0").map_err(|source| CgroupError::Io {
        path: procs.to_path_buf(),
        what: "join",
        source,
    })
}

/// Offer the memory controller to the root's children (v2); harmless when it
/// already is, and the limit write reports the failure otherwise.
fn enable_v2_memory() {
    let _ = fs::write(Path::new(V2_ROOT).join("cgroup.subtree_control"), "+memory");
}

/// Remove groups left by runs whose process is gone (killed parent).
fn remove_stale(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next() else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = fs::remove_dir(e.path());
        }
    }
}

/// The calling process, moved into a new limited group for as long as this
/// lives: what it reads, writes and maps is charged to the group, so the
/// page cache and file mappings are held to the limit as on a machine with
/// that much memory. Dropping it moves the process back and removes the
/// group.
#[derive(Debug)]
pub struct SelfLimit {
    group: MemCgroup,
    home: PathBuf,
}

impl SelfLimit {
    /// The smallest limit for a whole iomark process: its own buffers
    /// and tables must fit.
    pub const MIN: Bytes = Bytes(32 << 20);

    /// Create a group of `limit` bytes (at least [`SelfLimit::MIN`]) and
    /// move this process into it.
    pub fn enter(limit: Bytes) -> Result<SelfLimit, CgroupError> {
        if limit < Self::MIN {
            return Err(CgroupError::TooSmall {
                limit,
                min: Self::MIN,
            });
        }
        let group = MemCgroup::create(limit)?;
        let home = current_procs(group.version()).ok_or_else(|| CgroupError::Io {
            path: PathBuf::from("/proc/self/cgroup"),
            what: "find the memory group of this process",
            source: io::Error::from(io::ErrorKind::NotFound),
        })?;
        join(&group.procs_path())?;
        Ok(SelfLimit { group, home })
    }

    /// What the group recorded so far.
    pub fn usage(&self) -> CgroupUsage {
        self.group.usage()
    }
}

impl Drop for SelfLimit {
    fn drop(&mut self) {
        // Leave first: a group with a process in it cannot be removed.
        let _ = join(&self.home);
    }
}

/// The `cgroup.procs` file of the memory group this process is in now.
fn current_procs(version: Version) -> Option<PathBuf> {
    let text = fs::read_to_string("/proc/self/cgroup").ok()?;
    let (root, relative) = text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        match version {
            Version::V1 if controllers.split(',').any(|c| c == "memory") => Some((V1_ROOT, path)),
            Version::V2 if controllers.is_empty() => Some((V2_ROOT, path)),
            _ => None,
        }
    })?;
    let dir = Path::new(root).join(relative.trim_start_matches('/'));
    Some(dir.join("cgroup.procs"))
}
