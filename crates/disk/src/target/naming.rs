//! What iomark calls its test files: the names and the mode that creation
//! gives and stale-file clean-up looks for, kept in `iomark_host` so that
//! mem's mapped files follow them too.

#[cfg(test)]
pub(super) use iomark_host::test_files::is_test_file_name;
pub(super) use iomark_host::test_files::{new_test_file_name, TEST_FILE_PREFIX};
