//! The measured part of a test, shared by client and server: start the
//! stream threads, sample every interval, handle the `-O` omit period, stop,
//! and sum up what this host saw.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cpu::CpuMeter;
use crate::proto::{Protocol, Results, StreamResults};
use crate::report::{IntervalRecord, IntervalStream, StreamTotals};
use crate::stream::{Snapshot, Stream, StreamPlan};
use crate::NetError;
use iomark_host::CpuSampler;

pub(crate) struct Session {
    pub streams: Vec<Stream>,
    plan: StreamPlan,
    stop: Arc<AtomicBool>,
    interval: Option<Duration>,
    omit_until: Option<Instant>,
    cpu: CpuMeter,
    /// This process's CPU since the last interval's end.
    interval_cpu: CpuSampler,
    /// Origin of the current phase: the start, then the omit period's end.
    origin: Instant,
    base: Vec<Snapshot>,
    last: Vec<Snapshot>,
    last_t: Instant,
    next_tick: Option<Instant>,
    pub intervals: Vec<IntervalRecord>,
}

impl Session {
    /// Start every stream's thread now, with the test's clock started at
    /// `origin`: the moment TEST_RUNNING was sent or read, before any
    /// report or store work, so that both ends' clocks start as the test
    /// does (a server that stored its run first started late, and ended
    /// its fourth second at 3,999 ms).
    pub fn start(
        mut streams: Vec<Stream>,
        plan: StreamPlan,
        omit: Duration,
        interval: Option<Duration>,
        origin: Instant,
    ) -> Result<Session, NetError> {
        let stop = Arc::new(AtomicBool::new(false));
        let cpu = CpuMeter::start();
        for s in &mut streams {
            s.start(&plan, Arc::clone(&stop))
                .map_err(NetError::io("start a stream thread"))?;
        }
        let n = streams.len();
        Ok(Session {
            streams,
            plan,
            stop,
            interval,
            omit_until: (!omit.is_zero()).then(|| origin + omit),
            cpu,
            interval_cpu: CpuSampler::start(),
            origin,
            base: vec![Snapshot::default(); n],
            last: vec![Snapshot::default(); n],
            last_t: origin,
            next_tick: interval.map(|i| origin + i),
            intervals: Vec::new(),
        })
    }

    /// When the control loop must wake next: an interval or the omit end.
    pub fn next_wake(&self) -> Option<Instant> {
        match (self.next_tick, self.omit_until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Payload bytes so far that show the peer is there: every byte
    /// received, and every TCP byte sent (TCP sends stall unless the peer
    /// acknowledges and reads). It stops growing when the peer takes and
    /// gives nothing.
    pub fn moved_with_peer(&self) -> u64 {
        self.streams
            .iter()
            .filter(|s| !sends_udp(s))
            .map(|s| s.counters.bytes.load(Relaxed))
            .fold(0u64, u64::wrapping_add)
    }

    /// UDP payload bytes sent so far. A datagram leaves whether or not
    /// anyone is there to read it (only an ICMP "port unreachable" refuses
    /// a send), so these prove nothing about the peer by themselves.
    pub fn udp_sent(&self) -> u64 {
        self.streams
            .iter()
            .filter(|s| sends_udp(s))
            .map(|s| s.counters.bytes.load(Relaxed))
            .fold(0u64, u64::wrapping_add)
    }

    /// Payload bytes this host has sent and received so far, over every
    /// stream: what ends a `-n`/`-k` test.
    pub fn bytes_sent_received(&self) -> (u64, u64) {
        let mut sent_received = (0u64, 0u64);
        for s in &self.streams {
            let b = s.counters.bytes.load(Relaxed);
            if s.sending {
                sent_received.0 += b;
            } else {
                sent_received.1 += b;
            }
        }
        sent_received
    }

    /// The moment the measured (non-omitted) period began.
    pub fn measure_start(&self) -> Instant {
        self.omit_until.unwrap_or(self.origin)
    }

    /// Record every interval that is due; returns the new ones.
    pub fn tick(&mut self, now: Instant) -> Vec<IntervalRecord> {
        let mut out = Vec::new();
        loop {
            let omit_due = self.omit_until.filter(|&t| t <= now);
            let tick_due = self.next_tick.filter(|&t| t <= now);
            match (omit_due, tick_due) {
                (Some(o), t) if !matches!(t, Some(t) if t < o) => {
                    // End of the omit period: close the omitted interval and
                    // restart counting from zero, as iperf3 does.
                    if o > self.last_t {
                        out.push(self.record(o, true));
                    }
                    self.base = self.last.clone();
                    self.origin = o;
                    self.last_t = o;
                    self.omit_until = None;
                    self.next_tick = self.interval.map(|i| o + i);
                }
                (_, Some(t)) => {
                    out.push(self.record(t, self.omit_until.is_some()));
                    self.next_tick = self.interval.map(|i| t + i);
                }
                _ => break,
            }
        }
        self.intervals.extend(out.iter().cloned());
        out
    }

    fn record(&mut self, at: Instant, omitted: bool) -> IntervalRecord {
        let start = self
            .last_t
            .saturating_duration_since(self.origin)
            .as_secs_f64();
        let end = at.saturating_duration_since(self.origin).as_secs_f64();
        let mut streams = Vec::with_capacity(self.streams.len());
        for (i, s) in self.streams.iter_mut().enumerate() {
            let snap = s.snapshot();
            let info = s.tcp_info();
            streams.push(IntervalStream {
                index: i,
                delta: snap.since(&self.last[i]),
                tcp: info,
            });
            self.last[i] = snap;
        }
        self.last_t = at;
        let cpu = self.interval_cpu.read().process.total_pct();
        self.interval_cpu = CpuSampler::start();
        IntervalRecord {
            start,
            end,
            omitted,
            streams,
            cpu,
        }
    }

    /// Stop the streams (closing the sockets first when `close`), record the
    /// last partial interval and return each stream's totals.
    pub fn finish(&mut self, close: bool) -> (Vec<StreamTotals>, Vec<IntervalRecord>) {
        let end = Instant::now();
        self.stop.store(true, Relaxed);
        let mut last = Vec::new();
        let min_tail = self.interval.map(|i| i / 10).unwrap_or(Duration::MAX);
        // A test shorter than a tenth of an interval (a small -n) still
        // gets its one line, as iperf3 keeps a short interval that moved bytes.
        let tail = end.saturating_duration_since(self.last_t);
        let only = self.intervals.is_empty() && !tail.is_zero() && self.interval.is_some();
        if self.omit_until.is_none() && (tail > min_tail || only) {
            let rec = self.record(end, false);
            self.intervals.push(rec.clone());
            last.push(rec);
        }
        for s in &mut self.streams {
            s.stop_and_join(close);
        }
        let seconds = end.saturating_duration_since(self.measure_start());
        let totals = self
            .streams
            .iter_mut()
            .zip(&self.base)
            .map(|(s, base)| {
                let fin = s.snapshot();
                let d = fin.since(base);
                let rtts: Vec<u64> = s.rtts.iter().copied().filter(|&r| r > 0).collect();
                StreamTotals {
                    bytes: d.bytes,
                    seconds: seconds.as_secs_f64(),
                    retransmits: (s.sending && s.is_tcp()).then_some(d.retransmits),
                    packets: d.packets,
                    lost: d.lost,
                    out_of_order: d.out_of_order,
                    jitter: d.jitter,
                    omitted_packets: base.packets,
                    omitted_lost: base.lost,
                    max_cwnd: s.max_cwnd,
                    max_snd_wnd: s.max_snd_wnd,
                    reorder: s.reorder,
                    min_rtt: rtts.iter().copied().min(),
                    max_rtt: rtts.iter().copied().max(),
                    mean_rtt: (!rtts.is_empty())
                        .then(|| rtts.iter().sum::<u64>() / rtts.len() as u64),
                    rtts,
                }
            })
            .collect();
        (totals, last)
    }

    /// This host's results message for the exchange.
    pub fn results(&self, totals: &[StreamTotals]) -> Results {
        let (cpu, host_cpu) = self.cpu.read();
        let sends = self.streams.iter().any(|s| s.sending);
        let sender_has_retransmits = match (sends, self.plan.protocol) {
            (false, _) => -1,
            (true, Protocol::Tcp) => 1,
            (true, Protocol::Udp) => 0,
        };
        let streams = self
            .streams
            .iter()
            .zip(totals)
            .map(|(s, t)| {
                let udp = self.plan.protocol == Protocol::Udp;
                StreamResults {
                    id: s.id as i64,
                    bytes: t.bytes,
                    retransmits: t.retransmits.map(|r| r as i64).unwrap_or(-1),
                    jitter: if udp && !s.sending { t.jitter } else { 0.0 },
                    // Late datagrams undo losses counted before the omit
                    // period ended, which can take this period's count
                    // below 0; peers refuse a negative count.
                    errors: if udp && !s.sending { t.lost.max(0) } else { 0 },
                    packets: if udp { t.packets as i64 } else { 0 },
                    omitted_errors: Some(if udp && !s.sending { t.omitted_lost } else { 0 }),
                    omitted_packets: Some(if udp { t.omitted_packets as i64 } else { 0 }),
                    start_time: Some(0.0),
                    end_time: Some(t.seconds),
                }
            })
            .collect();
        Results {
            cpu_util_total: cpu.total_percent,
            cpu_util_user: cpu.user_percent,
            cpu_util_system: cpu.system_percent,
            sender_has_retransmits,
            congestion_used: None,
            streams,
            iomark_host_cpu: host_cpu,
            iomark_cpu_throttle: self.cpu.throttled(),
            iomark_cpu_quota_unchecked: self.cpu.quota_unchecked(),
            // Hundredths of a percent are plenty, and keep a long test's
            // message short.
            iomark_cpu_intervals: Some(
                self.intervals
                    .iter()
                    .map(|r| (r.cpu * 100.0).round() / 100.0)
                    .collect(),
            ),
            iomark_interface: None,
            server_output_text: None,
            server_output_json: None,
        }
    }
}

/// Whether this host sends UDP datagrams on `s`.
fn sends_udp(s: &Stream) -> bool {
    s.sending && !s.is_tcp()
}

impl Drop for Session {
    /// On an early return (peer vanished, protocol error) the stream threads
    /// must not outlive the test.
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        for s in &mut self.streams {
            s.stop_and_join(true);
        }
    }
}
