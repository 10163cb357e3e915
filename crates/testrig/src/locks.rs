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
    /// The device of the locked file, `(major, minor)`.
    pub device: (u32, u32),
    /// The inode of the locked file.
    pub inode: u64,
    /// The first byte of a range lock (`0` for whole-file locks).
    pub start: String,
}

impl KernelLock {
    /// Whether the lock is on the file `meta` describes: its device and
    /// inode both (an inode number alone is unique only within one file
    /// system, and tmpfs's run as high as ext4's).
    pub fn is_on(&self, meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        let dev = meta.dev();
        self.inode == meta.ino() && self.device == (libc::major(dev), libc::minor(dev))
    }
}

/// Every lock and waiting request the kernel lists now.
///
/// In one `read`: the kernel lists `/proc/locks` consistently within one
/// call only. `read_to_string` reads in growing pieces, and between two
/// pieces other threads' locks come and go, which shifts the listing under
/// the reader's offset: a line of a lock held throughout can be skipped
/// (seen once in a fresh-machine check, as a WAL connection's shared lock
/// "lost" while the store's other tests ran).
pub fn kernel_locks() -> Vec<KernelLock> {
    use std::io::Read;
    let mut buf = vec![0u8; 4 << 20];
    let n = std::fs::File::open("/proc/locks")
        .and_then(|mut f| f.read(&mut buf))
        .expect("/proc/locks is readable");
    assert!(
        n < buf.len(),
        "/proc/locks did not fit one read of {} bytes",
        buf.len()
    );
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .filter_map(parse)
        .collect()
}

fn parse(line: &str) -> Option<KernelLock> {
    let mut f = line.split_whitespace().skip(1).peekable();
    let waiting = f.next_if_eq(&"->").is_some();
    let class = f.next()?.to_string();
    let _mode = f.next()?;
    let kind = f.next()?.to_string();
    let pid = f.next()?.to_string();
    // `MAJ:MIN:INODE`, the device numbers in hex.
    let mut file = f.next()?.split(':');
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    let device = (hex(file.next()?)?, hex(file.next()?)?);
    let inode = file.next()?.parse().ok()?;
    let start = f.next()?.to_string();
    Some(KernelLock {
        waiting,
        class,
        kind,
        pid,
        device,
        inode,
        start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_taken_here_is_on_its_file_and_not_on_another() {
        let dir = std::env::temp_dir();
        let path = dir.join(format!("iomark-testrig-lock-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        // std's File::lock is flock(2) on Linux.
        file.lock().unwrap();
        let meta = file.metadata().unwrap();
        let mine = kernel_locks();
        let shm = std::fs::metadata("/dev/shm").unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(
            mine.iter().any(|l| l.class == "FLOCK" && l.is_on(&meta)),
            "{mine:?}"
        );
        assert!(!mine.iter().any(|l| l.is_on(&shm)), "{mine:?}");
    }

    #[test]
    fn held_and_waiting_lines_both_parse() {
        let held = parse("1: FLOCK  ADVISORY  WRITE 4242 00:2f:1234 0 EOF").unwrap();
        assert!(!held.waiting);
        assert_eq!(
            (held.class.as_str(), held.kind.as_str()),
            ("FLOCK", "WRITE")
        );
        assert_eq!((held.pid.as_str(), held.inode), ("4242", 1234));
        assert_eq!(held.device, (0, 0x2f));
        let waits = parse("1: -> FLOCK  ADVISORY  READ 4243 fd:01:99 0 EOF").unwrap();
        assert!(waits.waiting);
        assert_eq!((waits.kind.as_str(), waits.inode), ("READ", 99));
        assert_eq!(waits.device, (0xfd, 1));
        let range = parse("7: POSIX  ADVISORY  READ 10 08:01:5 1073741826 1073742335").unwrap();
        assert_eq!(range.start, "1073741826");
    }
}
