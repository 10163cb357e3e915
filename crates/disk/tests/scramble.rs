//! Every write is unique (fio's `scramble_buffers`): a write job through
//! psync and io_uring, at QD1 and QD4, leaves no two blocks of its file
//! alike; `zeros` writes zeros; compressible:50 still compresses to about
//! half. The files live under /var/tmp (a real file system, not tmpfs) in a
//! temporary directory that goes when the test ends, passed or failed.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;

use iomark_disk::target::{DirectMode, OpenTarget, TargetRequest, TestFilePrep};
use iomark_disk::{io_uring_available, run_job, Quiet};
use iomark_model::disk::{DataPattern, DiskJobSpec, EngineKind, RwMode};
use iomark_model::units::Bytes;

const BS: u64 = 4096;
const SIZE: u64 = 4 << 20;

fn engines() -> Vec<EngineKind> {
    let mut kinds = vec![EngineKind::Psync];
    match io_uring_available() {
        Ok(()) => kinds.push(EngineKind::IoUring),
        Err(why) => iomark_testrig::skipped(&format!("io_uring: {why}")),
    }
    kinds
}

/// Write the whole test file once with `data` (sequentially, so every
/// block is written exactly once) and return its bytes. The test file is
/// first filled with random data, so a job that wrote nothing shows.
fn written(kind: EngineKind, depth: u32, rw: RwMode, data: DataPattern) -> Vec<u8> {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let stop = AtomicBool::new(false);
    let target = OpenTarget::open(
        &TargetRequest {
            path: dir.path().into(),
            size: Some(Bytes(SIZE)),
            default_size: Bytes(SIZE),
            write: true,
            allow_write: vec![],
            direct: DirectMode::Auto,
            data: DataPattern::Random,
            seed: 1,
            io_sizes: vec![Bytes(BS)],
            prep: TestFilePrep::Filled,
        },
        &stop,
    )
    .unwrap();
    let spec = DiskJobSpec {
        name: "scramble".into(),
        rw,
        bs: Bytes(BS),
        iodepth: depth,
        size: Bytes(SIZE),
        runtime: None,
        engine: kind,
        direct: target.direct,
        data,
        rwmix_read: 0,
        ..DiskJobSpec::example()
    };
    run_job(&spec, &target, &stop, &mut Quiet).unwrap();
    // Read back through the page cache, on a descriptor of its own (the
    // target's may be O_DIRECT); direct writes leave no stale pages.
    let back = std::fs::File::open(&target.info.path).unwrap();
    let mut bytes = vec![0u8; SIZE as usize];
    back.read_exact_at(&mut bytes, 0).unwrap();
    drop(target);
    bytes
}

fn assert_blocks_unique(bytes: &[u8], what: &str) {
    let mut seen = HashSet::new();
    for (i, block) in bytes.chunks(BS as usize).enumerate() {
        assert!(
            seen.insert(block),
            "{what}: block {i} repeats an earlier one"
        );
    }
}

#[test]
fn every_written_block_is_unique() {
    for kind in engines() {
        for depth in [1, 4] {
            let what = format!("{kind} QD{depth}");
            let bytes = written(kind, depth, RwMode::Write, DataPattern::Random);
            assert_blocks_unique(&bytes, &what);
            // Each block carries its own offset in its first sector's stamp.
            for (i, block) in bytes.chunks(BS as usize).enumerate().step_by(97) {
                let at = u64::from_le_bytes(block[..8].try_into().unwrap());
                assert_eq!(at, i as u64 * BS, "{what}: stamp of block {i}");
            }
        }
    }
    // Random offsets revisit blocks: a rewrite differs from the first write.
    let bytes = written(EngineKind::Psync, 1, RwMode::RandWrite, DataPattern::Random);
    assert_blocks_unique(&bytes, "psync randwrite QD1");
}

#[test]
fn zeros_stay_zeros() {
    for kind in engines() {
        for depth in [1, 4] {
            let bytes = written(kind, depth, RwMode::Write, DataPattern::Zeros);
            if let Some(at) = bytes.iter().position(|&b| b != 0) {
                panic!("{kind} QD{depth}: a nonzero byte at {at}");
            }
        }
    }
}

/// Length of `bytes` compressed by `cmd` (reading stdin, writing stdout),
/// or None with a printed reason when it is not installed.
fn compressed_len(cmd: &str, args: &[&str], bytes: &[u8]) -> Option<usize> {
    let mut child = match Command::new(cmd)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            iomark_testrig::skipped(&format!("the {cmd} check: cannot run {cmd} ({e})"));
            return None;
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    let input = bytes.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(out.status.success(), "{cmd} failed");
    Some(out.stdout.len())
}

/// Compressed over original size of every 16th block, each compressed on
/// its own as a compressing controller or zram compresses a block, with
/// `cmd`; None, with a printed reason, when it is not installed.
///
/// A stream compressor over the whole file would measure something else:
/// a write reuses its slot's buffer with only the stamps changed (as fio's
/// scramble_buffers does), so a window spanning several blocks finds the
/// repeats. The stamps are for deduplication, which works on whole blocks.
fn per_block_ratio(cmd: &str, args: &[&str], bytes: &[u8]) -> Option<f64> {
    let mut compressed = 0;
    let mut original = 0;
    for block in bytes.chunks(BS as usize).step_by(16) {
        compressed += compressed_len(cmd, args, block)?;
        original += block.len();
    }
    Some(compressed as f64 / original as f64)
}

#[test]
fn compressible_50_still_compresses_to_half() {
    for kind in engines() {
        for depth in [1, 4] {
            let what = format!("{kind} QD{depth} compressible:50");
            let bytes = written(kind, depth, RwMode::Write, DataPattern::Compressible(50));
            assert_blocks_unique(&bytes, &what);
            // -n: no file name or time in gzip's header.
            for (cmd, args) in [("gzip", &["-c", "-n"][..]), ("zstd", &["-c", "-q"][..])] {
                let Some(ratio) = per_block_ratio(cmd, args, &bytes) else {
                    continue;
                };
                let stream = compressed_len(cmd, args, &bytes).unwrap() as f64 / SIZE as f64;
                eprintln!("{what}: {cmd} per 4 KiB block {ratio:.3}, whole file {stream:.3}");
                assert!(
                    (0.47..=0.56).contains(&ratio),
                    "{what}: {cmd} compresses a block to {ratio:.3} of its size"
                );
            }
        }
    }
}
