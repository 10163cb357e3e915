//! pread/pwrite: one I/O at a time per thread (fio's default engine).

use std::fs::File;

use super::{Dir, Done, Engine, EngineSetup, IoUnit, Queued};
use crate::DiskError;

/// Positional read and write on the thread's own file description.
#[derive(Debug)]
pub(crate) struct Psync {
    file: File,
}

impl Psync {
    /// Bind to the target, through a descriptor of this thread's own.
    pub(crate) fn new(setup: &EngineSetup) -> Result<Self, DiskError> {
        Ok(Psync {
            file: setup.file.own()?,
        })
    }
}

impl Engine for Psync {
    fn queue(&mut self, mut unit: IoUnit) -> Result<Queued, DiskError> {
        let len = unit.len as usize;
        let res = match unit.dir {
            Dir::Read => {
                rustix::io::pread(&self.file, &mut unit.buf.as_mut_slice()[..len], unit.offset)
            }
            Dir::Write => rustix::io::pwrite(&self.file, &unit.buf.as_slice()[..len], unit.offset),
        };
        let result = res.map(|n| n as u32).map_err(|e| e.raw_os_error());
        Ok(Queued::Completed(Done { unit, result }))
    }
}
