//! One job section being read: each `option=value` applied to what the
//! section said so far, and the job made once the section ends.

use std::path::{Path, PathBuf};

use iomark_model::disk::{DataPattern, EngineKind, RwMode};
use iomark_model::units::{Bytes, Nanos};

use super::{EngineChoice, FioJob, FioJobError, LIBAIO_NOTE};
use crate::job::{IodepthList, JobSettings};
use crate::verify::writes;

/// A job section being read: what it said so far.
#[derive(Debug, Clone, Default)]
pub(super) struct Builder {
    pub(super) name: Option<String>,
    pub(super) settings: JobSettings,
    pub(super) filename: Option<String>,
    pub(super) directory: Option<String>,
    pub(super) time_based: Option<usize>,
    pub(super) runtime_given: bool,
    pub(super) randrepeat: bool,
    pub(super) keep_cache: bool,
    pub(super) stonewall: bool,
    /// The line of `ss=` or `ss_ramp=`, which need `ss_dur=`.
    pub(super) steady_line: Option<usize>,
    /// `do_verify=0`: fio writes the headers but skips the check; iomark
    /// then neither stamps nor checks.
    pub(super) skip_verify: bool,
    pub(super) notes: Vec<String>,
    pub(super) options: Vec<(String, String)>,
}

impl Builder {
    /// fio's defaults where they are not iomark's.
    pub(super) fn fio_defaults() -> Self {
        Builder {
            settings: JobSettings {
                rw: Some(RwMode::Read),
                engine: Some(EngineKind::Psync.into()),
                iodepth: Some(IodepthList(vec![1])),
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

    pub(super) fn apply(
        &mut self,
        key: &str,
        value: Option<&str>,
        line: usize,
    ) -> Result<(), FioJobError> {
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
            "iodepth" => s.iodepth = Some(IodepthList(vec![count(u64::from(u32::MAX))? as u32])),
            "numjobs" => s.numjobs = Some(count(u64::from(u32::MAX))? as u32),
            "ioengine" => {
                let choice: EngineChoice = need()?.parse().map_err(|_| {
                    bad("iomark runs psync, sync (as psync), io_uring, libaio (as io_uring), mmap, null")
                })?;
                s.engine = Some(choice);
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
            "ss" | "steadystate" => {
                s.steady_state = Some(need()?.parse().map_err(|e| bad(&format!("{e}")))?);
                self.steady_line.get_or_insert(line);
            }
            "ss_dur" | "steadystate_duration" => s.ss_dur = Some(time()?),
            "ss_ramp" | "steadystate_ramp_time" => {
                s.ss_ramp = Some(time()?);
                self.steady_line.get_or_insert(line);
            }
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
                s.verify = on.then_some(true);
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
    pub(super) fn finish(mut self, section: &str, line: usize) -> Result<FioJob, FioJobError> {
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
        if let (Some(at), None) = (self.steady_line, self.settings.ss_dur) {
            return Err(FioJobError::BadValue {
                line: at,
                option: "ss".into(),
                value: String::new(),
                why: "needs ss_dur= as well, the window steady state is judged over, e.g. \
                      ss_dur=30s (without it fio does not judge at all)"
                    .into(),
            });
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
        })
    }
}
