//! The mirror structs of iperf3's `-J` document. Field order is the key
//! order iperf3 prints, and scripts that compare documents textually depend
//! on it: do not sort them.

use serde::Serialize;

use crate::report::rate;

#[derive(Serialize)]
pub(super) struct JDoc {
    pub(super) start: JStart,
    pub(super) intervals: Vec<JInterval>,
    pub(super) end: JEnd,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) extra_data: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) server_output_json: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) server_output_text: Option<String>,
}

#[derive(Serialize)]
pub(super) struct JStart {
    pub(super) connected: Vec<JConnected>,
    pub(super) version: String,
    pub(super) system_info: String,
    pub(super) timestamp: JTimestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) connecting_to: Option<JHostPort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) accepted_connection: Option<JHostPort>,
    pub(super) cookie: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tcp_mss_default: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) tcp_mss: Option<u32>,
    pub(super) target_bitrate: u64,
    pub(super) fq_rate: u64,
    pub(super) sock_bufsize: u64,
    pub(super) sndbuf_actual: u64,
    pub(super) rcvbuf_actual: u64,
    pub(super) test_start: JTestStart,
}

#[derive(Serialize)]
pub(super) struct JConnected {
    pub(super) socket: i32,
    pub(super) local_host: String,
    pub(super) local_port: u16,
    pub(super) remote_host: String,
    pub(super) remote_port: u16,
}

#[derive(Serialize)]
pub(super) struct JTimestamp {
    pub(super) time: String,
    pub(super) timesecs: u64,
    pub(super) timemillisecs: u64,
}

#[derive(Serialize)]
pub(super) struct JHostPort {
    pub(super) host: String,
    pub(super) port: u16,
}

#[derive(Serialize)]
pub(super) struct JTestStart {
    pub(super) protocol: &'static str,
    pub(super) num_streams: u32,
    pub(super) blksize: u32,
    pub(super) omit: u32,
    pub(super) duration: u32,
    pub(super) bytes: u64,
    pub(super) blocks: u64,
    pub(super) reverse: u8,
    pub(super) tos: u32,
    pub(super) target_bitrate: u64,
    pub(super) bidir: u8,
    pub(super) fqrate: u64,
    pub(super) interval: f64,
    pub(super) gso: u8,
    pub(super) gro: u8,
}

#[derive(Serialize)]
pub(super) struct JInterval {
    pub(super) streams: Vec<JFig>,
    pub(super) sum: JFig,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sum_bidir_reverse: Option<JFig>,
}

/// A stream or sum figure; which optional keys appear depends on protocol
/// and role, as in iperf3.
#[derive(Serialize, Default)]
pub(super) struct JFig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) socket: Option<i32>,
    pub(super) start: f64,
    pub(super) end: f64,
    pub(super) seconds: f64,
    pub(super) bytes: u64,
    pub(super) bits_per_second: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) jitter_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) lost_packets: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) packets: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) lost_percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) out_of_order: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) retransmits: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) snd_cwnd: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) snd_wnd: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) rtt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) rttvar: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) pmtu: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) reorder: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_snd_cwnd: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_snd_wnd: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) max_rtt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) min_rtt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) mean_rtt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) omitted: Option<bool>,
    pub(super) sender: bool,
}

impl JFig {
    pub(super) fn span(start: f64, end: f64, bytes: u64, sender: bool) -> JFig {
        let seconds = end - start;
        JFig {
            start,
            end,
            seconds,
            bytes,
            bits_per_second: rate(bytes, seconds),
            sender,
            ..JFig::default()
        }
    }
}

#[derive(Serialize, Default)]
pub(super) struct JEndStream {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sender: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) receiver: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) udp: Option<JFig>,
}

#[derive(Serialize)]
pub(super) struct JEnd {
    pub(super) streams: Vec<JEndStream>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sum: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sum_sent: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sum_received: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sum_bidir_reverse: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sum_sent_bidir_reverse: Option<JFig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sum_received_bidir_reverse: Option<JFig>,
    pub(super) cpu_utilization_percent: JCpu,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) sender_tcp_congestion: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) receiver_tcp_congestion: Option<String>,
}

#[derive(Serialize)]
pub(super) struct JCpu {
    pub(super) host_total: f64,
    pub(super) host_user: f64,
    pub(super) host_system: f64,
    pub(super) remote_total: f64,
    pub(super) remote_user: f64,
    pub(super) remote_system: f64,
}
