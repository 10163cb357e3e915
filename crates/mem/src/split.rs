//! Static, contiguous work split: OpenMP's `schedule(static)` without a chunk
//! size. The same split is used for first touch and for the kernels, so every
//! page is touched first by the thread that later works on it.

use std::ops::Range;

/// `n` items in `parts` contiguous ranges whose lengths differ by at most one.
pub(crate) fn ranges(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let base = n / parts;
    let extra = n % parts;
    let mut start = 0;
    (0..parts)
        .map(|t| {
            let len = base + usize::from(t < extra);
            let r = start..start + len;
            start += len;
            r
        })
        .collect()
}

/// Cut `s` into the mutable pieces `ranges` name (consecutive, in order),
/// each range scaled by `unit` elements.
pub(crate) fn split_mut<'a, T>(
    mut s: &'a mut [T],
    ranges: &[Range<usize>],
    unit: usize,
) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut at = 0;
    for r in ranges {
        let skip = (r.start - at) * unit;
        let rest = std::mem::take(&mut s);
        let (_, rest) = rest.split_at_mut(skip);
        let (piece, rest) = rest.split_at_mut(r.len() * unit);
        out.push(piece);
        s = rest;
        at = r.end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_everything_once() {
        let r = ranges(10, 3);
        assert_eq!(r, vec![0..4, 4..7, 7..10]);
        assert_eq!(ranges(2, 4), vec![0..1, 1..2, 2..2, 2..2]);
    }

    #[test]
    fn split_follows_the_ranges() {
        let mut v: Vec<u32> = (0..12).collect();
        let pieces = split_mut(&mut v, &[1..2, 3..5], 2);
        assert_eq!(pieces[0], &[2, 3]);
        assert_eq!(pieces[1], &[6, 7, 8, 9]);
    }
}
