//! The safety rules of targets, on test files and existing files in a
//! scratch directory.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use iomark_model::disk::{DataPattern, TargetKind};
use iomark_model::units::Bytes;

use super::naming::is_test_file_name;
use super::*;

fn request(dir: &Path, size: u64) -> TargetRequest {
    TargetRequest {
        path: dir.to_path_buf(),
        size: Some(Bytes(size)),
        default_size: Bytes(1 << 20),
        write: true,
        allow_write: Vec::new(),
        direct: DirectMode::Buffered,
        data: DataPattern::Random,
        seed: 1,
        io_sizes: vec![Bytes(4096)],
        prep: TestFilePrep::Filled,
    }
}

/// Open `req` with the stop flag down.
fn open(req: &TargetRequest) -> Result<OpenTarget, DiskError> {
    OpenTarget::open(req, &AtomicBool::new(false))
}

fn test_files(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| is_test_file_name(p.file_name().unwrap().as_bytes()))
        .collect()
}

#[test]
fn test_file_is_filled_and_removed_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let t = open(&request(dir.path(), 3 << 20)).unwrap();
    let files = test_files(dir.path());
    assert_eq!(files.len(), 1);
    let data = fs::read(&files[0]).unwrap();
    assert_eq!(data.len(), 3 << 20);
    // Filled with random data: no run of zero pages (holes) anywhere.
    assert!(data.chunks(4096).all(|c| c.iter().any(|&b| b != 0)));
    drop(t);
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn interrupted_fill_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(true);
    let err = OpenTarget::open(&request(dir.path(), 3 << 20), &stop).unwrap_err();
    assert!(matches!(err, DiskError::Interrupted));
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn stale_files_are_removed_but_live_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let stale = dir.path().join("iomark-00000000deadbeef.tmp");
    write_0600(&stale);
    // Near misses iomark never makes: another name, mode or kind.
    let other = dir.path().join("notes.tmp");
    write_0600(&other);
    let notes = dir.path().join("iomark-notes.tmp");
    write_0600(&notes);
    let upper = dir.path().join("iomark-00000000DEADBEEF.tmp");
    write_0600(&upper);
    let readable = dir.path().join("iomark-00000000cafebabe.tmp");
    fs::write(&readable, b"mode 0644").unwrap();
    fs::set_permissions(&readable, fs::Permissions::from_mode(0o644)).unwrap();
    let subdir = dir.path().join("iomark-0000000000000001.tmp");
    fs::create_dir(&subdir).unwrap();
    let link = dir.path().join("iomark-0000000000000002.tmp");
    std::os::unix::fs::symlink(&other, &link).unwrap();
    let live = open(&request(dir.path(), 1 << 20)).unwrap();
    assert_eq!(live.removed_stale, vec![stale.clone()]);
    assert!(!stale.exists() && other.exists());
    for kept in [&notes, &upper, &readable, &subdir, &link] {
        assert!(
            kept.symlink_metadata().is_ok(),
            "{} was removed",
            kept.display()
        );
    }
    // A second run must not remove the first run's (locked) file.
    assert!(remove_stale_test_files(dir.path()).unwrap().is_empty());
    // The live one and the three near misses with an exact name.
    assert_eq!(test_files(dir.path()).len(), 4);
}

fn write_0600(path: &Path) {
    fs::write(path, b"left by a killed run").unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn test_file_names_are_exact() {
    assert!(is_test_file_name(b"iomark-0123456789abcdef.tmp"));
    for bad in [
        &b"iomark-notes.tmp"[..],
        b"iomark-0123456789ABCDEF.tmp",
        b"iomark-0123456789abcde.tmp",
        b"iomark-0123456789abcdef0.tmp",
        b"iomark-0123456789abcdef.tmp~",
        b"xiomark-0123456789abcdef.tmp",
    ] {
        assert!(!is_test_file_name(bad), "{}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn misaligned_direct_sizes_are_refused_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let mut req = request(dir.path(), 1 << 20);
    req.direct = DirectMode::Auto;
    req.io_sizes = vec![Bytes(3)];
    match open(&req) {
        // A file system without O_DIRECT runs buffered, where 3 bytes is fine.
        Ok(t) => assert!(!t.direct),
        Err(e) => {
            assert!(e.to_string().contains("logical block size"), "{e}");
            assert!(test_files(dir.path()).is_empty());
        }
    }
}

#[test]
fn test_file_is_not_removed_when_its_name_leads_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let t = open(&request(dir.path(), 1 << 20)).unwrap();
    let path = PathBuf::from(&t.info.path);
    let moved = dir.path().join("moved-away");
    fs::rename(&path, &moved).unwrap();
    let victim = dir.path().join("victim");
    fs::write(&victim, b"keep me").unwrap();
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    drop(t);
    assert_eq!(fs::read(&victim).unwrap(), b"keep me");
    assert!(
        path.symlink_metadata().is_ok(),
        "the symlink is not ours to remove"
    );
    // Ours, wherever it went, holds no test data any more.
    assert_eq!(fs::metadata(&moved).unwrap().len(), 0);
}

#[test]
fn allow_write_matches_the_object_not_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data.bin");
    fs::write(&f, vec![1u8; 8192]).unwrap();
    let alias = dir.path().join("alias");
    std::os::unix::fs::symlink(&f, &alias).unwrap();
    let other = dir.path().join("other.bin");
    fs::write(&other, vec![2u8; 8192]).unwrap();
    let mut req = request(&f, 8192);
    // Allowed through a symlink to the same file: the same object.
    req.allow_write = vec![alias];
    assert!(open(&req).is_ok());
    // A different file with the same contents is not.
    req.allow_write = vec![other];
    assert!(matches!(open(&req), Err(DiskError::Refused(_))));
}

#[test]
fn too_large_a_test_file_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let err = open(&request(dir.path(), u64::MAX / 2)).unwrap_err();
    assert!(matches!(err, DiskError::NoSpace { .. }), "{err}");
    assert!(test_files(dir.path()).is_empty());
}

#[test]
fn writing_an_existing_file_needs_allow_write() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data.bin");
    fs::write(&f, vec![1u8; 8192]).unwrap();
    let mut req = request(&f, 8192);
    let err = open(&req).unwrap_err();
    assert!(matches!(err, DiskError::Refused(_)), "{err}");
    assert!(err.to_string().contains("--allow-write"));
    req.allow_write = vec![f.clone()];
    let t = open(&req).unwrap();
    assert_eq!(t.info.kind, TargetKind::File);
    req.write = false;
    req.allow_write.clear();
    assert!(open(&req).is_ok());
}

/// How many of the first `len` bytes of `file` are in the page cache, in
/// pages, seen through a fresh mapping (which faults nothing in).
fn resident_pages(file: &File, len: usize) -> usize {
    use std::os::fd::AsRawFd;
    let page = 4096;
    // SAFETY: a fresh shared read-only mapping of an open file, only
    // inspected with mincore and unmapped before returning.
    unsafe {
        let ptr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(ptr, libc::MAP_FAILED);
        let mut vec = vec![0u8; len.div_ceil(page)];
        assert_eq!(libc::mincore(ptr, len, vec.as_mut_ptr()), 0);
        libc::munmap(ptr, len);
        vec.iter().filter(|v| *v & 1 == 1).count()
    }
}

/// `invalidate_cache` drops what a buffered read or a mapping left in the
/// page cache, once the mapping is gone (the engines unmap at the end of
/// each job); pages a live mapping holds stay, which is why the profiles
/// drop the cache between jobs, not during one.
#[test]
fn invalidate_cache_drops_read_and_unmapped_pages() {
    let dir = tempfile::Builder::new()
        .prefix("iomark-inval-")
        .tempdir_in("/var/tmp")
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let len = 4 << 20;
    let t = open(&request(dir.path(), len as u64)).unwrap();
    let pages = len / 4096;
    // Read through the descriptor: cached.
    let mut buf = vec![0u8; len];
    rustix::io::pread(&*t.file, &mut buf, 0).unwrap();
    assert!(resident_pages(&t.file, len) > pages / 2);
    t.invalidate_cache();
    let after_read = resident_pages(&t.file, len);
    iomark_testrig::require!(
        after_read <= pages / 2,
        "this file system keeps pages after POSIX_FADV_DONTNEED"
    );
    // Faulted in through a mapping, then unmapped: dropped.
    use std::os::fd::AsRawFd;
    // SAFETY: a shared read-only mapping of the open file, read within its
    // length and unmapped before the file is dropped.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            t.file.as_raw_fd(),
            0,
        )
    };
    assert_ne!(ptr, libc::MAP_FAILED);
    let mut sum = 0u64;
    for i in (0..len).step_by(4096) {
        // SAFETY: inside the mapping.
        sum += u64::from(unsafe { std::ptr::read_volatile(ptr.cast::<u8>().add(i)) });
    }
    std::hint::black_box(sum);
    assert!(resident_pages(&t.file, len) > pages / 2);
    // A live mapping pins its pages: dropping the cache now keeps them.
    t.invalidate_cache();
    assert!(resident_pages(&t.file, len) > pages / 2);
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(ptr, len) };
    t.invalidate_cache();
    assert!(
        resident_pages(&t.file, len) <= after_read.max(pages / 16),
        "pages of an unmapped file stay cached after invalidate_cache"
    );
}

#[test]
fn an_unwritten_test_file_is_preallocated_but_not_filled() {
    let dir = tempfile::tempdir().unwrap();
    let req = TargetRequest {
        prep: TestFilePrep::Unwritten(crate::profiles::sustained::FREE_SPACE_MARGIN),
        ..request(dir.path(), 4 << 20)
    };
    let t = open(&req).unwrap();
    assert_eq!(t.info.size, Bytes(4 << 20));
    // A fill writes random data; an unwritten file reads back zeros.
    let mut head = vec![0u8; 1 << 20];
    std::os::unix::fs::FileExt::read_exact_at(&*t.file, &mut head, 0).unwrap();
    assert!(head.iter().all(|b| *b == 0));
}

#[test]
fn the_free_space_margin_is_five_percent_and_at_least_a_gibibyte() {
    let margin = crate::profiles::sustained::FREE_SPACE_MARGIN;
    assert_eq!(margin.leaves(Bytes(10 << 30)), Bytes(1 << 30));
    assert_eq!(margin.leaves(Bytes(100 << 30)), Bytes(5 << 30));
}

#[test]
fn a_workers_reads_leave_the_access_time_alone() {
    use std::os::unix::fs::{FileExt, MetadataExt};
    use std::time::{Duration, UNIX_EPOCH};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data");
    fs::write(&path, [7u8; 4096]).unwrap();
    let shared = Arc::new(File::open(&path).unwrap());
    // An access time older than the modification: under relatime (and
    // strictatime) the next plain read updates it.
    let long_ago = || {
        let times = fs::FileTimes::new().set_accessed(UNIX_EPOCH + Duration::from_secs(1));
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_times(times)
            .unwrap();
    };
    let atime = || fs::metadata(&path).unwrap().atime();

    long_ago();
    let own = TargetFile::new(Arc::clone(&shared)).unwrap().own().unwrap();
    let flags = rustix::fs::fcntl_getfl(&own).unwrap();
    assert!(flags.contains(OFlags::NOATIME), "{flags:?}");
    assert_eq!(flags & OFlags::RWMODE, OFlags::RDONLY);
    own.read_exact_at(&mut [0u8; 4096], 0).unwrap();
    assert_eq!(atime(), 1, "a worker's read updated the access time");

    // The same read through the plain descriptor does update it, unless
    // the file system is mounted noatime: the check above was not idle.
    shared.read_exact_at(&mut [0u8; 4096], 0).unwrap();
    let updated = atime() != 1;
    let noatime = rustix::fs::statvfs(&path)
        .unwrap()
        .f_flag
        .contains(rustix::fs::StatVfsMountFlags::NOATIME);
    assert!(
        updated || noatime,
        "a plain read left the access time as it was"
    );
}
