use super::*;

/// A second of `ms` ms ending `at` ms into its test, of `ios` I/Os of
/// 64 KiB whose latencies are `lat_ns`, each counted in `bucket`.
fn share(job: u32, index: u32, ios: u64, lat: (u64, u16), at: u64, ms: u64) -> Share {
    let (lat_ns, bucket) = lat;
    let counts: LatencyCounts = serde_json::from_value(serde_json::json!({
        "sum_ns": ios * lat_ns,
        "buckets": if ios == 0 { vec![] } else { vec![(bucket, ios)] },
    }))
    .unwrap();
    Share {
        job,
        index,
        sample: LiveSample {
            left_at_most: false,
            step: job,
            steps: 2,
            label: format!("test {job}"),
            at_ms: 1_000_000 + at,
            offset_ms: at,
            duration_ms: ms,
            bytes: ios * 65536,
            ios,
            latency: counts.latency(ios),
            left_ms: Some(5000 - at),
            flops: None,
        },
        counts,
    }
}

// Buckets of a 100 µs and of a 5 ms latency (eight per power of two
// above 16 ns: 2^16 <= 100_000 < 2^17, 2^22 <= 5_000_000 < 2^23).
const FAST: (u64, u16) = (100_000, 16 + 12 * 8 + 4);
const SLOW: (u64, u16) = (5_000_000, 16 + 18 * 8 + 1);

#[test]
fn a_second_is_stored_once_every_rank_sent_its_share_and_sums_them() {
    let mut j = Joined::new(3);
    j.add(0, share(1, 0, 100, FAST, 1000, 1000));
    j.add(2, share(1, 0, 300, SLOW, 1003, 1003));
    assert!(j.take().is_empty(), "rank 1's share has not come");
    j.add(1, share(1, 0, 100, FAST, 998, 998));
    let whole = j.take();
    assert_eq!(whole.len(), 1);
    let s = &whole[0];
    assert_eq!((s.bytes, s.ios), (500 * 65536, 500));
    // The widest window: the latest end, the longest length.
    assert_eq!((s.offset_ms, s.duration_ms), (1003, 1003));
    assert_eq!(s.at_ms, 1_001_003);
    assert_eq!((s.step, s.label.as_str()), (1, "test 1"));
    let lat = s.latency.unwrap();
    // The mean weighted by I/Os, exact; the median from the merged
    // histogram: 300 of 500 I/Os are slow, so the slow one's bucket.
    assert_eq!(lat.mean_ns, (200 * 100_000 + 300 * 5_000_000) / 500);
    assert!(lat.p50_ns.abs_diff(5_000_000) <= 5_000_000 / 16, "{lat:?}");
    assert!(lat.p99_ns.abs_diff(5_000_000) <= 5_000_000 / 16, "{lat:?}");
    assert_eq!(lat.max_ns, lat.p99_ns);
    // Averaging the ranks' medians would have said about 1.7 ms.
    let mut fast_only = Joined::new(1);
    fast_only.add(0, share(1, 0, 100, FAST, 1000, 1000));
    let fast = fast_only.take()[0].latency.unwrap();
    assert!(fast.p50_ns.abs_diff(100_000) <= 100_000 / 16, "{fast:?}");
}

#[test]
fn seconds_are_stored_in_order_and_the_rest_at_the_end_with_what_came() {
    let mut j = Joined::new(2);
    // Rank 1 is ahead: its second 1 waits for rank 0's second 0.
    j.add(1, share(1, 0, 10, FAST, 1000, 1000));
    j.add(1, share(1, 1, 10, FAST, 2000, 1000));
    assert!(j.take().is_empty());
    j.add(0, share(1, 1, 10, FAST, 2000, 1000));
    assert!(j.take().is_empty(), "second 0 is not whole yet");
    j.add(0, share(1, 0, 10, FAST, 1000, 1000));
    let order: Vec<u64> = j.take().iter().map(|s| s.offset_ms).collect();
    assert_eq!(order, [1000, 2000]);
    // The next test: rank 1 stopped early (or died) after one second.
    j.add(0, share(2, 0, 10, SLOW, 1000, 1000));
    j.add(1, share(2, 0, 30, SLOW, 1000, 1000));
    j.add(0, share(2, 1, 10, SLOW, 2000, 1000));
    j.add(0, share(2, 2, 0, SLOW, 2100, 100));
    let first = j.take();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].ios, 40);
    j.flush();
    let rest = j.take();
    let ios: Vec<u64> = rest.iter().map(|s| s.ios).collect();
    assert_eq!(ios, [10, 0]);
    assert_eq!(rest[1].latency, None, "a second without I/O has no latency");
    assert!(j.take().is_empty());
    // A share that comes after its second was stored (a stop ended the
    // wait for it) is left out, not stored as that second again; one of a
    // second not stored yet is.
    j.add(1, share(2, 1, 30, SLOW, 2000, 1000));
    j.add(1, share(2, 3, 30, SLOW, 3000, 1000));
    j.flush();
    let late: Vec<u32> = j.take().iter().map(|s| s.offset_ms as u32).collect();
    assert_eq!(late, [3000]);
}

#[test]
fn a_share_travels_as_json_and_nothing_sums_to_nothing() {
    let s = share(1, 3, 7, SLOW, 4000, 1000);
    let back: Share = serde_json::from_slice(&serde_json::to_vec(&s).unwrap()).unwrap();
    assert_eq!(back, s);
    assert_eq!(sum([]), None);
    assert_eq!(sum([&s]), Some(s.sample.clone()));
}
