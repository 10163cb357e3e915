//! fio job files: the common subset of fio's format, read into the same
//! [`JobSettings`] a custom job on the command line fills in, so a job file
//! runs through the same checks and runner as `iomark disk --rw ...`.
//!
//! An option iomark does not run is refused with its line, never skipped:
//! a job file that silently lost `rate=` or `verify=md5` would measure
//! something else under the same name. Defaults are fio's (psync, depth 1,
//! `rw=read`, buffered, one pass over `size`), not iomark's, because the
//! file was written for fio.

use std::path::{Path, PathBuf};

use iomark_model::disk::{DataPattern, EngineKind, RwMode};
use iomark_model::units::{Bytes, Nanos};

use crate::job::JobSettings;
use crate::lifecycle::{JobOrigin, RunJob};
use crate::plan::{DiskPlan, DiskSettings, Workload};
use crate::verify::writes::{self, VerifyWrites};
use crate::DiskError;

/// The options iomark runs, as fio spells them.
pub const SUPPORTED: &[&str] = &[
    "name",
    "description",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "size",
    "filename",
    "directory",
    "iodepth",
    "numjobs",
    "ioengine",
    "direct",
    "buffered",
    "runtime",
    "time_based",
    "ramp_time",
    "rwmixread",
    "rwmixwrite",
    "randrepeat",
    "randseed",
    "buffer_compress_percentage",
    "zero_buffers",
    "invalidate",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "group_reporting",
    "verify",
    "do_verify",
];

/// Why a job file cannot be run; each names its line (1-based).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FioJobError {
    /// An option iomark does not run.
    #[error(
        "line {line}: fio option '{option}' is not one iomark runs: remove it, or run this file \
         with fio (iomark runs: {})",
        SUPPORTED.join(", ")
    )]
    Unsupported {
        /// Where.
        line: usize,
        /// The option as written.
        option: String,
    },
    /// A supported option with a value iomark cannot use.
    #[error("line {line}: {option}={value}: {why}")]
    BadValue {
        /// Where.
        line: usize,
        /// The option.
        option: String,
        /// The value as written.
        value: String,
        /// What is wrong and what to write instead.
        why: String,
    },
    /// A line that is neither a section, an option nor a comment.
    #[error("line {line}: {what}")]
    Syntax {
        /// Where.
        line: usize,
        /// What is wrong and what to write instead.
        what: String,
    },
    /// A file with only `[global]` or nothing at all.
    #[error("the job file has no job section: add one, e.g. [job1] with rw=read")]
    NoJobs,
}

/// One job of a file, with `[global]` applied.
#[derive(Debug, Clone)]
pub struct FioJob {
    /// `name=`, else the section's name.
    pub name: String,
    /// The line of the section header.
    pub line: usize,
    /// The workload, with fio's defaults filled in where fio's differ from
    /// iomark's.
    pub settings: JobSettings,
    /// `directory=` and `filename=` joined; `None` when neither is given.
    pub path: Option<PathBuf>,
    /// `invalidate=0`: keep the target's cached pages before the job.
    pub keep_cache: bool,
    /// `stonewall` (or `wait_for_previous`): wait for the jobs before.
    pub stonewall: bool,
    /// Where iomark runs the job differently from fio, one line each.
    pub notes: Vec<String>,
    /// The job section's own options as written, for fio's JSON `job
    /// options` (`[global]`'s are the file's).
    pub options: Vec<(String, String)>,
}

/// A parsed job file: its jobs in order.
#[derive(Debug, Clone)]
pub struct FioJobFile {
    /// The `[global]` options as written, for fio's JSON `global options`.
    pub global: Vec<(String, String)>,
    /// Each job section, in order.
    pub jobs: Vec<FioJob>,
}

/// An engine named the way fio names it, and the note for a stand-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineChoice {
    /// The engine that runs.
    pub kind: EngineKind,
    /// Said once before the run when `kind` stands in for fio's engine.
    pub note: Option<&'static str>,
}

/// What `libaio` runs as, and why it may.
pub const LIBAIO_NOTE: &str = "ioengine libaio runs as io_uring: both keep iodepth I/Os in flight \
     from one thread, and iomark has no libaio engine";

impl std::str::FromStr for EngineChoice {
    type Err = String;

    /// iomark's engine names and fio's: `sync` and `pvsync` are psync
    /// (one I/O at a time), `mmap` is mmap-sync, `libaio` io_uring.
    fn from_str(s: &str) -> Result<Self, String> {
        let plain = |kind| EngineChoice { kind, note: None };
        match s {
            "sync" | "pvsync" => Ok(plain(EngineKind::Psync)),
            "mmap" => Ok(plain(EngineKind::MmapSync)),
            "libaio" => Ok(EngineChoice {
                kind: EngineKind::IoUring,
                note: Some(LIBAIO_NOTE),
            }),
            _ => s.parse::<EngineKind>().map(plain).map_err(|_| {
                format!(
                    "unknown engine '{s}': use psync, io_uring, mmap-sync, mmap-async, null \
                     (or fio's sync, libaio, mmap)"
                )
            }),
        }
    }
}

/// A job section being read: what it said so far.
#[derive(Debug, Clone, Default)]
struct Builder {
    name: Option<String>,
    settings: JobSettings,
    filename: Option<String>,
    directory: Option<String>,
    time_based: Option<usize>,
    runtime_given: bool,
    randrepeat: bool,
    keep_cache: bool,
    stonewall: bool,
    /// `do_verify=0`: fio writes the headers but skips the check; iomark
    /// then neither stamps nor checks.
    skip_verify: bool,
    notes: Vec<String>,
    options: Vec<(String, String)>,
}

impl Builder {
    /// fio's defaults where they are not iomark's.
    fn fio_defaults() -> Self {
        Builder {
            settings: JobSettings {
                rw: Some(RwMode::Read),
                engine: Some(EngineKind::Psync),
                iodepth: Some(1),
                rwmix_read: Some(50),
                direct: Some(false),
                // fio without runtime does one pass over size.
                runtime: Some(Nanos(0)),
                seed: 1,
                ..JobSettings::default()
            },
            randrepeat: true,
            ..Builder::default()
        }
    }

    fn apply(&mut self, key: &str, value: Option<&str>, line: usize) -> Result<(), FioJobError> {
        let raw = value.unwrap_or("");
        let bad = |why: &str| FioJobError::BadValue {
            line,
            option: key.into(),
            value: raw.into(),
            why: why.into(),
        };
        let need = || value.ok_or_else(|| bad("needs a value: write it as option=value"));
        // fio's booleans: a bare option is on.
        let flag = || match value.map(str::trim) {
            None | Some("1") | Some("true") => Ok(true),
            Some("0") | Some("false") => Ok(false),
            _ => Err(bad("is 0 or 1")),
        };
        let count = |max: u64| -> Result<u64, FioJobError> {
            let v = need()?.trim();
            // fio reads randseed=0x89 as hexadecimal.
            let n = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => v.parse::<u64>().ok(),
            };
            n.filter(|n| *n <= max)
                .ok_or_else(|| bad(&format!("is a whole number from 0 to {max}")))
        };
        let bytes = |what: &str| -> Result<Bytes, FioJobError> {
            let v = need()?;
            if v.contains([',', '-', ':', '%']) {
                return Err(bad(&format!(
                    "iomark takes one {what} for reads and writes alike, e.g. 4k"
                )));
            }
            v.parse::<Bytes>().map_err(|e| bad(&e.to_string()))
        };
        let time = || -> Result<Nanos, FioJobError> {
            need()?.parse::<Nanos>().map_err(|e| bad(&e.to_string()))
        };
        let s = &mut self.settings;
        match key {
            "name" => self.name = Some(need()?.to_string()),
            "description" => {}
            "rw" | "readwrite" => {
                let v = need()?;
                s.rw = Some(v.parse::<RwMode>().map_err(|_| {
                    bad("iomark runs read, write, randread, randwrite, rw (readwrite), randrw")
                })?);
            }
            "bs" | "blocksize" => s.bs = Some(bytes("block size")?),
            "size" => s.size = Some(bytes("size")?),
            "filename" => {
                let v = need()?;
                if v.contains(':') {
                    return Err(bad("iomark runs a job on one file or device: name one"));
                }
                self.filename = Some(v.into());
            }
            "directory" => self.directory = Some(need()?.into()),
            "iodepth" => s.iodepth = Some(count(u64::from(u32::MAX))? as u32),
            "numjobs" => s.numjobs = Some(count(u64::from(u32::MAX))? as u32),
            "ioengine" => {
                let choice: EngineChoice = need()?.parse().map_err(|_| {
                    bad("iomark runs psync, sync (as psync), io_uring, libaio (as io_uring), mmap, null")
                })?;
                s.engine = Some(choice.kind);
                self.notes.retain(|n| n != LIBAIO_NOTE);
                self.notes.extend(choice.note.map(String::from));
            }
            "direct" => s.direct = Some(flag()?),
            "buffered" => s.direct = Some(!flag()?),
            "runtime" => {
                s.runtime = Some(time()?);
                self.runtime_given = true;
            }
            "time_based" => self.time_based = flag()?.then_some(line),
            "ramp_time" => s.ramp = Some(time()?),
            "rwmixread" => s.rwmix_read = Some(count(100)? as u8),
            "rwmixwrite" => s.rwmix_read = Some(100 - count(100)? as u8),
            "randrepeat" => self.randrepeat = flag()?,
            "randseed" => s.seed = count(u64::MAX)?,
            "buffer_compress_percentage" => {
                s.data = DataPattern::Compressible(count(100)? as u8);
            }
            "zero_buffers" => {
                if flag()? {
                    s.data = DataPattern::Zeros;
                }
            }
            "invalidate" => self.keep_cache = !flag()?,
            "stonewall" | "wait_for_previous" => self.stonewall = flag()?,
            // As `--verify` on the command line: stamped writes, checked
            // right after the job (docs/verify.md).
            "verify" => {
                let on = writes::fio_verify_on(need()?).ok_or_else(|| {
                    bad(
                        "iomark checks with crc32c only: write verify=crc32c, or run this \
                         file with fio",
                    )
                })?;
                s.verify = on.then_some(VerifyWrites { timed: false });
            }
            "do_verify" => self.skip_verify = !flag()?,
            // Reporting: iomark reports each job on its own and merges its
            // threads (what group_reporting does to numjobs clones).
            "new_group" | "group_reporting" => {
                flag()?;
            }
            _ => {
                return Err(FioJobError::Unsupported {
                    line,
                    option: key.into(),
                })
            }
        }
        self.options.push((key.into(), raw.into()));
        Ok(())
    }

    /// The job, once its section has ended.
    fn finish(mut self, section: &str, line: usize) -> Result<FioJob, FioJobError> {
        match (self.time_based, self.runtime_given) {
            (Some(at), false) => {
                return Err(FioJobError::BadValue {
                    line: at,
                    option: "time_based".into(),
                    value: String::new(),
                    why: "needs runtime= as well: say how long, e.g. runtime=30".into(),
                });
            }
            (None, true) if self.settings.runtime != Some(Nanos(0)) => self.notes.push(
                "runtime without time_based: fio stops at runtime or after one pass over size, \
                 whichever comes first; iomark runs for runtime, going over size again as needed"
                    .into(),
            ),
            _ => {}
        }
        if self.skip_verify {
            self.settings.verify = None;
        }
        if !self.randrepeat && !self.options.iter().any(|(k, _)| k == "randseed") {
            // fio's randrepeat=0: a different sequence each run.
            self.settings.seed = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64);
        }
        let path = match (self.directory, self.filename) {
            (Some(d), Some(f)) => Some(Path::new(&d).join(f)),
            (Some(d), None) => Some(PathBuf::from(d)),
            (None, Some(f)) => Some(PathBuf::from(f)),
            (None, None) => None,
        };
        Ok(FioJob {
            name: self.name.unwrap_or_else(|| section.to_string()),
            line,
            settings: self.settings,
            path,
            keep_cache: self.keep_cache,
            stonewall: self.stonewall,
            notes: self.notes,
            options: self.options,
        })
    }
}

/// Read a job file. Comments start with `#` or `;` (also after an option,
/// following white space); `[global]` sections apply to the jobs after
/// them.
pub fn parse(text: &str) -> Result<FioJobFile, FioJobError> {
    let mut global = Builder::fio_defaults();
    let mut global_options = Vec::new();
    let mut current: Option<(String, usize, Builder)> = None;
    let mut in_global = false;
    let mut jobs = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = strip_comment(raw).trim();
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let name =
                rest.strip_suffix(']')
                    .map(str::trim)
                    .ok_or_else(|| FioJobError::Syntax {
                        line,
                        what: format!("'{l}' is not a section header: write [name]"),
                    })?;
            if let Some((n, at, b)) = current.take() {
                jobs.push(b.finish(&n, at)?);
            }
            in_global = name == "global";
            if !in_global {
                let mut b = global.clone();
                b.name = None;
                b.options.clear();
                current = Some((name.to_string(), line, b));
            }
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (l, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) || key.starts_with('$') {
            return Err(FioJobError::Syntax {
                line,
                what: format!("'{l}' is not an option: write option=value"),
            });
        }
        if in_global {
            global.apply(key, value, line)?;
            global_options.push((key.to_string(), value.unwrap_or("").to_string()));
        } else if let Some((_, _, b)) = &mut current {
            b.apply(key, value, line)?;
        } else {
            return Err(FioJobError::Syntax {
                line,
                what: format!("'{key}' comes before any section: put it under [global]"),
            });
        }
    }
    if let Some((n, at, b)) = current.take() {
        jobs.push(b.finish(&n, at)?);
    }
    if jobs.is_empty() {
        return Err(FioJobError::NoJobs);
    }
    Ok(FioJobFile {
        global: global_options,
        jobs,
    })
}

/// The line without a trailing comment: `#` or `;` at its start or after
/// white space (fio's `numjobs=4 ; four threads`).
fn strip_comment(line: &str) -> &str {
    let mut prev_blank = true;
    for (i, c) in line.char_indices() {
        if (c == '#' || c == ';') && prev_blank {
            return &line[..i];
        }
        prev_blank = c.is_whitespace();
    }
    line
}

impl FioJobFile {
    /// Jobs that fio would start together with the one before (no
    /// `stonewall`): iomark runs them one after another all the same.
    pub fn concurrent_in_fio(&self) -> Vec<&str> {
        self.jobs
            .iter()
            .skip(1)
            .filter(|j| !j.stonewall)
            .map(|j| j.name.as_str())
            .collect()
    }
}

impl FioJob {
    /// The job as a checked plan, through the path a custom job takes:
    /// `path` (the command line's) overrides the file's `filename=` and
    /// `directory=`; neither means a test file in the current directory,
    /// where fio would create `name.0.0`.
    pub fn plan(
        &self,
        path: Option<&Path>,
        allow_write: &[PathBuf],
    ) -> Result<DiskPlan, DiskError> {
        let path = path
            .map(Path::to_path_buf)
            .or_else(|| self.path.clone())
            .unwrap_or_else(|| PathBuf::from("."));
        let settings = DiskSettings {
            path,
            job: self.settings.clone(),
            allow_write: allow_write.to_vec(),
            ..DiskSettings::default()
        };
        let mut plan = settings.build().map_err(|e| match e {
            DiskError::Invalid(m) => {
                DiskError::Invalid(format!("job [{}] (line {}): {m}", self.name, self.line))
            }
            other => other,
        })?;
        if let Workload::Custom(spec) = &mut plan.workload {
            spec.name = self.name.clone();
        }
        Ok(plan)
    }

    /// Where the job was written: its `[name]` and line.
    pub fn origin(&self) -> JobOrigin {
        JobOrigin {
            name: self.name.clone(),
            line: self.line,
        }
    }

    /// The job as one job of the file's run, its plan as [`plan`](Self::plan)
    /// makes it and `repeat` times (`--repeat`).
    pub fn run_job(
        &self,
        path: Option<&Path>,
        allow_write: &[PathBuf],
        repeat: u32,
    ) -> Result<RunJob, DiskError> {
        let mut plan = self.plan(path, allow_write)?;
        if repeat > 1 && plan.verify.is_some() {
            return Err(DiskError::Invalid(format!(
                "job [{}] has verify=, which checks one run's writes: drop --repeat or verify=",
                self.name
            )));
        }
        plan.repeat = repeat.max(1);
        Ok(RunJob {
            plan,
            keep_cache: self.keep_cache,
            origin: Some(self.origin()),
        })
    }
}

#[cfg(test)]
#[path = "fio_job_tests.rs"]
mod tests;
