//! The HTML pages, server-rendered; only the live page has a script (it
//! reloads its charts as seconds are stored).

pub(crate) mod compare;
pub(crate) mod devices;
pub(crate) mod layout;
pub(crate) mod live;
pub(crate) mod run;
pub(crate) mod runs;
