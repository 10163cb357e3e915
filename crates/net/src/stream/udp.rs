//! UDP data streams: datagrams with iperf3's header (send time and sequence
//! number), paced to `-b`; the receiver counts loss, reordering and RFC 1889
//! jitter as iperf3 does.

use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use super::payload::{payload, AlignedBuf};
use super::{pace, transient, Counters, StreamPlan};
use crate::sys;

pub(super) fn udp_send(s: UdpSocket, plan: &StreamPlan, c: &Counters, stop: &AtomicBool) {
    let header = if plan.udp_counters_64bit { 16 } else { 12 };
    let mut buf = payload(plan.len.max(header));
    let buf = buf.bytes_mut();
    let start = Instant::now();
    let mut sent = 0u64;
    let mut seq: u64 = 1;
    // A datagram the socket refused (ENOBUFS) keeps its block for the retry.
    let mut owed = false;
    while !stop.load(Relaxed) {
        if !owed && !plan.next_block() {
            break;
        }
        owed = true;
        if !pace(start, sent, plan.rate, stop) {
            break;
        }
        let (sec, usec) = sys::monotonic_now();
        buf[0..4].copy_from_slice(&sec.to_be_bytes());
        buf[4..8].copy_from_slice(&usec.to_be_bytes());
        if plan.udp_counters_64bit {
            buf[8..16].copy_from_slice(&seq.to_be_bytes());
        } else {
            buf[8..12].copy_from_slice(&(seq as u32).to_be_bytes());
        }
        match s.send(buf) {
            Ok(n) => {
                owed = false;
                seq += 1;
                sent += n as u64;
                c.bytes.fetch_add(n as u64, Relaxed);
                c.packets.fetch_add(1, Relaxed);
            }
            Err(e) if transient(&e) => {}
            // ENOBUFS or an ICMP-refused port: back off briefly and go on.
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

/// The receiver's view of one UDP stream's sequence and timing.
#[derive(Debug, Default)]
pub(crate) struct UdpTrack {
    next_seq: u64,
    pub highest: u64,
    pub lost: i64,
    pub out_of_order: u64,
    pub jitter: f64,
    prev_transit: Option<f64>,
}

impl UdpTrack {
    /// Account one datagram with sequence `seq`, sent at `sent` and
    /// received at `now` (seconds on the sender's and our monotonic clocks).
    pub fn datagram(&mut self, seq: u64, sent: f64, now: f64) {
        if self.next_seq == 0 {
            self.next_seq = 1;
        }
        if seq >= self.next_seq {
            self.lost += (seq - self.next_seq) as i64;
            self.next_seq = seq + 1;
            self.highest = seq;
        } else {
            self.out_of_order += 1;
            if self.lost > 0 {
                self.lost -= 1;
            }
        }
        // RFC 1889: J += (|D| - J) / 16, D the change in transit time.
        let transit = now - sent;
        if let Some(prev) = self.prev_transit {
            let d = (transit - prev).abs();
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.prev_transit = Some(transit);
    }
}

pub(super) fn udp_recv(s: UdpSocket, plan: &StreamPlan, c: &Counters, stop: &AtomicBool) {
    let header = if plan.udp_counters_64bit { 16 } else { 12 };
    let mut buf = AlignedBuf::zeroed(plan.len.max(65536));
    let buf = buf.bytes_mut();
    let mut track = UdpTrack::default();
    while !stop.load(Relaxed) {
        match s.recv(buf) {
            Ok(n) if n >= header => {
                let sec = u32::from_be_bytes(buf[0..4].try_into().expect("4 bytes"));
                let usec = u32::from_be_bytes(buf[4..8].try_into().expect("4 bytes"));
                let seq = if plan.udp_counters_64bit {
                    u64::from_be_bytes(buf[8..16].try_into().expect("8 bytes"))
                } else {
                    u32::from_be_bytes(buf[8..12].try_into().expect("4 bytes")) as u64
                };
                let (nsec, nusec) = sys::monotonic_now();
                track.datagram(
                    seq,
                    sec as f64 + usec as f64 / 1e6,
                    nsec as f64 + nusec as f64 / 1e6,
                );
                c.bytes.fetch_add(n as u64, Relaxed);
                c.packets.store(track.highest, Relaxed);
                c.lost.store(track.lost, Relaxed);
                c.out_of_order.store(track.out_of_order, Relaxed);
                c.jitter_bits.store(track.jitter.to_bits(), Relaxed);
            }
            Ok(_) => {}
            Err(e) if transient(&e) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(_) => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_loss_and_reordering() {
        let mut t = UdpTrack::default();
        for (i, seq) in [1u64, 2, 5, 3, 6].into_iter().enumerate() {
            t.datagram(seq, i as f64 * 0.001, i as f64 * 0.001 + 0.0005);
        }
        // 3 and 4 missing after 5, then 3 arrives late: one loss undone.
        assert_eq!(t.lost, 1);
        assert_eq!(t.out_of_order, 1);
        assert_eq!(t.highest, 6);
        assert!(
            t.jitter.abs() < 1e-9,
            "constant transit time gives no jitter"
        );
    }
}
