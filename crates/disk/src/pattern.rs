//! Filling buffers with the chosen data pattern.
//!
//! Random data is incompressible; zeros compress to nothing; a
//! compressible:N block is random bytes followed by N% zeros, chunk by
//! chunk, the way fio's `buffer_compress_percentage` builds it, so a
//! compressor working on 4 KiB chunks saves about N%; repeat data is one
//! 4 KiB random block over and over, which a deduplicating device stores
//! once.

use iomark_model::disk::DataPattern;
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

/// The granularity at which compressible data alternates random and zero
/// bytes (fio's `buffer_compress_chunk` default is 512; 4 KiB matches the
/// page-sized chunks that zram and most SSD controllers compress).
const COMPRESS_CHUNK: usize = 4096;

/// The sector a [`Scrambler`] stamps once (fio's 512-byte blocks).
const SECTOR: usize = 512;
/// Bytes of each stamp: the sector's offset, then the write's tag.
const STAMP: usize = 16;

/// How many leading bytes of a `len`-byte chunk are random in a
/// compressible:`pct` buffer; the rest are zeros.
#[inline]
fn random_len(len: usize, pct: u8) -> usize {
    let zero_len = COMPRESS_CHUNK * usize::from(pct.min(100)) / 100;
    len.saturating_sub(zero_len * len / COMPRESS_CHUNK)
}

/// Makes every write unique by stamping a few bytes of each sector of its
/// buffer just before it is issued; see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Scrambler {
    /// The compressible percentage whose random part is stamped (0 for
    /// random data); `None` when nothing is (zeros, compressible:100).
    pct: Option<u8>,
    /// Tag of the last write: a per-thread start (from the clock, as fio's
    /// issue time) plus the number of writes so far.
    tag: u64,
}

impl Scrambler {
    /// A scrambler for buffers filled with `pattern`; `start` seeds the
    /// tags, and should differ between threads and between runs.
    pub(crate) fn new(pattern: DataPattern, start: u64) -> Self {
        let pct = match pattern {
            DataPattern::Random => Some(0),
            DataPattern::Compressible(p) if p < 100 => Some(p),
            // Repeated blocks stay identical: that is the point of them.
            DataPattern::Compressible(_) | DataPattern::Zeros | DataPattern::Repeat => None,
        };
        Scrambler { pct, tag: start }
    }

    /// Stamp `buf`, about to be written at file offset `offset`: in every
    /// 512-byte sector whose first 16 bytes lie in its chunk's random part,
    /// the sector's offset and this write's tag (little-endian u64s).
    #[inline]
    pub(crate) fn scramble(&mut self, buf: &mut [u8], offset: u64) {
        let Some(pct) = self.pct else { return };
        self.tag = self.tag.wrapping_add(1);
        let tag = self.tag;
        if pct == 0 {
            // Random data: every sector long enough for a stamp, without
            // the chunk arithmetic.
            let sectors = buf.chunks_mut(SECTOR).filter(|s| s.len() >= STAMP);
            for (i, sector) in sectors.enumerate() {
                stamp(sector, offset.wrapping_add((i * SECTOR) as u64), tag);
            }
            return;
        }
        let mut chunk_offset = offset;
        for chunk in buf.chunks_mut(COMPRESS_CHUNK) {
            let random = random_len(chunk.len(), pct);
            for (at, sector) in (0..random.saturating_sub(STAMP - 1))
                .step_by(SECTOR)
                .zip(chunk.chunks_mut(SECTOR))
            {
                stamp(sector, chunk_offset.wrapping_add(at as u64), tag);
            }
            chunk_offset = chunk_offset.wrapping_add(chunk.len() as u64);
        }
    }
}

/// Write a sector's stamp: its file offset and the write's tag, as
/// little-endian u64s in its first 16 bytes.
#[inline]
fn stamp(sector: &mut [u8], offset: u64, tag: u64) {
    sector[..8].copy_from_slice(&offset.to_le_bytes());
    sector[8..STAMP].copy_from_slice(&tag.to_le_bytes());
}

/// Fill `buf` with `pattern`, drawing random bytes from `rng`.
pub(crate) fn fill(buf: &mut [u8], pattern: DataPattern, rng: &mut SmallRng) {
    match pattern {
        DataPattern::Random => rng.fill_bytes(buf),
        DataPattern::Zeros => buf.fill(0),
        DataPattern::Compressible(pct) => {
            for chunk in buf.chunks_mut(COMPRESS_CHUNK) {
                let random = random_len(chunk.len(), pct);
                rng.fill_bytes(&mut chunk[..random]);
                chunk[random..].fill(0);
            }
        }
        DataPattern::Repeat => {
            // One block for every buffer of every thread and run, so that
            // all of them are copies of each other.
            let mut block = [0u8; COMPRESS_CHUNK];
            SmallRng::seed_from_u64(REPEAT_SEED).fill_bytes(&mut block);
            for chunk in buf.chunks_mut(COMPRESS_CHUNK) {
                chunk.copy_from_slice(&block[..chunk.len()]);
            }
        }
    }
}

/// The seed of the block `repeat` data repeats.
const REPEAT_SEED: u64 = 0x4ea7_b10c;

#[cfg(test)]
mod tests {
    use super::*;

    fn zero_share(buf: &[u8]) -> f64 {
        buf.iter().filter(|&&b| b == 0).count() as f64 / buf.len() as f64
    }

    #[test]
    fn patterns_have_the_promised_share_of_zeros() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut buf = vec![1u8; 1 << 20];
        fill(&mut buf, DataPattern::Zeros, &mut rng);
        assert_eq!(zero_share(&buf), 1.0);
        fill(&mut buf, DataPattern::Random, &mut rng);
        assert!(zero_share(&buf) < 0.01);
        fill(&mut buf, DataPattern::Compressible(50), &mut rng);
        let z = zero_share(&buf);
        assert!((z - 0.5).abs() < 0.01, "zero share {z}");
        // repeat: every 4 KiB the same random block, whatever the rng.
        fill(&mut buf, DataPattern::Repeat, &mut rng);
        let mut other = vec![0u8; 8192];
        fill(
            &mut other,
            DataPattern::Repeat,
            &mut SmallRng::seed_from_u64(9),
        );
        assert!(zero_share(&buf) < 0.01);
        assert!(buf
            .chunks(COMPRESS_CHUNK)
            .all(|c| c == &other[..COMPRESS_CHUNK]));
        let mut s = Scrambler::new(DataPattern::Repeat, 1);
        s.scramble(&mut other, 0);
        assert_eq!(
            &other[..COMPRESS_CHUNK],
            &buf[..COMPRESS_CHUNK],
            "never stamped"
        );
    }

    #[test]
    fn scrambling_makes_each_write_and_sector_unique() {
        let mut rng = SmallRng::seed_from_u64(2);
        let mut buf = vec![0u8; 16 << 10];
        fill(&mut buf, DataPattern::Random, &mut rng);
        let mut s = Scrambler::new(DataPattern::Random, 77);
        s.scramble(&mut buf, 8192);
        let first = buf.clone();
        s.scramble(&mut buf, 8192);
        assert_ne!(first, buf, "the same offset written twice differs");
        for (i, sector) in buf.chunks(SECTOR).enumerate() {
            let at = u64::from_le_bytes(sector[..8].try_into().unwrap());
            assert_eq!(at, 8192 + (i * SECTOR) as u64);
            let tag = u64::from_le_bytes(sector[8..16].try_into().unwrap());
            assert_eq!(tag, 79);
        }
        // Only the stamps changed.
        let changed = first.iter().zip(&buf).filter(|(a, b)| a != b).count();
        assert!(changed <= buf.len() / SECTOR * 8, "changed {changed}");
    }

    #[test]
    fn scrambling_keeps_zeros_and_the_compressible_share() {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut buf = vec![0u8; 1 << 20];
        let mut s = Scrambler::new(DataPattern::Zeros, 1);
        s.scramble(&mut buf, 4096);
        assert_eq!(zero_share(&buf), 1.0);
        for pct in [100u8, 99, 90, 50, 10] {
            fill(&mut buf, DataPattern::Compressible(pct), &mut rng);
            let before = buf.clone();
            let mut s = Scrambler::new(DataPattern::Compressible(pct), 0x1234_5678_9abc_def0);
            s.scramble(&mut buf, 1 << 30);
            // Every zero run is where it was: only random bytes were stamped.
            for chunk in buf.chunks(COMPRESS_CHUNK) {
                let random = random_len(chunk.len(), pct);
                assert!(chunk[random..].iter().all(|&b| b == 0), "{pct}%");
            }
            // A stamp's offset has zero high bytes, a few more zeros per
            // sector than random bytes would have.
            let z = zero_share(&buf);
            assert!((z - f64::from(pct) / 100.0).abs() < 0.015, "{pct}%: {z}");
            assert_eq!(buf == before, pct == 100, "{pct}% stamped");
        }
        // A short buffer (smaller than a chunk, odd length) is stamped
        // within its random part and no further.
        let mut short = vec![0u8; 1000];
        fill(&mut short, DataPattern::Compressible(50), &mut rng);
        Scrambler::new(DataPattern::Compressible(50), 5).scramble(&mut short, 0);
        assert!(short[random_len(1000, 50)..].iter().all(|&b| b == 0));
        assert_eq!(&short[8..16], &6u64.to_le_bytes());
        // Random data: every sector, a short last one too when a stamp fits.
        let mut odd = vec![0xa5u8; 1000];
        Scrambler::new(DataPattern::Random, 9).scramble(&mut odd, 4096);
        assert_eq!(&odd[512..520], &4608u64.to_le_bytes());
        assert_eq!(&odd[520..528], &10u64.to_le_bytes());
        assert!(odd[528..].iter().all(|&b| b == 0xa5));
    }
}
