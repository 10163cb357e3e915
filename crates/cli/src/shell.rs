//! `iomark completions SHELL` and `iomark man`: shell completions and man
//! pages, both made from the one clap definition, so they cannot drift
//! from the flags the binary really takes.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Args, Command};
use clap_complete::Shell;

use crate::exit::Exit;

/// `iomark completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh or fish (also elvish, powershell).
    #[arg(value_name = "SHELL", value_parser = parse_shell)]
    shell: Shell,
}

/// A shell clap_complete knows, or a message naming them.
fn parse_shell(s: &str) -> Result<Shell, String> {
    s.parse::<Shell>()
        .map_err(|_| format!("no completions for '{s}': use bash, zsh, fish, elvish or powershell"))
}

/// `iomark man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write every page (iomark.1, iomark-disk.1, iomark-net-client.1, ...)
    /// into this directory instead of printing one page.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    dir: Option<PathBuf>,
    /// The (sub)command whose page is printed, e.g. `disk` or `net client`
    /// (default: iomark's own page).
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
}

/// The whole command `cli`, built, so every subcommand knows its full name
/// (`iomark-net-client`) as the man pages title them.
pub(crate) fn built(cli: Command) -> Command {
    let mut cmd = cli.disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// Print the completion script of the whole command `cli` for one shell.
pub fn completions(args: CompletionsArgs, mut cmd: Command) -> anyhow::Result<Exit> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "iomark", &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(Exit::Success)
}

/// Print one man page of the whole command `cli`, or write them all into
/// `--dir`.
pub fn man(args: ManArgs, cli: Command) -> anyhow::Result<Exit> {
    let root = built(cli);
    if let Some(dir) = args.dir {
        for path in write_pages(&root, &dir)? {
            crate::exit::print(&format!("{}\n", path.display()))?;
        }
        return Ok(Exit::Success);
    }
    let mut cmd = &root;
    for name in &args.command {
        cmd = match cmd.find_subcommand(name).filter(|c| !c.is_hide_set()) {
            Some(sub) => sub,
            None => {
                let names: Vec<&str> = cmd
                    .get_subcommands()
                    .filter(|c| !c.is_hide_set())
                    .map(Command::get_name)
                    .collect();
                bail!(
                    "no command '{name}' under '{}': use one of {}",
                    cmd.get_display_name().unwrap_or("iomark"),
                    names.join(", ")
                );
            }
        };
    }
    std::io::stdout().lock().write_all(&page(cmd.clone())?)?;
    Ok(Exit::Success)
}

/// Write the page of `cmd` and of every visible subcommand below it into
/// `dir` (created if missing); the paths written, parents first.
pub(crate) fn write_pages(cmd: &Command, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let mut written = Vec::new();
    let mut todo = vec![cmd.clone()];
    while let Some(cmd) = todo.pop() {
        let subs: Vec<Command> = cmd
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .cloned()
            .collect();
        todo.extend(subs.into_iter().rev());
        let path = dir.join(clap_mangen::Man::new(cmd.clone()).get_filename());
        std::fs::write(&path, page(cmd)?)
            .with_context(|| format!("write a man page into {}", dir.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Each page's EXAMPLES (the README's recipes, one or two a command), in
/// one file: a line `.\" PAGE` opens a page's.
const EXAMPLES: &str = include_str!("../man/examples.roff");

/// The EXAMPLES section of the page `name`.
fn examples_of(name: &str) -> &'static str {
    let marker = format!(".\\\" {name}\n");
    let Some(at) = EXAMPLES.find(&marker) else {
        return "";
    };
    let section = &EXAMPLES[at + marker.len()..];
    &section[..section.find(".\\\" ").unwrap_or(section.len())]
}

/// The man page of `cmd` as roff: its header naming iomark and its version
/// on every page (clap_mangen would put the subcommand's name there), the
/// sections clap's definition makes, then what it has no place for: the
/// command's EXAMPLES (the README's recipes), EXIT STATUS and ENVIRONMENT.
fn page(cmd: Command) -> std::io::Result<Vec<u8>> {
    let name = cmd.get_display_name().unwrap_or("iomark").to_string();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .source(format!("iomark {}", env!("CARGO_PKG_VERSION")))
        .render(&mut out)?;
    out.extend_from_slice(examples_of(&name).as_bytes());
    out.extend_from_slice(include_str!("../man/exit-status.roff").as_bytes());
    out.extend_from_slice(include_str!("../man/environment.roff").as_bytes());
    Ok(out)
}
