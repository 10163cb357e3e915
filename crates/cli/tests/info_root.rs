//! `iomark info /` on the machine's own root disk, and bad input.

use std::os::unix::fs::MetadataExt;

use crate::common::*;

/// The `/proc/self/mountinfo` line for `/` as (major:minor, fs type).
fn root_mount() -> (String, String) {
    let t = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let line = t
        .lines()
        .rfind(|l| l.split(' ').nth(4) == Some("/"))
        .unwrap()
        .to_string();
    let devno = line.split(' ').nth(2).unwrap().to_string();
    let fs_type = line
        .split(" - ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    (devno, fs_type)
}

#[test]
fn info_root_finds_the_root_file_system_and_disk() {
    let v = json_of(&iomark(&["info", "/", "--json"]));
    let r = &v["device"];
    assert_eq!(r["target"], "directory");
    let (devno, fs_type) = root_mount();
    assert_eq!(r["filesystem"]["mount_point"], "/");
    assert_eq!(r["filesystem"]["fs_type"], fs_type.as_str());
    let st_dev = std::fs::metadata("/").unwrap().dev();
    let (major, minor) = (
        (st_dev >> 8) & 0xfff,
        (st_dev & 0xff) | ((st_dev >> 12) & 0xfff00),
    );
    assert_eq!(devno, format!("{major}:{minor}"));
    require!(major != 0, "/ has no block device here");
    let d = &r["device"];
    assert_eq!(d["devno"]["major"], major);
    assert_eq!(d["devno"]["minor"], minor);
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).unwrap();
    assert_eq!(d["sysfs_path"], sys.to_string_lossy().as_ref());
    let whole = if sys.join("partition").exists() {
        sys.parent().unwrap().to_path_buf()
    } else {
        sys.clone()
    };
    let lbs: u64 = std::fs::read_to_string(whole.join("queue/logical_block_size"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(d["queue"]["logical_block_size"], lbs);
    let path = sys.to_string_lossy();
    if path.contains("/virtio") {
        // A paravirtual disk: the host's storage decides, so no ceiling.
        assert_eq!(d["transport"], "virtio");
        assert!(r["slowest"].is_null());
        assert!(d["note"].as_str().unwrap().contains("virtio-blk"));
    } else if path.contains("/nvme") {
        assert_eq!(d["transport"], "nvme");
    } else if path.contains("/usb") {
        assert_eq!(d["transport"], "usb");
    }
}

#[test]
fn info_root_text_shows_the_chain() {
    let out = iomark(&["info", "/"]);
    assert!(out.status.success());
    let text = stdout(&out);
    let (_, fs_type) = root_mount();
    assert!(
        text.contains(&format!("file system  {fs_type} from ")),
        "{text}"
    );
    assert!(text.contains("ceiling"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("device ")), "{text}");
}

/// `iomark info` fits 80 columns in a pipe and on an 80x24 terminal: a
/// long value (the queue's settings, the chain) wraps under itself.
#[test]
fn info_fits_80_columns() {
    let piped = stdout(&iomark(&["info", "/"]));
    let shown = require!(iomark_on_terminal(&["info", "/"]));
    for text in [&piped, &shown] {
        assert!(text.contains("ceiling"), "{text}");
        for line in text.lines().map(|l| l.trim_end_matches('\r')) {
            if !line.starts_with("Script ") {
                assert!(line.chars().count() <= 80, "{line}\n{text}");
            }
        }
    }
}

#[test]
fn info_defaults_to_the_current_directory() {
    let here = json_of(&iomark(&["info", "--json"]));
    let dot = json_of(&iomark(&["info", ".", "--json"]));
    assert_eq!(here["device"]["filesystem"], dot["device"]["filesystem"]);
    assert_eq!(here["device"]["path"], ".");
}

#[test]
fn info_on_a_missing_path_is_a_one_line_error_with_exit_2() {
    let out = iomark(&["info", "/no/such/path/for/iomark"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("iomark: "), "{err}");
    assert!(
        err.contains("give an existing file, directory or block device"),
        "{err}"
    );
}
