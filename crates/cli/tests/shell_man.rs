//! Shell completions and man pages, made from the clap definition: each
//! script passes its shell's syntax check and knows every subcommand; each
//! man page renders with `man -l` and names the subcommands and key flags.

use std::process::Command;

use crate::common::*;
use iomark_testrig::require;

const SUBCOMMANDS: &[&str] = &[
    "info",
    "disk",
    "clean",
    "engines",
    "net",
    "mem",
    "results",
    "report",
    "completions",
    "man",
];

/// The script for `shell`, saved to a file for the syntax check.
fn script(shell: &str, dir: &std::path::Path) -> (String, std::path::PathBuf) {
    let text = ok(&iomark_ok(&["completions", shell]));
    let path = dir.join(format!("iomark.{shell}"));
    std::fs::write(&path, &text).unwrap();
    (text, path)
}

fn syntax_ok(shell: &str, path: &std::path::Path) {
    let out = Command::new(shell).arg("-n").arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "{shell} -n rejects the completion script: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn completions_pass_each_shells_syntax_check_and_name_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let (text, path) = script(shell, dir.path());
        for sub in SUBCOMMANDS {
            assert!(text.contains(sub), "{shell}: no {sub}");
        }
        // Flags of the subcommands, down to net's. (clap_complete offers
        // `net server`/`net client` as words, not iperf3's -s/-c flags.)
        // fish spells --profile as `-l profile`.
        for flag in ["profile", "quiet", "verbose", "rcv-timeout", "bidir"] {
            assert!(text.contains(flag), "{shell}: no {flag}");
        }
        // What iomark runs itself (the limited child of --mem-limit) is
        // not offered to a person.
        assert!(!text.contains("__child"), "{shell} offers __child");
        match have_command(shell, shell) {
            Ok(()) => syntax_ok(shell, &path),
            Err(why) => eprintln!("{shell}: syntax not checked: {why}"),
        }
    }
}

#[test]
fn bash_completion_offers_the_subcommands_when_sourced() {
    require!(have_command("bash", "bash"));
    let dir = tempfile::tempdir().unwrap();
    let (_, path) = script("bash", dir.path());
    // Ask the completion function what follows `iomark ` and
    // `iomark net client h --`.
    let probe = format!(
        "source {}; COMP_WORDS=(iomark ''); COMP_CWORD=1; _iomark iomark '' iomark; \
         echo \"${{COMPREPLY[*]}}\"; COMP_WORDS=(iomark net client h --); COMP_CWORD=4; \
         _iomark iomark -- h; echo \"${{COMPREPLY[*]}}\"",
        path.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    let text = ok(&out);
    let mut lines = text.lines();
    let top = lines.next().unwrap_or_default();
    for sub in SUBCOMMANDS {
        assert!(
            top.split(' ').any(|w| w == *sub),
            "{sub} not offered: {top}"
        );
    }
    let net = lines.next().unwrap_or_default();
    for flag in ["--parallel", "--reverse", "--verbose", "--json"] {
        assert!(
            net.split(' ').any(|w| w == flag),
            "{flag} not offered: {net}"
        );
    }
}

#[test]
fn bash_completion_offers_the_values_of_named_flags_not_file_names() {
    require!(have_command("bash", "bash"));
    let dir = tempfile::tempdir().unwrap();
    let (_, path) = script("bash", dir.path());
    // What follows `iomark disk --FLAG ` (or `iomark mem stream --FLAG `).
    let offered = |words: &str| {
        let n = words.split(' ').count();
        let flag = words.rsplit(' ').next().unwrap();
        // bash calls the function with the command, the word being
        // completed and the word before it.
        let probe = format!(
            "cd {dir}; source {script}; COMP_WORDS=({words} ''); COMP_CWORD={n}; \
             _iomark iomark '' {flag}; echo \"${{COMPREPLY[*]}}\"",
            dir = dir.path().display(),
            script = path.display(),
        );
        let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
        ok(&out).trim().to_string()
    };
    let cases: &[(&str, &[&str])] = &[
        (
            "iomark disk --profile",
            &["cdm", "cdm3", "iometer", "sweep", "verify"],
        ),
        ("iomark disk --rw", &["read", "randwrite", "randrw"]),
        (
            "iomark disk --engine",
            &["psync", "io_uring", "mmap-sync", "libaio"],
        ),
        ("iomark disk --data", &["random", "zeros", "repeat"]),
        ("iomark disk --output-format", &["normal", "json", "json+"]),
        ("iomark mem stream --nt-stores", &["on", "off"]),
    ];
    for (words, want) in cases {
        let got = offered(words);
        for w in *want {
            assert!(
                got.split(' ').any(|g| g == *w),
                "{words}: {w} not offered: {got}"
            );
        }
        // The script file in the directory is not a value.
        assert!(
            !got.contains("iomark.bash"),
            "{words}: offers file names: {got}"
        );
    }
}

#[test]
fn a_bad_shell_is_one_line_and_exit_2() {
    let out = iomark(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("bash") && err.contains("zsh") && err.contains("fish"),
        "{err}"
    );
    let out = iomark(&["man", "dsk"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("use one of info, disk"),
        "{}",
        stderr(&out)
    );
}

/// `line` split at spaces as a shell would, a double-quoted word kept
/// whole (its quotes dropped).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => words.extend((!word.is_empty()).then(|| std::mem::take(&mut word))),
            _ => word.push(c),
        }
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}

/// `man -l PAGE` as plain text.
fn rendered(page: &std::path::Path) -> String {
    let out = Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "0")
        .output()
        .unwrap();
    let text = ok(&out);
    // Undo overstriking (bold: c\bc, underline: _\bc), if any.
    let mut plain = String::new();
    for c in text.chars() {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
    }
    plain
}

#[test]
fn man_pages_render_with_man_and_name_the_subcommands_and_key_flags() {
    require!(have_command("man", "man-db"));
    let dir = tempfile::tempdir().unwrap();
    let listed = ok(&iomark_ok(&["man", "--dir", dir.path().to_str().unwrap()]));
    for page in [
        "iomark.1",
        "iomark-disk.1",
        "iomark-net-client.1",
        "iomark-net-server.1",
    ] {
        assert!(
            dir.path().join(page).is_file(),
            "{page} not written: {listed}"
        );
        assert!(listed.contains(page), "{page} not listed: {listed}");
    }
    let top = rendered(&dir.path().join("iomark.1"));
    assert!(top.contains("NAME") && top.contains("SYNOPSIS"), "{top}");
    for sub in SUBCOMMANDS {
        assert!(
            top.contains(&format!("iomark-{sub}(1)")),
            "iomark(1) has no {sub}: {top}"
        );
    }
    let disk = rendered(&dir.path().join("iomark-disk.1"));
    for flag in [
        "--profile",
        "--rw",
        "--bs",
        "--iodepth",
        "--quiet",
        "--json",
    ] {
        assert!(disk.contains(flag), "iomark-disk(1) has no {flag}");
    }
    // Every page's header names iomark and its version, not the subcommand.
    let source = format!("\"iomark {}\"", env!("CARGO_PKG_VERSION"));
    for page in ["iomark.1", "iomark-disk.1", "iomark-net-client.1"] {
        let roff = std::fs::read_to_string(dir.path().join(page)).unwrap();
        let header = roff
            .lines()
            .find(|l| l.starts_with(".TH"))
            .unwrap_or_default();
        assert!(header.contains(&source), "{page}: {header}");
    }
    let client = rendered(&dir.path().join("iomark-net-client.1"));
    for flag in ["--parallel", "--reverse", "--verbose", "-V"] {
        assert!(client.contains(flag), "iomark-net-client(1) has no {flag}");
    }
    // Every page says what each exit code means and which variables iomark
    // reads; the pages of the commands people start from show the
    // README's recipes.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let page = rendered(&entry.unwrap().path());
        assert!(page.contains("EXIT STATUS"), "{page}");
        for code in ["0", "1", "2", "3", "4", "5", "130"] {
            assert!(
                page.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{code} "))),
                "exit code {code} not described: {page}"
            );
        }
        // Every variable the binary reads (crates/cluster/src/detect.rs
        // for the launchers'); the test rigs' own are not iomark's.
        for var in [
            "IOMARK_DB",
            "XDG_DATA_HOME",
            "HOME",
            "COLUMNS",
            "IPERF3_PASSWORD",
            "IOMARK_STORE_TIMEOUT",
            "IOMARK_MEM_PARENT",
            "IOMARK_MEM_CHILD_JOB",
            "IOMARK_MEM_CGROUP_PROCS",
            "OMPI_COMM_WORLD_SIZE",
            "PMI_SIZE",
            "PMI_RANK",
            "PMIX_RANK",
            "PMIX_SIZE",
            "SLURM_PROCID",
            "SLURM_STEP_NUM_TASKS",
        ] {
            // As a word: XDG_DATA_HOME is not HOME.
            let named = page
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| w == var);
            assert!(named, "{var} not in ENVIRONMENT: {page}");
        }
    }
    // Every page has examples, each a command line whose flags iomark
    // knows: given `--help` after it, an unknown flag before it fails
    // (values are checked later than that).
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let text = rendered(&path);
        let examples = text.split("EXAMPLES").nth(1).unwrap_or_default();
        let examples = examples.split("EXIT STATUS").next().unwrap_or_default();
        let lines: Vec<&str> = examples
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("iomark "))
            .collect();
        assert!(
            !lines.is_empty(),
            "{}: no examples in {text}",
            path.display()
        );
        for line in lines {
            // The command before a pipe or a redirection; a shell
            // variable stands for a run's id.
            let words = shell_words(line);
            let mut args: Vec<&str> = words
                .iter()
                .skip(1)
                .take_while(|w| !["|", ">"].contains(&w.as_str()))
                .map(|w| if w.contains('$') { "1" } else { w.as_str() })
                .collect();
            args.push("--help");
            let out = iomark(&args);
            assert!(
                out.status.success(),
                "{}: example {line:?} is refused: {}",
                path.display(),
                stderr(&out)
            );
        }
    }
    for (page, recipe) in [
        ("iomark.1", "iomark disk /mnt/usb"),
        ("iomark-disk.1", "--allow-write /dev/sdb"),
        ("iomark-results-compare.1", "--fail-if-worse 5%"),
        ("iomark-net.1", "iomark net -c 192.0.2.10"),
    ] {
        let text = rendered(&dir.path().join(page));
        let examples = text.split("EXAMPLES").nth(1).unwrap_or_default();
        assert!(examples.contains(recipe), "{page}: no {recipe:?} in {text}");
    }
    // One page on stdout is the same page.
    let one = ok(&iomark_ok(&["man", "net", "client"]));
    assert_eq!(
        one,
        std::fs::read_to_string(dir.path().join("iomark-net-client.1")).unwrap()
    );
}
