//! Latency under load: the sending streams' RTT from `TCP_INFO` each
//! interval as percentiles, and the handshake probe's idle and loaded
//! round trips.

use std::time::Duration;

use iomark_model::net::NetLatency;
use iomark_model::units::Nanos;

use super::TestReport;

/// TCP handshake times with the server's port.
#[derive(Debug, Clone, Default)]
pub struct RttProbe {
    /// Before the load: the control connection's and each TCP data
    /// stream's.
    pub idle: Vec<Duration>,
    /// While the test ran, on connections of their own.
    pub loaded: Vec<Duration>,
}

fn nanos(d: &Duration) -> Nanos {
    Nanos(d.as_nanos() as u64)
}

fn ms(n: Option<Nanos>) -> String {
    n.map_or("-".into(), |n| format!("{:.3} ms", n.get() as f64 / 1e6))
}

impl TestReport {
    /// The test's latency figures, `None` when nothing was sampled.
    pub fn latency(&self) -> Option<NetLatency> {
        let rtts = self
            .totals
            .iter()
            .flat_map(|t| t.rtts.iter())
            .filter(|&&us| us > 0)
            .map(|&us| Nanos(us * 1000))
            .collect();
        let idle: Vec<Nanos> = self.rtt_probe.idle.iter().map(nanos).collect();
        let loaded: Vec<Nanos> = self.rtt_probe.loaded.iter().map(nanos).collect();
        NetLatency::from_samples(rtts, &idle, &loaded)
    }

    /// `RTT idle X ms, under load Y ms` and the streams' percentiles, for
    /// the client's text output; empty when nothing was measured.
    pub fn latency_text(&self) -> String {
        let Some(l) = self.latency() else {
            return String::new();
        };
        let mut out = String::new();
        if l.idle_probes > 0 || l.loaded_probes > 0 {
            out += &super::text::own_line(&format!(
                "RTT idle {}, under load {} (TCP handshakes with the server's port: {} before the load, {} during it)",
                ms(l.idle),
                ms(l.loaded),
                l.idle_probes,
                l.loaded_probes
            ));
        }
        if l.rtt_samples > 0 {
            out += &super::text::own_line(&format!(
                "Sending streams' RTT p50 {}, p90 {}, p99 {}, max {} (TCP_INFO, {} samples)",
                ms(l.rtt_p50),
                ms(l.rtt_p90),
                ms(l.rtt_p99),
                ms(l.rtt_max),
                l.rtt_samples
            ));
        }
        out
    }
}
