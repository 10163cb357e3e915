//! Verify mode: does the device give back what it was given, and does it
//! hold as much as it claims? f3's and h2testw's questions, answered at
//! the speed of a benchmark.
//!
//! * [`block`]: the block format (a header with offset, seed, pass and a
//!   crc32c per 4 KiB) and the check of a block read back.
//! * [`surface`]: the full check: every block group of the target written
//!   in order, then read back and checked, with the rate by position.
//! * [`probe`]: the quick probe for fake capacity (f3probe): a few hundred
//!   blocks across the claimed size, then a search for the boundary.
//!
//! [`Findings`] gathers what the reads found: bad blocks by kind, as
//! ranges, and the capacity that really holds data.

pub(crate) mod block;
pub(crate) mod probe;
pub(crate) mod surface;
pub(crate) mod writes;

use iomark_model::units::Bytes;
use iomark_model::verify::{BadCounts, BadKind, BadRange, MAX_RANGES};

use block::Bad;

/// Bytes per I/O of the full check, and the unit the capacity is found
/// in: 1 MiB, the size sequential benchmarks use, so the rates are the
/// medium's and not per-I/O cost.
pub(crate) const GROUP: u64 = 1 << 20;

/// What reading blocks back found, gathered in offset order.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    /// Blocks checked.
    pub(crate) checked: u64,
    /// Bad blocks by kind.
    pub(crate) bad: BadCounts,
    /// Bad blocks as ranges (at most [`MAX_RANGES`]).
    pub(crate) ranges: Vec<BadRange>,
    /// Ranges beyond [`MAX_RANGES`].
    pub(crate) more_ranges: u64,
    /// The greatest common divisor of every wrapped block's distance from
    /// the offset it was written for: the period the device repeats with,
    /// its real size when it wraps around.
    wrap_period: Option<u64>,
    /// End of the last range, to see whether the next one continues it.
    last_end: u64,
}

impl Findings {
    /// A good block at `offset`.
    fn good(&mut self) {
        self.checked += 1;
    }

    /// A bad block of `len` bytes at `offset`; blocks must come in
    /// increasing offset order.
    fn bad(&mut self, offset: u64, len: u64, bad: Bad) {
        self.checked += 1;
        self.bad.add(bad.kind);
        if let Some(from) = bad.from {
            let distance = from.abs_diff(offset);
            self.wrap_period = Some(self.wrap_period.map_or(distance, |p| gcd(p, distance)));
        }
        let continues = self
            .ranges
            .last()
            .is_some_and(|r| r.kind == bad.kind && self.last_end == offset)
            && self.more_ranges == 0;
        if continues {
            let r = self.ranges.last_mut().expect("checked above");
            r.len = Bytes(r.len.get() + len);
            self.last_end = offset + len;
            return;
        }
        self.last_end = offset + len;
        if self.ranges.len() >= MAX_RANGES {
            self.more_ranges += 1;
            return;
        }
        let expected = format!("the block written for offset {offset}");
        self.ranges.push(BadRange {
            start: Bytes(offset),
            len: Bytes(len),
            kind: bad.kind,
            from: bad.from.map(Bytes),
            expected,
            found: bad.found,
        });
    }

    /// The capacity that really holds data, of `claimed` checked up to
    /// `checked_to`:
    ///
    /// * a device that wraps holds its wrap period (blocks written beyond
    ///   it landed on earlier ones);
    /// * one whose writes are lost from some offset to the end holds what
    ///   comes before it;
    /// * otherwise all of it: scattered bad blocks are damage, counted as
    ///   such, not a smaller size.
    pub(crate) fn usable(&self, claimed: u64, checked_to: u64) -> u64 {
        if let Some(period) = self.wrap_period {
            return period.min(claimed);
        }
        match self.ranges.last() {
            Some(r)
                if self.more_ranges == 0
                    && r.kind == BadKind::Lost
                    && r.start.get() + r.len.get() >= checked_to =>
            {
                r.start.get()
            }
            _ => claimed,
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(kind: BadKind, from: Option<u64>) -> Bad {
        Bad {
            kind,
            from,
            found: "x".into(),
        }
    }

    #[test]
    fn adjacent_blocks_of_one_kind_make_one_range() {
        let mut f = Findings::default();
        f.good();
        f.bad(4096, 4096, bad(BadKind::Corrupted, None));
        f.bad(8192, 4096, bad(BadKind::Corrupted, None));
        f.bad(12288, 4096, bad(BadKind::Lost, None));
        f.good();
        f.bad(20480, 4096, bad(BadKind::Lost, None));
        let r: Vec<(u64, u64, BadKind)> = f
            .ranges
            .iter()
            .map(|r| (r.start.get(), r.len.get(), r.kind))
            .collect();
        assert_eq!(
            r,
            vec![
                (4096, 8192, BadKind::Corrupted),
                (12288, 4096, BadKind::Lost),
                (20480, 4096, BadKind::Lost),
            ]
        );
        assert_eq!((f.checked, f.bad.total()), (6, 4));
        assert_eq!(f.usable(1 << 20, 1 << 20), 1 << 20, "scattered damage");
    }

    #[test]
    fn a_wrap_gives_the_real_size() {
        let mut f = Findings::default();
        let real = 64 << 20;
        f.bad(0, 4096, bad(BadKind::Wrapped, Some(3 * real)));
        f.bad(real, 4096, bad(BadKind::Wrapped, Some(3 * real)));
        f.bad(
            2 * real + 4096,
            4096,
            bad(BadKind::Wrapped, Some(3 * real + 4096)),
        );
        assert_eq!(f.wrap_period, Some(real));
        assert_eq!(f.usable(4 * real, 4 * real), real);
    }

    #[test]
    fn writes_lost_to_the_end_mean_a_smaller_device() {
        let mut f = Findings::default();
        f.good();
        let end = 8 * 4096;
        for at in (4..8).map(|b| b * 4096) {
            f.bad(at, 4096, bad(BadKind::Lost, None));
        }
        assert_eq!(f.usable(end, end), 4 * 4096);
    }
}
