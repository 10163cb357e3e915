//! `-S` and `--dscp`: the TOS byte as iperf3 reads it.

use crate::NetError;

fn invalid<T>(msg: String) -> Result<T, NetError> {
    Err(NetError::Invalid(msg))
}

/// `-S`: 0 to 255 in decimal, `0x` hex or leading-`0` octal, as iperf3's
/// `strtol(..., 0)` reads it.
pub(super) fn parse_tos(s: &str) -> Result<u32, NetError> {
    let t = s.trim();
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u32::from_str_radix(h, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        u32::from_str_radix(&t[1..], 8)
    } else {
        t.parse()
    };
    match v {
        Ok(v) if v <= 255 => Ok(v),
        _ => invalid(format!(
            "-S {s}: give a TOS byte from 0 to 255 (decimal, 0x hex or 0 octal), e.g. 0x10"
        )),
    }
}

/// `--dscp`: 0 to 63, or a name of RFC 2474/2597/3246/5865.
pub(super) fn parse_dscp(s: &str) -> Result<u32, NetError> {
    let named = match s.to_ascii_lowercase().as_str() {
        "cs0" | "df" | "be" => Some(0),
        "cs1" => Some(8),
        "cs2" => Some(16),
        "cs3" => Some(24),
        "cs4" => Some(32),
        "cs5" => Some(40),
        "cs6" => Some(48),
        "cs7" => Some(56),
        "af11" => Some(10),
        "af12" => Some(12),
        "af13" => Some(14),
        "af21" => Some(18),
        "af22" => Some(20),
        "af23" => Some(22),
        "af31" => Some(26),
        "af32" => Some(28),
        "af33" => Some(30),
        "af41" => Some(34),
        "af42" => Some(36),
        "af43" => Some(38),
        "va" | "voice-admit" => Some(44),
        "ef" => Some(46),
        "le" => Some(1),
        _ => None,
    };
    match named.or_else(|| parse_tos(s).ok().filter(|&v| v <= 63)) {
        Some(v) => Ok(v),
        None => invalid(format!(
            "--dscp {s}: give 0 to 63 or a name such as ef, af41 or cs1"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tos_and_dscp_read_as_iperf3_reads_them() {
        assert_eq!(parse_tos("0x10").unwrap(), 16);
        assert_eq!(parse_tos("020").unwrap(), 16);
        assert_eq!(parse_tos("16").unwrap(), 16);
        assert!(parse_tos("256").is_err());
        assert_eq!(parse_dscp("ef").unwrap(), 46);
        assert_eq!(parse_dscp("AF41").unwrap(), 34);
        assert_eq!(parse_dscp("10").unwrap(), 10);
        assert!(parse_dscp("64").is_err());
    }
}
