//! The parameters JSON the client sends after PARAM_EXCHANGE (section 1.7).
//!
//! Writing follows the rule that keeps servers up to 3.17 happy: a flag key is
//! emitted only when it is set, as JSON `true`, because those servers treat
//! the key's presence as "on". Reading follows 3.18+: every key is optional,
//! unknown keys are ignored, flags may be `true` or a number (older clients
//! send `1` for some), and values are range-checked, each failure carrying
//! the iperf3 error code the server answers with. Strings are escaped on
//! receipt and a congestion control name must be one
//! ([`super::untrusted`]).

use serde_json::{Map, Value};

use super::{code, untrusted, ProtoError};

/// The transport of the data streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// TCP streams.
    Tcp,
    /// UDP streams.
    Udp,
}

/// Default TCP block length, as iperf3's.
pub const DEFAULT_TCP_LEN: u32 = 128 * 1024;
/// The largest TCP block length a server accepts.
pub const MAX_TCP_LEN: u32 = 1024 * 1024;
/// UDP datagram length bounds.
pub const UDP_LEN_RANGE: std::ops::RangeInclusive<u32> = 16..=65507;
/// The largest `-w` a server accepts.
pub const MAX_WINDOW: u64 = 512 * 1024 * 1024;
/// The most streams per direction.
pub const MAX_PARALLEL: u32 = 128;
// A results message lists every stream of a `--bidir` test.
const _: () = assert!(2 * MAX_PARALLEL as usize == untrusted::MAX_STREAMS);
/// The longest test, in seconds.
pub const MAX_TIME: u64 = 86400;
/// The longest omit period, in seconds.
pub const MAX_OMIT: u64 = 600;
/// iperf3's UDP rate when `-b` is not given, in bits per second per stream.
pub const DEFAULT_UDP_RATE: u64 = 1 << 20;

/// The test as the client describes it to the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// TCP or UDP.
    pub protocol: Protocol,
    /// Seconds left out at the start (`-O`).
    pub omit: u32,
    /// Test seconds (`-t`); 0 with `-n`/`-k`.
    pub time: u32,
    /// Bytes to send (`-n`); 0 when unused.
    pub num: u64,
    /// Blocks to send (`-k`); 0 when unused.
    pub blockcount: u64,
    /// Streams per direction (`-P`).
    pub parallel: u32,
    /// The server sends (`-R`).
    pub reverse: bool,
    /// Both directions (`--bidir`).
    pub bidirectional: bool,
    /// `SO_SNDBUF`/`SO_RCVBUF` in bytes (`-w`).
    pub window: Option<u32>,
    /// Block or datagram length (`-l`).
    pub len: u32,
    /// Target bits per second per stream (`-b`); 0 is unlimited.
    pub bandwidth: u64,
    /// `TCP_NODELAY` on data streams (`-N`).
    pub nodelay: bool,
    /// `TCP_MAXSEG` (`-M`).
    pub mss: Option<u32>,
    /// `IP_TOS` (`-S`).
    pub tos: Option<u32>,
    /// `SO_MAX_PACING_RATE` in bits per second (`--fq-rate`).
    pub fqrate: Option<u64>,
    /// The sender uses `sendfile` (`-Z`).
    pub zerocopy: bool,
    /// The CPU the server's end of the test runs on (`-A n,m`).
    pub server_affinity: Option<u32>,
    /// 64-bit UDP sequence numbers.
    pub udp_counters_64bit: bool,
    /// The client wants the server's output in the results.
    pub get_server_output: bool,
    /// `TCP_CONGESTION` (`-C`).
    pub congestion: Option<String>,
    /// Free text the client asked to carry (`--extra-data`).
    pub extra_data: Option<String>,
    /// Output line prefix (`-T`).
    pub title: Option<String>,
    /// The client's version, informational.
    pub client_version: Option<String>,
    /// iperf3's encrypted credentials (`--username`, see `crate::auth`).
    pub authtoken: Option<String>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            protocol: Protocol::Tcp,
            omit: 0,
            time: 10,
            num: 0,
            blockcount: 0,
            parallel: 1,
            reverse: false,
            bidirectional: false,
            window: None,
            len: DEFAULT_TCP_LEN,
            bandwidth: 0,
            nodelay: false,
            mss: None,
            tos: None,
            fqrate: None,
            zerocopy: false,
            server_affinity: None,
            udp_counters_64bit: false,
            get_server_output: false,
            congestion: None,
            extra_data: None,
            title: None,
            client_version: None,
            authtoken: None,
        }
    }
}

impl Params {
    /// How many data streams the test opens: `parallel`, twice with
    /// `--bidir`.
    pub fn stream_count(&self) -> usize {
        let p = self.parallel as usize;
        if self.bidirectional {
            2 * p
        } else {
            p
        }
    }

    /// Whether the client sends on the `i`th data stream opened: with
    /// `--bidir` on the first `parallel`, the server on the rest; otherwise
    /// on all of them unless `-R`.
    pub fn client_sends(&self, i: usize) -> bool {
        if self.bidirectional {
            i < self.parallel as usize
        } else {
            !self.reverse
        }
    }

    /// The JSON body, compact, with the emission rules above.
    pub fn to_json(&self) -> Vec<u8> {
        let mut m = Map::new();
        match self.protocol {
            Protocol::Tcp => m.insert("tcp".into(), Value::Bool(true)),
            Protocol::Udp => m.insert("udp".into(), Value::Bool(true)),
        };
        m.insert("omit".into(), self.omit.into());
        if let Some(cpu) = self.server_affinity {
            m.insert("server_affinity".into(), cpu.into());
        }
        m.insert("time".into(), self.time.into());
        m.insert("num".into(), self.num.into());
        m.insert("blockcount".into(), self.blockcount.into());
        if let Some(mss) = self.mss {
            m.insert("MSS".into(), mss.into());
        }
        if self.nodelay {
            m.insert("nodelay".into(), Value::Bool(true));
        }
        m.insert("parallel".into(), self.parallel.into());
        if self.reverse {
            m.insert("reverse".into(), Value::Bool(true));
        }
        if self.bidirectional {
            m.insert("bidirectional".into(), Value::Bool(true));
        }
        if let Some(w) = self.window {
            m.insert("window".into(), w.into());
        }
        m.insert("len".into(), self.len.into());
        if self.bandwidth != 0 {
            m.insert("bandwidth".into(), self.bandwidth.into());
        }
        if let Some(rate) = self.fqrate {
            m.insert("fqrate".into(), rate.into());
        }
        if let Some(tos) = self.tos {
            m.insert("TOS".into(), tos.into());
        }
        if let Some(t) = &self.title {
            m.insert("title".into(), t.clone().into());
        }
        if let Some(t) = &self.extra_data {
            m.insert("extra_data".into(), t.clone().into());
        }
        if let Some(c) = &self.congestion {
            m.insert("congestion".into(), c.clone().into());
        }
        if self.get_server_output {
            m.insert("get_server_output".into(), 1.into());
        }
        if self.udp_counters_64bit {
            m.insert("udp_counters_64bit".into(), 1.into());
        }
        if self.zerocopy {
            m.insert("zerocopy".into(), 1.into());
        }
        m.insert("pacing_timer".into(), 1000.into());
        if let Some(v) = &self.client_version {
            m.insert("client_version".into(), v.clone().into());
        }
        if let Some(t) = &self.authtoken {
            m.insert("authtoken".into(), t.clone().into());
        }
        serde_json::to_vec(&Value::Object(m)).expect("a JSON map always serialises")
    }

    /// Read and check a parameters JSON as a 3.18+ server does.
    pub fn from_json(body: &[u8]) -> Result<Params, ProtoError> {
        let mut value: Value =
            serde_json::from_slice(body).map_err(|e| ProtoError::BadJson(e.to_string()))?;
        // The title, extra data and version are printed and kept: shown,
        // never sent to a terminal.
        untrusted::escape_strings(&mut value);
        let Value::Object(m) = value else {
            return Err(ProtoError::BadJson(
                "the parameters are not a JSON object".into(),
            ));
        };
        let mut p = Params {
            time: 0,
            len: 0,
            ..Params::default()
        };
        let tcp = flag(&m, "tcp")?;
        let udp = flag(&m, "udp")?;
        if flag(&m, "sctp")? {
            return Err(bad("sctp", "SCTP is not supported", code::NO_SCTP));
        }
        p.protocol = match (tcp, udp) {
            (_, false) => Protocol::Tcp,
            (false, true) => Protocol::Udp,
            (true, true) => return Err(bad("udp", "both tcp and udp are set", code::RECV_PARAMS)),
        };
        p.omit = ranged(&m, "omit", 0, MAX_OMIT, code::OMIT)?.unwrap_or(0) as u32;
        p.time = ranged(&m, "time", 0, MAX_TIME, code::DURATION)?.unwrap_or(0) as u32;
        p.num = ranged(&m, "num", 0, u64::MAX, code::RECV_PARAMS)?.unwrap_or(0);
        p.blockcount = ranged(&m, "blockcount", 0, u64::MAX, code::RECV_PARAMS)?.unwrap_or(0);
        p.mss = ranged(&m, "MSS", 0, 32767, code::MSS)?.map(|v| v as u32);
        p.nodelay = flag(&m, "nodelay")?;
        p.parallel =
            ranged(&m, "parallel", 1, MAX_PARALLEL as u64, code::NUM_STREAMS)?.unwrap_or(1) as u32;
        p.reverse = flag(&m, "reverse")?;
        p.bidirectional = flag(&m, "bidirectional")?;
        if p.reverse && p.bidirectional {
            return Err(bad(
                "bidirectional",
                "reverse and bidirectional exclude each other",
                code::RECV_PARAMS,
            ));
        }
        p.window = ranged(&m, "window", 0, MAX_WINDOW, code::BUF_SIZE)?.map(|v| v as u32);
        p.len = match p.protocol {
            Protocol::Tcp => ranged(&m, "len", 1, MAX_TCP_LEN as u64, code::BLOCK_SIZE)?
                .unwrap_or(DEFAULT_TCP_LEN as u64),
            Protocol::Udp => ranged(
                &m,
                "len",
                *UDP_LEN_RANGE.start() as u64,
                *UDP_LEN_RANGE.end() as u64,
                code::UDP_BLOCK_SIZE,
            )?
            .unwrap_or(1460),
        } as u32;
        p.bandwidth = ranged(&m, "bandwidth", 0, u64::MAX, code::RECV_PARAMS)?.unwrap_or(0);
        p.tos = ranged(&m, "TOS", 0, 255, code::BAD_TOS)?.map(|v| v as u32);
        p.fqrate = ranged(&m, "fqrate", 0, u64::MAX, code::RECV_PARAMS)?;
        p.zerocopy = flag(&m, "zerocopy")?;
        p.server_affinity =
            ranged(&m, "server_affinity", 0, u32::MAX as u64, code::RECV_PARAMS)?.map(|v| v as u32);
        p.udp_counters_64bit = flag(&m, "udp_counters_64bit")?;
        p.get_server_output = flag(&m, "get_server_output")?;
        p.congestion = text(&m, "congestion")?;
        if let Some(c) = p
            .congestion
            .as_deref()
            .filter(|c| !untrusted::is_congestion_name(c))
        {
            return Err(bad(
                "congestion",
                format!(
                    "\"{c}\" is no congestion control name (1 to 16 letters, digits, '_' or '-')"
                ),
                code::SET_CONGESTION,
            ));
        }
        p.extra_data = text(&m, "extra_data")?;
        p.title = text(&m, "title")?;
        p.client_version = text(&m, "client_version")?;
        // Checked by the server's Authorizer, when it asks for credentials.
        p.authtoken = text(&m, "authtoken")?;
        Ok(p)
    }
}

fn bad(key: &'static str, reason: impl Into<String>, code: i32) -> ProtoError {
    ProtoError::BadParam {
        key,
        reason: reason.into(),
        code,
    }
}

/// A flag: absent is off; `true` or a non-zero number is on; `false` or 0 is off.
fn flag(m: &Map<String, Value>, key: &'static str) -> Result<bool, ProtoError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::Number(n)) => Ok(n.as_f64().is_some_and(|v| v != 0.0)),
        Some(other) => Err(bad(
            key,
            format!("expected true, got {other}"),
            code::RECV_PARAMS,
        )),
    }
}

/// A whole number within `lo..=hi`; floats with a fraction and negatives fail.
fn ranged(
    m: &Map<String, Value>,
    key: &'static str,
    lo: u64,
    hi: u64,
    code: i32,
) -> Result<Option<u64>, ProtoError> {
    let Some(v) = m.get(key) else {
        return Ok(None);
    };
    let n = match v {
        Value::Number(n) => n,
        other => {
            return Err(bad(
                key,
                format!("expected a number, got {other}"),
                code::RECV_PARAMS,
            ))
        }
    };
    let value = if let Some(u) = n.as_u64() {
        u
    } else if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0) {
        if f > u64::MAX as f64 {
            return Err(bad(key, format!("{n} is out of range {lo}..={hi}"), code));
        }
        f as u64
    } else {
        return Err(bad(key, format!("{n} is out of range {lo}..={hi}"), code));
    };
    if value < lo || value > hi {
        return Err(bad(
            key,
            format!("{value} is out of range {lo}..={hi}"),
            code,
        ));
    }
    Ok(Some(value))
}

fn text(m: &Map<String, Value>, key: &'static str) -> Result<Option<String>, ProtoError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(bad(
            key,
            format!("expected a string, got {other}"),
            code::RECV_PARAMS,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn flags_are_emitted_only_when_set() {
        let json = String::from_utf8(Params::default().to_json()).unwrap();
        assert!(!json.contains("reverse"), "{json}");
        assert!(!json.contains("bidirectional"), "{json}");
        assert!(!json.contains("nodelay"), "{json}");
        assert!(json.contains("\"tcp\":true"), "{json}");
        let p = Params {
            reverse: true,
            ..Params::default()
        };
        let json = String::from_utf8(p.to_json()).unwrap();
        assert!(json.contains("\"reverse\":true"), "{json}");
    }

    #[test]
    fn reads_what_iperf3_3_12_sends() {
        let body = br#"{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":2,"len":1000,"bandwidth":1000000,"pacing_timer":1000,"client_version":"3.12"}"#;
        let p = Params::from_json(body).unwrap();
        assert_eq!(p.parallel, 2);
        assert_eq!(p.len, 1000);
        assert_eq!(p.time, 1);
        assert_eq!(p.bandwidth, 1_000_000);
        assert_eq!(p.protocol, Protocol::Tcp);
        assert_eq!(p.client_version.as_deref(), Some("3.12"));
    }

    #[test]
    fn out_of_range_values_carry_iperf3_codes() {
        let code_of = |s: &str| Params::from_json(s.as_bytes()).unwrap_err().iperf_code();
        assert_eq!(code_of(r#"{"tcp":true,"parallel":0}"#), code::NUM_STREAMS);
        assert_eq!(code_of(r#"{"tcp":true,"parallel":129}"#), code::NUM_STREAMS);
        assert_eq!(code_of(r#"{"tcp":true,"time":86401}"#), code::DURATION);
        assert_eq!(code_of(r#"{"tcp":true,"len":2000000}"#), code::BLOCK_SIZE);
        assert_eq!(code_of(r#"{"udp":true,"len":8}"#), code::UDP_BLOCK_SIZE);
        assert_eq!(code_of(r#"{"tcp":true,"window":1e12}"#), code::BUF_SIZE);
        assert_eq!(code_of(r#"{"tcp":true,"omit":-1}"#), code::OMIT);
        assert_eq!(code_of(r#"{"tcp":"yes"}"#), code::RECV_PARAMS);
        assert_eq!(code_of("[1,2]"), code::RECV_PARAMS);
        assert_eq!(code_of("{nope"), code::RECV_PARAMS);
    }

    #[test]
    fn peer_strings_are_escaped_and_congestion_names_checked() {
        let p = Params::from_json(
            br#"{"tcp":true,"title":"\u001b]0;owned\u0007","extra_data":"a\u009b2Jb","congestion":"cubic"}"#,
        )
        .unwrap();
        assert_eq!(p.title.as_deref(), Some("\\x1b]0;owned\\x07"));
        assert_eq!(p.extra_data.as_deref(), Some("a\\x9b2Jb"));
        assert_eq!(p.congestion.as_deref(), Some("cubic"));
        let e = Params::from_json(br#"{"tcp":true,"congestion":"\u001b[31mbbr"}"#).unwrap_err();
        assert_eq!(e.iperf_code(), code::SET_CONGESTION);
        let text = e.to_string();
        assert!(
            text.contains("\\x1b[31mbbr") && !text.contains('\x1b'),
            "{text}"
        );
    }

    proptest! {
        #[test]
        fn round_trip(parallel in 1u32..=128, time in 0u32..1000, len in 1u32..=MAX_TCP_LEN,
                      reverse in any::<bool>(), nodelay in any::<bool>(), bw in any::<u64>(),
                      window in proptest::option::of(0u32..=1 << 29),
                      authtoken in proptest::option::of("[A-Za-z0-9+/=]{0,64}")) {
            let p = Params { parallel, time, len, reverse, nodelay, bandwidth: bw, window,
                             client_version: Some("iomark".into()), authtoken,
                             ..Params::default() };
            prop_assert_eq!(Params::from_json(&p.to_json()).unwrap(), p);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = Params::from_json(&bytes);
        }

        #[test]
        fn arbitrary_json_objects_never_panic(
            entries in proptest::collection::btree_map(
                prop_oneof![
                    proptest::sample::select(vec!["tcp", "udp", "parallel", "len", "time",
                        "window", "reverse", "omit", "TOS"]).prop_map(String::from),
                    "[a-z]{1,6}",
                ],
                prop_oneof![any::<i64>().prop_map(Value::from), any::<f64>().prop_map(Value::from),
                            any::<bool>().prop_map(Value::from), "[ -~]{0,8}".prop_map(Value::from)],
                0..8)) {
            let v = Value::Object(entries.into_iter().collect());
            let _ = Params::from_json(v.to_string().as_bytes());
        }
    }
}
