//! The null engine: moves no data and completes every I/O at once.
//!
//! It is the template for new engines and the way to measure iomark's own
//! per-I/O overhead (fio's `null` engine). It behaves as an asynchronous
//! engine, so queue depth, batching and accounting are exercised exactly as
//! with io_uring, without a device.

use super::{Done, Engine, IoUnit, Queued};
use crate::DiskError;

/// Completes everything it is given at the next `reap`.
#[derive(Debug, Default)]
pub(crate) struct Null {
    queued: Vec<IoUnit>,
}

impl Engine for Null {
    fn queue(&mut self, unit: IoUnit) -> Result<Queued, DiskError> {
        self.queued.push(unit);
        Ok(Queued::InFlight)
    }

    fn reap(&mut self, _min: usize, out: &mut Vec<Done>) -> Result<usize, DiskError> {
        let n = self.queued.len();
        out.extend(self.queued.drain(..).map(|unit| Done {
            result: Ok(unit.len),
            unit,
        }));
        Ok(n)
    }
}
