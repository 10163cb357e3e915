//! CPU utilisation of this process over a test, as iperf3 reports it:
//! process CPU time (all threads, from `getrusage`) over monotonic wall time.

use std::time::{Duration, Instant};

use iomark_model::net::CpuUtilization;

use crate::sys;

/// A running measurement.
pub(crate) struct CpuMeter {
    wall: Instant,
    user: Duration,
    system: Duration,
}

impl CpuMeter {
    /// Start measuring now.
    pub fn start() -> CpuMeter {
        let (user, system) = sys::process_cpu();
        CpuMeter {
            wall: Instant::now(),
            user,
            system,
        }
    }

    /// Percentages since the start.
    pub fn read(&self) -> CpuUtilization {
        let wall = self.wall.elapsed().as_secs_f64();
        let (user, system) = sys::process_cpu();
        if wall <= 0.0 {
            return CpuUtilization::default();
        }
        let user = user.saturating_sub(self.user).as_secs_f64() / wall * 100.0;
        let system = system.saturating_sub(self.system).as_secs_f64() / wall * 100.0;
        CpuUtilization {
            total_percent: user + system,
            user_percent: user,
            system_percent: system,
        }
    }
}
