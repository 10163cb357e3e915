//! The file locks the kernel lists in `/proc/locks`, for tests that show
//! who holds or waits for a lock (the store's connections, a sweep of
//! test files waiting for a directory).

/// One line of `/proc/locks`: `N: [->] CLASS MODE KIND PID MAJ:MIN:INODE
/// START END`, where `->` marks a request waiting for the lock above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelLock {
    /// A request that waits, not a lock held.
    pub waiting: bool,
    /// `POSIX`, `FLOCK`, `OFDLCK`, `LEASE`, ...
    pub class: String,
    /// `READ` or `WRITE`.
    pub kind: String,
    /// The process that holds or waits (`-1` for OFD locks, kept as text).
    pub pid: String,
    /// The inode of the locked file.
    pub inode: u64,
    /// The first byte of a range lock (`0` for whole-file locks).
    pub start: String,
}

/// Every lock and waiting request the kernel lists now.
pub fn kernel_locks() -> Vec<KernelLock> {
    let text = std::fs::read_to_string("/proc/locks").expect("/proc/locks is readable");
    text.lines().filter_map(parse).collect()
}

fn parse(line: &str) -> Option<KernelLock> {
    let mut f = line.split_whitespace().skip(1).peekable();
    let waiting = f.next_if_eq(&"->").is_some();
    let class = f.next()?.to_string();
    let _mode = f.next()?;
    let kind = f.next()?.to_string();
    let pid = f.next()?.to_string();
    let inode = f.next()?.rsplit(':').next()?.parse().ok()?;
    let start = f.next()?.to_string();
    Some(KernelLock {
        waiting,
        class,
        kind,
        pid,
        inode,
        start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_and_waiting_lines_both_parse() {
        let held = parse("1: FLOCK  ADVISORY  WRITE 4242 00:2f:1234 0 EOF").unwrap();
        assert!(!held.waiting);
        assert_eq!(
            (held.class.as_str(), held.kind.as_str()),
            ("FLOCK", "WRITE")
        );
        assert_eq!((held.pid.as_str(), held.inode), ("4242", 1234));
        let waits = parse("1: -> FLOCK  ADVISORY  READ 4243 fd:01:99 0 EOF").unwrap();
        assert!(waits.waiting);
        assert_eq!((waits.kind.as_str(), waits.inode), ("READ", 99));
        let range = parse("7: POSIX  ADVISORY  READ 10 08:01:5 1073741826 1073742335").unwrap();
        assert_eq!(range.start, "1073741826");
    }
}
