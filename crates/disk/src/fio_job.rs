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

use crate::job::JobSettings;
use crate::job::{EngineChoice, LIBAIO_NOTE};
use crate::lifecycle::{JobOrigin, RunJob, RunPlan};
use crate::plan::{DiskPlan, DiskSettings, Workload};
use crate::DiskError;

mod section;
use section::Builder;

/// The options iomark runs, as fio spells them.
const SUPPORTED: &[&str] = &[
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
    "ss",
    "steadystate",
    "ss_dur",
    "steadystate_duration",
    "ss_ramp",
    "steadystate_ramp_time",
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
struct FioJob {
    /// `name=`, else the section's name.
    name: String,
    /// The line of the section header.
    line: usize,
    /// The workload, with fio's defaults filled in where fio's differ from
    /// iomark's.
    settings: JobSettings,
    /// `directory=` and `filename=` joined; `None` when neither is given.
    path: Option<PathBuf>,
    /// `invalidate=0`: keep the target's cached pages before the job.
    keep_cache: bool,
    /// `stonewall` (or `wait_for_previous`): wait for the jobs before.
    stonewall: bool,
    /// Where iomark runs the job differently from fio, one line each.
    notes: Vec<String>,
}

/// A parsed job file: its jobs in order.
#[derive(Debug, Clone)]
pub struct FioJobFile {
    /// Each job section, in order.
    jobs: Vec<FioJob>,
}

/// Read a job file. Comments start with `#` or `;` (also after an option,
/// following white space); `[global]` sections apply to the jobs after
/// them.
pub fn parse(text: &str) -> Result<FioJobFile, FioJobError> {
    let mut global = Builder::fio_defaults();
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
    Ok(FioJobFile { jobs })
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

/// The profile name a job file's run is stored under.
const PROFILE: &str = "fio-job";

impl FioJobFile {
    /// Jobs that fio would start together with the one before (no
    /// `stonewall`): iomark runs them one after another all the same.
    fn concurrent_in_fio(&self) -> Vec<&str> {
        self.jobs
            .iter()
            .skip(1)
            .filter(|j| !j.stonewall)
            .map(|j| j.name.as_str())
            .collect()
    }

    /// The file's run, stored as one under the profile `fio-job`: every
    /// job checked as its own run checks it, before anything is opened or
    /// written. iomark stores one target per run, so jobs on different
    /// paths are refused, naming the first that differs.
    pub fn run_plan(
        &self,
        path: Option<&Path>,
        allow_write: &[PathBuf],
        repeat: u32,
    ) -> Result<RunPlan, DiskError> {
        let jobs = self
            .jobs
            .iter()
            .map(|j| j.run_job(path, allow_write, repeat))
            .collect::<Result<Vec<RunJob>, _>>()?;
        let Some(first) = jobs.first().map(|j| &j.plan.request.path) else {
            return Err(DiskError::Invalid(FioJobError::NoJobs.to_string()));
        };
        if let Some((j, p)) = self
            .jobs
            .iter()
            .zip(&jobs)
            .find(|(_, p)| &p.plan.request.path != first)
        {
            return Err(DiskError::Invalid(format!(
                "job [{}] (line {}) runs on {}, the first job on {}: iomark stores one target \
                 per run; give PATH to run every job on one, or split the file",
                j.name,
                j.line,
                p.plan.request.path.display(),
                first.display()
            )));
        }
        Ok(RunPlan {
            name: PROFILE,
            jobs,
            probe_first: None,
        })
    }

    /// Where iomark runs the file differently from fio, each said once:
    /// the jobs' notes, then the jobs fio would start together (named up
    /// to a few, so a file of thousands of jobs gets one line).
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = Vec::new();
        for n in self.jobs.iter().flat_map(|j| &j.notes) {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
        let together = self.concurrent_in_fio();
        if !together.is_empty() {
            const NAMED: usize = 5;
            let mut names = together[..together.len().min(NAMED)].join(", ");
            if together.len() > NAMED {
                names.push_str(&format!(" and {} more", together.len() - NAMED));
            }
            notes.push(format!(
                "fio would start {names} together with the job before (no stonewall); \
                 iomark runs one job at a time, each on its own"
            ));
        }
        notes
    }
}

impl FioJob {
    /// The job as a checked plan, through the path a custom job takes:
    /// `path` (the command line's) overrides the file's `filename=` and
    /// `directory=`; neither means a test file in the current directory,
    /// where fio would create `name.0.0`.
    fn plan(&self, path: Option<&Path>, allow_write: &[PathBuf]) -> Result<DiskPlan, DiskError> {
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
    fn origin(&self) -> JobOrigin {
        JobOrigin {
            name: self.name.clone(),
            line: self.line,
        }
    }

    /// The job as one job of the file's run, its plan as [`plan`](Self::plan)
    /// makes it and `repeat` times (`--repeat`).
    fn run_job(
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
