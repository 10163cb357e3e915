//! Where a write rate fell: the cliff of a drive whose write cache ran out,
//! found in the series of bytes written over time.
//!
//! The method, in two steps, each robust in its own way:
//!
//! 1. **Is there a drop?** The rate over a trailing window (`window`, 1 s)
//!    at each point is compared with the leading rate (the median over the
//!    first windows). A drop is the first point where the rate is below
//!    `drop` (70%) of the leading rate and stays below it for `hold` (3 s):
//!    a pause for garbage collection or a throttle's slice is no cliff. If
//!    the rate later climbs back above the midpoint of the two levels for
//!    `hold` too (the cache came back while writing), the series is cut
//!    there, so the slow level is the one right after the drop.
//! 2. **Where exactly?** Two straight lines are fitted to the cumulative
//!    series (bytes written against time) up to the cut, one before and one
//!    after a breakpoint, by least squares (the first from the last point
//!    before any byte was written: the pass's start-up is not the
//!    device's rate), and the breakpoint with the
//!    smallest total squared error wins (segmented regression). Their
//!    slopes are the rates before and after; where they meet is the cliff,
//!    in bytes and in time. Fitting the cumulative curve averages the
//!    scatter of every point on each side, so the position does not depend
//!    on which sample happened to straddle the fall.
//!
//! A rate that slid down over more than three windows is still reported,
//! with `gradual` set: the meeting point of the two lines is then the knee
//! of the slide, not a cache size to the byte.

use iomark_model::sustained::{Cliff, WrittenAt};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};

/// The knobs of [`find_cliff`]; the defaults are what the sustained
/// profile uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CliffParams {
    /// Length of the trailing window the rate at each point is taken over.
    pub window: Nanos,
    /// A drop: the rate below this share of the leading rate.
    pub drop: f64,
    /// How long a drop (or a recovery) must last to count.
    pub hold: Nanos,
}

impl Default for CliffParams {
    fn default() -> Self {
        CliffParams {
            window: Nanos::from_secs(1),
            drop: 0.7,
            hold: Nanos::from_secs(3),
        }
    }
}

/// A cumulative series as seconds and bytes, for the arithmetic.
struct Curve {
    t: Vec<f64>,
    b: Vec<f64>,
}

impl Curve {
    fn new(points: &[WrittenAt]) -> Self {
        Curve {
            t: points.iter().map(|p| p.time.as_secs_f64()).collect(),
            b: points.iter().map(|p| p.bytes.get() as f64).collect(),
        }
    }

    fn end(&self) -> f64 {
        self.t.last().copied().unwrap_or(0.0)
    }

    /// Bytes written by `t`, linear between points.
    fn bytes_at(&self, t: f64) -> f64 {
        let i = self.t.partition_point(|&x| x <= t);
        if i == 0 {
            return self.b.first().copied().unwrap_or(0.0);
        }
        if i == self.t.len() {
            return self.b[i - 1];
        }
        let (t0, t1, b0, b1) = (self.t[i - 1], self.t[i], self.b[i - 1], self.b[i]);
        if t1 <= t0 {
            return b1;
        }
        b0 + (b1 - b0) * (t - t0) / (t1 - t0)
    }

    /// The mean rate from `from` to `to`, in bytes per second.
    fn rate(&self, from: f64, to: f64) -> f64 {
        if to <= from {
            return 0.0;
        }
        (self.bytes_at(to) - self.bytes_at(from)) / (to - from)
    }
}

/// The median of `v` (which it sorts); 0 for nothing.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Running sums for least-squares lines over any run of points.
struct Sums {
    n: Vec<f64>,
    t: Vec<f64>,
    b: Vec<f64>,
    tt: Vec<f64>,
    tb: Vec<f64>,
    bb: Vec<f64>,
}

/// A fitted line `b = c + slope * t` and its squared error.
struct Line {
    slope: f64,
    c: f64,
    sse: f64,
}

impl Sums {
    fn new(c: &Curve, upto: usize) -> Self {
        let mut s = Sums {
            n: vec![0.0],
            t: vec![0.0],
            b: vec![0.0],
            tt: vec![0.0],
            tb: vec![0.0],
            bb: vec![0.0],
        };
        for i in 0..upto {
            let (t, b) = (c.t[i], c.b[i]);
            s.n.push(s.n[i] + 1.0);
            s.t.push(s.t[i] + t);
            s.b.push(s.b[i] + b);
            s.tt.push(s.tt[i] + t * t);
            s.tb.push(s.tb[i] + t * b);
            s.bb.push(s.bb[i] + b * b);
        }
        s
    }

    /// The least-squares line through points `from..=to`.
    fn line(&self, from: usize, to: usize) -> Option<Line> {
        let (a, z) = (from, to + 1);
        let n = self.n[z] - self.n[a];
        let st = self.t[z] - self.t[a];
        let sb = self.b[z] - self.b[a];
        let stt = self.tt[z] - self.tt[a];
        let stb = self.tb[z] - self.tb[a];
        let sbb = self.bb[z] - self.bb[a];
        let vt = stt - st * st / n;
        if n < 2.0 || vt <= 0.0 {
            return None;
        }
        let cov = stb - st * sb / n;
        let slope = cov / vt;
        let c = (sb - slope * st) / n;
        // Residual sum of squares of a least-squares line.
        let sse = (sbb - sb * sb / n - slope * cov).max(0.0);
        Some(Line { slope, c, sse })
    }
}

/// Find where the write rate of a pass fell, from its cumulative series
/// (bytes written by each time, in order, starting near `(0, 0)`); `None`
/// when it did not fall below `drop` of its leading rate for `hold`, or the
/// series is too short to say (shorter than a window and a hold after the
/// leading windows).
pub fn find_cliff(points: &[WrittenAt], p: &CliffParams) -> Option<Cliff> {
    let c = Curve::new(points);
    let w = p.window.as_secs_f64();
    let hold = p.hold.as_secs_f64();
    if points.len() < 8 || w <= 0.0 || c.end() < 3.0 * w + hold {
        return None;
    }
    // The rate over the trailing window at each point from the first
    // whole window on.
    let rates: Vec<(usize, f64, f64)> = (0..points.len())
        .filter(|&i| c.t[i] >= w)
        .map(|i| (i, c.t[i], c.rate(c.t[i] - w, c.t[i])))
        .collect();
    let mut leading: Vec<f64> = rates
        .iter()
        .filter(|r| r.1 <= 3.0 * w)
        .map(|r| r.2)
        .collect();
    let lead = median(&mut leading);
    if lead <= 0.0 {
        return None;
    }
    let below = p.drop * lead;
    // Every rate in [t, t + hold] passes `test`, and the series reaches
    // that far.
    let holds = |from: usize, test: &dyn Fn(f64) -> bool| {
        let t0 = rates[from].1;
        t0 + hold <= c.end()
            && rates[from..]
                .iter()
                .take_while(|r| r.1 <= t0 + hold)
                .all(|r| test(r.2))
    };
    let drop_at = (0..rates.len()).find(|&k| holds(k, &|r| r < below))?;
    let t_drop = rates[drop_at].1;
    let mut slow: Vec<f64> = rates[drop_at..]
        .iter()
        .take_while(|r| r.1 <= t_drop + hold)
        .map(|r| r.2)
        .collect();
    let mid = (lead + median(&mut slow)) / 2.0;
    // A recovery: the rate back above the midpoint for a hold. The fit
    // stops where the window that saw it began.
    let cut_time = (drop_at..rates.len())
        .filter(|&k| rates[k].1 > t_drop + hold)
        .find(|&k| holds(k, &|r| r > mid))
        .map_or(c.end(), |k| rates[k].1 - w);
    let upto = c.t.partition_point(|&t| t <= cut_time);
    let sums = Sums::new(&c, upto);
    // The pass's clock starts before its first write completes (threads
    // started, buffers filled: beside two busy loops four writer threads
    // took long enough for the rate before to read 5.6% under what the
    // device served, loaded run 2 of b0606b7): the fast line starts at
    // the last point before any byte was written.
    let start =
        c.b.iter()
            .position(|&b| b > 0.0)
            .map_or(0, |i| i.saturating_sub(1));
    // At least three points on each side of the breakpoint.
    let (before, after) = (start + 3..upto.saturating_sub(3))
        .filter_map(|k| Some((sums.line(start, k)?, sums.line(k, upto - 1)?)))
        .min_by(|x, y| (x.0.sse + x.1.sse).total_cmp(&(y.0.sse + y.1.sse)))?;
    if before.slope <= 0.0 || after.slope >= p.drop * before.slope {
        return None;
    }
    let meet = ((after.c - before.c) / (before.slope - after.slope)).clamp(0.0, cut_time);
    let at = before.c + before.slope * meet;
    // How long the fall took: from the last rate near the fast level to
    // the first near the slow one.
    let span = before.slope - after.slope;
    let near_slow = rates
        .iter()
        .find(|r| r.1 >= meet - w && r.2 <= after.slope + 0.2 * span)
        .map_or(meet, |r| r.1);
    let near_fast = rates
        .iter()
        .rev()
        .find(|r| r.1 <= near_slow && r.2 >= before.slope - 0.2 * span)
        .map_or(0.0, |r| r.1);
    Some(Cliff {
        at: Bytes(at.max(0.0).round() as u64),
        time: Nanos((meet * 1e9).round() as u64),
        rate_before: BytesPerSec(before.slope),
        rate_after: BytesPerSec(after.slope),
        gradual: near_slow - near_fast > 3.0 * w,
    })
}

/// Whether the rate has been steady over the last `span` of the series,
/// all of it after `since`: the mean rate of each fifth of the span within
/// `tolerance` (0.1 is 10%) of the median of the five, give or take one
/// `quantum` (the block size: bytes complete a block at a time, so a slow
/// rate over a short part cannot be told more finely). False when the
/// series is shorter than that.
pub fn steady(
    points: &[WrittenAt],
    since: Nanos,
    span: Nanos,
    tolerance: f64,
    quantum: Bytes,
) -> bool {
    let c = Curve::new(points);
    let (end, span) = (c.end(), span.as_secs_f64());
    let from = end - span;
    if span <= 0.0 || from < since.as_secs_f64() || from < 0.0 {
        return false;
    }
    let parts: Vec<f64> = (0..5)
        .map(|i| {
            c.rate(
                from + span * i as f64 / 5.0,
                from + span * (i + 1) as f64 / 5.0,
            )
        })
        .collect();
    let mid = median(&mut parts.clone());
    let slack = tolerance * mid + quantum.get() as f64 / (span / 5.0);
    mid > 0.0 && parts.iter().all(|r| (r - mid).abs() <= slack)
}

/// The mean rate of the series between two times (linear between points).
pub fn rate_between(points: &[WrittenAt], from: Nanos, to: Nanos) -> BytesPerSec {
    BytesPerSec(Curve::new(points).rate(from.as_secs_f64(), to.as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = (1u64 << 20) as f64;

    /// A series every `dt` seconds for `secs` seconds whose rate at time
    /// `t` is `rate(t)` bytes per second, with each step's bytes scaled by
    /// `noise(i)` (1.0 for none).
    fn series(
        secs: f64,
        dt: f64,
        rate: impl Fn(f64) -> f64,
        noise: impl Fn(usize) -> f64,
    ) -> Vec<WrittenAt> {
        let mut out = vec![WrittenAt {
            time: Nanos(0),
            bytes: Bytes(0),
        }];
        let (mut t, mut b, mut i) = (0.0, 0.0, 0usize);
        while t < secs {
            // Integrate the rate over the step in small pieces, so a step
            // in the rate inside a sample is exact.
            let pieces = 100;
            let mut step = 0.0;
            for k in 0..pieces {
                step += rate(t + dt * (k as f64 + 0.5) / pieces as f64) * dt / pieces as f64;
            }
            t += dt;
            b += step * noise(i);
            i += 1;
            out.push(WrittenAt {
                time: Nanos((t * 1e9) as u64),
                bytes: Bytes(b as u64),
            });
        }
        out
    }

    /// The v1 throttle's scatter: a deterministic +-15% pattern with no
    /// period the detector could lock onto.
    fn jitter(i: usize) -> f64 {
        let x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
        0.85 + 0.3 * (x as f64 / (1u64 << 24) as f64)
    }

    /// 100 MiB/s for the first 256 MiB (2.56 s), then 20 MiB/s.
    fn rig_rate(t: f64) -> f64 {
        if t < 2.56 {
            100.0 * MIB
        } else {
            20.0 * MIB
        }
    }

    fn close(got: f64, want: f64, within: f64) -> bool {
        (got - want).abs() <= within * want
    }

    #[test]
    fn a_clean_cliff_is_found_to_the_megabyte() {
        let s = series(15.0, 0.1, rig_rate, |_| 1.0);
        let c = find_cliff(&s, &CliffParams::default()).expect("a cliff");
        assert!(close(c.at.get() as f64, 256.0 * MIB, 0.01), "{c:?}");
        assert!(close(c.rate_before.0, 100.0 * MIB, 0.01), "{c:?}");
        assert!(close(c.rate_after.0, 20.0 * MIB, 0.01), "{c:?}");
        assert!(close(c.time.as_secs_f64(), 2.56, 0.02), "{c:?}");
        assert!(!c.gradual);
    }

    #[test]
    fn the_rate_before_starts_at_the_first_write_not_the_clock() {
        // The writers' first bytes come 0.25 s after the pass's clock
        // starts (four threads started beside busy loops): the fast line
        // is fitted from there, so it is the device's rate, and the cliff
        // is where the rig's 256 MiB ran out.
        let late = 0.25;
        let s = series(
            15.0,
            0.1,
            |t| if t < late { 0.0 } else { rig_rate(t - late) },
            |_| 1.0,
        );
        let c = find_cliff(&s, &CliffParams::default()).expect("a cliff");
        assert!(close(c.rate_before.0, 100.0 * MIB, 0.01), "{c:?}");
        assert!(close(c.at.get() as f64, 256.0 * MIB, 0.01), "{c:?}");
        assert!(close(c.rate_after.0, 20.0 * MIB, 0.01), "{c:?}");
    }

    #[test]
    fn a_noisy_cliff_is_found_within_a_few_percent() {
        let s = series(15.0, 0.1, rig_rate, jitter);
        let c = find_cliff(&s, &CliffParams::default()).expect("a cliff");
        assert!(close(c.at.get() as f64, 256.0 * MIB, 0.05), "{c:?}");
        assert!(close(c.rate_before.0, 100.0 * MIB, 0.05), "{c:?}");
        assert!(close(c.rate_after.0, 20.0 * MIB, 0.03), "{c:?}");
        assert!(!c.gradual);
    }

    #[test]
    fn a_late_cliff_on_a_long_pass_is_found_too() {
        // A 40 GB SLC cache at 1 GB/s, then 150 MB/s, sampled four times a
        // second.
        let s = series(120.0, 0.25, |t| if t < 40.0 { 1e9 } else { 150e6 }, jitter);
        let c = find_cliff(&s, &CliffParams::default()).expect("a cliff");
        assert!(close(c.at.get() as f64, 40e9, 0.02), "{c:?}");
        assert!(close(c.rate_after.0, 150e6, 0.02), "{c:?}");
    }

    #[test]
    fn a_steady_rate_has_no_cliff() {
        let s = series(20.0, 0.1, |_| 50.0 * MIB, jitter);
        assert_eq!(find_cliff(&s, &CliffParams::default()), None);
        // A short dip (a garbage-collection pause) is no cliff either.
        let dip = series(
            20.0,
            0.1,
            |t| {
                if (8.0..9.5).contains(&t) {
                    5.0 * MIB
                } else {
                    50.0 * MIB
                }
            },
            |_| 1.0,
        );
        assert_eq!(find_cliff(&dip, &CliffParams::default()), None);
    }

    #[test]
    fn a_series_too_short_to_judge_has_no_cliff() {
        let s = series(4.0, 0.1, rig_rate, |_| 1.0);
        assert_eq!(find_cliff(&s, &CliffParams::default()), None);
        assert_eq!(find_cliff(&[], &CliffParams::default()), None);
    }

    #[test]
    fn a_gradual_decline_is_reported_as_gradual() {
        // 100 MiB/s sliding linearly to 20 MiB/s between 5 s and 15 s.
        let rate = |t: f64| {
            let f = ((t - 5.0) / 10.0).clamp(0.0, 1.0);
            (100.0 - 80.0 * f) * MIB
        };
        let s = series(40.0, 0.1, rate, |_| 1.0);
        let c = find_cliff(&s, &CliffParams::default()).expect("a decline");
        assert!(c.gradual, "{c:?}");
        // The knee lies inside the slide.
        let t = c.time.as_secs_f64();
        assert!((5.0..15.0).contains(&t), "{c:?}");
        assert!(close(c.rate_after.0, 20.0 * MIB, 0.1), "{c:?}");
    }

    #[test]
    fn a_cliff_then_recovery_reports_the_slow_level_after_the_cliff() {
        // Fast for 256 MiB, slow for 10 s, then fast again (the cache
        // freed while writing).
        let rate = |t: f64| {
            if !(2.56..12.56).contains(&t) {
                100.0 * MIB
            } else {
                20.0 * MIB
            }
        };
        let s = series(20.0, 0.1, rate, jitter);
        let c = find_cliff(&s, &CliffParams::default()).expect("a cliff");
        assert!(close(c.at.get() as f64, 256.0 * MIB, 0.05), "{c:?}");
        assert!(close(c.rate_after.0, 20.0 * MIB, 0.05), "{c:?}");
        assert!(close(c.rate_before.0, 100.0 * MIB, 0.05), "{c:?}");
    }

    #[test]
    fn steadiness_needs_the_whole_span_after_the_drop() {
        let s = series(15.0, 0.1, rig_rate, jitter);
        let secs = Nanos::from_secs;
        let block = Bytes(1 << 20);
        assert!(steady(&s, secs(3), secs(10), 0.1, block));
        // The span would reach back before the drop.
        assert!(!steady(&s, secs(6), secs(10), 0.1, block));
        // Across the drop the parts disagree.
        assert!(!steady(&s, secs(0), secs(14), 0.1, block));
        // One block a part is within the slack: at 10 MiB/s, 1 MiB
        // blocks, parts of one second see 9 to 11 blocks.
        let lumpy = series(10.0, 1.0, |_| 10.0 * MIB, |i| [0.9, 1.1, 1.0][i % 3]);
        assert!(steady(&lumpy, secs(0), secs(5), 0.05, block));
        assert!(!steady(&lumpy, secs(0), secs(5), 0.05, Bytes(0)));
        let r = rate_between(&s, secs(5), secs(15));
        assert!(close(r.0, 20.0 * MIB, 0.05), "{r:?}");
    }
}
