//! Filling buffers with the chosen data pattern.
//!
//! Random data is incompressible; zeros compress to nothing; a
//! compressible:N block is random bytes followed by N% zeros, chunk by
//! chunk, the way fio's `buffer_compress_percentage` builds it, so a
//! compressor working on 4 KiB chunks saves about N%.

use iomark_model::disk::DataPattern;
use rand::rngs::SmallRng;
use rand::RngCore;

/// The granularity at which compressible data alternates random and zero
/// bytes (fio's `buffer_compress_chunk` default is 512; 4 KiB matches the
/// page-sized chunks that zram and most SSD controllers compress).
const COMPRESS_CHUNK: usize = 4096;

/// Fill `buf` with `pattern`, drawing random bytes from `rng`.
pub fn fill(buf: &mut [u8], pattern: DataPattern, rng: &mut SmallRng) {
    match pattern {
        DataPattern::Random => rng.fill_bytes(buf),
        DataPattern::Zeros => buf.fill(0),
        DataPattern::Compressible(pct) => {
            let zero_len = COMPRESS_CHUNK * usize::from(pct.min(100)) / 100;
            for chunk in buf.chunks_mut(COMPRESS_CHUNK) {
                let random_len = chunk
                    .len()
                    .saturating_sub(zero_len * chunk.len() / COMPRESS_CHUNK);
                rng.fill_bytes(&mut chunk[..random_len]);
                chunk[random_len..].fill(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

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
    }
}
