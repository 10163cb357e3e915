use super::*;

#[test]
fn http_date_matches_a_known_day() {
    assert_eq!(http_date(1_795_294_652), "Sat, 21 Nov 2026 20:57:32 GMT");
}
