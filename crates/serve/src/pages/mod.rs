//! The HTML pages, server-rendered; only the live page has a script (it
//! reloads its charts as seconds are stored).

pub mod compare;
pub mod devices;
pub mod layout;
pub mod live;
pub mod run;
pub mod runs;
