//! What figures alone do not show about a device: whether it compresses or
//! deduplicates what is written (the artefacts probe's verdict) and the
//! speed its maker rates it at. Both are remembered per device by the
//! store, so every later run on that device is checked against them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::units::{Bytes, BytesPerSec, Iops};
use crate::warning::{Warning, WarningKind};
use crate::workload::DataPattern;

/// How much faster than random data another pattern must run, in either
/// direction, before the probe says the device compresses or
/// deduplicates. Plain devices stay within a few percent; zram ran zeros
/// about twice as fast and btrfs with `compress=zstd` ten times.
pub const CLEAR_MARGIN: f64 = 1.5;

/// The rates of one data pattern, written over the probe's region and
/// read back: the best over the probe's rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternRates {
    /// What was written.
    pub data: DataPattern,
    /// Write rate, the final flush included.
    pub write: BytesPerSec,
    /// Read-back rate, from a cold cache.
    pub read: BytesPerSec,
}

/// How one pattern ran against random data: its rate over random's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternFactor {
    /// The pattern.
    pub data: DataPattern,
    /// Write rate over random data's.
    pub write: f64,
    /// Read rate over random data's.
    pub read: f64,
}

impl PatternFactor {
    /// The larger factor and the direction it was seen in.
    pub fn largest(&self) -> (f64, &'static str) {
        if self.write >= self.read {
            (self.write, "wrote")
        } else {
            (self.read, "read")
        }
    }
}

/// What the probe concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// Every pattern ran at random data's rate, within the margin.
    Plain,
    /// Zeros (and so any compressible data) ran clearly faster.
    Compresses,
    /// Repeated blocks ran clearly faster while zeros did not.
    Deduplicates,
}

/// The probe's verdict: each pattern's factor over random data and what
/// they show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeVerdict {
    /// Each pattern other than random, against random.
    pub factors: Vec<PatternFactor>,
    /// What the factors show.
    pub finding: Finding,
    /// Bytes written per pattern and round.
    pub region: Bytes,
}

impl ProbeVerdict {
    /// Judge the patterns' rates; `rates` must hold random data's.
    pub fn judge(rates: &[PatternRates], region: Bytes) -> Option<Self> {
        let random = rates.iter().find(|r| r.data == DataPattern::Random)?;
        let over = |a: BytesPerSec, b: BytesPerSec| if b.0 > 0.0 { a.0 / b.0 } else { 0.0 };
        let factors: Vec<PatternFactor> = rates
            .iter()
            .filter(|r| r.data != DataPattern::Random)
            .map(|r| PatternFactor {
                data: r.data,
                write: over(r.write, random.write),
                read: over(r.read, random.read),
            })
            .collect();
        let clear = |data| {
            factors
                .iter()
                .any(|f| f.data == data && f.largest().0 >= CLEAR_MARGIN)
        };
        let finding = if clear(DataPattern::Zeros) {
            Finding::Compresses
        } else if clear(DataPattern::Repeat) {
            Finding::Deduplicates
        } else {
            Finding::Plain
        };
        Some(ProbeVerdict {
            factors,
            finding,
            region,
        })
    }

    /// The factor of `data`, when it was probed.
    pub fn factor(&self, data: DataPattern) -> Option<&PatternFactor> {
        self.factors.iter().find(|f| f.data == data)
    }

    /// One line saying what the probe found, naming the factor.
    pub fn summary(&self) -> String {
        let says = |data: DataPattern, name: &str| {
            self.factor(data).map_or_else(String::new, |f| {
                let (x, dir) = f.largest();
                format!("{name} data {dir} {x:.1}x as fast as random")
            })
        };
        match self.finding {
            Finding::Plain => format!(
                "no compression or deduplication seen: zeros and repeated blocks ran within {CLEAR_MARGIN}x of random data"
            ),
            Finding::Compresses => format!(
                "this device or file system compresses: {}",
                says(DataPattern::Zeros, "zero")
            ),
            Finding::Deduplicates => format!(
                "this device or file system deduplicates: {}",
                says(DataPattern::Repeat, "repeated-block")
            ),
        }
    }

    /// The warning every run on the device carries, when the probe found
    /// something; `source` says which probe (`a probe on 2026-11-23`).
    pub fn warning(&self, source: &str) -> Option<Warning> {
        (self.finding != Finding::Plain).then(|| {
            Warning::new(
                WarningKind::Compression,
                format!(
                    "{} ({source}); figures with --data zeros, repeat or compressible overstate it, keep --data random",
                    self.summary()
                ),
            )
        })
    }
}

/// The speed a device is rated at, in its maker's units (`--rated
/// read=550MB/s,write=520MB/s,randread=90kIOPS,randwrite=80kIOPS`).
///
/// `read` and `write` are the sequential rates in bytes a second, as
/// boxes print them first (and as stored before anything else could be
/// rated); every other rating, by pattern in either unit, is in `more`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RatedSpeed {
    /// Rated sequential read rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<BytesPerSec>,
    /// Rated sequential write rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<BytesPerSec>,
    /// The other ratings: IOPS, and the random patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<Rating>,
}

/// One rating of a device: a pattern and its rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// Which I/O the rating is for.
    pub pattern: RatedPattern,
    /// The rated rate.
    pub rate: RatedRate,
}

/// The I/O a rating is for, as drive sheets name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RatedPattern {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
}

impl RatedPattern {
    /// The key `--rated` takes for it.
    pub fn key(self) -> &'static str {
        match self {
            RatedPattern::Read => "read",
            RatedPattern::Write => "write",
            RatedPattern::RandRead => "randread",
            RatedPattern::RandWrite => "randwrite",
        }
    }

    /// The direction it moves data (`read` or `write`).
    pub fn dir(self) -> &'static str {
        match self {
            RatedPattern::Read | RatedPattern::RandRead => "read",
            RatedPattern::Write | RatedPattern::RandWrite => "write",
        }
    }

    /// Whether it is a random pattern.
    pub fn random(self) -> bool {
        matches!(self, RatedPattern::RandRead | RatedPattern::RandWrite)
    }
}

/// A rated rate: bytes a second or operations a second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RatedRate {
    /// Bytes a second.
    Bandwidth(BytesPerSec),
    /// I/O operations a second.
    Iops(Iops),
}

impl fmt::Display for RatedRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RatedRate::Bandwidth(b) => b.fmt(f),
            RatedRate::Iops(i) => i.fmt(f),
        }
    }
}

impl FromStr for RatedRate {
    type Err = String;

    /// `550MB/s` (as [`BytesPerSec`] reads it) or `90kIOPS`, `400 IOPS`,
    /// `1.2MIOPS`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let lower = t.to_ascii_lowercase();
        if let Some(num) = lower.strip_suffix("iops") {
            let num = num.trim();
            let (num, mult) = match num.as_bytes().last() {
                Some(b'k') => (&num[..num.len() - 1], 1e3),
                Some(b'm') => (&num[..num.len() - 1], 1e6),
                _ => (num, 1.0),
            };
            let v: f64 = num
                .trim()
                .parse()
                .map_err(|_| format!("'{t}' is not a number of IOPS such as 90kIOPS"))?;
            return Ok(RatedRate::Iops(Iops(v * mult)));
        }
        t.parse::<BytesPerSec>()
            .map(RatedRate::Bandwidth)
            .map_err(|e| e.to_string())
    }
}

impl RatedSpeed {
    /// Every rating, the sequential rates included.
    pub fn ratings(&self) -> Vec<Rating> {
        let seq = [
            (RatedPattern::Read, self.read),
            (RatedPattern::Write, self.write),
        ];
        seq.into_iter()
            .filter_map(|(pattern, r)| {
                r.map(|b| Rating {
                    pattern,
                    rate: RatedRate::Bandwidth(b),
                })
            })
            .chain(self.more.iter().copied())
            .collect()
    }
}

impl FromStr for RatedSpeed {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        const FIX: &str =
            "use --rated read=550MB/s,write=520MB/s,randread=90kIOPS,randwrite=80kIOPS \
                           (any may be left out; each in MB/s or IOPS)";
        let mut rated = RatedSpeed::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("'{part}' is not PATTERN=RATE: {FIX}"))?;
            let rate: RatedRate = value.parse().map_err(|e| format!("{e}: {FIX}"))?;
            let positive = match rate {
                RatedRate::Bandwidth(b) => b.0 > 0.0 && b.0.is_finite(),
                RatedRate::Iops(i) => i.0 > 0.0 && i.0.is_finite(),
            };
            if !positive {
                return Err(format!("a rated speed must be above 0: {FIX}"));
            }
            let pattern = match key.trim() {
                "read" => RatedPattern::Read,
                "write" => RatedPattern::Write,
                "randread" => RatedPattern::RandRead,
                "randwrite" => RatedPattern::RandWrite,
                other => return Err(format!("unknown pattern '{other}': {FIX}")),
            };
            match (pattern, rate) {
                (RatedPattern::Read, RatedRate::Bandwidth(b)) => rated.read = Some(b),
                (RatedPattern::Write, RatedRate::Bandwidth(b)) => rated.write = Some(b),
                _ => {
                    rated.more.retain(|r| {
                        r.pattern != pattern || {
                            std::mem::discriminant(&r.rate) != std::mem::discriminant(&rate)
                        }
                    });
                    rated.more.push(Rating { pattern, rate });
                }
            }
        }
        if rated.ratings().is_empty() {
            return Err(format!("no rate given: {FIX}"));
        }
        Ok(rated)
    }
}

impl fmt::Display for RatedSpeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .ratings()
            .iter()
            .map(|r| format!("{} {}", r.pattern.key(), r.rate))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(write: [f64; 4], read: [f64; 4]) -> Vec<PatternRates> {
        [
            DataPattern::Random,
            DataPattern::Compressible(50),
            DataPattern::Zeros,
            DataPattern::Repeat,
        ]
        .into_iter()
        .zip(write.into_iter().zip(read))
        .map(|(data, (w, r))| PatternRates {
            data,
            write: BytesPerSec(w),
            read: BytesPerSec(r),
        })
        .collect()
    }

    #[test]
    fn the_verdict_needs_a_clear_margin() {
        let region = Bytes(64 << 20);
        let plain = ProbeVerdict::judge(&rates([100.0, 104.0, 110.0, 97.0], [200.0; 4]), region);
        let plain = plain.unwrap();
        assert_eq!(plain.finding, Finding::Plain);
        assert!(plain.warning("probe").is_none());
        let zram = ProbeVerdict::judge(&rates([100.0, 120.0, 210.0, 100.0], [200.0; 4]), region);
        let zram = zram.unwrap();
        assert_eq!(zram.finding, Finding::Compresses);
        let w = zram.warning("a probe on 2026-11-23").unwrap();
        assert_eq!(w.kind, WarningKind::Compression);
        assert!(w.message.contains("zero data wrote 2.1x as fast"), "{w}");
        assert!(w.message.contains("2026-11-23"), "{w}");
        let dedup = ProbeVerdict::judge(&rates([100.0; 4], [200.0, 200.0, 220.0, 900.0]), region);
        let dedup = dedup.unwrap();
        assert_eq!(dedup.finding, Finding::Deduplicates);
        assert!(dedup.summary().contains("repeated-block data read 4.5x"));
        assert!(ProbeVerdict::judge(&rates([1.0; 4], [1.0; 4])[1..], region).is_none());
    }

    #[test]
    fn rated_speeds_parse_in_the_printed_units() {
        let r: RatedSpeed = "read=550MB/s,write=520MB/s".parse().unwrap();
        assert_eq!(r.read, Some(BytesPerSec(550e6)));
        assert_eq!(r.write, Some(BytesPerSec(520e6)));
        let r: RatedSpeed = "write=1.2GB/s".parse().unwrap();
        assert_eq!((r.read, r.write), (None, Some(BytesPerSec(1.2e9))));
        let r: RatedSpeed = "read=400MiB/s".parse().unwrap();
        assert_eq!(r.read, Some(BytesPerSec((400u64 << 20) as f64)));
        for bad in [
            "",
            "fast",
            "read=",
            "read=5parsecs",
            "sideways=1MB/s",
            "read=0MB/s",
        ] {
            let err = bad.parse::<RatedSpeed>().unwrap_err();
            assert!(err.contains("--rated read=550MB/s"), "{bad}: {err}");
        }
        // IOPS and the random patterns, as drive sheets give them.
        let r: RatedSpeed = "read=550MB/s,randread=90kIOPS,randwrite=400 IOPS,write=1kIOPS"
            .parse()
            .unwrap();
        assert_eq!(r.read, Some(BytesPerSec(550e6)));
        assert_eq!(
            r.more,
            vec![
                Rating {
                    pattern: RatedPattern::RandRead,
                    rate: RatedRate::Iops(Iops(90e3))
                },
                Rating {
                    pattern: RatedPattern::RandWrite,
                    rate: RatedRate::Iops(Iops(400.0))
                },
                Rating {
                    pattern: RatedPattern::Write,
                    rate: RatedRate::Iops(Iops(1e3))
                },
            ]
        );
        assert_eq!(
            r.to_string(),
            "read 550.00 MB/s, randread 90000 IOPS, randwrite 400 IOPS, write 1000 IOPS"
        );
        // Stored ratings of old (read and write only) still read back.
        let old: RatedSpeed = serde_json::from_str(r#"{"read":550000000.0}"#).unwrap();
        assert_eq!(old.ratings().len(), 1);
        assert!("randread=fastIOPS".parse::<RatedSpeed>().is_err());
        assert!("randread=0IOPS".parse::<RatedSpeed>().is_err());
        assert_eq!(
            "read=550MB/s".parse::<RatedSpeed>().unwrap().to_string(),
            "read 550.00 MB/s"
        );
    }
}
