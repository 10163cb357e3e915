//! The vocabulary of a storage workload, shared by custom jobs and the
//! classic profiles: fio's `rw`, its `ioengine`, and the data written.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// fio's `rw`: the access pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed reads and writes.
    ReadWrite,
    /// Random mixed reads and writes.
    RandRw,
}

impl RwMode {
    /// Every mode, in fio's order.
    pub const ALL: [RwMode; 6] = [
        RwMode::Read,
        RwMode::Write,
        RwMode::RandRead,
        RwMode::RandWrite,
        RwMode::ReadWrite,
        RwMode::RandRw,
    ];

    /// fio's name for the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "readwrite",
            RwMode::RandRw => "randrw",
        }
    }

    /// Whether offsets are random rather than sequential.
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }

    /// Whether the job issues reads.
    pub fn reads(self) -> bool {
        !matches!(self, RwMode::Write | RwMode::RandWrite)
    }

    /// Whether the job issues writes.
    pub fn writes(self) -> bool {
        !matches!(self, RwMode::Read | RwMode::RandRead)
    }

    /// The share of reads in percent given fio's `rwmixread`.
    pub fn read_percent(self, rwmix_read: u8) -> u8 {
        match (self.reads(), self.writes()) {
            (true, false) => 100,
            (false, true) => 0,
            _ => rwmix_read.min(100),
        }
    }
}

impl FromStr for RwMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "rw" => return Ok(RwMode::ReadWrite),
            "randreadwrite" => return Ok(RwMode::RandRw),
            _ => {}
        }
        RwMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown --rw '{s}': use read, write, randread, randwrite, readwrite or randrw"
                )
            })
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which I/O engine moves the bytes (fio's `ioengine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EngineKind {
    /// pread/pwrite, one I/O at a time per thread.
    #[serde(rename = "psync")]
    Psync,
    /// io_uring with a real queue depth.
    #[serde(rename = "io_uring")]
    IoUring,
    /// A shared file mapping, memcpy in or out, msync(MS_SYNC) per write.
    #[serde(rename = "mmap-sync")]
    MmapSync,
    /// A shared file mapping, memcpy in or out, msync(MS_ASYNC) per write.
    #[serde(rename = "mmap-async")]
    MmapAsync,
    /// No I/O at all: completes instantly. For testing iomark itself.
    #[serde(rename = "null")]
    Null,
}

impl EngineKind {
    /// Every engine, in the order `iomark engines` lists them.
    pub const ALL: [EngineKind; 5] = [
        EngineKind::Psync,
        EngineKind::IoUring,
        EngineKind::MmapSync,
        EngineKind::MmapAsync,
        EngineKind::Null,
    ];

    /// The engine's name on the command line and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::IoUring => "io_uring",
            EngineKind::MmapSync => "mmap-sync",
            EngineKind::MmapAsync => "mmap-async",
            EngineKind::Null => "null",
        }
    }

    /// What `iomark engines` says about the engine.
    pub fn description(self) -> &'static str {
        match self {
            EngineKind::Psync => "pread/pwrite, one I/O at a time per thread (fio's psync)",
            EngineKind::IoUring => {
                "io_uring with a real queue depth, batched submission, registered file and buffers"
            }
            EngineKind::MmapSync => {
                "shared file mapping, memcpy in or out, msync(MS_SYNC) after each write"
            }
            EngineKind::MmapAsync => {
                "shared file mapping, memcpy in or out, msync(MS_ASYNC) after each write"
            }
            EngineKind::Null => {
                "moves no data and completes at once: measures iomark's own overhead"
            }
        }
    }

    /// Whether the engine copies through a file mapping (and so always
    /// through the page cache).
    pub fn is_mapped(self) -> bool {
        matches!(self, EngineKind::MmapSync | EngineKind::MmapAsync)
    }

    /// Whether the engine keeps only one I/O in flight per thread.
    pub fn is_synchronous(self) -> bool {
        !matches!(self, EngineKind::IoUring | EngineKind::Null)
    }
}

impl FromStr for EngineKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = if s == "io-uring" || s == "iouring" {
            "io_uring"
        } else {
            s
        };
        EngineKind::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| {
                format!("unknown engine '{s}': use psync, io_uring, mmap-sync, mmap-async or null")
            })
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the written (and pre-filled) data looks like. Compression and dedupe
/// can lie, so the pattern is always stated with the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DataPattern {
    /// Incompressible pseudo-random bytes (the default, as in fio and CDM).
    #[default]
    Random,
    /// All zero bytes (CrystalDiskMark's 0Fill).
    Zeros,
    /// Roughly this percentage of each block compresses away (fio's
    /// `buffer_compress_percentage`): random data followed by zeros.
    Compressible(u8),
    /// The same 4 KiB of random bytes in every block of every write, as a
    /// deduplicating device sees copies of one file (fio's
    /// `dedupe_percentage=100`); a compressor with a window of 4 KiB or
    /// more shrinks it too.
    Repeat,
}

impl FromStr for DataPattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "random" | "rand" => Ok(DataPattern::Random),
            "zeros" | "zero" | "0fill" => Ok(DataPattern::Zeros),
            "repeat" | "repeated" => Ok(DataPattern::Repeat),
            _ => {
                let pct = s
                    .strip_prefix("compressible:")
                    .and_then(|p| p.trim_end_matches('%').parse::<u8>().ok())
                    .filter(|p| *p <= 100);
                pct.map(DataPattern::Compressible).ok_or_else(|| {
                    format!("unknown --data '{s}': use random, zeros, repeat or compressible:N with N from 0 to 100")
                })
            }
        }
    }
}

impl fmt::Display for DataPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataPattern::Random => f.write_str("random"),
            DataPattern::Zeros => f.write_str("zeros"),
            DataPattern::Compressible(p) => write!(f, "compressible:{p}"),
            DataPattern::Repeat => f.write_str("repeat"),
        }
    }
}

impl Serialize for DataPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DataPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
