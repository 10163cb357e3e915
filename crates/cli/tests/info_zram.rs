//! `iomark info /dev/zram0`: a RAM-backed, compressing, bio-based device
//! whose ceiling is unknown. Needs the zram module loaded (`require!`).

use crate::common::*;

#[test]
fn info_on_zram0() {
    require!(
        std::path::Path::new("/dev/zram0").exists(),
        "/dev/zram0 is absent (modprobe zram)"
    );
    // Not while another area's test resets it.
    let _zram = exclusive(Shared::Zram0);
    let v = json_of(&iomark(&["info", "/dev/zram0", "--json"]));
    let d = &v["device"]["device"];
    assert_eq!(d["name"], "zram0");
    assert_eq!(d["transport"], "zram");
    // zram is bio-based: no scheduler, no request pool.
    assert!(d["queue"]["scheduler"].is_null());
    assert!(d["queue"]["nr_requests"].is_null());
    let lbs: u64 = std::fs::read_to_string("/sys/block/zram0/queue/logical_block_size")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(d["queue"]["logical_block_size"], lbs);
    assert!(v["device"]["slowest"].is_null(), "RAM has no link ceiling");
    assert!(d["note"].as_str().unwrap().contains("RAM (compressed)"));
}
