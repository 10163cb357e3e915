//! Link ceilings, and the check of one figure against one ceiling (the
//! table is a leaf: the check against a whole chain lives in `chain`).
//!
//! Hard ceilings are payload rates after line coding (the USB 2.0 figure is
//! the bulk transaction limit, 13 × 512 B per 125 µs microframe); typical
//! ceilings are the top of what real sequential transfers reach. Sources and
//! arithmetic: `docs/devices.md` and the devices-and-limits reference, §3.

use iomark_model::device::LinkCeiling;
use iomark_model::{BytesPerSec, Warning, WarningKind};

/// A figure above `typical × SUSPICIOUS_FACTOR` (but below `hard`) is
/// flagged as suspicious rather than impossible.
pub const SUSPICIOUS_FACTOR: f64 = 1.1;

fn mbs(v: f64) -> BytesPerSec {
    BytesPerSec(v * 1e6)
}

fn ceiling(name: impl Into<String>, hard_mbs: f64, typical_mbs: Option<f64>) -> LinkCeiling {
    LinkCeiling {
        name: name.into(),
        hard: mbs(hard_mbs),
        typical: typical_mbs.map(mbs),
    }
}

/// The ceiling of a USB link from sysfs `speed` (Mb/s), the lane count and
/// the bound interface driver (`uas` or `usb-storage`); none for low speed
/// (no bulk endpoints) and unknown speeds.
pub fn usb_ceiling(
    speed_mbps: f64,
    lanes: Option<u32>,
    driver: Option<&str>,
) -> Option<LinkCeiling> {
    let uas = driver == Some("uas");
    let two_lanes = lanes == Some(2);
    let c = match speed_mbps as u64 {
        12 => ceiling("USB 1.1", 1.216, Some(1.1)),
        480 => ceiling("USB 2.0", 53.248, Some(40.0)),
        5000 => ceiling(
            "USB 3.2 Gen 1 (5 Gb/s)",
            500.0,
            Some(if uas { 450.0 } else { 400.0 }),
        ),
        10000 if two_lanes => ceiling("USB 3.2 Gen 1x2 (10 Gb/s)", 1000.0, None),
        10000 => ceiling(
            "USB 3.2 Gen 2 (10 Gb/s)",
            10_000.0 * 128.0 / 132.0 / 8.0,
            Some(1050.0),
        ),
        20000 => ceiling(
            "USB 3.2 Gen 2x2 (20 Gb/s)",
            20_000.0 * 128.0 / 132.0 / 8.0,
            Some(2000.0),
        ),
        _ => return None,
    };
    Some(c)
}

/// The ceiling of a SATA link from `sata_spd` in Gb/s (1.5, 3.0, 6.0).
pub fn sata_ceiling(speed_gbps: f64) -> Option<LinkCeiling> {
    let c = match (speed_gbps * 10.0).round() as u64 {
        15 => ceiling("SATA I (1.5 Gb/s)", 150.0, Some(140.0)),
        30 => ceiling("SATA II (3 Gb/s)", 300.0, Some(285.0)),
        60 => ceiling("SATA III (6 Gb/s)", 600.0, Some(560.0)),
        _ => return None,
    };
    Some(c)
}

/// The ceiling of a PCIe link from `current_link_speed` (GT/s per lane) and
/// `current_link_width`, per direction.
pub fn pcie_ceiling(speed_gts: f64, width: u32) -> Option<LinkCeiling> {
    if width == 0 {
        return None;
    }
    // (generation, payload MB/s per lane, typical NVMe x4 read per lane)
    let (generation, lane, typical_lane) = match (speed_gts * 10.0).round() as u64 {
        25 => ("1.0", 250.0, None),
        50 => ("2.0", 500.0, None),
        80 => ("3.0", 8000.0 * 128.0 / 130.0 / 8.0, Some(3500.0 / 4.0)),
        160 => ("4.0", 16000.0 * 128.0 / 130.0 / 8.0, Some(7400.0 / 4.0)),
        320 => ("5.0", 32000.0 * 128.0 / 130.0 / 8.0, Some(14500.0 / 4.0)),
        640 => ("6.0", 7500.0, None),
        _ => return None,
    };
    let w = f64::from(width);
    Some(ceiling(
        format!("PCIe {generation} x{width}"),
        lane * w,
        typical_lane.map(|t: f64| t * w),
    ))
}

fn show(rate: BytesPerSec) -> String {
    let v = rate.mb_per_sec();
    if v >= 10.0 {
        format!("{v:.0} MB/s")
    } else {
        format!("{v:.1} MB/s")
    }
}

/// Compares a measured throughput with one ceiling: above `hard` is an
/// artefact, above `typical × SUSPICIOUS_FACTOR` is suspicious. `what` names
/// the figure (`read`, `seq1m write`).
pub fn check_against(ceiling: &LinkCeiling, measured: BytesPerSec, what: &str) -> Option<Warning> {
    let name = &ceiling.name;
    if measured.0 > ceiling.hard.0 {
        let about = ceiling.typical.unwrap_or(ceiling.hard);
        return Some(Warning::new(
            WarningKind::AboveLinkCeiling,
            format!(
                "{what} {} is above the {name} ceiling of about {}: the page cache or compression is being measured",
                show(measured),
                show(about)
            ),
        ));
    }
    let typical = ceiling.typical?;
    (measured.0 > typical.0 * SUSPICIOUS_FACTOR).then(|| {
        Warning::new(
            WarningKind::AboveLinkCeiling,
            format!(
                "{what} {} is above what {name} usually delivers (about {}, at most {}): check for the page cache, compression or a drive cache",
                show(measured),
                show(typical),
                show(ceiling.hard)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usb2_matches_the_bulk_transaction_limit() {
        let c = usb_ceiling(480.0, None, Some("usb-storage")).unwrap();
        assert_eq!(c.name, "USB 2.0");
        assert!((c.hard.mb_per_sec() - 53.248).abs() < 1e-9);
        assert_eq!(c.typical.unwrap().mb_per_sec(), 40.0);
    }

    #[test]
    fn usb_gen1x2_is_told_apart_from_gen2_by_lanes() {
        assert_eq!(
            usb_ceiling(10000.0, Some(2), None)
                .unwrap()
                .hard
                .mb_per_sec(),
            1000.0
        );
        let g2 = usb_ceiling(10000.0, Some(1), Some("uas")).unwrap();
        assert!((g2.hard.mb_per_sec() - 1212.12).abs() < 0.01);
        assert!(usb_ceiling(1.5, None, None).is_none());
    }

    #[test]
    fn uas_and_bot_have_different_typical_ceilings_on_5gbps() {
        let uas = usb_ceiling(5000.0, Some(1), Some("uas")).unwrap();
        let bot = usb_ceiling(5000.0, Some(1), Some("usb-storage")).unwrap();
        assert_eq!(uas.hard, bot.hard);
        assert!(uas.typical.unwrap().0 > bot.typical.unwrap().0);
    }

    #[test]
    fn sata_and_pcie_tables() {
        assert_eq!(sata_ceiling(6.0).unwrap().hard.mb_per_sec(), 600.0);
        assert_eq!(sata_ceiling(3.0).unwrap().name, "SATA II (3 Gb/s)");
        assert!(sata_ceiling(0.0).is_none());
        let p = pcie_ceiling(8.0, 4).unwrap();
        assert_eq!(p.name, "PCIe 3.0 x4");
        assert!((p.hard.mb_per_sec() - 3938.46).abs() < 0.01);
        assert_eq!(pcie_ceiling(5.0, 1).unwrap().hard.mb_per_sec(), 500.0);
        assert!(pcie_ceiling(8.0, 0).is_none());
    }

    #[test]
    fn above_hard_ceiling_names_the_link_and_the_cause() {
        let c = usb_ceiling(480.0, None, Some("usb-storage")).unwrap();
        let w = check_against(&c, BytesPerSec(612e6), "read").unwrap();
        assert_eq!(w.kind, WarningKind::AboveLinkCeiling);
        assert_eq!(
            w.message,
            "read 612 MB/s is above the USB 2.0 ceiling of about 40 MB/s: the page cache or compression is being measured"
        );
    }

    #[test]
    fn between_typical_and_hard_is_suspicious_and_below_is_quiet() {
        let c = usb_ceiling(480.0, None, Some("uas")).unwrap();
        let w = check_against(&c, BytesPerSec(48e6), "write").unwrap();
        assert!(
            w.message
                .contains("usually delivers (about 40 MB/s, at most 53 MB/s)"),
            "{}",
            w.message
        );
        assert!(check_against(&c, BytesPerSec(43e6), "write").is_none());
        assert!(check_against(&c, BytesPerSec(35e6), "write").is_none());
    }

    #[test]
    fn a_ceiling_without_typical_only_flags_above_hard() {
        let c = usb_ceiling(10000.0, Some(2), None).unwrap();
        assert!(check_against(&c, BytesPerSec(990e6), "read").is_none());
        let w = check_against(&c, BytesPerSec(1500e6), "read").unwrap();
        assert!(
            w.message.contains("ceiling of about 1000 MB/s"),
            "{}",
            w.message
        );
    }

    #[test]
    fn an_unknown_ceiling_never_flags() {
        use crate::chain::{check_ceiling, DeviceChain};
        use iomark_model::device::{DeviceReport, TargetKind};
        let chain = DeviceChain::from(DeviceReport {
            path: "/dev/zram0".into(),
            target: TargetKind::BlockDevice,
            filesystem: None,
            mounted_at: Vec::new(),
            device: None,
            slowest: None,
            notes: Vec::new(),
        });
        assert!(check_ceiling(&chain, BytesPerSec(1e12), "read").is_none());
    }
}
