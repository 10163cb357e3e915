//! iperf3's `-J` output (3.x) as a network run.
//!
//! Goodput comes from the receivers' byte counts, as iperf3's own
//! `sum_received`. Directions are seen from the client: upload is client to
//! server. A server's JSON is accepted too; its streams are turned around.

use iomark_model::net::{
    CpuUtilization, NetDirection, NetInterval, NetProtocol, NetRun, NetSpec, NetStreamResult,
};
use iomark_model::{Bytes, Nanos, RunBody, RunDocument, RunStatus, SCHEMA_VERSION};
use serde_json::Value;

use super::{need, need_f64, ImportError};

const TOOL: &str = "iperf3";

fn secs(v: f64) -> Nanos {
    Nanos((v.max(0.0) * 1e9).round() as u64)
}

pub(super) fn convert(v: &Value) -> Result<RunDocument, ImportError> {
    if let Some(err) = v.get("error").and_then(Value::as_str) {
        return Err(ImportError::Unsupported(format!(
            "this iperf3 run failed (\"{err}\"): there are no figures to import"
        )));
    }
    let start = need(v, TOOL, &["start"])?;
    let ts = need(start, TOOL, &["test_start"])?;
    let end = need(v, TOOL, &["end"])?;
    let protocol = match ts["protocol"].as_str() {
        Some("TCP") => NetProtocol::Tcp,
        Some("UDP") => NetProtocol::Udp,
        Some(other) => {
            return Err(ImportError::Unsupported(format!(
                "iperf3 protocol {other} is not measured by iomark (it knows TCP and UDP)"
            )))
        }
        None => {
            return Err(ImportError::Missing {
                tool: TOOL,
                field: "start.test_start.protocol".into(),
            })
        }
    };
    // The server's JSON says `accepted_connection` where the client's says
    // `connecting_to`; its local sender is the client's download.
    let is_server = start.get("connecting_to").is_none();
    let reverse = ts["reverse"].as_i64().unwrap_or(0) != 0;
    let bidir = ts["bidir"].as_i64().unwrap_or(0) != 0;
    let peer = if is_server {
        &start["accepted_connection"]
    } else {
        &start["connecting_to"]
    };
    let spec = NetSpec {
        host: peer["host"].as_str().unwrap_or("").to_string(),
        port: peer["port"].as_u64().unwrap_or(5201) as u16,
        protocol,
        parallel: ts["num_streams"].as_u64().unwrap_or(1) as u32,
        duration: Nanos::from_secs(need_f64(ts, TOOL, &["duration"])? as u64),
        omit: Nanos::from_secs(ts["omit"].as_u64().unwrap_or(0)),
        interval: secs(ts["interval"].as_f64().unwrap_or(1.0)),
        reverse,
        bidirectional: bidir,
        block_len: Bytes(ts["blksize"].as_u64().unwrap_or(0)),
        window: start["sock_bufsize"].as_u64().filter(|b| *b > 0).map(Bytes),
        target_bits_per_sec: ts["target_bitrate"].as_u64().unwrap_or(0),
        no_delay: false,
    };
    // Which way data went, given whether this host sent it.
    let direction = |local_sent: bool| {
        if local_sent != is_server {
            NetDirection::Upload
        } else {
            NetDirection::Download
        }
    };
    let streams_json =
        need(end, TOOL, &["streams"])?
            .as_array()
            .ok_or_else(|| ImportError::Missing {
                tool: TOOL,
                field: "end.streams (a list)".into(),
            })?;
    let mut streams = Vec::new();
    for (i, s) in streams_json.iter().enumerate() {
        let at = format!("end.streams[{i}]");
        let id = |o: &Value| o["socket"].as_u64().unwrap_or(i as u64) as u32;
        if let Some(u) = s.get("udp") {
            let bytes = u["bytes"].as_u64().unwrap_or(0);
            let packets = u["packets"].as_u64().unwrap_or(0);
            let lost = u["lost_packets"].as_u64().unwrap_or(0);
            // One record per UDP stream: bytes sent, and the receiver's loss
            // from the results exchange; what arrived is the share not lost.
            let received = bytes
                .saturating_mul(packets.saturating_sub(lost))
                .checked_div(packets)
                .unwrap_or(bytes);
            let t = secs(u["seconds"].as_f64().unwrap_or(0.0));
            streams.push(NetStreamResult {
                id: id(u),
                direction: direction(u["sender"].as_bool().unwrap_or(true)),
                sent: Bytes(bytes),
                received: Bytes(received),
                sender_time: t,
                receiver_time: t,
                retransmits: None,
                packets: Some(packets),
                lost_packets: Some(lost),
                jitter: u["jitter_ms"].as_f64().map(|ms| secs(ms / 1e3)),
            });
        } else {
            let snd = need(s, TOOL, &["sender"]).map_err(|_| ImportError::Missing {
                tool: TOOL,
                field: format!("{at}.sender"),
            })?;
            let rcv = need(s, TOOL, &["receiver"]).map_err(|_| ImportError::Missing {
                tool: TOOL,
                field: format!("{at}.receiver"),
            })?;
            streams.push(NetStreamResult {
                id: id(snd),
                direction: direction(snd["sender"].as_bool().unwrap_or(true)),
                sent: Bytes(snd["bytes"].as_u64().unwrap_or(0)),
                received: Bytes(rcv["bytes"].as_u64().unwrap_or(0)),
                sender_time: secs(snd["seconds"].as_f64().unwrap_or(0.0)),
                // iperf3's receiver `seconds` repeats the sender's; its own
                // span is end - start, which `sum_received` divides by.
                receiver_time: secs(
                    rcv["end"].as_f64().unwrap_or(0.0) - rcv["start"].as_f64().unwrap_or(0.0),
                ),
                retransmits: snd["retransmits"].as_u64(),
                packets: None,
                lost_packets: None,
                jitter: None,
            });
        }
    }
    if streams.is_empty() {
        return Err(ImportError::Missing {
            tool: TOOL,
            field: "end.streams (no stream has results)".into(),
        });
    }
    let mut intervals = Vec::new();
    for iv in v["intervals"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
        for key in ["sum", "sum_bidir_reverse"] {
            let Some(sum) = iv.get(key) else { continue };
            intervals.push(NetInterval {
                start: secs(sum["start"].as_f64().unwrap_or(0.0)),
                end: secs(sum["end"].as_f64().unwrap_or(0.0)),
                direction: direction(sum["sender"].as_bool().unwrap_or(true)),
                bytes: Bytes(sum["bytes"].as_u64().unwrap_or(0)),
                retransmits: sum["retransmits"].as_u64(),
                omitted: sum["omitted"].as_bool().unwrap_or(false),
            });
        }
    }
    let cpu = &end["cpu_utilization_percent"];
    let cpu_of = |side: &str| CpuUtilization {
        total_percent: cpu[format!("{side}_total")].as_f64().unwrap_or(0.0),
        user_percent: cpu[format!("{side}_user")].as_f64().unwrap_or(0.0),
        system_percent: cpu[format!("{side}_system")].as_f64().unwrap_or(0.0),
    };
    let version = start["version"].as_str().unwrap_or("iperf");
    let started_at_ms = need_f64(start, TOOL, &["timestamp", "timesecs"])? as u64 * 1000;
    let measured = end["sum_sent"]["end"]
        .as_f64()
        .or_else(|| end["sum"]["end"].as_f64())
        .unwrap_or(0.0);
    Ok(RunDocument {
        schema_version: SCHEMA_VERSION,
        tool: TOOL.into(),
        tool_version: version.trim_start_matches("iperf ").to_string(),
        command_line: Vec::new(),
        started_at_ms,
        finished_at_ms: started_at_ms + (measured * 1000.0) as u64,
        status: RunStatus::Complete,
        labels: Vec::new(),
        note: None,
        warnings: Vec::new(),
        host: None,
        device: None,
        body: RunBody::Net(NetRun {
            spec,
            peer_version: None,
            interface: None,
            streams,
            intervals,
            cpu_local: cpu_of("host"),
            cpu_remote: cpu_of("remote"),
            warnings: Vec::new(),
        }),
    })
}
