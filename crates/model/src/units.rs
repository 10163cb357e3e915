//! Unit newtypes so that MB/s can never be added to MiB/s by accident.
//!
//! Sizes are read as fio reads them by default (`kb_base=1024`): every
//! prefix is 1024-based, whatever its spelling and case. `4k`, `4K`, `4kb`,
//! `4KB`, `4Ki` and `4KiB` are all 4096 bytes; likewise `M`/`MB`/`MiB`
//! (2^20), `G`/`GB`/`GiB` (2^30), `T`/`TB`/`TiB` (2^40) and `P`/`PB`/`PiB`
//! (2^50). A `b` or `B` after the prefix means bytes, never bits. So
//! `--size 16MB` is 16 MiB (16777216 bytes) and `--bs 4KB` is 4096 bytes,
//! the same numbers fio uses for the same job. One departure: in that
//! compatibility mode fio also turns the IEC spellings around (its HOWTO:
//! `1mi` and `1000ki` are 10^6 bytes); here `KiB`/`MiB`/... keep their IEC
//! meaning, so every spelling of a prefix means the same power of 1024. No
//! suffix reads 1000-based: a decimal size is written out in bytes
//! (`1000000000`).
//!
//! Output labels are never ambiguous: sizes print in IEC units (`16 MiB`),
//! throughput is stored as bytes per second and printed as MB/s (10^6
//! bytes/s, as fio's and CrystalDiskMark's outputs use it) or MiB/s, always
//! with the unit written out.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Why a size, duration or rate could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseUnitError {
    /// Nothing was given.
    #[error("empty value: give a number such as {example}")]
    Empty {
        /// An example of the expected format.
        example: &'static str,
    },
    /// The number part could not be read.
    #[error("'{input}' is not a number with a unit: write it like {example}")]
    BadNumber {
        /// What the user wrote.
        input: String,
        /// An example of the expected format.
        example: &'static str,
    },
    /// The unit is not one this quantity takes.
    #[error("'{input}' has an unknown unit '{unit}': use one of {allowed}")]
    UnknownUnit {
        /// What the user wrote.
        input: String,
        /// The unit part that was not recognised.
        unit: String,
        /// The units that are accepted.
        allowed: &'static str,
    },
    /// The value does not fit.
    #[error("'{input}' is too large")]
    Overflow {
        /// What the user wrote.
        input: String,
    },
}

impl ParseUnitError {
    fn bad_number(input: &str, example: &'static str) -> Self {
        ParseUnitError::BadNumber {
            input: input.to_string(),
            example,
        }
    }

    fn unknown_unit(input: &str, unit: &str, allowed: &'static str) -> Self {
        ParseUnitError::UnknownUnit {
            input: input.to_string(),
            unit: unit.to_string(),
            allowed,
        }
    }

    fn overflow(input: &str) -> Self {
        ParseUnitError::Overflow {
            input: input.to_string(),
        }
    }
}

/// `input` trimmed and split after its leading number: `("1.5", "MiB")`.
fn number_and_unit<'a>(
    input: &'a str,
    example: &'static str,
) -> Result<(&'a str, &'a str), ParseUnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(ParseUnitError::Empty { example });
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    Ok((&s[..end], s[end..].trim()))
}

/// `v` times `scale`, rounded to a whole count; too large for `u64` is an
/// overflow of `input`.
fn scaled(input: &str, v: f64, scale: f64) -> Result<u64, ParseUnitError> {
    let x = v * scale;
    // `u64::MAX as f64` is 2^64, one past the largest count.
    if !x.is_finite() || x >= u64::MAX as f64 {
        return Err(ParseUnitError::overflow(input));
    }
    Ok(x.round() as u64)
}

/// A number of bytes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    /// One kibibyte (1024 bytes).
    pub const KIB: u64 = 1 << 10;
    /// One mebibyte.
    pub const MIB: u64 = 1 << 20;
    /// One gibibyte.
    pub const GIB: u64 = 1 << 30;

    /// The raw count.
    pub fn get(self) -> u64 {
        self.0
    }

    /// A short label as CrystalDiskMark writes block sizes: `4K`, `1M`, `512K`
    /// (1024-based, and read back to the same count).
    pub fn short_label(self) -> String {
        let b = self.0;
        if b >= Self::MIB && b.is_multiple_of(Self::MIB) {
            format!("{}M", b / Self::MIB)
        } else if b >= Self::KIB && b.is_multiple_of(Self::KIB) {
            format!("{}K", b / Self::KIB)
        } else {
            format!("{b}B")
        }
    }
}

impl FromStr for Bytes {
    type Err = ParseUnitError;

    /// A count of bytes with an optional 1024-based suffix, read as fio
    /// reads it by default (see the module docs): `512`, `4k`, `4KB`,
    /// `4KiB`, `16MB`, `1.5M`, `1GiB`. Case does not matter.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        const EXAMPLE: &str = "4k, 16MB, 1.5M or 1GiB";
        const ALLOWED: &str = "k/K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB or P/PB/PiB \
                               (all 1024-based, as in fio; any case) or B for bytes";
        let (num, unit) = number_and_unit(input, EXAMPLE)?;
        let bad = || ParseUnitError::bad_number(input, EXAMPLE);
        if num.is_empty() {
            return Err(bad());
        }
        let mult: u64 = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" | "ki" | "kib" => 1 << 10,
            "m" | "mb" | "mi" | "mib" => 1 << 20,
            "g" | "gb" | "gi" | "gib" => 1 << 30,
            "t" | "tb" | "ti" | "tib" => 1 << 40,
            "p" | "pb" | "pi" | "pib" => 1 << 50,
            _ => return Err(ParseUnitError::unknown_unit(input, unit, ALLOWED)),
        };
        if num.contains('.') {
            let v: f64 = num.parse().map_err(|_| bad())?;
            return scaled(input, v, mult as f64).map(Bytes);
        }
        // Digits only, so the one way to fail is a number beyond u64.
        let v: u64 = num.parse().map_err(|_| ParseUnitError::overflow(input))?;
        v.checked_mul(mult)
            .map(Bytes)
            .ok_or_else(|| ParseUnitError::overflow(input))
    }
}

impl fmt::Display for Bytes {
    /// IEC units with up to two decimals: `4 KiB`, `1 GiB`, `1.50 MiB`.
    /// Never `KB`/`MB`: the binary prefix is always spelled out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = self.0 as f64;
        let mut i = 0;
        while v >= 1024.0 && i + 1 < UNITS.len() {
            v /= 1024.0;
            i += 1;
        }
        if i == 0 || v.fract() == 0.0 {
            write!(f, "{} {}", v as u64, UNITS[i])
        } else {
            write!(f, "{:.2} {}", v, UNITS[i])
        }
    }
}

/// A duration in nanoseconds, the base unit for every stored time.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    /// The raw count.
    pub fn get(self) -> u64 {
        self.0
    }

    /// As a std duration.
    pub fn as_duration(self) -> Duration {
        Duration::from_nanos(self.0)
    }

    /// As seconds, for arithmetic that ends in a rate.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// From a std duration, saturating at about 584 years.
    pub fn from_duration(d: Duration) -> Self {
        Nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }

    /// From whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        Nanos(s * 1_000_000_000)
    }
}

impl FromStr for Nanos {
    type Err = ParseUnitError;

    /// `10s`, `500ms`, `2m`, `1h`, `250us`; a bare number is seconds, as in fio.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        const EXAMPLE: &str = "10s, 500ms or 2m";
        let (num, unit) = number_and_unit(input, EXAMPLE)?;
        let scale: f64 = match unit {
            "" | "s" | "sec" | "secs" => 1e9,
            "ms" | "msec" => 1e6,
            "us" | "usec" | "µs" => 1e3,
            "ns" => 1.0,
            "m" | "min" | "mins" => 60e9,
            "h" | "hour" | "hours" => 3600e9,
            other => {
                let allowed = "ns, us, ms, s, m (minutes), h";
                return Err(ParseUnitError::unknown_unit(input, other, allowed));
            }
        };
        let v: f64 = num
            .parse()
            .map_err(|_| ParseUnitError::bad_number(input, EXAMPLE))?;
        scaled(input, v, scale).map(Nanos)
    }
}

impl fmt::Display for Nanos {
    /// The largest unit that keeps at least one whole digit: `812 ns`,
    /// `123.4 µs`, `7.83 ms`, `10 s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0 as f64;
        if ns < 1e3 {
            write!(f, "{} ns", self.0)
        } else if ns < 1e6 {
            write!(f, "{:.1} µs", ns / 1e3)
        } else if ns < 1e9 {
            write!(f, "{:.2} ms", ns / 1e6)
        } else if self.0.is_multiple_of(1_000_000_000) {
            write!(f, "{} s", self.0 / 1_000_000_000)
        } else {
            write!(f, "{:.2} s", ns / 1e9)
        }
    }
}

/// `count` over a time span, per second; zero when no time passed.
fn per_sec(count: u64, elapsed: Nanos) -> f64 {
    if elapsed.0 == 0 {
        0.0
    } else {
        count as f64 / elapsed.as_secs_f64()
    }
}

/// A throughput in bytes per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BytesPerSec(pub f64);

impl BytesPerSec {
    /// Bytes moved over a time span; zero when no time passed.
    pub fn over(bytes: Bytes, elapsed: Nanos) -> Self {
        BytesPerSec(per_sec(bytes.0, elapsed))
    }

    /// In MB/s, 10^6 bytes per second (CrystalDiskMark's and GNOME Disks' unit).
    pub fn mb_per_sec(self) -> f64 {
        self.0 / 1e6
    }

    /// In MiB/s, 2^20 bytes per second (fio's and the SSD papers' unit).
    pub fn mib_per_sec(self) -> f64 {
        self.0 / (1u64 << 20) as f64
    }

    /// In KB/s, 10^3 bytes per second (MacBench's unit).
    pub fn kb_per_sec(self) -> f64 {
        self.0 / 1e3
    }

    /// The I/Os a second this rate makes in blocks of `bs` (a write
    /// saturation's rates in IOPS, as SNIA PTS reports them); 0 for
    /// blocks of 0 bytes.
    pub fn ios_of(self, bs: Bytes) -> f64 {
        match bs.get() {
            0 => 0.0,
            b => self.0 / b as f64,
        }
    }
}

impl FromStr for BytesPerSec {
    type Err = ParseUnitError;

    /// A rate in the units iomark prints rates in: `550MB/s` (10^6 bytes
    /// a second, as drive makers and CrystalDiskMark count), `1.2GB/s`,
    /// `400MiB/s` (2^20), `800KB/s`; the `/s` may be left out.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        const EXAMPLE: &str = "550MB/s, 1.2GB/s or 400MiB/s";
        const ALLOWED: &str = "B/s, KB/s, MB/s, GB/s (10^3-based, as rates are printed) \
                               or KiB/s, MiB/s, GiB/s (1024-based)";
        let (num, unit) = number_and_unit(input, EXAMPLE)?;
        let v: f64 = num
            .parse()
            .map_err(|_| ParseUnitError::bad_number(input, EXAMPLE))?;
        let unit = unit.strip_suffix("/s").unwrap_or(unit).trim();
        let mult: f64 = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "kb" | "k" => 1e3,
            "mb" | "m" => 1e6,
            "gb" | "g" => 1e9,
            "kib" => 1024.0,
            "mib" => (1u64 << 20) as f64,
            "gib" => (1u64 << 30) as f64,
            _ => return Err(ParseUnitError::unknown_unit(input, unit, ALLOWED)),
        };
        Ok(BytesPerSec(v * mult))
    }
}

impl fmt::Display for BytesPerSec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.2} MB/s", self.mb_per_sec())
    }
}

/// I/O operations per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Iops(pub f64);

impl Iops {
    /// Operations over a time span; zero when no time passed.
    pub fn over(ops: u64, elapsed: Nanos) -> Self {
        Iops(per_sec(ops, elapsed))
    }
}

impl fmt::Display for Iops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 100.0 {
            write!(f, "{:.0} IOPS", self.0)
        } else {
            write!(f, "{:.2} IOPS", self.0)
        }
    }
}

#[cfg(test)]
#[path = "units_tests.rs"]
mod tests;
