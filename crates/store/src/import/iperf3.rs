//! iperf3's `-J` output (3.x) as a network run.
//!
//! Goodput comes from the receivers' byte counts, as iperf3's own
//! `sum_received`. Directions are seen from the client: upload is client to
//! server. A server's JSON is accepted too; its streams are turned around.

use iomark_model::net::{
    CpuUtilization, NetDirection, NetInterval, NetProtocol, NetRun, NetSpec, NetStreamResult,
};
use iomark_model::{Bytes, Nanos, RunBody, RunDocument};
use serde_json::Value;

use super::{need, net_sums_fit, At, ImportError, MAX_MS};

const TOOL: &str = "iperf3";

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
    let (peer, peer_path) = if is_server {
        (&start["accepted_connection"], "start.accepted_connection")
    } else {
        (&start["connecting_to"], "start.connecting_to")
    };
    let at_peer = At::new(TOOL, peer_path);
    let at_ts = At::new(TOOL, "start.test_start");
    let at_start = At::new(TOOL, "start");
    let spec = NetSpec {
        host: peer["host"].as_str().unwrap_or("").to_string(),
        port: at_peer.small::<u16>(peer, "port")?.unwrap_or(5201),
        protocol,
        parallel: at_ts.small::<u32>(ts, "num_streams")?.unwrap_or(1),
        duration: at_ts.nanos_of_secs("duration", at_ts.need_f64(ts, "duration")?)?,
        omit: at_ts.nanos_of_secs("omit", at_ts.f64(ts, "omit")?.unwrap_or(0.0))?,
        interval: at_ts.nanos_of_secs("interval", at_ts.f64(ts, "interval")?.unwrap_or(1.0))?,
        reverse,
        bidirectional: bidir,
        block_len: Bytes(at_ts.u64(ts, "blksize")?.unwrap_or(0)),
        window: at_start
            .u64(start, "sock_bufsize")?
            .filter(|b| *b > 0)
            .map(Bytes),
        target_bits_per_sec: at_ts.u64(ts, "target_bitrate")?.unwrap_or(0),
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
        let base = format!("end.streams[{i}]");
        let id = |o: &Value, at: At<'_>| -> Result<u32, ImportError> {
            match at.u64(o, "socket")? {
                Some(socket) => at.fit::<u32>("socket", socket),
                // Without a socket number the position tells streams apart.
                None => at.fit::<u32>("socket", i as u64),
            }
        };
        if let Some(u) = s.get("udp") {
            let path = format!("{base}.udp");
            let at = At::new(TOOL, &path);
            let bytes = at.u64(u, "bytes")?.unwrap_or(0);
            let packets = at.u64(u, "packets")?.unwrap_or(0);
            let lost = at.u64(u, "lost_packets")?.unwrap_or(0);
            // One record per UDP stream: bytes sent, and the receiver's loss
            // from the results exchange; what arrived is the share not lost.
            // In u128, so a large byte count is not cut short.
            let received = (u128::from(bytes) * u128::from(packets.saturating_sub(lost)))
                .checked_div(u128::from(packets))
                .map_or(bytes, |r| u64::try_from(r).unwrap_or(bytes));
            let t = at.nanos_of_secs("seconds", at.f64(u, "seconds")?.unwrap_or(0.0))?;
            let jitter = match at.f64(u, "jitter_ms")? {
                Some(ms) => Some(at.nanos_of_secs("jitter_ms", ms / 1e3)?),
                None => None,
            };
            streams.push(NetStreamResult {
                id: id(u, at)?,
                direction: direction(u["sender"].as_bool().unwrap_or(true)),
                sent: Bytes(bytes),
                received: Bytes(received),
                sender_time: t,
                receiver_time: t,
                retransmits: None,
                packets: Some(packets),
                lost_packets: Some(lost),
                jitter,
            });
        } else {
            let snd = need(s, TOOL, &["sender"]).map_err(|_| ImportError::Missing {
                tool: TOOL,
                field: format!("{base}.sender"),
            })?;
            let rcv = need(s, TOOL, &["receiver"]).map_err(|_| ImportError::Missing {
                tool: TOOL,
                field: format!("{base}.receiver"),
            })?;
            let (snd_path, rcv_path) = (format!("{base}.sender"), format!("{base}.receiver"));
            let (at_s, at_r) = (At::new(TOOL, &snd_path), At::new(TOOL, &rcv_path));
            let r_start = at_r.f64(rcv, "start")?.unwrap_or(0.0);
            let r_end = at_r.f64(rcv, "end")?.unwrap_or(0.0);
            if r_end < r_start {
                return Err(at_r.invalid(
                    "end",
                    format!("is before the stream's start ({r_end} < {r_start})"),
                ));
            }
            streams.push(NetStreamResult {
                id: id(snd, at_s)?,
                direction: direction(snd["sender"].as_bool().unwrap_or(true)),
                sent: Bytes(at_s.u64(snd, "bytes")?.unwrap_or(0)),
                received: Bytes(at_r.u64(rcv, "bytes")?.unwrap_or(0)),
                sender_time: at_s
                    .nanos_of_secs("seconds", at_s.f64(snd, "seconds")?.unwrap_or(0.0))?,
                // iperf3's receiver `seconds` repeats the sender's; its own
                // span is end - start, which `sum_received` divides by.
                receiver_time: at_r.nanos_of_secs("end", r_end - r_start)?,
                retransmits: at_s.u64(snd, "retransmits")?,
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
    for (i, iv) in v["intervals"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .enumerate()
    {
        for key in ["sum", "sum_bidir_reverse"] {
            let Some(sum) = iv.get(key) else { continue };
            let path = format!("intervals[{i}].{key}");
            let at = At::new(TOOL, &path);
            // This host's sending streams of the sum's direction carry
            // TCP_INFO's rtt (µs); the interval's is their mean.
            let sending = sum["sender"].as_bool().unwrap_or(true);
            let rtts: Vec<u64> = iv["streams"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or(&[])
                .iter()
                .filter(|s| sending && s["sender"].as_bool() == Some(true))
                .filter_map(|s| s["rtt"].as_u64())
                .filter(|&r| r > 0 && r < 3_600_000_000)
                .collect();
            let rtt = (!rtts.is_empty())
                .then(|| Nanos(rtts.iter().sum::<u64>() * 1000 / rtts.len() as u64));
            intervals.push(NetInterval {
                start: at.nanos_of_secs("start", at.f64(sum, "start")?.unwrap_or(0.0))?,
                end: at.nanos_of_secs("end", at.f64(sum, "end")?.unwrap_or(0.0))?,
                direction: direction(sum["sender"].as_bool().unwrap_or(true)),
                bytes: Bytes(at.u64(sum, "bytes")?.unwrap_or(0)),
                retransmits: at.u64(sum, "retransmits")?,
                omitted: sum["omitted"].as_bool().unwrap_or(false),
                rtt,
                // iperf3 reports CPU for the whole test only.
                cpu: None,
                peer_cpu: None,
            });
        }
    }
    let cpu = &end["cpu_utilization_percent"];
    let at_cpu = At::new(TOOL, "end.cpu_utilization_percent");
    let cpu_of = |side: &str| -> Result<CpuUtilization, ImportError> {
        let pct = |what: &str| {
            at_cpu
                .f64(cpu, &format!("{side}_{what}"))
                .map(|p| p.unwrap_or(0.0))
        };
        Ok(CpuUtilization {
            total_percent: pct("total")?,
            user_percent: pct("user")?,
            system_percent: pct("system")?,
        })
    };
    let version = start["version"].as_str().unwrap_or("iperf");
    let at_stamp = At::new(TOOL, "start.timestamp");
    let started_at_ms = at_stamp.ms_of_secs(
        "timesecs",
        need(start, TOOL, &["timestamp", "timesecs"])
            .and_then(|_| at_stamp.need_f64(&start["timestamp"], "timesecs"))?,
    )?;
    let (measured, measured_at) = match end["sum_sent"]["end"] {
        Value::Null => (&end["sum"], "end.sum"),
        _ => (&end["sum_sent"], "end.sum_sent"),
    };
    let at_m = At::new(TOOL, measured_at);
    let measured_ms = at_m.ms_of_secs("end", at_m.f64(measured, "end")?.unwrap_or(0.0))?;
    let finished_at_ms = started_at_ms
        .checked_add(measured_ms)
        .filter(|ms| *ms <= MAX_MS)
        .ok_or_else(|| {
            at_m.invalid(
                "end",
                format!("ends the run too late ({started_at_ms} + {measured_ms} > {MAX_MS} ms since 1970)"),
            )
        })?;
    let run = NetRun {
        spec,
        peer_version: None,
        interface: None,
        streams,
        intervals,
        cpu_local: Some(cpu_of("host")?),
        cpu_remote: Some(cpu_of("remote")?),
        host_cpu_local: None,
        host_cpu_remote: None,
        nic_local: None,
        nic_remote: None,
        latency: None,
        clients: Vec::new(),
        warnings: Vec::new(),
    };
    // The figures add up the streams' counts; name the input's field when
    // they would not fit.
    net_sums_fit(&run, TOOL, |i, name| {
        let field = match (streams_json[i].get("udp").is_some(), name) {
            (true, "received") => "udp.bytes",
            (true, "packets") => "udp.packets",
            (true, _) => "udp.lost_packets",
            (false, "received") => "receiver.bytes",
            (false, _) => "sender.retransmits",
        };
        format!("end.streams[{i}].{field}")
    })?;
    Ok(RunDocument {
        started_at_ms,
        finished_at_ms,
        ..RunDocument::new(
            TOOL,
            version.trim_start_matches("iperf "),
            Vec::new(),
            RunBody::Net(run),
        )
    })
}
