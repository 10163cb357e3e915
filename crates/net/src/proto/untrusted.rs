//! What the peer sends is checked on receipt, before anything reads it:
//! every string is escaped and every number of the results message is
//! range-checked, so nothing later (text, `-J`, warnings, the results
//! store) has to remember to.
//!
//! - **Strings** go through [`iomark_model::escape::escape_controls`], the one
//!   escaping path of the project: an `ESC ]0;...` in a peer's title,
//!   extra data, interface name or cookie is kept as the text `\x1b]0;...`
//!   and never reaches a terminal as a control sequence.
//! - **Congestion control names** must look like one: 1 to 16 letters,
//!   digits, `_` or `-` (the kernel's names are at most 15 characters).
//! - **Numbers** of the results message must be ones a test can have; a
//!   message with one that is not is refused whole, naming the field, as
//!   the importer refuses a file: a peer that reports 10^308 % CPU or −5
//!   bytes is broken or hostile, and its other figures cannot be trusted
//!   either.

use serde_json::{Map, Value};

use super::ProtoError;

/// The most CPUs a Linux kernel runs (`CONFIG_NR_CPUS` at most 8192).
pub const MAX_CPUS: u64 = 8192;

/// The largest process CPU figure accepted, percent of one CPU: every CPU
/// of the largest machine busy. The peer's own count is not known (iperf3
/// does not send it), and a tighter bound would refuse a real, busy peer.
pub const MAX_CPU_PERCENT: f64 = 100.0 * MAX_CPUS as f64;

/// The largest byte or datagram count accepted per stream: 2^55 (36 PB,
/// more than 1 Tbit/s moves in a day), so that the sums over a test's 256
/// streams stay below 2^63 and fit every count they are added into.
pub const MAX_COUNT: u64 = 1 << 55;

/// The longest time accepted, seconds (about 31 years): finite, and still
/// a count of nanoseconds that fits 64 bits.
pub const MAX_SECONDS: f64 = 1e9;

/// The most streams a results message may list: `--bidir` with 128 each way
/// (twice `params::MAX_PARALLEL`, which params checks at compile time).
pub const MAX_STREAMS: usize = 256;

/// The longest reason a peer may give for a check it could not make.
const MAX_REASON: usize = 512;

/// The largest number accepted anywhere in the peer's interface
/// description (link speeds, lane counts): exact in a double.
const MAX_INTERFACE_NUMBER: f64 = (1u64 << 53) as f64;

/// Escape every string in `v`, at any depth, in place.
pub(crate) fn escape_strings(v: &mut Value) {
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(e) = iomark_model::escape::escape_controls(s) {
                *s = e;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(escape_strings),
        Value::Object(m) => m.values_mut().for_each(escape_strings),
        _ => {}
    }
}

/// Whether `s` can be a TCP congestion control name.
pub fn is_congestion_name(s: &str) -> bool {
    (1..=16).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A refusal of the results message naming `field`.
fn refuse(field: impl Into<String>, problem: impl Into<String>) -> ProtoError {
    ProtoError::BadResults {
        field: field.into(),
        problem: problem.into(),
    }
}

/// Check the numbers and the congestion name of a results message (its
/// strings already escaped). Absent and null fields pass: the typed reading
/// after this says which are required.
pub(crate) fn check_results(m: &Map<String, Value>) -> Result<(), ProtoError> {
    for key in ["cpu_util_total", "cpu_util_user", "cpu_util_system"] {
        ranged(m, key, key, 0.0, MAX_CPU_PERCENT)?;
    }
    signed(m, "sender_has_retransmits", "sender_has_retransmits", 1)?;
    if let Some(Value::String(c)) = m.get("congestion_used") {
        if !c.is_empty() && !is_congestion_name(c) {
            return Err(refuse(
                "congestion_used",
                format!(
                    "is not a congestion control name (\"{c}\"): expected 1 to 16 letters, \
                     digits, '_' or '-'"
                ),
            ));
        }
    }
    if let Some(Value::Array(streams)) = m.get("streams") {
        if streams.len() > MAX_STREAMS {
            return Err(refuse(
                "streams",
                format!(
                    "lists {} streams, more than a test has ({MAX_STREAMS})",
                    streams.len()
                ),
            ));
        }
        for (i, s) in streams.iter().enumerate() {
            let Value::Object(s) = s else { continue };
            let at = |key: &str| format!("streams[{i}].{key}");
            ranged(s, "id", &at("id"), 0.0, i32::MAX as f64)?;
            for key in [
                "bytes",
                "packets",
                "errors",
                "omitted_packets",
                "omitted_errors",
            ] {
                ranged(s, key, &at(key), 0.0, MAX_COUNT as f64)?;
            }
            signed(s, "retransmits", &at("retransmits"), MAX_COUNT)?;
            for key in ["jitter", "start_time", "end_time"] {
                ranged(s, key, &at(key), 0.0, MAX_SECONDS)?;
            }
        }
    }
    if let Some(Value::Object(h)) = m.get("iomark_host_cpu") {
        let at = |key: &str| format!("iomark_host_cpu.{key}");
        ranged(h, "cpus", &at("cpus"), 1.0, MAX_CPUS as f64)?;
        for key in [
            "user_pct",
            "system_pct",
            "iowait_pct",
            "softirq_pct",
            "steal_pct",
            "idle_pct",
        ] {
            // Shares of all CPUs' time.
            ranged(h, key, &at(key), 0.0, 100.0)?;
        }
    }
    if let Some(Value::Object(t)) = m.get("iomark_cpu_throttle") {
        let at = |key: &str| format!("iomark_cpu_throttle.{key}");
        for key in ["periods", "throttled"] {
            ranged(t, key, &at(key), 0.0, MAX_COUNT as f64)?;
        }
        ranged(
            t,
            "throttled_time",
            &at("throttled_time"),
            0.0,
            MAX_SECONDS * 1e9,
        )?;
    }
    if let Some(Value::String(why)) = m.get("iomark_cpu_quota_unchecked") {
        // A reason in a sentence; a peer's is shown in a warning.
        if why.len() > MAX_REASON {
            return Err(refuse(
                "iomark_cpu_quota_unchecked",
                format!("is longer than {MAX_REASON} bytes"),
            ));
        }
    }
    if let Some(nic) = m.get("iomark_interface") {
        every_number(nic, "iomark_interface", 0.0, MAX_INTERFACE_NUMBER)?;
    }
    if let Some(cpu) = m.get("iomark_cpu_intervals") {
        every_number(cpu, "iomark_cpu_intervals", 0.0, MAX_CPU_PERCENT)?;
    }
    Ok(())
}

/// `m[key]`, when it is a number, within `lo..=hi`.
fn ranged(
    m: &Map<String, Value>,
    key: &str,
    field: &str,
    lo: f64,
    hi: f64,
) -> Result<(), ProtoError> {
    let Some(Value::Number(n)) = m.get(key) else {
        return Ok(());
    };
    within(n, field, lo, hi)
}

/// `n` (named `field`) within `lo..=hi`.
fn within(n: &serde_json::Number, field: &str, lo: f64, hi: f64) -> Result<(), ProtoError> {
    // A u64 above 2^53 reads as the nearest double, which is enough to
    // compare with bounds far below or far above it.
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.is_nan() {
        Err(refuse(field, format!("is not a number ({n})")))
    } else if f < lo {
        let what = if lo == 0.0 {
            "is negative"
        } else {
            "is too small"
        };
        Err(refuse(field, format!("{what} ({n} < {lo})")))
    } else if f > hi {
        Err(refuse(field, format!("is out of range ({n} > {hi})")))
    } else {
        Ok(())
    }
}

/// `m[key]`, when it is a number, −1 ("none") or within `0..=hi`. iperf3
/// 3.12 and 3.13 print −1 as 2^64 − 1 (and anything from 2^63 up is read
/// as −1 the same way).
fn signed(m: &Map<String, Value>, key: &str, field: &str, hi: u64) -> Result<(), ProtoError> {
    let Some(Value::Number(n)) = m.get(key) else {
        return Ok(());
    };
    if n.as_u64().is_some_and(|u| u >= 1 << 63) || n.as_f64() == Some(-1.0) {
        return Ok(());
    }
    within(n, field, 0.0, hi as f64).map_err(|_| {
        refuse(
            field,
            format!("is out of range ({n}: expected -1 or 0 to {hi})"),
        )
    })
}

/// Every number in `v`, at any depth, within `lo..=hi`.
fn every_number(v: &Value, field: &str, lo: f64, hi: f64) -> Result<(), ProtoError> {
    match v {
        Value::Number(n) => within(n, field, lo, hi),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| every_number(x, &format!("{field}[{i}]"), lo, hi)),
        Value::Object(o) => o
            .iter()
            .try_for_each(|(k, x)| every_number(x, &format!("{field}.{k}"), lo, hi)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(v: Value) -> Result<(), String> {
        let Value::Object(m) = v else {
            panic!("an object")
        };
        check_results(&m).map_err(|e| e.to_string())
    }

    #[test]
    fn strings_are_escaped_at_any_depth() {
        let mut v = json!({"a": "x\u{1b}]0;t\u{7}", "b": [{"c": "\u{9b}2J"}], "n": 1});
        escape_strings(&mut v);
        assert_eq!(v["a"], "x\\x1b]0;t\\x07");
        assert_eq!(v["b"][0]["c"], "\\x9b2J");
        assert_eq!(v["n"], 1);
    }

    #[test]
    fn congestion_names_are_short_tokens() {
        for ok in [
            "cubic",
            "bbr",
            "bbr2",
            "new_reno",
            "h-tcp",
            "abcdefghijklmnop",
        ] {
            assert!(is_congestion_name(ok), "{ok}");
        }
        for bad in [
            "",
            "cu bic",
            "\u{1b}[31m",
            "abcdefghijklmnopq",
            "c\\x1b",
            "cübic",
        ] {
            assert!(!is_congestion_name(bad), "{bad}");
        }
    }

    #[test]
    fn real_peers_pass() {
        // iperf3 3.12's -1 as 2^64 - 1, a busy 8-stream client, an iomark peer.
        check(
            json!({"cpu_util_total": 790.5, "cpu_util_user": 0, "cpu_util_system": 790.5,
            "sender_has_retransmits": 18446744073709551615u64, "congestion_used": "cubic",
            "streams": [{"id": 1, "bytes": 125000, "retransmits": 18446744073709551615u64,
                "jitter": 0.0001, "errors": 0, "packets": 0, "end_time": 10.0001}],
            "iomark_host_cpu": {"cpus": 16, "user_pct": 1.5, "system_pct": 30.0,
                "iowait_pct": 0, "softirq_pct": 12.5, "steal_pct": 0, "idle_pct": 56.0},
            "iomark_interface": {"name": "eth0", "speed_mbit": 2500, "pcie": [{"width": 4}]}}),
        )
        .unwrap();
        check(json!({"sender_has_retransmits": -1, "streams": [{"retransmits": -1}]})).unwrap();
    }

    #[test]
    fn impossible_numbers_are_refused_naming_the_field() {
        let cases = [
            (
                json!({"cpu_util_total": 1e308}),
                "cpu_util_total is out of range (1e+308 > 819200)",
            ),
            (
                json!({"cpu_util_user": -0.5}),
                "cpu_util_user is negative (-0.5 < 0)",
            ),
            (
                json!({"streams": [{"bytes": 1}, {"bytes": -5}]}),
                "streams[1].bytes is negative (-5 < 0)",
            ),
            (
                json!({"streams": [{"packets": 1u64 << 60}]}),
                "streams[0].packets is out of range",
            ),
            (
                json!({"streams": [{"retransmits": -2}]}),
                "streams[0].retransmits is out of range (-2: expected -1",
            ),
            (
                json!({"streams": [{"end_time": 1e300}]}),
                "streams[0].end_time is out of range",
            ),
            (
                json!({"sender_has_retransmits": 7}),
                "sender_has_retransmits is out of range (7",
            ),
            (
                json!({"iomark_host_cpu": {"cpus": 0}}),
                "iomark_host_cpu.cpus is too small (0 < 1)",
            ),
            (
                json!({"iomark_cpu_intervals": [12.5, 1e12]}),
                "iomark_cpu_intervals[1] is out of range",
            ),
            (
                json!({"iomark_host_cpu": {"idle_pct": 250.0}}),
                "iomark_host_cpu.idle_pct is out of range",
            ),
            (
                json!({"iomark_interface": {"pcie": [{"speed_gts": -1.0}]}}),
                "iomark_interface.pcie[0].speed_gts is negative",
            ),
            (
                json!({"congestion_used": "\\x1b[31mcubic"}),
                "congestion_used is not a congestion control name",
            ),
        ];
        for (v, want) in cases {
            let got = check(v.clone()).expect_err(&v.to_string());
            assert!(got.contains(want), "{v}: {got}");
            assert!(got.starts_with("the peer's results are refused: "), "{got}");
        }
        let many: Vec<Value> = (0..=MAX_STREAMS).map(|i| json!({"id": i})).collect();
        assert!(check(json!({ "streams": many }))
            .unwrap_err()
            .contains("streams lists 257"));
    }
}
