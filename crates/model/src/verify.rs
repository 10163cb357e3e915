//! What the verify profile found: whether a device returns the data it was
//! given, and how much of its claimed size it really holds (the questions
//! f3 and h2testw answer), with the rates of its surface.
//!
//! Every block iomark writes in verify mode carries a header naming the
//! offset it was written for, the run's seed and a checksum; reading it
//! back sorts each block into one of [`BadKind`]'s kinds or good.

use serde::{Deserialize, Serialize};

use crate::units::{Bytes, BytesPerSec};
use crate::warning::{Warning, WarningKind};

/// What was wrong with a block read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BadKind {
    /// iomark's header is there but the checksum fails: the device changed
    /// the data.
    Corrupted,
    /// No block of this run is there (zeros, old data, another run's
    /// block): the write was dropped.
    Lost,
    /// A good block of this run, but written for another offset: the
    /// device maps both offsets to the same place (fake capacity).
    Wrapped,
}

impl BadKind {
    /// `corrupted`, `lost` or `wrapped`.
    pub fn as_str(self) -> &'static str {
        match self {
            BadKind::Corrupted => "corrupted",
            BadKind::Lost => "lost",
            BadKind::Wrapped => "wrapped",
        }
    }
}

impl std::fmt::Display for BadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Adjacent bad blocks of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadRange {
    /// Offset of the first bad byte.
    pub start: Bytes,
    /// Bytes in the range (whole blocks).
    pub len: Bytes,
    /// What is wrong with its blocks.
    pub kind: BadKind,
    /// For a wrapped range: the offset its first block was written for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Bytes>,
    /// What the first block should have held, in words.
    pub expected: String,
    /// What the first block held instead.
    pub found: String,
}

/// Which phases of the profile ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyPhase {
    /// Write everything, then read everything back.
    #[default]
    Both,
    /// Only write (f3write): the blocks are left for a later read phase.
    Write,
    /// Only read back what an earlier write phase left (f3read).
    Read,
}

impl VerifyPhase {
    /// `both`, `write` or `read`.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyPhase::Both => "both",
            VerifyPhase::Write => "write",
            VerifyPhase::Read => "read",
        }
    }

    /// Whether the phase writes.
    pub fn writes(self) -> bool {
        self != VerifyPhase::Read
    }

    /// Whether the phase reads back.
    pub fn reads(self) -> bool {
        self != VerifyPhase::Write
    }
}

impl std::str::FromStr for VerifyPhase {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "both" => Ok(VerifyPhase::Both),
            "write" => Ok(VerifyPhase::Write),
            "read" => Ok(VerifyPhase::Read),
            _ => Err(format!("unknown phase '{s}': use write, read or both")),
        }
    }
}

impl std::fmt::Display for VerifyPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The rate over one stretch of the surface (GNOME Disks' chart by
/// position).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SurfaceRate {
    /// Offset where the stretch starts.
    pub at: Bytes,
    /// Bytes in the stretch.
    pub len: Bytes,
    /// Rate over it.
    pub bw: BytesPerSec,
}

/// Counts of bad blocks by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadCounts {
    /// Blocks whose checksum failed.
    pub corrupted: u64,
    /// Blocks whose write was lost.
    pub lost: u64,
    /// Blocks holding another offset's data.
    pub wrapped: u64,
}

impl BadCounts {
    /// Count one more block of `kind`.
    pub fn add(&mut self, kind: BadKind) {
        match kind {
            BadKind::Corrupted => self.corrupted += 1,
            BadKind::Lost => self.lost += 1,
            BadKind::Wrapped => self.wrapped += 1,
        }
    }

    /// Bad blocks of every kind.
    pub fn total(&self) -> u64 {
        self.corrupted + self.lost + self.wrapped
    }
}

/// The verify profile's result: the full check or the quick probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifyResult {
    /// Whether this was the quick probe (`--quick`, as f3probe): a few
    /// hundred blocks across the claimed size, not a full check.
    pub quick: bool,
    /// Which phases ran.
    pub phase: VerifyPhase,
    /// Bytes of the target covered: the size the device (or test file)
    /// claims, in whole block groups.
    pub claimed: Bytes,
    /// Bytes per verify block (each has its own header).
    pub block: Bytes,
    /// Bytes per I/O: a group of blocks, the unit capacity is found in.
    pub group: Bytes,
    /// The seed that tells this run's blocks from any other's.
    pub seed: u64,
    /// The engine of the passes.
    pub engine: crate::workload::EngineKind,
    /// Whether the passes bypassed the page cache.
    pub direct: bool,
    /// Mean write rate over the surface, flush included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bw: Option<BytesPerSec>,
    /// Mean read rate over the surface (the check included unless it is
    /// free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bw: Option<BytesPerSec>,
    /// Write rate by position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_series: Vec<SurfaceRate>,
    /// Read rate by position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_series: Vec<SurfaceRate>,
    /// Blocks read back and checked (none in a write phase).
    pub checked_blocks: u64,
    /// Bad blocks by kind.
    pub bad: BadCounts,
    /// Bad blocks as ranges, in offset order (at most [`MAX_RANGES`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranges: Vec<BadRange>,
    /// Ranges found beyond [`MAX_RANGES`], not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_ranges: u64,
    /// The capacity that really holds data; none when nothing was read back
    /// (a write phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable: Option<Bytes>,
    /// Whether the read phase ended before the end of the surface (Ctrl-C,
    /// or the write phase had stopped early).
    #[serde(default)]
    pub partial: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Ranges kept in a result; a device that is bad all over is summed up by
/// the counts.
pub const MAX_RANGES: usize = 1000;

impl VerifyResult {
    /// Whether the check found the device wanting: bad blocks, or less
    /// usable than it claims. The run then exits with code 3, as fio does
    /// when its verify fails, so a script can trust the exit code.
    pub fn failed(&self) -> bool {
        self.bad.total() > 0 || self.verdict().is_some_and(|v| !v.clean())
    }

    /// The verdict, when blocks were read back.
    pub fn verdict(&self) -> Option<VerifyVerdict> {
        let usable = self.usable?;
        Some(VerifyVerdict {
            claimed: self.claimed,
            usable,
            bad: self.bad,
            ranges: self.ranges.len() as u64 + self.more_ranges,
            quick: self.quick,
        })
    }
}

/// What a verify run concluded about a device, as remembered with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyVerdict {
    /// The size checked.
    pub claimed: Bytes,
    /// The size that really holds data.
    pub usable: Bytes,
    /// Bad blocks by kind.
    pub bad: BadCounts,
    /// Ranges of bad blocks.
    pub ranges: u64,
    /// Whether it came from the quick probe.
    pub quick: bool,
}

impl VerifyVerdict {
    /// Whether every block read back was good and the whole size usable.
    pub fn clean(&self) -> bool {
        self.bad.total() == 0 && self.usable >= self.claimed
    }

    /// One line: what the check found.
    pub fn summary(&self) -> String {
        let what = if self.quick {
            "quick probe"
        } else {
            "full check"
        };
        if self.clean() {
            return format!("{what}: all {} returned the data written", self.claimed);
        }
        let mut parts = Vec::new();
        for (n, kind) in [
            (self.bad.corrupted, BadKind::Corrupted),
            (self.bad.lost, BadKind::Lost),
            (self.bad.wrapped, BadKind::Wrapped),
        ] {
            if n > 0 {
                parts.push(format!("{n} {kind}"));
            }
        }
        let blocks = if parts.is_empty() {
            String::new()
        } else {
            format!(
                ", {} block(s) in {} range(s)",
                parts.join(", "),
                self.ranges
            )
        };
        format!(
            "{what}: usable {} of the {} claimed{blocks}",
            self.usable, self.claimed
        )
    }

    /// The warning every later run on the device carries, when the device
    /// returned wrong data; `when` is the date of the check, `source`
    /// where it was found ("verify run 12").
    pub fn warning(&self, when: &str, source: &str) -> Option<Warning> {
        if self.clean() {
            return None;
        }
        let fake = self.usable < self.claimed;
        let mut message = format!(
            "this device returned wrong data in {} range(s) on {when} ({source}: {})",
            self.ranges,
            self.summary()
        );
        if fake {
            message.push_str("; it may hold less than it claims: trust no figure beyond the usable size, and run --profile verify again after a fix");
        } else {
            message.push_str("; run --profile verify again to see whether it still does");
        }
        Some(Warning::new(WarningKind::DataErrors, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(usable: u64, bad: BadCounts, ranges: u64) -> VerifyVerdict {
        VerifyVerdict {
            claimed: Bytes(256 << 20),
            usable: Bytes(usable),
            bad,
            ranges,
            quick: false,
        }
    }

    #[test]
    fn a_clean_device_carries_no_warning() {
        let v = verdict(256 << 20, BadCounts::default(), 0);
        assert!(v.clean());
        assert!(v.warning("2026-11-23", "verify run 1").is_none());
        assert!(v.summary().contains("all 256 MiB"), "{}", v.summary());
    }

    #[test]
    fn bad_data_is_a_warning_with_the_date_and_ranges() {
        let bad = BadCounts {
            corrupted: 3,
            lost: 0,
            wrapped: 0,
        };
        let w = verdict(256 << 20, bad, 2)
            .warning("2026-11-23", "verify run 7")
            .unwrap();
        assert_eq!(w.kind, WarningKind::DataErrors);
        assert!(
            w.message
                .contains("wrong data in 2 range(s) on 2026-11-23 (verify run 7"),
            "{}",
            w.message
        );
        assert!(w.message.contains("3 corrupted"), "{}", w.message);
    }

    #[test]
    fn phases_parse_and_say_what_they_do() {
        assert_eq!("write".parse::<VerifyPhase>(), Ok(VerifyPhase::Write));
        assert!(VerifyPhase::Both.writes() && VerifyPhase::Both.reads());
        assert!(!VerifyPhase::Read.writes());
        assert!("sideways"
            .parse::<VerifyPhase>()
            .unwrap_err()
            .contains("write, read or both"));
    }
}
