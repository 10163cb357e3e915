//! Small readers for sysfs attribute files: trimmed text, numbers, link names.

use std::fs;
use std::path::Path;

/// The trimmed contents of an attribute; none when absent, unreadable or empty.
pub(crate) fn text(path: &Path) -> Option<String> {
    let raw = fs::read(path).ok()?;
    let s = String::from_utf8_lossy(&raw);
    // Identify strings are space-padded and sometimes NUL-padded.
    let t = s.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    (!t.is_empty()).then(|| t.to_string())
}

/// An attribute parsed as a number.
pub(crate) fn num<T: std::str::FromStr>(path: &Path) -> Option<T> {
    text(path)?.parse().ok()
}

/// A `0`/`1` attribute.
pub(crate) fn flag(path: &Path) -> Option<bool> {
    match text(path)?.as_str() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// The last component of a symlink's target (`subsystem`, `driver`).
pub(crate) fn link_name(path: &Path) -> Option<String> {
    let target = fs::read_link(path).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// A directory's entry names, sorted; empty when it is absent.
pub(crate) fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// The file name of a path as a string.
pub(crate) fn base(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
