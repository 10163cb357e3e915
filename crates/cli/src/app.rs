//! The command line: one clap definition, one module per subcommand.

use clap::{CommandFactory, Parser, Subcommand};

use crate::exit::Exit;

/// iomark: measure storage, memory and networks; store and compare results.
#[derive(Debug, Parser)]
#[command(name = "iomark", version, about, long_about = None)]
#[command(propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the file system, devices, links and ceilings behind a path.
    Info(crate::info::InfoArgs),
    /// Benchmark storage: a test file in a directory, a file or a block device.
    // A flag given twice takes the last value, as in fio.
    #[command(args_override_self = true)]
    Disk(crate::disk_args::DiskArgs),
    /// Run a fio job file (the common subset): `iomark disk --job FILE`.
    #[command(args_override_self = true)]
    Fio(crate::fio::FioArgs),
    /// Remove test files left in PATH by killed iomark runs.
    Clean(crate::clean::CleanArgs),
    /// List the disk I/O engines.
    Engines(crate::engines::EnginesArgs),
    /// Measure network throughput with iperf3's protocol: `net -s` serves,
    /// `net -c HOST` runs a test (or `net server`, `net client HOST`).
    // -V under net is iperf3's --verbose, not the version.
    #[command(disable_version_flag = true)]
    Net(crate::net::NetArgs),
    /// Memory and out-of-core kernels: STREAM, 2D stencil, Himeno (heap or mmap, memory limits).
    Mem(crate::mem::MemArgs),
    /// Stored results: list, show, compare, export, import, delete.
    Results(crate::results::ResultsArgs),
    /// Draw stored runs: a self-contained HTML report with charts, or PNG charts.
    Report(crate::report::ReportArgs),
    /// Serve a read-only web view of the stored runs, and their JSON, over HTTP.
    Serve(crate::serve::ServeArgs),
    /// Print a shell completion script: bash, zsh or fish.
    Completions(crate::shell::CompletionsArgs),
    /// Print a man page, or write them all with --dir.
    Man(crate::shell::ManArgs),
}

/// Parse the process arguments. Help and version print as clap prints
/// them; bad input is one line naming the flag and the fix, exit code 2,
/// like every other refusal.
pub fn parse() -> Cli {
    use clap::error::ErrorKind;
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => {
                let args: Vec<String> = std::env::args().skip(1).collect();
                eprintln!(
                    "iomark: {}",
                    iperf3_reason(&e)
                        .or_else(|| subcommand_first(&e, &args))
                        .unwrap_or_else(|| refusal(&e))
                );
                std::process::exit(i32::from(crate::exit::Exit::Error.code()));
            }
        },
    }
}

/// An iperf3 option `iomark net` does not take, named with why and what to
/// do instead.
fn iperf3_reason(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument || std::env::args().nth(1).as_deref() != Some("net") {
        return None;
    }
    let Some(ContextValue::String(flag)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let why = iomark_net::settings::unsupported::why_not(flag)?;
    Some(format!("net: iperf3's {flag} is not supported: {why}"))
}

/// A flag given before the subcommand that takes it (`iomark mem --db
/// r.db`): the subcommands to name first, from `args` (the process's,
/// without its name).
fn subcommand_first(e: &clap::Error, args: &[String]) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let (mut cmd, mut path) = (Cli::command(), vec!["iomark"]);
    for a in args {
        let Some(sub) = cmd.find_subcommand(a).cloned() else {
            break;
        };
        path.push(a);
        cmd = sub;
    }
    if path.len() < 2 || !cmd.is_subcommand_required_set() {
        return None;
    }
    let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
    let path = path.join(" ");
    Some(format!(
        "{}: name one of {} first, as in `{path} {} ...` (see {path} --help)",
        one_line(&e.to_string()).trim_end_matches(" (see --help)"),
        names.join(", "),
        names[0]
    ))
}

/// The one line for a refused command line: clap's message, with what it
/// would print on lines of their own: its suggestion for a typo (`--iodepht`:
/// did you mean --iodepth?) and, for a value outside a fixed list
/// (`--format xml`), the values it takes.
fn refusal(e: &clap::Error) -> String {
    use clap::error::{ContextKind as Kind, ContextValue as Value};
    let named = |kind| match e.get(kind) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Strings(s)) => s.clone(),
        _ => Vec::new(),
    };
    let similar: Vec<String> = [
        Kind::SuggestedArg,
        Kind::SuggestedSubcommand,
        Kind::SuggestedValue,
    ]
    .into_iter()
    .flat_map(named)
    .collect();
    let valid = named(Kind::ValidValue);
    let (similar, valid) = (similar.join(" or "), valid.join(", "));
    let line = one_line(&e.to_string());
    let fix = match (similar.is_empty(), valid.is_empty()) {
        (true, true) => return line,
        (false, true) => format!("did you mean {similar}?"),
        (true, false) => format!("use {valid}"),
        (false, false) => format!("did you mean {similar}? (it takes {valid})"),
    };
    let (head, tail) = line.split_at(line.rfind(" (see --help)").unwrap_or(line.len()));
    format!("{head}: {fix}{tail}")
}

/// clap's message without its `error:` prefix and the lines after it
/// (a blank line and "For more information, try '--help'"), with a pointer
/// to the help instead. A first line ending in a colon ("the following
/// required arguments were not provided:") keeps the indented list under
/// it, joined, so the line names what is missing.
fn one_line(rendered: &str) -> String {
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or("bad arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    if let Some(head) = first.strip_suffix(':') {
        let items: Vec<&str> = lines
            .take_while(|l| l.starts_with(' '))
            .map(str::trim)
            .collect();
        if !items.is_empty() {
            return format!("{head}: {} (see --help)", items.join(", "));
        }
    }
    format!("{first} (see --help)")
}

/// Run the chosen subcommand.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    // Under mpirun or srun the benchmark is one across the ranks, or none:
    // never N separate runs that each store their own.
    if let Some(launched) = iomark_cluster::detect::launched() {
        return match cli.command {
            Command::Disk(args) => crate::cluster::disk(args, &launched),
            Command::Mem(args) if args.is_stream() => crate::cluster::mem(args, &launched),
            // The subcommand as typed: iomark takes no flag before it.
            _ => crate::cluster::refuse(&std::env::args().nth(1).unwrap_or_default(), &launched),
        };
    }
    match cli.command {
        Command::Info(args) => crate::info::run(args),
        // A job file is fio's path; the rest is the disk run's.
        Command::Disk(args) => match args.job.clone() {
            Some(file) => crate::fio::run_disk_job(&args, &file),
            None => crate::disk::run(args),
        },
        Command::Fio(args) => crate::fio::run(args),
        Command::Clean(args) => crate::clean::run(args),
        Command::Engines(args) => crate::engines::run(args),
        Command::Net(args) => crate::net::run(args),
        Command::Mem(args) => crate::mem::run(args),
        Command::Results(args) => crate::results::run(args),
        Command::Report(args) => crate::report::run(args),
        Command::Serve(args) => crate::serve::run(args),
        // The shell module is handed the command rather than importing it.
        Command::Completions(args) => crate::shell::completions(args, Cli::command()),
        Command::Man(args) => crate::shell::man(args, Cli::command()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_value_is_one_line_with_the_reason() {
        let err = Cli::try_parse_from(["iomark", "disk", ".", "--bs", "4q"]).unwrap_err();
        let line = one_line(&err.to_string());
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.starts_with("invalid value '4q' for '--bs <SIZE>'"),
            "{line}"
        );
        assert!(line.contains("unknown unit"), "{line}");
    }

    #[test]
    fn a_value_outside_a_fixed_list_names_the_list() {
        let err = Cli::try_parse_from(["iomark", "results", "export", "1", "--format", "xml"])
            .unwrap_err();
        assert_eq!(
            refusal(&err),
            "invalid value 'xml' for '--format <FORMAT>': use json, csv, markdown (see --help)"
        );
        let err = Cli::try_parse_from(["iomark", "disk", ".", "--output-format", "x"]).unwrap_err();
        assert!(refusal(&err).ends_with(": use normal, json, json+ (see --help)"));
    }

    #[test]
    fn a_typo_gets_clap_s_suggestion_on_the_one_line() {
        let refused = |args: &[&str]| {
            let all = std::iter::once("iomark").chain(args.iter().copied());
            refusal(&Cli::try_parse_from(all).unwrap_err())
        };
        assert_eq!(
            refused(&["disk", ".", "--iodepht", "4"]),
            "unexpected argument '--iodepht' found: did you mean --iodepth? (see --help)"
        );
        assert_eq!(
            refused(&["dsik", "."]),
            "unrecognized subcommand 'dsik': did you mean disk? (see --help)"
        );
        assert_eq!(
            refused(&["results", "export", "1", "--format", "jsn"]),
            "invalid value 'jsn' for '--format <FORMAT>': did you mean json? \
             (it takes json, csv, markdown) (see --help)"
        );
    }

    #[test]
    fn a_flag_before_its_subcommand_names_the_subcommands() {
        let args = ["mem", "--db", "r.db"].map(String::from);
        let err = Cli::try_parse_from(std::iter::once("iomark").chain(args.iter().map(|a| &a[..])))
            .unwrap_err();
        assert_eq!(
            subcommand_first(&err, &args).unwrap(),
            "unexpected argument '--db' found: name one of stream, stencil, himeno first, \
             as in `iomark mem stream ...` (see iomark mem --help)"
        );
        let args = ["disk", "--iodepht", "4"].map(String::from);
        let err = Cli::try_parse_from(std::iter::once("iomark").chain(args.iter().map(|a| &a[..])))
            .unwrap_err();
        assert_eq!(subcommand_first(&err, &args), None);
    }

    #[test]
    fn a_missing_argument_is_named_on_the_one_line() {
        let err = Cli::try_parse_from(["iomark", "net", "-c"]).unwrap_err();
        let line = one_line(&err.to_string());
        assert!(!line.contains('\n'), "{line}");
        assert!(line.contains("not provided: <HOST>"), "{line}");
    }

    #[test]
    fn dash_v_is_the_version_on_top_and_verbose_under_net() {
        let err = Cli::try_parse_from(["iomark", "-V"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayVersion);
        let err = Cli::try_parse_from(["iomark", "disk", "-V"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayVersion);
        let cli = Cli::try_parse_from(["iomark", "net", "-c", "h", "-V"]).unwrap();
        assert!(matches!(cli.command, Command::Net(_)));
        assert!(Cli::try_parse_from(["iomark", "net", "-s", "--verbose"]).is_ok());
    }

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_visible_command_gets_a_page_named_after_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::shell::built(Cli::command());
        let written = crate::shell::write_pages(&root, dir.path()).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for page in [
            "iomark.1",
            "iomark-disk.1",
            "iomark-net.1",
            "iomark-net-server.1",
            "iomark-net-client.1",
            "iomark-results-compare.1",
            "iomark-completions.1",
        ] {
            assert!(names.iter().any(|n| n == page), "{page} not in {names:?}");
        }
        assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
    }
}
