use super::*;

#[test]
fn rates_are_1000_based() {
    assert_eq!(parse_bitrate("1G").unwrap(), 1_000_000_000);
    assert_eq!(parse_bitrate("2.5k").unwrap(), 2500);
    assert_eq!(parse_bitrate("100").unwrap(), 100);
    assert!(parse_bitrate("1M/10").is_err());
}
