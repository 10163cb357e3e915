//! Memory specs: word counts and the JSON round trip.

use super::*;

#[test]
fn stream_counts_two_or_three_words() {
    let words: Vec<u64> = StreamOp::ALL.iter().map(|o| o.words()).collect();
    assert_eq!(words, [2, 2, 3, 3]);
}

#[test]
fn specs_round_trip_through_json() {
    let spec = MemJobSpec {
        kernel: MemKernelSpec::Himeno(HimenoSpec {
            grid: HimenoGrid {
                name: Some("s".into()),
                i: 64,
                j: 64,
                k: 128,
            },
            length: HimenoLength::Target(Nanos::from_secs(60)),
        }),
        threads: 2,
        backing: Backing::Mmap {
            path: "/tmp/x".into(),
            warm: true,
        },
        advice: Advice::Sequential,
        mem_limit: Some(Bytes(256 << 20)),
    };
    let json = serde_json::to_string(&spec).unwrap();
    assert_eq!(serde_json::from_str::<MemJobSpec>(&json).unwrap(), spec);
}
