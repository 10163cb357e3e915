//! Pure math for iomark.
#![deny(missing_docs)]
