//! What a run measured through, for a comparison's column header.

use super::*;

/// What a run measured through, for a comparison's column header: the
/// device, its link and driver (`Samsung T7, USB 3.2 10 Gb/s, uas`;
/// `Samsung 980, PCIe 8 GT/s x4, nvme`), or a network run's interface
/// (`eth0, r8152, 2500 Mb/s`). `None` when the run stored neither.
pub fn device_link(doc: &RunDocument) -> Option<String> {
    if let RunBody::Net(n) = &doc.body {
        return n.interface.as_ref().map(interface_text);
    }
    doc.device.as_ref().and_then(device_report_text)
}

pub(super) fn interface_text(i: &NetInterface) -> String {
    let mut parts = vec![i.name.clone()];
    parts.extend(i.driver.clone());
    parts.extend(i.speed_mbit.map(|m| format!("{m} Mb/s")));
    parts.join(", ")
}

/// A link rate in Mb/s as USB names them: `480 Mb/s`, `10 Gb/s`.
pub(super) fn mbps_text(mbps: f64) -> String {
    if mbps >= 1000.0 {
        format!("{} Gb/s", trim_num(mbps / 1000.0))
    } else {
        format!("{} Mb/s", trim_num(mbps))
    }
}

/// A number without trailing zeros: `10`, `2.5`, `3.2`.
pub(super) fn trim_num(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

pub(super) fn device_report_text(r: &DeviceReport) -> Option<String> {
    let Some(top) = r.device.as_ref() else {
        return r.filesystem.as_ref().map(|f| f.source.clone());
    };
    // Down a stack (a partition's disk, a loop device's backing disk) to the
    // layer that knows its hardware.
    let mut layer: &BlockLayer = top;
    for _ in 0..4 {
        let known = layer.usb.is_some()
            || layer.sata.is_some()
            || !layer.pcie.is_empty()
            || layer.identity.model.is_some();
        match layer.lower.first() {
            Some(lower) if !known => layer = lower,
            _ => break,
        }
    }
    let mut parts: Vec<String> = Vec::new();
    let id = &layer.identity;
    let usb_name = layer.usb.as_ref().and_then(|u| {
        let p = u.product.as_deref()?.trim();
        Some(match u.manufacturer.as_deref().map(str::trim) {
            Some(m) if !m.is_empty() && !p.starts_with(m) => format!("{m} {p}"),
            _ => p.to_string(),
        })
    });
    let model = id.model.as_deref().map(str::trim).filter(|m| !m.is_empty());
    let name = match (id.vendor.as_deref().map(str::trim), model) {
        (Some(v), Some(m)) if !v.is_empty() && v != "ATA" && !m.starts_with(v) => {
            Some(format!("{v} {m}"))
        }
        (_, Some(m)) => Some(m.to_string()),
        _ => usb_name,
    };
    parts.push(name.unwrap_or_else(|| layer.name.clone()));
    if let Some(u) = &layer.usb {
        let mut link = String::from("USB");
        if let Some(v) = u
            .version
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            let v = v.trim_start_matches('0');
            let v = match v.split_once('.') {
                Some((major, minor)) => {
                    let minor = minor.trim_end_matches('0');
                    format!("{major}.{}", if minor.is_empty() { "0" } else { minor })
                }
                None => v.to_string(),
            };
            link += &format!(" {v}");
        }
        if let Some(m) = u.speed_mbps {
            link += &format!(" {}", mbps_text(m));
        }
        parts.push(link);
        parts.extend(u.driver.clone());
    } else if let Some(s) = &layer.sata {
        parts.push(match s.speed_gbps {
            Some(g) => format!("SATA {} Gb/s", trim_num(g)),
            None => "SATA".into(),
        });
    } else if let Some(p) = layer.pcie.first() {
        parts.push(format!("PCIe {} GT/s x{}", trim_num(p.speed_gts), p.width));
        parts.extend(p.driver.clone());
    } else {
        parts.push(layer.transport.as_str().to_string());
    }
    Some(parts.join(", "))
}
