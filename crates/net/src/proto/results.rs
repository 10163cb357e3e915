//! The results JSON both sides send after EXCHANGE_RESULTS (section 1.8).
//!
//! Reading is lenient in the ways real peers need: integers may come as
//! floats, iperf3 3.12/3.13 print −1 as `18446744073709551615` (read back as
//! −1), and the `omitted_*` and time keys may be missing. Writing prints −1
//! as `-1`. What the peer sends is not trusted: strings are escaped and
//! figures range-checked on receipt ([`super::untrusted`]).

use serde::{Deserialize, Deserializer, Serialize};

use super::{untrusted, ProtoError};

/// One side's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// Process CPU over wall time, percent.
    #[serde(deserialize_with = "lenient_f64")]
    pub cpu_util_total: f64,
    /// User part.
    #[serde(deserialize_with = "lenient_f64")]
    pub cpu_util_user: f64,
    /// System part.
    #[serde(deserialize_with = "lenient_f64")]
    pub cpu_util_system: f64,
    /// −1 when this side only received; 1 when it sent TCP with `TCP_INFO`.
    #[serde(deserialize_with = "lenient_i64")]
    pub sender_has_retransmits: i64,
    /// The congestion control in use, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion_used: Option<String>,
    /// One entry per stream, both directions with `--bidir`.
    pub streams: Vec<StreamResults>,
    /// iomark only: the whole machine's CPU over the test (iperf3 reads
    /// the keys it knows with cJSON_GetObjectItem and ignores the rest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iomark_host_cpu: Option<iomark_model::cpu::HostCpu>,
    /// iomark only: the interface this end's control connection used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iomark_interface: Option<Box<iomark_model::net::NicChain>>,
    /// iomark only: how long a CPU quota throttled this end's cgroup over
    /// the test, when it did: the peer names it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iomark_cpu_throttle: Option<iomark_model::cpu::CpuThrottle>,
    /// iomark only: why this end could not check a CPU quota, when it
    /// could not: the peer says so too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iomark_cpu_quota_unchecked: Option<String>,
    /// iomark only: this end's process CPU (percent of one core) over each
    /// of its report intervals, omitted ones included, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iomark_cpu_intervals: Option<Vec<f64>>,
    /// The server's text output of the test, for a client that asked
    /// (`--get-server-output`) of a server printing text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_output_text: Option<String>,
    /// The server's `-J` document of the test, for a client that asked of
    /// a server printing JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_output_json: Option<serde_json::Value>,
}

/// One stream in a results message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamResults {
    /// Stream id (1, 3, 4, ...).
    #[serde(deserialize_with = "lenient_i64")]
    pub id: i64,
    /// Bytes sent (sender) or received (receiver), omit period excluded.
    #[serde(deserialize_with = "lenient_u64")]
    pub bytes: u64,
    /// TCP retransmits, −1 when unknown or not a sender.
    #[serde(deserialize_with = "lenient_i64")]
    pub retransmits: i64,
    /// UDP receiver jitter in seconds.
    #[serde(deserialize_with = "lenient_f64")]
    pub jitter: f64,
    /// UDP datagrams lost, as the receiver counted.
    #[serde(deserialize_with = "lenient_i64")]
    pub errors: i64,
    /// UDP datagrams sent, or the highest sequence number seen.
    #[serde(deserialize_with = "lenient_i64")]
    pub packets: i64,
    /// Lost datagrams during the omit period (3.14+).
    #[serde(
        default,
        deserialize_with = "lenient_opt_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub omitted_errors: Option<i64>,
    /// Datagrams during the omit period (3.14+).
    #[serde(
        default,
        deserialize_with = "lenient_opt_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub omitted_packets: Option<i64>,
    /// Always 0 when present.
    #[serde(
        default,
        deserialize_with = "lenient_opt_f64",
        skip_serializing_if = "Option::is_none"
    )]
    pub start_time: Option<f64>,
    /// Seconds from the stream's start to its stop.
    #[serde(
        default,
        deserialize_with = "lenient_opt_f64",
        skip_serializing_if = "Option::is_none"
    )]
    pub end_time: Option<f64>,
}

impl Results {
    /// Read a peer's results: every string escaped, every figure checked
    /// (see [`super::untrusted`]); a figure no test can have refuses the
    /// whole message, naming the field.
    pub fn from_json(body: &[u8]) -> Result<Results, ProtoError> {
        let bad_json = |e: serde_json::Error| ProtoError::BadJson(e.to_string());
        let mut v: serde_json::Value = serde_json::from_slice(body).map_err(bad_json)?;
        // The server's output is lines of text: they keep their newlines
        // and tabs, every other control is shown escaped.
        let output = v
            .as_object_mut()
            .and_then(|m| m.remove("server_output_text"));
        untrusted::escape_strings(&mut v);
        if let (Some(serde_json::Value::String(t)), Some(m)) = (output, v.as_object_mut()) {
            let shown = iomark_model::escape::escape_controls_keep_lines(&t).into_owned();
            m.insert("server_output_text".into(), shown.into());
        }
        if let serde_json::Value::Object(m) = &v {
            untrusted::check_results(m)?;
        }
        let mut r: Results = serde_json::from_value(v).map_err(bad_json)?;
        r.congestion_used = r.congestion_used.filter(|c| !c.is_empty());
        Ok(r)
    }

    /// The JSON body to send.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("results always serialise")
    }

    /// The CPU figures as iomark's model holds them.
    pub fn cpu(&self) -> iomark_model::net::CpuUtilization {
        iomark_model::net::CpuUtilization {
            total_percent: self.cpu_util_total,
            user_percent: self.cpu_util_user,
            system_percent: self.cpu_util_system,
        }
    }

    /// The stream with this id.
    pub fn stream(&self, id: i64) -> Option<&StreamResults> {
        self.streams.iter().find(|s| s.id == id)
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    fn as_i64(&self) -> i64 {
        match *self {
            // 3.12/3.13's cJSON prints -1 as 2^64-1; any value that large is -1.
            Num::U(u) if u >= 1 << 63 => -1,
            Num::U(u) => u as i64,
            Num::I(i) => i,
            Num::F(f) if f >= 9.223_372_036_854_776e18 => -1,
            Num::F(f) => f as i64,
        }
    }

    fn as_f64(&self) -> f64 {
        match *self {
            Num::U(u) if u >= 1 << 63 => -1.0,
            Num::U(u) => u as f64,
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }
}

fn lenient_i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    Num::deserialize(d).map(|n| n.as_i64())
}

fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Num::deserialize(d).map(|n| match n {
        Num::U(u) => u,
        other => other.as_i64().max(0) as u64,
    })
}

fn lenient_f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Num::deserialize(d).map(|n| n.as_f64())
}

fn lenient_opt_i64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Option::<Num>::deserialize(d).map(|n| n.map(|n| n.as_i64()))
}

fn lenient_opt_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<Num>::deserialize(d).map(|n| n.map(|n| n.as_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_iperf3_3_12_minus_one() {
        let body = br#"{"cpu_util_total":3.84,"cpu_util_user":0,"cpu_util_system":3.84,"sender_has_retransmits":18446744073709551615,"congestion_used":"bbr","streams":[{"id":1,"bytes":125000,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.000094}]}"#;
        let r = Results::from_json(body).unwrap();
        assert_eq!(r.sender_has_retransmits, -1);
        assert_eq!(r.streams[0].retransmits, -1);
        assert_eq!(r.streams[0].bytes, 125000);
        assert_eq!(r.streams[0].end_time, Some(1.000094));
        assert_eq!(r.streams[0].omitted_packets, None);
        let out = String::from_utf8(r.to_json()).unwrap();
        assert!(out.contains("\"sender_has_retransmits\":-1"), "{out}");
    }

    #[test]
    fn a_peers_strings_are_escaped_and_impossible_figures_refused() {
        let body = br#"{"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":1,"sender_has_retransmits":1,"streams":[],"iomark_interface":{"name":"eth\u001b]0;x\u0007","driver":null,"driver_version":null,"firmware_version":null,"speed_mbit":1,"duplex":null,"operstate":null,"virtual_kind":null,"usb":null}}"#;
        let r = Results::from_json(body).unwrap();
        assert_eq!(r.iomark_interface.unwrap().name, "eth\\x1b]0;x\\x07");
        let body = br#"{"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":1,"sender_has_retransmits":1,"streams":[{"id":1,"bytes":-5,"retransmits":0,"jitter":0,"errors":0,"packets":0}]}"#;
        let e = Results::from_json(body).unwrap_err().to_string();
        assert!(e.contains("streams[0].bytes is negative (-5"), "{e}");
    }

    #[test]
    fn missing_required_key_is_an_error() {
        assert!(Results::from_json(br#"{"cpu_util_total":1}"#).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(bytes in 0..=untrusted::MAX_COUNT, retr in -1i64..1000, id in 1i64..200, end in 0.0f64..1e6) {
            let r = Results { cpu_util_total: 1.5, cpu_util_user: 0.5, cpu_util_system: 1.0,
                sender_has_retransmits: 1, congestion_used: None,
                iomark_host_cpu: None, iomark_interface: None, iomark_cpu_throttle: None,
                iomark_cpu_quota_unchecked: None, iomark_cpu_intervals: None,
                server_output_text: None, server_output_json: None,
                streams: vec![StreamResults { id, bytes, retransmits: retr, jitter: 0.0, errors: 0,
                    packets: 0, omitted_errors: Some(0), omitted_packets: Some(0),
                    start_time: Some(0.0), end_time: Some(end) }] };
            let mut back = Results::from_json(&r.to_json()).unwrap();
            // serde_json's default float parser may differ in the last bit.
            let e = back.streams[0].end_time.take().unwrap();
            prop_assert!((e - end).abs() <= end * 1e-12);
            back.streams[0].end_time = Some(end);
            prop_assert_eq!(back, r);
        }

        #[test]
        fn more_bytes_than_a_test_moves_are_refused(bytes in untrusted::MAX_COUNT + 1..) {
            let body = format!(r#"{{"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":1,"sender_has_retransmits":1,"streams":[{{"id":1,"bytes":{bytes},"retransmits":0,"jitter":0,"errors":0,"packets":0}}]}}"#);
            let e = Results::from_json(body.as_bytes()).unwrap_err().to_string();
            prop_assert!(e.contains("streams[0].bytes is out of range"), "{}", e);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = Results::from_json(&bytes);
        }
    }
}
