use super::*;

#[test]
fn latency_percentiles_are_nearest_rank() {
    let rtts: Vec<Nanos> = (1..=100).rev().map(|ms| Nanos(ms * 1_000_000)).collect();
    let idle = [Nanos(3), Nanos(1), Nanos(2)];
    let l = NetLatency::from_samples(rtts, &idle, &[]).unwrap();
    assert_eq!(l.rtt_p50, Some(Nanos(50_000_000)));
    assert_eq!(l.rtt_p90, Some(Nanos(90_000_000)));
    assert_eq!(l.rtt_p99, Some(Nanos(99_000_000)));
    assert_eq!(l.rtt_max, Some(Nanos(100_000_000)));
    assert_eq!((l.idle, l.loaded), (Some(Nanos(2)), None));
    assert_eq!((l.idle_probes, l.loaded_probes, l.rtt_samples), (3, 0, 100));
    assert_eq!(NetLatency::from_samples(vec![], &[], &[]), None);
}

#[test]
fn goodput_sums_streams_of_one_direction() {
    let stream = |id, direction, received| NetStreamResult {
        id,
        direction,
        sent: Bytes(received),
        received: Bytes(received),
        sender_time: Nanos::from_secs(2),
        receiver_time: Nanos::from_secs(2),
        retransmits: None,
        packets: None,
        lost_packets: None,
        jitter: None,
    };
    let run = NetRun {
        streams: vec![
            stream(1, NetDirection::Upload, 1000),
            stream(3, NetDirection::Upload, 3000),
        ],
        ..NetRun::example(NetSpec {
            host: "h".into(),
            parallel: 2,
            duration: Nanos::from_secs(2),
            ..NetSpec::example()
        })
    };
    assert_eq!(run.goodput(NetDirection::Upload).unwrap().0, 2000.0);
    assert!(run.goodput(NetDirection::Download).is_none());
    let json = serde_json::to_string(&run).unwrap();
    let back: NetRun = serde_json::from_str(&json).unwrap();
    assert_eq!(back, run);
}

#[test]
fn both_ends_cpu_are_figures_and_a_silent_peer_has_none() {
    let mut run: NetRun = serde_json::from_str(OLD_RUN).expect("a run without CPU fields reads");
    assert_eq!((run.host_cpu_local, run.nic_local.clone()), (None, None));
    let metrics = |run: &NetRun| -> Vec<String> {
        crate::figure::net_figures(run)
            .into_iter()
            .map(|f| f.metric)
            .filter(|m| m.contains("cpu"))
            .collect()
    };
    // Unknown (a text log without its CPU line): no figure, not 0%.
    run.cpu_local = None;
    assert!(metrics(&run).iter().all(|m| !m.starts_with("cpu process")));
    run.cpu_local = Some(CpuUtilization {
        total_percent: 80.0,
        user_percent: 6.0,
        system_percent: 74.0,
    });
    assert_eq!(
        metrics(&run),
        [
            "cpu process %",
            "cpu process user %",
            "cpu process system %"
        ]
    );
    run.cpu_remote = run.cpu_local;
    run.host_cpu_remote = Some(HostCpu {
        cpus: 2,
        idle_pct: 1.35,
        system_pct: 74.0,
        ..HostCpu::default()
    });
    let m = metrics(&run);
    assert!(m.contains(&"peer cpu process %".to_string()), "{m:?}");
    let idle = crate::figure::net_figures(&run)
        .into_iter()
        .find(|f| f.metric == "peer cpu host idle %")
        .unwrap();
    assert_eq!(idle.value, 1.35);
}

const OLD_RUN: &str = r#"{"spec": {"host": "h", "port": 5201, "protocol": "tcp",
    "parallel": 1, "duration": 1000000000, "omit": 0, "interval": 0,
    "reverse": false, "bidirectional": false, "block_len": 131072,
    "window": null, "target_bits_per_sec": 0, "no_delay": false},
    "peer_version": null, "interface": null,
    "streams": [{"id": 1, "direction": "upload", "sent": 100, "received": 100,
        "sender_time": 1000000000, "receiver_time": 1000000000, "retransmits": 0,
        "packets": null, "lost_packets": null, "jitter": null}],
    "intervals": [],
    "cpu_local": {"total_percent": 0, "user_percent": 0, "system_percent": 0},
    "cpu_remote": {"total_percent": 0, "user_percent": 0, "system_percent": 0}}"#;

#[test]
fn slowest_link_is_the_bus_when_it_caps_the_ethernet_link() {
    let usb2 = LinkCeiling {
        name: "USB 2.0".into(),
        hard: BytesPerSec(53.248e6),
        typical: Some(BytesPerSec(40e6)),
    };
    let mut nic = NicChain {
        name: "enx0".into(),
        driver: Some("r8152".into()),
        driver_version: None,
        firmware_version: None,
        speed_mbit: Some(2500),
        duplex: Some("full".into()),
        operstate: Some("up".into()),
        virtual_kind: None,
        hops: vec![],
        usb: None,
        pcie: vec![],
        bus_ceilings: vec![usb2],
    };
    assert_eq!(nic.link_ceiling().unwrap().name, "Ethernet 2.5 Gb/s");
    assert_eq!(nic.slowest().unwrap().name, "USB 2.0");
    nic.bus_ceilings.clear();
    assert_eq!(nic.slowest().unwrap().hard.0, 312.5e6);
    nic.virtual_kind = Some("veth".into());
    assert_eq!(nic.slowest(), None, "a virtual link has no ceiling");
    assert_eq!(mbit_label(1000), "1 Gb/s");
    assert_eq!(mbit_label(100), "100 Mb/s");
}
