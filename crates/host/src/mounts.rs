//! `/proc/self/mountinfo` and `/proc/swaps`.

use std::path::Path;

use iomark_model::device::{DevNo, MountEntry};

/// Parses mountinfo text (proc(5)); malformed lines are skipped.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let mut l = left.split(' ');
    let mount_id = l.next()?.parse().ok()?;
    let _parent = l.next()?;
    let (major, minor) = l.next()?.split_once(':')?;
    let _root = l.next()?;
    let mount_point = unescape(l.next()?);
    let mount_options = l.next()?.to_string();
    let mut r = right.split(' ');
    let fs_type = r.next()?.to_string();
    let source = unescape(r.next()?);
    let super_options = r.next().unwrap_or("").to_string();
    Some(MountEntry {
        mount_id,
        devno: DevNo {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        },
        mount_point,
        fs_type,
        source,
        mount_options,
        super_options,
    })
}

/// Undoes the kernel's octal escapes (`\040` for a space) in paths.
pub(crate) fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The current mount table.
pub(crate) fn read_mountinfo() -> std::io::Result<Vec<MountEntry>> {
    Ok(parse_mountinfo(&std::fs::read_to_string(
        "/proc/self/mountinfo",
    )?))
}

/// The file names of active swap areas.
pub(crate) fn swaps() -> Vec<String> {
    std::fs::read_to_string("/proc/swaps")
        .map(|t| parse_swaps(&t))
        .unwrap_or_default()
}

fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape)
        .collect()
}

/// The mount entry holding `path`: by mount ID when the kernel gives it
/// (exact even with bind mounts), else by device and longest mount point.
pub(crate) fn mount_of(path: &Path, st_dev: DevNo, table: &[MountEntry]) -> Option<MountEntry> {
    if let Some(id) = mount_id(path) {
        if let Some(e) = table.iter().find(|e| e.mount_id == id) {
            return Some(e.clone());
        }
    }
    table
        .iter()
        .filter(|e| e.devno == st_dev && path.starts_with(&e.mount_point))
        .max_by_key(|e| e.mount_point.len())
        .cloned()
}

fn mount_id(path: &Path) -> Option<u64> {
    use rustix::fs::{statx, AtFlags, StatxFlags, CWD};
    let st = statx(CWD, path, AtFlags::empty(), StatxFlags::MNT_ID).ok()?;
    // Kernels before 5.8 leave the mask bit clear and the field zero.
    (st.stx_mask & StatxFlags::MNT_ID.bits() != 0).then_some(st.stx_mnt_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_line_with_optional_fields_and_escapes() {
        let t = "27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n\
                 43 27 7:0 / /mnt/my\\040disk rw,relatime - ext4 /dev/loop0 rw\n\
                 garbage line\n";
        let m = parse_mountinfo(t);
        assert_eq!(m.len(), 2);
        assert_eq!(
            m[0].devno,
            DevNo {
                major: 254,
                minor: 0
            }
        );
        assert_eq!(m[0].fs_type, "ext4");
        assert_eq!(m[0].super_options, "rw,discard");
        assert_eq!(m[1].mount_point, "/mnt/my disk");
        assert_eq!(m[1].mount_id, 43);
    }

    #[test]
    fn swaps_skip_the_header() {
        let t = "Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 1024 0 100\n";
        assert_eq!(parse_swaps(t), vec!["/dev/zram0".to_string()]);
    }

    #[test]
    fn root_is_found_in_the_real_table() {
        let table = read_mountinfo().unwrap();
        let e = mount_of(
            Path::new("/"),
            DevNo {
                major: u32::MAX,
                minor: 0,
            },
            &table,
        )
        .expect("statx gives the mount id of / on kernels since 5.8");
        assert_eq!(e.mount_point, "/");
    }
}
