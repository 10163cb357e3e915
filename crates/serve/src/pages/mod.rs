//! The HTML pages, server-rendered, without script.

pub mod compare;
pub mod devices;
pub mod layout;
pub mod run;
pub mod runs;
