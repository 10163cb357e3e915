//! CPU utilisation over a test: this process's, as iperf3 reports it
//! (process CPU time of all threads over monotonic wall time), and the
//! whole machine's from `/proc/stat` (system, softirq, idle), which iperf3
//! does not report.

use iomark_host::machine::CpuQuotaWatch;
use iomark_host::CpuSampler;
use iomark_model::cpu::{CpuThrottle, HostCpu};
use iomark_model::net::CpuUtilization;

/// A running measurement.
pub(crate) struct CpuMeter(CpuSampler, Option<CpuQuotaWatch>);

impl CpuMeter {
    /// Start measuring now.
    pub fn start() -> CpuMeter {
        CpuMeter(CpuSampler::start(), CpuQuotaWatch::start())
    }

    /// How long a CPU quota held this process's cgroup back since the
    /// start, when it did.
    pub fn throttled(&self) -> Option<CpuThrottle> {
        self.1.as_ref().and_then(CpuQuotaWatch::throttled)
    }

    /// Why a CPU quota could not be checked, when it could not.
    pub fn quota_unchecked(&self) -> Option<String> {
        self.1.as_ref()?.unchecked().map(str::to_owned)
    }

    /// Percentages since the start: the process's (of one core) and the
    /// machine's (of all cores), when `/proc/stat` could be read.
    pub fn read(&self) -> (CpuUtilization, Option<HostCpu>) {
        let r = self.0.read();
        let p = r.process;
        let process = CpuUtilization {
            total_percent: p.total_pct(),
            user_percent: p.user_pct,
            system_percent: p.system_pct,
        };
        (process, r.host)
    }
}
