//! The arguments of `iomark disk` (and of `iomark fio`, which flattens
//! them), and how a finished run is printed as they ask. A leaf of the
//! command layer: the disk run, the job-file run, the MPI run and verify
//! all read these, and this module reads none of them.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use iomark_disk::job::JobSettings;
use iomark_disk::lifecycle::RunOptions;
use iomark_disk::plan::DiskSettings;
use iomark_disk::profiles::{ProfileName, ProfileSettings};
use iomark_model::artefact::RatedSpeed;
use iomark_model::units::Bytes;
use iomark_model::RunDocument;
use iomark_text::Output;

/// The raw arguments of `iomark disk`.
#[derive(Debug, Args)]
pub struct DiskArgs {
    /// A directory (a test file is created there and removed afterwards),
    /// an existing file, or a block device (default: the current
    /// directory; with --job, the file's filename= or directory=).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,

    /// The same as PATH, as fio spells it.
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "path",
        help_heading = "Target"
    )]
    pub filename: Option<PathBuf>,

    /// Run a fio job file (the common subset, docs/fio.md): its jobs one
    /// after another, stored as one run. PATH or --filename, if given,
    /// replaces the file's filename= and directory=.
    #[arg(long, value_name = "FILE", help_heading = "Workload")]
    pub job: Option<PathBuf>,

    /// The workload: fio's vocabulary (and the engine flags).
    #[command(flatten)]
    pub workload: JobSettings,

    /// Run the custom job N times and store it as one run: the median run's
    /// figures with the spread of all N, which `results compare
    /// --fail-if-worse` judges against (as hyperfine runs a command).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = "Workload")]
    pub repeat: Option<u32>,

    /// The speed the device is rated at, per pattern in MB/s or IOPS, e.g.
    /// read=550MB/s,write=520MB/s,randread=90kIOPS,randwrite=80kIOPS (MB/s
    /// is 10^6 bytes/s). Remembered per device in the results store, so
    /// later runs there are checked too: a figure more than 5% above its
    /// rating is flagged.
    #[arg(long, value_name = "RATES", help_heading = "Target")]
    pub rated: Option<RatedSpeed>,

    /// Allow writes to this existing file or block device (repeatable).
    /// A device must not be mounted or held; it is opened exclusively.
    #[arg(long, value_name = "PATH", help_heading = "Target")]
    pub allow_write: Vec<PathBuf>,

    /// Print one JSON document (the result schema in docs/) instead of text.
    #[arg(long, help_heading = "Output")]
    pub json: bool,

    /// Print the run as it goes, one JSON object per line, in iperf3's
    /// --json-stream layout: "start" (the tests), an "interval" for each
    /// second of a test (bandwidth, IOPS, latency), "end" (the document
    /// --json prints).
    #[arg(
        long,
        conflicts_with_all = ["json", "output_format"],
        help_heading = "Output"
    )]
    pub json_stream: bool,

    /// No progress line (it is shown only when stderr is a terminal).
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,

    /// normal (text), json or json+: fio's JSON layout, in fio's units, for
    /// what reads fio's output (json+ adds the latency histogram bins).
    #[arg(
        long,
        value_name = "FORMAT",
        conflicts_with = "json",
        help_heading = "Output"
    )]
    pub output_format: Option<OutputFormat>,

    /// The profile options, boxed to keep the command enum small.
    #[command(flatten)]
    pub prof: Box<ProfileArgs>,

    /// Run in a memory cgroup of this size, e.g. 512MiB (root): the page
    /// cache and file mappings of the run are held to it, as on a machine
    /// with that much memory (the out-of-memory case of the sweep).
    #[arg(long, value_name = "SIZE", help_heading = "Engine")]
    pub mem_limit: Option<Bytes>,

    #[command(flatten)]
    pub store: crate::record::StoreArgs,

    #[command(flatten)]
    pub cluster: crate::cluster_args::ClusterArgs,
}

/// The options of the classic profiles (see docs/profiles.md).
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Show the spread over passes, the series behind the averages and
    /// what the device saw per test (its requests, merges, utilisation).
    #[arg(long, short = 'v', help_heading = "Output")]
    pub verbose: bool,

    /// A classic test: cdm (the default without workload flags), cdm-nvme,
    /// cdm-peak, cdm-real, cdm3, iometer, gnome, macbench, sweep,
    /// artefacts, sustained; verify checks the data (docs/verify.md).
    #[arg(long, value_name = "NAME", value_parser = iomark_disk::profiles::PROFILES, help_heading = "Profile")]
    pub profile: Option<ProfileName>,

    /// The settings the profiles take.
    #[command(flatten)]
    pub settings: ProfileSettings,
}

impl DiskArgs {
    /// PATH or --filename, when given.
    pub(crate) fn path_given(&self) -> Option<&std::path::Path> {
        self.path.as_deref().or(self.filename.as_deref())
    }

    /// What the user said, for the library to check: the settings as
    /// clap parsed them.
    pub(crate) fn settings(&self) -> DiskSettings {
        DiskSettings {
            path: self
                .path_given()
                .map_or_else(|| PathBuf::from("."), PathBuf::from),
            job: self.workload.clone(),
            profile: self.prof.profile,
            profile_settings: self.prof.settings.clone(),
            allow_write: self.allow_write.clone(),
            repeat: self.repeat.unwrap_or(1),
        }
    }
}

/// What `--output-format` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// iomark's text.
    Normal,
    /// fio's JSON layout.
    Json,
    /// fio's JSON layout with each latency histogram's bins.
    #[value(name = "json+")]
    JsonPlus,
}

impl DiskArgs {
    /// How the run goes beyond its plan.
    pub(crate) fn run_options(&self) -> RunOptions {
        RunOptions {
            keep_cache: self.prof.settings.keep_cache,
            rated: self.rated.clone(),
            keep_verify_file: self.prof.settings.keep_verify_file,
            mem_limit: self.mem_limit,
            command_line: crate::record::command_line(),
        }
    }

    /// What `--output-format` and `--json` ask to print: fio's layout
    /// first, then the document, else iomark's text (every warning with
    /// `-v`).
    pub fn output(&self) -> Output {
        let verbose = self.prof.verbose;
        match self.output_format {
            Some(OutputFormat::Json) => Output::FioJson { plus: false },
            Some(OutputFormat::JsonPlus) => Output::FioJson { plus: true },
            Some(OutputFormat::Normal) | None if self.json => Output::Document,
            Some(OutputFormat::Normal) | None => Output::Text { verbose },
        }
    }
}

/// Print a finished run as asked: text (fitted to the terminal's width, 80
/// in a pipe), iomark's document or fio's layout.
pub fn print_run(args: &DiskArgs, doc: &RunDocument) -> anyhow::Result<()> {
    let width = Some(iomark_text::terminal::text_width());
    crate::exit::print(&args.output().render_for(doc, width)?)?;
    Ok(())
}

#[cfg(test)]
#[path = "disk_args_tests.rs"]
mod tests;
