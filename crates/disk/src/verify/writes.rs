//! `--verify` on a custom write run (fio's `verify=crc32c`): every block a
//! job writes is stamped with the verify header (block.rs: offset, the
//! run's seed, a sequence number, crc32c), the sequence of the last write
//! of each block is kept in a [`WriteLedger`], and after the run every
//! block written is read back in offset order and checked against it.
//!
//! The ledger takes 4 bytes per block of the job's region (`bs` bytes):
//! 1 MiB per GiB at 4 KiB blocks, 1 GiB for a 1 TiB device. Each thread
//! of the job writes only its own stretch of the region (as fio's jobs
//! each write their own file), and never has two writes of one block in
//! flight, so the last write issued to a block is the one the device
//! holds, and the ledger needs no locking beyond a relaxed store.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use iomark_model::disk::{DiskJobSpec, EngineKind};
use iomark_model::units::{Bytes, BytesPerSec};
use iomark_model::verify::{BadKind, VerifyPhase, VerifyResult, MAX_RANGES};
use iomark_model::{Warning, WarningKind};

use super::block::{Bad, Expect, Header, Verdict, BLOCK};
use super::Findings;
use crate::buffer::AlignedBuf;
use crate::DiskError;

/// Bytes read per call while checking: large enough that the check runs
/// at the medium's sequential rate.
const CHECK_CHUNK: u64 = 1 << 20;

/// What `--verify` asks of a custom write run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VerifyWrites {
    /// Report the check's reads as their own figure (`--verify-timed`).
    pub(crate) timed: bool,
}

/// fio's `verify=` values iomark checks with: `crc32c` (fio's default
/// checksum) and `1` are on, `0` is off; `None` for another checksum
/// (`md5`, ...), which iomark does not compute.
pub(crate) fn fio_verify_on(value: &str) -> Option<bool> {
    match value.trim() {
        "crc32c" | "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// The checks of several verified jobs of one run (a job file's) as one
/// result: blocks and bad blocks summed, the ranges of every job in one
/// list in offset order (still at most [`MAX_RANGES`], the rest counted), partial when
/// any check was. Seed, block group, engine and cache mode are the first
/// job's; no read rate, since one job's check rate is not the run's.
pub(crate) fn combine(run: Option<VerifyResult>, job: VerifyResult) -> VerifyResult {
    let Some(mut run) = run else {
        return job;
    };
    run.claimed = run.claimed.max(job.claimed);
    run.read_bw = None;
    run.checked_blocks += job.checked_blocks;
    run.bad.corrupted += job.bad.corrupted;
    run.bad.lost += job.bad.lost;
    run.bad.wrapped += job.bad.wrapped;
    run.more_ranges += job.more_ranges;
    run.ranges.extend(job.ranges);
    // Kept in offset order, as one check's are.
    run.ranges.sort_by_key(|r| r.start);
    if run.ranges.len() > MAX_RANGES {
        run.more_ranges += (run.ranges.len() - MAX_RANGES) as u64;
        run.ranges.truncate(MAX_RANGES);
    }
    run.partial |= job.partial;
    run
}

impl VerifyWrites {
    /// Refuse a job that `--verify` cannot check: one that writes nothing,
    /// writes nowhere (the null engine), or whose blocks are not whole
    /// verify blocks.
    pub(crate) fn check_spec(&self, spec: &DiskJobSpec) -> Result<(), DiskError> {
        let invalid = |m: String| Err(DiskError::Invalid(m));
        if !spec.rw.writes() {
            return invalid(format!(
                "--verify checks what a run wrote, and --rw {} writes nothing: \
                 use --rw write, randwrite, rw or randrw",
                spec.rw
            ));
        }
        if spec.engine == EngineKind::Null {
            return invalid(
                "--verify needs data on the target, and --engine null writes none: \
                 use --engine io_uring or psync"
                    .into(),
            );
        }
        if !spec.bs.get().is_multiple_of(BLOCK as u64) {
            return invalid(format!(
                "--verify stamps every {} with a header, and --bs {} is not a multiple of it: \
                 use --bs 4KiB or a multiple",
                Bytes(BLOCK as u64),
                spec.bs
            ));
        }
        Ok(())
    }
}

/// The run's seed and the last sequence written to each block of the
/// region (0: never written).
#[derive(Debug)]
pub(crate) struct WriteLedger {
    seed: u64,
    region: u64,
    bs: u64,
    last: Vec<AtomicU32>,
}

impl WriteLedger {
    /// A ledger for `blocks` blocks of `bs` bytes, with a fresh seed so
    /// that no earlier run's blocks pass the check.
    pub(crate) fn new(bs: Bytes, blocks: u64) -> Self {
        WriteLedger {
            seed: rand::random(),
            region: bs.get() * blocks,
            bs: bs.get(),
            last: (0..blocks).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// Stamp `buf`, about to be written at `offset`, as write `sequence`
    /// (never 0) of that block, and remember it. Each 4 KiB of it gets its
    /// own header, as in verify mode.
    pub(crate) fn stamp(&self, buf: &mut [u8], offset: u64, sequence: u32) {
        for (i, block) in buf.chunks_exact_mut(BLOCK).enumerate() {
            Header {
                offset: offset + (i * BLOCK) as u64,
                seed: self.seed,
                region: self.region,
                sequence,
                block: BLOCK as u32,
            }
            .stamp(block);
        }
        self.last[(offset / self.bs) as usize].store(sequence, Ordering::Relaxed);
    }

    /// Read back every block written, in offset order, from `file`
    /// (buffers aligned to `align` for O_DIRECT; the region starting at
    /// `base`), and check each against its last write. Stops early, marked
    /// partial, when `stop` is raised.
    pub(crate) fn check(
        &self,
        file: &File,
        base: Bytes,
        align: usize,
        stop: &AtomicBool,
    ) -> Result<WriteCheck, DiskError> {
        let chunk = CHECK_CHUNK.max(self.bs);
        let per_chunk = chunk / self.bs;
        let mut buf = AlignedBuf::new(chunk as usize, align.max(1));
        let mut found = Findings::default();
        let mut read = 0u64;
        let started = Instant::now();
        let blocks = self.last.len() as u64;
        let mut block = 0u64;
        let mut partial = false;
        while block < blocks {
            if stop.load(Ordering::Relaxed) {
                partial = true;
                break;
            }
            if self.last[block as usize].load(Ordering::Relaxed) == 0 {
                block += 1;
                continue;
            }
            // A run of written blocks, read in one call.
            let mut end = block + 1;
            while end < blocks
                && end - block < per_chunk
                && self.last[end as usize].load(Ordering::Relaxed) != 0
            {
                end += 1;
            }
            let len = ((end - block) * self.bs) as usize;
            let at = block * self.bs;
            let data = &mut buf.as_mut_slice()[..len];
            file.read_exact_at(data, base.get() + at)
                .map_err(|e| DiskError::Io {
                    errno: e.raw_os_error().unwrap_or(0),
                    message: format!(
                        "--verify: reading back {} at offset {at} failed: {e}",
                        Bytes(len as u64)
                    ),
                })?;
            read += len as u64;
            for (i, written) in data.chunks_exact(self.bs as usize).enumerate() {
                let b = block + i as u64;
                let sequence = self.last[b as usize].load(Ordering::Relaxed);
                for (j, v) in written.chunks_exact(BLOCK).enumerate() {
                    let offset = b * self.bs + (j * BLOCK) as u64;
                    match self.check_block(v, offset, sequence) {
                        Verdict::Good => found.good(),
                        Verdict::Bad(bad) => found.bad(offset, BLOCK as u64, bad),
                    }
                }
            }
            block = end;
        }
        Ok(WriteCheck {
            found,
            read: Bytes(read),
            took: started.elapsed(),
            partial,
        })
    }
}

impl WriteLedger {
    /// Check one 4 KiB block read back from `offset`, whose last write was
    /// `sequence`. A sound block of this run written for another offset is
    /// wrapped whatever its sequence (it was written later, elsewhere); one
    /// for this offset with an older sequence is a lost write.
    fn check_block(&self, block: &[u8], offset: u64, sequence: u32) -> Verdict {
        let seed = self.seed;
        let verdict = Expect { seed, sequence }.check(block, offset);
        let Verdict::Bad(first) = &verdict else {
            return verdict;
        };
        let own = Header::read(block).filter(|h| h.seed == seed);
        let Some(h) = own.filter(|_| first.kind == BadKind::Lost) else {
            return verdict;
        };
        let own_sequence = Expect {
            seed,
            sequence: h.sequence,
        };
        match own_sequence.check(block, offset) {
            Verdict::Good => Verdict::Bad(Bad {
                kind: BadKind::Lost,
                from: None,
                found: format!(
                    "an earlier write of this block (sequence {}, the last was {sequence})",
                    h.sequence
                ),
            }),
            Verdict::Bad(wrapped) if wrapped.kind == BadKind::Wrapped => Verdict::Bad(wrapped),
            Verdict::Bad(_) => verdict,
        }
    }
}

/// What the check after a write run found.
#[derive(Debug)]
pub(crate) struct WriteCheck {
    /// Blocks checked and the bad ones.
    found: Findings,
    /// Bytes read back.
    read: Bytes,
    /// Time the check took.
    took: Duration,
    /// Whether Ctrl-C ended it before the end.
    pub(crate) partial: bool,
}

impl WriteCheck {
    /// The check as a verify result (`profile_result.family = "verify"`),
    /// for `spec` run on a target that did or did not bypass the cache.
    /// The read rate is kept only when asked for (`--verify-timed`). A
    /// custom run says nothing about capacity, so no usable size (and the
    /// store remembers no verdict for the disk).
    pub(crate) fn into_result(
        self,
        ledger: &WriteLedger,
        spec: &DiskJobSpec,
        direct: bool,
        timed: bool,
    ) -> (VerifyResult, Vec<Warning>) {
        let secs = self.took.as_secs_f64();
        let read_bw = (timed && secs > 0.0).then(|| BytesPerSec(self.read.get() as f64 / secs));
        let f = self.found;
        let mut warnings = Vec::new();
        if f.bad.total() > 0 {
            let first = f.ranges.first().map_or_else(String::new, |r| {
                format!(
                    "; first at offset {} ({}, {} long): expected {}, found {}",
                    r.start.get(),
                    r.kind,
                    r.len,
                    r.expected,
                    r.found
                )
            });
            warnings.push(Warning::new(
                WarningKind::DataErrors,
                format!(
                    "--verify: {} of {} blocks read back wrong ({} corrupted, {} lost, {} wrapped) \
                     in {} range(s){first}",
                    f.bad.total(),
                    f.checked,
                    f.bad.corrupted,
                    f.bad.lost,
                    f.bad.wrapped,
                    f.ranges.len() as u64 + f.more_ranges
                ),
            ));
        }
        let result = VerifyResult {
            quick: false,
            phase: VerifyPhase::Both,
            claimed: Bytes(ledger.region),
            block: Bytes(BLOCK as u64),
            group: spec.bs,
            seed: ledger.seed,
            engine: spec.engine,
            direct,
            write_bw: None,
            read_bw,
            write_series: Vec::new(),
            read_series: Vec::new(),
            checked_blocks: f.checked,
            bad: f.bad,
            ranges: f.ranges,
            more_ranges: f.more_ranges,
            usable: None,
            partial: self.partial,
        };
        (result, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: u64 = 8192;

    /// A file with blocks 0..8 written by `ledger` (block 3 twice).
    fn written(ledger: &WriteLedger) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        let mut buf = vec![0x5au8; BS as usize];
        for (b, seq) in [(0u64, 1), (1, 2), (2, 3), (3, 4), (3, 9), (5, 5), (6, 6)] {
            ledger.stamp(&mut buf, b * BS, seq);
            f.as_file().write_all_at(&buf, b * BS).unwrap();
        }
        f.as_file().set_len(8 * BS).unwrap();
        f
    }

    fn check(ledger: &WriteLedger, f: &tempfile::NamedTempFile) -> WriteCheck {
        ledger
            .check(f.as_file(), Bytes(0), 4096, &AtomicBool::new(false))
            .unwrap()
    }

    #[test]
    fn an_intact_file_checks_clean_and_unwritten_blocks_are_skipped() {
        let ledger = WriteLedger::new(Bytes(BS), 8);
        let f = written(&ledger);
        let c = check(&ledger, &f);
        // Six blocks written (block 3 twice), two 4 KiB headers each.
        assert_eq!((c.found.checked, c.found.bad.total()), (12, 0));
        assert_eq!(c.read, Bytes(6 * BS));
    }

    #[test]
    fn altered_lost_and_misplaced_blocks_are_each_named() {
        let ledger = WriteLedger::new(Bytes(BS), 8);
        let f = written(&ledger);
        let file = f.as_file();
        // A flipped byte in block 1's payload: corrupted.
        file.write_all_at(&[0xff], BS + 100).unwrap();
        // Block 3's last write lost: the device still holds write 4.
        let mut old = vec![0x5au8; BS as usize];
        ledger.stamp(&mut old, 3 * BS, 4);
        ledger.last[3].store(9, Ordering::Relaxed);
        file.write_all_at(&old, 3 * BS).unwrap();
        // Block 6 holds block 0's data (another sequence): the device wraps.
        let mut block0 = vec![0u8; BS as usize];
        file.read_exact_at(&mut block0, 0).unwrap();
        file.write_all_at(&block0, 6 * BS).unwrap();
        let c = check(&ledger, &f);
        let r: Vec<(u64, u64, BadKind, Option<u64>)> = c
            .found
            .ranges
            .iter()
            .map(|r| (r.start.get(), r.len.get(), r.kind, r.from.map(Bytes::get)))
            .collect();
        assert_eq!(
            r,
            vec![
                (BS, 4096, BadKind::Corrupted, None),
                (3 * BS, BS, BadKind::Lost, None),
                (6 * BS, BS, BadKind::Wrapped, Some(0)),
            ]
        );
        assert!(
            c.found.ranges[1]
                .found
                .contains("sequence 4, the last was 9"),
            "{:?}",
            c.found.ranges[1]
        );
        let spec = crate::job::JobSettings {
            rw: Some(iomark_model::disk::RwMode::RandWrite),
            bs: Some(Bytes(BS)),
            engine: Some(EngineKind::Psync.into()),
            ..Default::default()
        }
        .build()
        .unwrap()
        .spec;
        let (result, warnings) = c.into_result(&ledger, &spec, false, false);
        assert_eq!(
            (result.bad.corrupted, result.bad.lost, result.bad.wrapped),
            (1, 2, 2)
        );
        assert!(result.read_bw.is_none(), "untimed");
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0]
                .message
                .contains(&format!("first at offset {BS}")),
            "{}",
            warnings[0].message
        );
    }

    #[test]
    fn jobs_it_cannot_check_are_refused_with_the_fix() {
        let job = |rw, bs, engine| DiskJobSpec {
            rw,
            bs: Bytes(bs),
            engine,
            ..crate::job::JobSettings {
                engine: Some(EngineKind::Psync.into()),
                ..Default::default()
            }
            .build()
            .unwrap()
            .spec
        };
        use iomark_model::disk::RwMode::*;
        let v = VerifyWrites { timed: false };
        let err = |s| v.check_spec(&s).unwrap_err().to_string();
        assert!(err(job(RandRead, 4096, EngineKind::Psync)).contains("writes nothing"));
        assert!(err(job(Write, 512, EngineKind::Psync)).contains("multiple"));
        assert!(err(job(Write, 4096, EngineKind::Null)).contains("--engine io_uring"));
        assert!(v
            .check_spec(&job(RandRw, 65536, EngineKind::IoUring))
            .is_ok());
    }

    #[test]
    fn jobs_checks_combine_into_one_result_with_ranges_in_offset_order() {
        let spec = crate::job::JobSettings {
            rw: Some(iomark_model::disk::RwMode::Write),
            bs: Some(Bytes(BS)),
            engine: Some(EngineKind::Psync.into()),
            ..Default::default()
        }
        .build()
        .unwrap()
        .spec;
        // Two jobs' checks, each with one flipped byte: job one's in
        // block 5, job two's in block 0.
        let job = |flip: u64| {
            let ledger = WriteLedger::new(Bytes(BS), 8);
            let f = written(&ledger);
            f.as_file().write_all_at(&[0xff], flip + 100).unwrap();
            check(&ledger, &f)
                .into_result(&ledger, &spec, false, true)
                .0
        };
        let first = job(5 * BS);
        let seed = first.seed;
        let run = combine(Some(combine(None, first)), job(0));
        assert_eq!((run.checked_blocks, run.bad.corrupted), (24, 2));
        let starts: Vec<u64> = run.ranges.iter().map(|r| r.start.get()).collect();
        assert_eq!(starts, vec![0, 5 * BS]);
        assert_eq!(run.seed, seed, "the first job's");
        assert!(run.read_bw.is_none(), "one job's rate is not the run's");
        assert!(!run.partial);
    }
}
