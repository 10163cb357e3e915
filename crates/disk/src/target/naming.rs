//! What iomark calls its test files: the names and the mode that creation
//! gives and stale-file clean-up looks for, in one place both read.

/// Prefix and suffix of the test files iomark creates; between them, 16
/// lowercase hex digits.
pub(super) const TEST_FILE_PREFIX: &str = "iomark-";
pub(super) const TEST_FILE_SUFFIX: &str = ".tmp";
/// The mode iomark gives its test files; stale-file clean-up removes only
/// files with exactly this mode.
pub(super) const TEST_FILE_MODE: u32 = 0o600;

/// `iomark-` followed by exactly 16 lowercase hex digits and `.tmp`: the
/// names iomark gives its test files, and the only ones clean-up touches.
pub(super) fn is_test_file_name(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(TEST_FILE_PREFIX.as_bytes()) else {
        return false;
    };
    let Some(hex) = rest.strip_suffix(TEST_FILE_SUFFIX.as_bytes()) else {
        return false;
    };
    hex.len() == 16 && hex.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}
