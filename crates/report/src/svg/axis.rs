//! Axis rules shared by every chart: tick values, their labels, and the
//! choice between a linear and a logarithmic scale.
//!
//! Labels follow SI practice so a reader never counts digits: thousands are
//! grouped with a narrow space (`2 500`), large values take a prefix
//! (`100k`, `1.5M`), and no label carries trailing zeros (`0.2`, not
//! `0.200`).

/// The narrow no-break space that groups thousands (SI: a space, never a
/// comma or point, which read as decimal marks somewhere).
const GROUP: char = '\u{202f}';

/// Data whose largest value is more than this many times its smallest gets
/// a log axis: beyond two decades the small bars of a linear axis are
/// slivers (CrystalDiskMark's RND4K Q1T1 beside SEQ1M Q8T1).
pub const LOG_SPAN: f64 = 100.0;

/// Whether values from `min` to `max` span more than two decades, so they
/// read better on a log axis. Zero or negative values rule a log axis out.
pub fn wants_log(min: f64, max: f64) -> bool {
    min > 0.0 && max.is_finite() && max / min > LOG_SPAN
}

/// `v` rounded to `digits` significant digits, with trailing zeros (and a
/// trailing point) removed.
fn significant(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            v.to_string()
        };
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - mag).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Group the integer part of a plain decimal number in threes.
fn group_thousands(s: &str) -> String {
    let (sign, rest) = s.strip_prefix('-').map_or(("", s), |r| ("-", r));
    let (int, frac) = rest.split_once('.').map_or((rest, ""), |(i, f)| (i, f));
    if int.len() <= 4 {
        // `2500`, not `2 500`: SI leaves four-digit numbers whole.
        return s.to_string();
    }
    let mut out = String::from(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(GROUP);
        }
        out.push(c);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// A value for a label: three significant digits (whole numbers stay
/// whole), thousands grouped, no trailing zeros: `0.2`, `12.5`, `2500`,
/// `123 457`.
pub fn plain(v: f64) -> String {
    let s = if v.abs() >= 1000.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        significant(v, 3)
    };
    group_thousands(&s)
}

/// A value with an SI prefix from ten thousand up: `950`, `2500`, `100k`,
/// `1.5M`, `2G`; below that as [`plain`].
pub fn si(v: f64) -> String {
    const PREFIXES: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    let a = v.abs();
    if a >= 1e4 {
        for (f, p) in PREFIXES {
            if a >= f {
                return format!("{}{p}", significant(v / f, 3));
            }
        }
    }
    plain(v)
}

/// A duration given in nanoseconds, in the unit that keeps it short:
/// `800 ns`, `12 µs`, `1.5 ms`, `2 s`.
pub fn duration(ns: f64) -> String {
    let a = ns.abs();
    let (v, unit) = if a >= 1e9 {
        (ns / 1e9, "s")
    } else if a >= 1e6 {
        (ns / 1e6, "ms")
    } else if a >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    format!("{} {unit}", plain(v))
}

/// Superscript digits, for units written as text (`10⁶`, `2²⁰`).
pub fn superscript(n: i32) -> String {
    n.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            _ => '⁹',
        })
        .collect()
}

/// Ticks from `min` (rounded down) to at least `max`: 1, 2 or 5 times a
/// power of ten.
pub(crate) fn nice_ticks(min: f64, max: f64, want: usize) -> Vec<f64> {
    let span = (max - min).max(f64::MIN_POSITIVE);
    let raw = span / want as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| span / s <= want as f64)
        .unwrap_or(10.0 * mag);
    let first = (min / step).floor() * step;
    let mut t = Vec::new();
    let mut v = first;
    while v < max + step * 0.999 {
        // Multiples of a step like 0.1 drift (0.30000000000000004); the
        // label must not.
        t.push((v / step).round() * step);
        v += step;
        if t.len() > 50 {
            break;
        }
    }
    t
}

/// A value axis: where values go (as a fraction of its length) and the
/// ticks to label.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ValueAxis {
    log: bool,
    lo: f64,
    hi: f64,
    /// Labelled ticks.
    pub ticks: Vec<f64>,
    /// Unlabelled grid lines between the labelled ones (log axes).
    pub minor: Vec<f64>,
}

impl ValueAxis {
    /// An axis for values from `min` to `max`: log when they span more than
    /// two decades ([`wants_log`]), else linear from zero (or below).
    pub fn fit(min: f64, max: f64) -> ValueAxis {
        if wants_log(min, max) {
            ValueAxis::log(min, max)
        } else {
            let top = if max > 0.0 { max * 1.08 } else { 1.0 };
            let ticks = nice_ticks(min.min(0.0), top, 6);
            ValueAxis {
                log: false,
                lo: ticks[0],
                hi: *ticks.last().unwrap_or(&1.0),
                ticks,
                minor: Vec::new(),
            }
        }
    }

    /// A log axis over whole decades around `min..max` (both positive).
    pub fn log(min: f64, max: f64) -> ValueAxis {
        let lo = min.log10().floor() as i32;
        let hi = (max.log10().ceil() as i32).max(lo + 1);
        let ticks = (lo..=hi).map(|e| 10f64.powi(e)).collect();
        let minor = (lo..hi)
            .flat_map(|e| [2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .collect();
        ValueAxis {
            log: true,
            lo: 10f64.powi(lo),
            hi: 10f64.powi(hi),
            ticks,
            minor,
        }
    }

    /// Whether the axis is logarithmic.
    pub fn is_log(&self) -> bool {
        self.log
    }

    /// The lowest value on the axis (where bars start).
    pub fn floor(&self) -> f64 {
        self.lo
    }

    /// Where `v` sits, from 0 (the bottom) to 1 (the top); values off a log
    /// axis (zero) sit at its bottom.
    pub fn frac(&self, v: f64) -> f64 {
        if self.log {
            if v <= 0.0 {
                return 0.0;
            }
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
}

/// The x position of percentile `p` on a "nines" axis: 90 is one nine,
/// 99 two, 99.9 three, so the tail gets as much room as the body.
pub fn nines(p: f64) -> f64 {
    -(1.0 - p.clamp(0.0, 99.9999) / 100.0).log10()
}

/// The percentiles labelled on a nines axis whose data reach `max_p`.
pub(crate) fn nines_ticks(max_p: f64) -> Vec<f64> {
    let mut t = vec![0.0, 50.0, 90.0, 99.0];
    for p in [99.9, 99.99, 99.999] {
        if t.last().is_some_and(|&l| l < max_p - 1e-9) {
            t.push(p);
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_labels_lose_trailing_zeros_and_group_thousands() {
        assert_eq!(plain(0.2), "0.2");
        assert_eq!(plain(0.25), "0.25");
        assert_eq!(plain(0.1234), "0.123");
        assert_eq!(plain(12.5), "12.5");
        assert_eq!(plain(2.0), "2");
        assert_eq!(plain(2500.0), "2500");
        assert_eq!(plain(100_000.0), "100\u{202f}000");
        assert_eq!(plain(1_234_567.8), "1\u{202f}234\u{202f}568");
        assert_eq!(plain(-12_345.0), "-12\u{202f}345");
    }

    #[test]
    fn si_labels_take_a_prefix_from_ten_thousand() {
        assert_eq!(si(950.0), "950");
        assert_eq!(si(2500.0), "2500");
        assert_eq!(si(10_000.0), "10k");
        assert_eq!(si(100_000.0), "100k");
        assert_eq!(si(1_500_000.0), "1.5M");
        assert_eq!(si(2e9), "2G");
        assert_eq!(si(0.5), "0.5");
    }

    #[test]
    fn durations_pick_their_unit() {
        assert_eq!(duration(800.0), "800 ns");
        assert_eq!(duration(12_000.0), "12 µs");
        assert_eq!(duration(1_500_000.0), "1.5 ms");
        assert_eq!(duration(2e9), "2 s");
    }

    #[test]
    fn units_are_written_with_superscripts() {
        assert_eq!(superscript(6), "⁶");
        assert_eq!(superscript(20), "²⁰");
        assert_eq!(superscript(-3), "⁻³");
    }

    #[test]
    fn log_scale_only_beyond_two_decades() {
        assert!(!wants_log(10.0, 1000.0));
        assert!(wants_log(10.0, 1001.0));
        // CrystalDiskMark: RND4K Q1T1 at 40 MB/s beside SEQ1M at 7000.
        assert!(wants_log(40.0, 7000.0));
        assert!(!wants_log(0.0, 7000.0), "zero has no place on a log axis");
        assert!(!ValueAxis::fit(100.0, 400.0).is_log());
        let log = ValueAxis::fit(40.0, 7000.0);
        assert!(log.is_log());
        assert_eq!(log.ticks, [10.0, 100.0, 1000.0, 10_000.0]);
        assert_eq!(log.frac(10.0), 0.0);
        assert_eq!(log.frac(10_000.0), 1.0);
        assert!((log.frac(100.0) - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn linear_ticks_cover_the_range_in_round_steps() {
        let t = nice_ticks(0.0, 473.0, 6);
        assert_eq!(t.first(), Some(&0.0));
        assert!(*t.last().unwrap() >= 473.0);
        assert_eq!(t[1] - t[0], 100.0);
        let small = nice_ticks(0.0, 0.7, 6);
        assert_eq!(
            small.iter().map(|&v| plain(v)).collect::<Vec<_>>()[..4],
            ["0", "0.2", "0.4", "0.6"]
        );
    }

    #[test]
    fn nines_give_each_nine_the_same_room() {
        assert!((nines(90.0) - 1.0).abs() < 1e-12);
        assert!((nines(99.0) - 2.0).abs() < 1e-12);
        assert!((nines(99.99) - 4.0).abs() < 1e-9);
        assert_eq!(nines_ticks(99.99), [0.0, 50.0, 90.0, 99.0, 99.9, 99.99]);
        assert_eq!(nines_ticks(99.0), [0.0, 50.0, 90.0, 99.0]);
    }
}
