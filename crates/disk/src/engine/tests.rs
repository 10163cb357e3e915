//! Engine conformance: every engine that moves data writes blocks that
//! every other engine reads back byte for byte (ripgrep's "one case down
//! every code path" idea). A new engine joins by being listed in ENGINES.

use std::fs::OpenOptions;
use std::sync::Arc;
use std::time::Instant;

use iomark_model::disk::EngineKind;

use super::{build, io_uring_available, Dir, Done, EngineSetup, IoUnit, Queued};
use crate::buffer::AlignedBuf;
use crate::target::TargetFile;

const ENGINES: [EngineKind; 4] = [
    EngineKind::Psync,
    EngineKind::IoUring,
    EngineKind::MmapSync,
    EngineKind::MmapAsync,
];
const BS: usize = 16 << 10;
const BLOCKS: u64 = 32;
const DEPTH: u32 = 4;

fn usable(kind: EngineKind) -> bool {
    if kind == EngineKind::IoUring {
        if let Err(why) = io_uring_available() {
            iomark_testrig::skipped(&format!("io_uring: {why}"));
            return false;
        }
    }
    true
}

/// The block at `index` as written by `writer`: unique per block and writer.
fn block(writer: usize, index: u64) -> Vec<u8> {
    (0..BS)
        .map(|i| (i as u64 * 31 + index * 7 + writer as u64 * 101) as u8)
        .collect()
}

/// Run `ops` (offset, dir, data-for-writes) through `kind` with `DEPTH` in
/// flight; returns what each read brought back, by block index.
fn run_ops(
    kind: EngineKind,
    file: &Arc<std::fs::File>,
    ops: &[(u64, Dir, Option<Vec<u8>>)],
) -> Vec<(u64, Vec<u8>)> {
    let setup = EngineSetup {
        file: TargetFile::new(Arc::clone(file)).unwrap(),
        region: BLOCKS * BS as u64,
        depth: DEPTH,
        writable: true,
        random: true,
    };
    let mut eng = build(kind, &setup).unwrap();
    let mut units: Vec<IoUnit> = (0..DEPTH)
        .map(|slot| IoUnit {
            buf: AlignedBuf::new(BS, 4096),
            offset: 0,
            len: BS as u32,
            dir: Dir::Read,
            slot,
            issued: Instant::now(),
        })
        .collect();
    eng.register_buffers(&mut units).unwrap();
    let mut free = units;
    let mut reads = Vec::new();
    let mut done: Vec<Done> = Vec::new();
    let mut in_flight = 0;
    let mut next = ops.iter();
    let finish = |d: Done, reads: &mut Vec<(u64, Vec<u8>)>| {
        assert_eq!(d.result, Ok(BS as u32), "{kind}: I/O at {}", d.unit.offset);
        if d.unit.dir == Dir::Read {
            reads.push((d.unit.offset / BS as u64, d.unit.buf.as_slice().to_vec()));
        }
        d.unit
    };
    loop {
        while let Some(mut unit) = free.pop() {
            let Some((offset, dir, data)) = next.next() else {
                free.push(unit);
                break;
            };
            unit.offset = *offset;
            unit.dir = *dir;
            if let Some(d) = data {
                unit.buf.as_mut_slice().copy_from_slice(d);
            }
            match eng.queue(unit).unwrap() {
                Queued::InFlight => in_flight += 1,
                Queued::Completed(d) => free.push(finish(d, &mut reads)),
            }
        }
        if in_flight == 0 {
            break;
        }
        eng.reap(1, &mut done).unwrap();
        for d in done.drain(..) {
            in_flight -= 1;
            free.push(finish(d, &mut reads));
        }
    }
    reads
}

#[test]
fn every_engine_reads_back_what_every_engine_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conformance.bin");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    file.set_len(BLOCKS * BS as u64).unwrap();
    let file = Arc::new(file);
    for (w, &writer) in ENGINES.iter().enumerate() {
        if !usable(writer) {
            continue;
        }
        // Writes in a scrambled order, so the engines cannot rely on order.
        let writes: Vec<_> = (0..BLOCKS)
            .map(|i| (i * 13) % BLOCKS)
            .map(|i| (i * BS as u64, Dir::Write, Some(block(w, i))))
            .collect();
        run_ops(writer, &file, &writes);
        for &reader in ENGINES.iter().filter(|&&r| usable(r)) {
            let reads: Vec<_> = (0..BLOCKS)
                .rev()
                .map(|i| (i * BS as u64, Dir::Read, None))
                .collect();
            let got = run_ops(reader, &file, &reads);
            assert_eq!(got.len(), BLOCKS as usize);
            for (index, data) in got {
                assert!(
                    data == block(w, index),
                    "block {index} written by {writer} read back wrong by {reader}"
                );
            }
        }
    }
}

#[test]
fn the_null_engine_completes_everything_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let file = Arc::new(tempfile::tempfile_in(dir.path()).unwrap());
    let ops: Vec<_> = (0..100).map(|i| (i * BS as u64, Dir::Read, None)).collect();
    assert_eq!(run_ops(EngineKind::Null, &file, &ops).len(), 100);
}
