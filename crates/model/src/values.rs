//! Command-line values that name something (an access pattern, an engine,
//! a profile): parsed by the type's own parser, whose message names the
//! fix, and offered by shell completions and listed by `--help` as clap's
//! possible values (feature `clap`). Without it, completions would offer
//! file names for `--rw`.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};

use crate::workload::{DataPattern, RwMode};

/// A clap value parser over `parse`, with `names` as the values a shell
/// completes and `--help` lists. Parsing is `parse`'s alone: aliases and
/// open forms (`compressible:N`) it takes work whether listed or not.
#[derive(Clone, Copy)]
pub struct Named<T: 'static> {
    names: fn() -> Vec<&'static str>,
    parse: fn(&str) -> Result<T, String>,
}

impl<T> Named<T> {
    /// The values `names` gives, read by `parse`.
    pub const fn new(
        names: fn() -> Vec<&'static str>,
        parse: fn(&str) -> Result<T, String>,
    ) -> Self {
        Named { names, parse }
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Named<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let parse = self.parse;
        StringValueParser::new()
            .try_map(move |s| parse(&s))
            .parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.names)().into_iter().map(PossibleValue::new)))
    }
}

/// A switch spelled `on` or `off` (as its `value_name` says), also taking
/// `true`/`false`, `yes`/`no` and `1`/`0`.
pub const ON_OFF: Named<bool> = Named::new(|| vec!["on", "off"], parse_on_off);

/// `--rw`: fio's access patterns (also `rw` and `randreadwrite`).
pub const RW: Named<RwMode> = Named::new(|| RwMode::ALL.map(RwMode::as_str).to_vec(), str::parse);

/// `--data`: the patterns, with `compressible:N` at three shares as
/// examples of the open form (any N from 0 to 100 works).
pub const DATA: Named<DataPattern> = Named::new(
    || {
        vec![
            "random",
            "zeros",
            "repeat",
            "compressible:25",
            "compressible:50",
            "compressible:75",
        ]
    },
    str::parse,
);

fn parse_on_off(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{s}' is neither on nor off: use on or off")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    fn command() -> Command {
        Command::new("t")
            .arg(Arg::new("rw").long("rw").value_parser(Named::new(
                || vec!["read", "write"],
                |s: &str| match s {
                    "read" | "r" => Ok(1u8),
                    "write" => Ok(2),
                    _ => Err(format!("unknown --rw '{s}': use read or write")),
                },
            )))
            .arg(Arg::new("nt").long("nt").value_parser(ON_OFF))
    }

    #[test]
    fn the_types_parser_decides_and_the_names_are_offered() {
        let m = command()
            .try_get_matches_from(["t", "--rw", "r", "--nt", "off"])
            .unwrap();
        assert_eq!(
            m.get_one::<u8>("rw"),
            Some(&1),
            "an unlisted alias still parses"
        );
        assert_eq!(m.get_one::<bool>("nt"), Some(&false));
        let e = command()
            .try_get_matches_from(["t", "--rw", "x"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown --rw 'x': use read or write"), "{e}");
        let cmd = command();
        let names: Vec<String> = cmd
            .get_arguments()
            .find(|a| a.get_id() == "rw")
            .unwrap()
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(names, ["read", "write"]);
    }
}
