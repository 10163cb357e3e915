//! Text renderings of iomark runs, for a terminal.
//!
//! One seam, as hyperfine's exporters: a finished [`RunDocument`] goes in,
//! the text a person reads comes out ([`run`]), whatever measured it; the
//! commands print a run through [`Output`] (text with its rank table, the
//! document, fio's `json` and `json+`). Disk
//! runs read like fio (a custom job) or like the tool a profile imitates
//! (CrystalDiskMark's grid, IOmeter's rows, GNOME Disks' summary,
//! MacBench's table, the sweep); memory runs like STREAM and Himeno.
//! `iomark info`'s device chain reads as an indented tree
//! ([`device_info`]). While a run goes, `terminal` (feature `terminal`)
//! draws its progress line on stderr and gives the width every command
//! fits its text to. A network run's text is iperf3's, printed live by
//! `iomark-net` as the test goes, so it has no renderer here. Stored runs
//! are listed, shown, compared and exported by [`results`], drawing the
//! judgement of [`iomark_stats::lineup`]; [`json`] holds the layouts
//! scripts read from the commands that do not measure.
//!
//! Every text that came from outside (names, labels, imported files) goes
//! through [`escape_controls`] on its way out, and through
//! [`escape_markdown`] into a Markdown export.

mod cluster;
mod device_seen;
mod disk;
mod fio_json;
mod info;
pub mod json;
mod knee;
mod mem;
mod mem_sweep;
pub mod openmetrics;
mod output;
mod profile;
mod pts;
pub mod results;
mod run_warnings;
mod sustained;
pub mod sweep_limits;
#[cfg(feature = "terminal")]
pub mod terminal;
mod verify;

pub use cluster::{mem_rank_table, rank_table};
pub use device_seen::{device_by_test, device_line};
pub use disk::{cgroup_usage, disk_run, limit_record};
pub use fio_json::fio_json;
pub use info::{device_info, engine_list, nic_info};
pub use iomark_model::escape::{escape_controls, escape_controls_keep_lines, escape_markdown};
pub use knee::knee_sentence;
pub use mem::mem_run;
pub use output::{fit_fields, fit_prose};
pub use output::{Output, OutputError};
pub use profile::profile_run;
pub use pts::round_line;

use iomark_model::{RunBody, RunDocument};

/// How a finished run reads on a terminal; `verbose` adds the spread over
/// passes and the series behind the averages. `None` for a network run,
/// whose text is iperf3's and is printed while it runs.
pub fn run(doc: &RunDocument, verbose: bool) -> Option<String> {
    match &doc.body {
        // A custom job's document has no profile result; profile_run
        // hands it to disk_run.
        RunBody::Disk(_) => Some(profile_run(doc, verbose)),
        RunBody::Mem(m) => Some(mem_run(m)),
        _ => None,
    }
}
