//! The verify block: a small header at the start of every block written in
//! verify mode, the rest filled from the run's data pattern, and the check
//! of a block read back.
//!
//! ```text
//! 0   8  magic "iomarkV1"
//! 8   8  offset the block was written for (little-endian, as all fields)
//! 16  8  the run's seed
//! 24  8  the region written (bytes), so a read phase needs no side file
//! 32  4  sequence: the pass that wrote it
//! 36  4  block size
//! 40  4  crc32c of the whole block with these four bytes zeroed
//! 44  4  zero
//! ```
//!
//! crc32c (Castagnoli, hardware-accelerated on x86 and ARM) is fio's
//! `verify=crc32c`. The checksum covers the header, so a block that names
//! the right offset and seed but fails it was changed by the device.

use iomark_model::verify::BadKind;

/// Bytes per verify block: one header per 4 KiB, the page and sector size
/// of flash, so a device that corrupts or drops single sectors is caught
/// sector by sector.
pub(crate) const BLOCK: usize = 4096;
/// Bytes of the header.
const HEADER: usize = 48;
/// The magic that starts every block iomark writes in verify mode.
const MAGIC: [u8; 8] = *b"iomarkV1";

const CRC_AT: usize = 40;

/// What the header of one block says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// The offset the block was written for.
    pub(crate) offset: u64,
    /// The run's seed.
    pub(crate) seed: u64,
    /// The region the run wrote.
    pub(crate) region: u64,
    /// The pass that wrote it.
    pub(crate) sequence: u32,
    /// Bytes per block.
    pub(crate) block: u32,
}

impl Header {
    /// Stamp this header into `block` (whose payload is already filled)
    /// and seal it with its checksum.
    pub(crate) fn stamp(&self, block: &mut [u8]) {
        block[..8].copy_from_slice(&MAGIC);
        block[8..16].copy_from_slice(&self.offset.to_le_bytes());
        block[16..24].copy_from_slice(&self.seed.to_le_bytes());
        block[24..32].copy_from_slice(&self.region.to_le_bytes());
        block[32..36].copy_from_slice(&self.sequence.to_le_bytes());
        block[36..40].copy_from_slice(&self.block.to_le_bytes());
        block[CRC_AT..HEADER].fill(0);
        let crc = crc32c::crc32c(block);
        block[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    }

    /// The header of `block`, if it starts with the magic (checksum not
    /// checked).
    pub(crate) fn read(block: &[u8]) -> Option<Header> {
        if block.len() < HEADER || block[..8] != MAGIC {
            return None;
        }
        let u64_at = |at: usize| u64::from_le_bytes(block[at..at + 8].try_into().unwrap());
        let u32_at = |at: usize| u32::from_le_bytes(block[at..at + 4].try_into().unwrap());
        Some(Header {
            offset: u64_at(8),
            seed: u64_at(16),
            region: u64_at(24),
            sequence: u32_at(32),
            block: u32_at(36),
        })
    }
}

/// The checksum stored in `block` and the one its bytes have.
fn checksums(block: &[u8]) -> (u32, u32) {
    let stored = u32::from_le_bytes(block[CRC_AT..CRC_AT + 4].try_into().unwrap());
    // The crc field counts as zeros: fold zeros in where it sits rather
    // than copying the block.
    let head = crc32c::crc32c(&block[..CRC_AT]);
    let head = crc32c::crc32c_append(head, &[0; 4]);
    (stored, crc32c::crc32c_append(head, &block[CRC_AT + 4..]))
}

/// What reading one block back found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The block written for this offset by this run, intact.
    Good,
    /// Something else; see [`Bad`].
    Bad(Bad),
}

/// A bad block: its kind and what was found instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bad {
    /// Corrupted, lost or wrapped.
    pub(crate) kind: BadKind,
    /// For a wrapped block: the offset it was written for.
    pub(crate) from: Option<u64>,
    /// What was found, in words.
    pub(crate) found: String,
}

/// What a block at `offset` must hold: the header of this run (`seed`,
/// `sequence`) for that offset.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expect {
    /// The run's seed.
    pub(crate) seed: u64,
    /// The pass that wrote the blocks.
    pub(crate) sequence: u32,
}

impl Expect {
    /// Check `block`, read back from `offset`.
    ///
    /// * No magic, or another run's seed or pass: not this run's block, so
    ///   the write never arrived (zeros, older data): lost. Damage to the
    ///   magic itself reads as lost too; the checksum cannot be trusted to
    ///   say more when the header is gone.
    /// * The magic but a failing checksum: corrupted.
    /// * A sound block of this run written for another offset: wrapped.
    pub(crate) fn check(&self, block: &[u8], offset: u64) -> Verdict {
        let Some(h) = Header::read(block) else {
            return Verdict::Bad(Bad {
                kind: BadKind::Lost,
                from: None,
                found: describe_foreign(block),
            });
        };
        let (stored, actual) = checksums(block);
        if stored != actual {
            return Verdict::Bad(Bad {
                kind: BadKind::Corrupted,
                from: None,
                found: format!("crc32c {actual:08x}, the header says {stored:08x}"),
            });
        }
        if h.seed != self.seed || h.sequence != self.sequence {
            return Verdict::Bad(Bad {
                kind: BadKind::Lost,
                from: None,
                found: format!(
                    "an older iomark block (seed {}, pass {})",
                    h.seed, h.sequence
                ),
            });
        }
        if h.offset != offset {
            return Verdict::Bad(Bad {
                kind: BadKind::Wrapped,
                from: Some(h.offset),
                found: format!("the block written for offset {}", h.offset),
            });
        }
        Verdict::Good
    }
}

/// A block that is not iomark's, in a few words.
fn describe_foreign(block: &[u8]) -> String {
    if block.iter().all(|&b| b == 0) {
        return "zeros".into();
    }
    if block.iter().all(|&b| b == 0xff) {
        return "0xff bytes (erased flash)".into();
    }
    let head: Vec<String> = block.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("no iomark header (starts {})", head.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(offset: u64) -> Header {
        Header {
            offset,
            seed: 42,
            region: 1 << 20,
            sequence: 1,
            block: BLOCK as u32,
        }
    }

    fn block(offset: u64) -> Vec<u8> {
        let mut b: Vec<u8> = (0..BLOCK).map(|i| (i * 7 % 251) as u8).collect();
        header(offset).stamp(&mut b);
        b
    }

    const EXPECT: Expect = Expect {
        seed: 42,
        sequence: 1,
    };

    #[test]
    fn a_block_reads_back_good_where_it_was_written() {
        let b = block(8192);
        assert_eq!(EXPECT.check(&b, 8192), Verdict::Good);
        assert_eq!(Header::read(&b), Some(header(8192)));
    }

    #[test]
    fn the_checksum_is_crc32c_of_the_block_with_its_field_zeroed() {
        let b = block(0);
        let mut zeroed = b.clone();
        zeroed[CRC_AT..CRC_AT + 4].fill(0);
        let stored = u32::from_le_bytes(b[CRC_AT..CRC_AT + 4].try_into().unwrap());
        assert_eq!(stored, crc32c::crc32c(&zeroed));
    }

    #[test]
    fn a_flipped_byte_anywhere_after_the_magic_is_corruption() {
        for at in [8, 20, CRC_AT, HEADER, 1000, BLOCK - 1] {
            let mut b = block(4096);
            b[at] ^= 0x40;
            let Verdict::Bad(bad) = EXPECT.check(&b, 4096) else {
                panic!("byte {at} flipped went unnoticed");
            };
            assert_eq!(bad.kind, BadKind::Corrupted, "byte {at}");
        }
    }

    #[test]
    fn a_block_from_another_offset_is_a_wrap_naming_that_offset() {
        let b = block(64 << 20);
        let Verdict::Bad(bad) = EXPECT.check(&b, 0) else {
            panic!("wrap went unnoticed");
        };
        assert_eq!(bad.kind, BadKind::Wrapped);
        assert_eq!(bad.from, Some(64 << 20));
    }

    #[test]
    fn zeros_old_runs_and_foreign_data_are_lost_writes() {
        let zeros = vec![0u8; BLOCK];
        let other_run = {
            let mut b = vec![1u8; BLOCK];
            Header {
                seed: 7,
                ..header(0)
            }
            .stamp(&mut b);
            b
        };
        let text = b"hello world".repeat(400)[..BLOCK].to_vec();
        for (b, found) in [
            (zeros, "zeros"),
            (other_run, "older iomark block"),
            (text, "no iomark header"),
        ] {
            let Verdict::Bad(bad) = EXPECT.check(&b, 0) else {
                panic!("{found}: not caught");
            };
            assert_eq!(bad.kind, BadKind::Lost, "{found}");
            assert!(bad.found.contains(found), "{}", bad.found);
        }
    }
}
