use super::*;

fn bytes(s: &str) -> u64 {
    s.parse::<Bytes>()
        .unwrap_or_else(|e| panic!("{s}: {e}"))
        .get()
}

#[test]
fn every_spelling_of_a_prefix_is_1024_based_as_in_fio() {
    // fio's default (kb_base=1024): 4k, 4kb, 4kB, 4K and 4KB are all 4096.
    for s in [
        "4k", "4K", "4kb", "4kB", "4Kb", "4KB", "4ki", "4Ki", "4kib", "4KiB", "4KIB",
    ] {
        assert_eq!(bytes(s), 4096, "{s}");
    }
    for s in ["16m", "16M", "16mb", "16MB", "16Mi", "16mib", "16MiB"] {
        assert_eq!(bytes(s), 16 << 20, "{s}");
    }
    for s in ["2g", "2G", "2gb", "2GB", "2Gi", "2gib", "2GiB"] {
        assert_eq!(bytes(s), 2 << 30, "{s}");
    }
    for s in ["3t", "3T", "3tb", "3TB", "3Ti", "3tib", "3TiB"] {
        assert_eq!(bytes(s), 3 << 40, "{s}");
    }
    for s in ["1p", "1P", "1PB", "1PiB"] {
        assert_eq!(bytes(s), 1 << 50, "{s}");
    }
}

#[test]
fn the_findings_examples_match_fio() {
    // Issue 14: these were 16_000_000 and 4000 bytes.
    assert_eq!(bytes("16MB"), 16_777_216);
    assert_eq!(bytes("4KB"), 4096);
    assert_eq!(bytes("500MB"), 500 << 20);
    assert_eq!(bytes("1GB"), 1 << 30);
    assert_eq!(bytes("1kB"), 1024);
}

#[test]
fn plain_numbers_bytes_decimals_and_spaces() {
    assert_eq!(bytes("512"), 512);
    assert_eq!(bytes("512b"), 512);
    assert_eq!(bytes("512B"), 512);
    assert_eq!(bytes("0"), 0);
    assert_eq!(bytes("1000000000"), 1_000_000_000);
    assert_eq!(bytes("1.5M"), 3 << 19);
    assert_eq!(bytes("1.5MB"), 3 << 19);
    assert_eq!(bytes("1.5MiB"), 3 << 19);
    assert_eq!(bytes("0.5k"), 512);
    assert_eq!(bytes(".5G"), 1 << 29);
    assert_eq!(bytes("2.5KB"), 2560);
    assert_eq!(bytes("16 MB"), 16 << 20);
    assert_eq!(bytes("  4 KiB  "), 4096);
}

#[test]
fn bad_sizes_say_what_to_write() {
    for s in [
        "4q",
        "4kk",
        "4KiBs",
        "4bit",
        "4 kilobytes",
        "4Mbps",
        "4E",
        "1KB/s",
    ] {
        let e = s.parse::<Bytes>().unwrap_err();
        assert!(matches!(e, ParseUnitError::UnknownUnit { .. }), "{s}: {e}");
        assert!(e.to_string().contains("KiB"), "{e}");
        assert!(e.to_string().contains("1024-based"), "{e}");
    }
    assert!(matches!(
        "".parse::<Bytes>(),
        Err(ParseUnitError::Empty { .. })
    ));
    assert!(matches!(
        "   ".parse::<Bytes>(),
        Err(ParseUnitError::Empty { .. })
    ));
    for s in ["k", "KB", "MiB", "-1k", "1.2.3M", ".", ".k"] {
        assert!(
            matches!(s.parse::<Bytes>(), Err(ParseUnitError::BadNumber { .. })),
            "{s}: {:?}",
            s.parse::<Bytes>()
        );
    }
    for s in [
        "99999999999T",
        "16384P",
        "16384.0P",
        "16384.5P",
        "18446744073709551616",
        "18446744073709551616k",
    ] {
        let r = s.parse::<Bytes>();
        assert!(
            matches!(r, Err(ParseUnitError::Overflow { .. })),
            "{s}: {r:?}"
        );
    }
    assert_eq!(bytes("16383P"), 16383 << 50);
    assert_eq!(bytes("18446744073709551615"), u64::MAX);
}

#[test]
fn durations_default_to_seconds() {
    assert_eq!("10".parse::<Nanos>().unwrap(), Nanos::from_secs(10));
    assert_eq!("10s".parse::<Nanos>().unwrap(), Nanos::from_secs(10));
    assert_eq!("500ms".parse::<Nanos>().unwrap(), Nanos(500_000_000));
    assert_eq!("2m".parse::<Nanos>().unwrap(), Nanos::from_secs(120));
    assert_eq!("1.5s".parse::<Nanos>().unwrap(), Nanos(1_500_000_000));
    assert!("10x".parse::<Nanos>().is_err());
}

#[test]
fn sizes_print_in_iec_units() {
    assert_eq!(Bytes(512).to_string(), "512 B");
    assert_eq!(Bytes(4096).to_string(), "4 KiB");
    assert_eq!(Bytes(16 << 20).to_string(), "16 MiB");
    assert_eq!(Bytes(1 << 40).to_string(), "1 TiB");
    assert_eq!(Bytes(1 << 30).to_string(), "1 GiB");
    assert_eq!(Bytes(3 << 19).to_string(), "1.50 MiB");
    assert_eq!(Bytes(1 << 20).short_label(), "1M");
    assert_eq!(Bytes(4096).short_label(), "4K");
    assert_eq!(Bytes(128 << 10).short_label(), "128K");
    assert_eq!(Bytes(1000).short_label(), "1000B");
}

#[test]
fn printed_sizes_read_back_to_the_same_count() {
    for b in [512, 4096, 128 << 10, 16 << 20, 3 << 19, 1 << 30, 5 << 40] {
        let printed = Bytes(b).to_string();
        assert_eq!(bytes(&printed), b, "{printed}");
        let label = Bytes(b).short_label();
        assert_eq!(bytes(&label), b, "{label}");
    }
}

#[test]
fn rates_keep_si_and_iec_apart() {
    let r = BytesPerSec::over(Bytes(31_457_280), Nanos::from_secs(1));
    assert!((r.mib_per_sec() - 30.0).abs() < 1e-9);
    assert!((r.mb_per_sec() - 31.45728).abs() < 1e-9);
    assert_eq!(BytesPerSec::over(Bytes(1), Nanos(0)).0, 0.0);
}

#[test]
fn durations_print_in_a_readable_unit() {
    assert_eq!(Nanos(812).to_string(), "812 ns");
    assert_eq!(Nanos(123_400).to_string(), "123.4 µs");
    assert_eq!(Nanos(7_830_000).to_string(), "7.83 ms");
    assert_eq!(Nanos::from_secs(10).to_string(), "10 s");
}
