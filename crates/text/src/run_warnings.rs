//! A disk run's warnings under its table: one line per kind, so a busy
//! machine's twenty "other I/O reached vda" do not bury the table. A kind
//! whose tests all said the same is that sentence once; a kind said
//! differently in several tests names them and shows the strongest
//! evidence where the kind weighs it (`Warning::strength`: the most other
//! I/O against the job's own), else what the first one saw (its message up
//! to the first colon, before the detail and the remedy). At most eight
//! lines: past them, the last names the kinds left out. `-v` (and
//! `--json`) keep every message.

use iomark_model::disk::DiskRun;
use iomark_model::{RunDocument, Warning, WarningKind};

/// Tests named on a grouped line before "and N more".
const NAMED: usize = 3;

/// The most warning lines a run prints without `-v`: past it, the last
/// line names the kinds left out, so the table is not pushed away.
const MOST_LINES: usize = 8;

/// A kind of warning as raised in a run: the tests that raised it (none
/// for the run's own), its distinct messages, how many times it was raised.
type Kind<'a> = (WarningKind, Vec<&'a str>, Vec<&'a Warning>, usize);

/// A kind as a line names it: `foreign io`.
fn label(kind: WarningKind) -> String {
    kind.name().replace('_', " ")
}

/// The run's warning lines, but of the kinds in `shown` (those its tables
/// show already); every distinct message when `verbose`.
pub(crate) fn lines(
    doc: &RunDocument,
    run: &DiskRun,
    shown: &[WarningKind],
    verbose: bool,
) -> Vec<String> {
    // Each kind in first-seen order, with each test that raised it (the
    // job's name; none for the run's own), its distinct messages and how
    // many times it was raised.
    let mut kinds: Vec<Kind> = Vec::new();
    let raised = doc.warnings.iter().map(|w| ("", w)).chain(
        run.jobs
            .iter()
            .flat_map(|j| j.warnings.iter().map(move |w| (j.spec.name.as_str(), w))),
    );
    for (test, w) in raised.filter(|(_, w)| !shown.contains(&w.kind)) {
        let at = match kinds.iter().position(|(k, ..)| *k == w.kind) {
            Some(at) => at,
            None => {
                kinds.push((w.kind, Vec::new(), Vec::new(), 0));
                kinds.len() - 1
            }
        };
        let (_, tests, messages, raised) = &mut kinds[at];
        *raised += 1;
        if !test.is_empty() && !tests.contains(&test) {
            tests.push(test);
        }
        if !messages.iter().any(|m| m.message == w.message) {
            messages.push(w);
        }
    }
    let mut all_tests: Vec<&str> = run.jobs.iter().map(|j| j.spec.name.as_str()).collect();
    all_tests.sort_unstable();
    all_tests.dedup();
    let all_tests = all_tests.len();
    if verbose || kinds.len() <= MOST_LINES {
        return lines_of_kinds(kinds, all_tests, verbose);
    }
    let left_out: Vec<String> = kinds
        .drain(MOST_LINES - 1..)
        .map(|(kind, _, _, raised)| format!("{} ×{raised}", label(kind)))
        .collect();
    let mut out = lines_of_kinds(kinds, all_tests, false);
    out.push(format!(
        "{} more kinds: {} (each with -v)",
        left_out.len(),
        left_out.join(", ")
    ));
    out
}

/// A line per kind (every distinct message when `verbose`, or where the
/// kind said one thing).
fn lines_of_kinds(kinds: Vec<Kind>, all_tests: usize, verbose: bool) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, tests, messages, _) in kinds {
        if verbose || messages.len() == 1 {
            out.extend(messages.iter().map(|m| m.message.clone()));
            continue;
        }
        let named = if tests.len() > NAMED + 1 {
            format!(
                "{} and {} more",
                tests[..NAMED].join(", "),
                tests.len() - NAMED
            )
        } else {
            tests.join(", ")
        };
        let whom = match tests.len() {
            0 => format!("×{}", messages.len()),
            1 => format!("in {named}"),
            n if n == all_tests && n > NAMED + 1 => format!("in all {n} tests"),
            n => format!("in {n} tests ({named})"),
        };
        // The strongest evidence where the kind weighs it (the first of
        // equals), else the first message.
        let strongest = messages
            .iter()
            .filter(|m| m.strength.is_some())
            .reduce(|best, m| if m.strength > best.strength { m } else { best });
        let (which, shown) = match strongest {
            Some(m) => ("the strongest", *m),
            None => ("the first", messages[0]),
        };
        let measure = match (kind, shown.strength) {
            // Its observation stops before its figures: say the measure.
            (WarningKind::ForeignIo, Some(s)) => format!(" ({s:.1}x the job's own bytes)"),
            _ => String::new(),
        };
        out.push(format!(
            "{} {whom}; {which}: {}{measure} (each with -v)",
            label(kind),
            observation(&shown.message),
        ));
    }
    out
}

/// What a warning's message saw, before its detail and remedy: up to its
/// first `: ` or `; ` past the first [`OBSERVATION_MIN`] characters (an
/// earlier one ends a name it begins with, `SEQ1M Q8T1 read: ...`,
/// `--quick: ...`); all of it when there is none.
pub(crate) fn observation(message: &str) -> &str {
    let from = message
        .char_indices()
        .nth(OBSERVATION_MIN)
        .map_or(message.len(), |(i, _)| i);
    let end = [": ", "; "]
        .iter()
        .filter_map(|sep| message[from..].find(sep))
        .min()
        .map_or(message.len(), |at| from + at);
    &message[..end]
}

/// The fewest characters [`observation`] keeps before it may cut.
const OBSERVATION_MIN: usize = 30;

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::{RunBody, Warning};

    /// A run of `tests` jobs, each with the warnings `raise` gives it.
    fn run_of(tests: &[&str], raise: impl Fn(usize) -> Vec<Warning>) -> RunDocument {
        let mut doc = iomark_stats::example::mixed_randrw_run();
        let RunBody::Disk(run) = &mut doc.body else {
            unreachable!()
        };
        let job = run.jobs[0].clone();
        run.jobs = tests
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let mut j = job.clone();
                j.spec.name = name.to_string();
                j.warnings = raise(i);
                j
            })
            .collect();
        doc.warnings = vec![Warning::new(WarningKind::Shortened, "--quick: 2 passes")];
        doc
    }

    fn lines_of(doc: &RunDocument, verbose: bool) -> Vec<String> {
        let RunBody::Disk(run) = &doc.body else {
            unreachable!()
        };
        lines(doc, run, &[WarningKind::HighSpread], verbose)
    }

    #[test]
    fn a_kind_is_one_line_naming_its_tests_and_showing_the_first_message() {
        let tests = [
            "SEQ1M Q8T1 read",
            "SEQ1M Q8T1 write",
            "RND4K Q32T1 read",
            "RND4K Q1T1 read",
            "RND4K Q1T1 write",
            "a test that raised none",
        ];
        let doc = run_of(&tests, |i| {
            if i == 5 {
                return Vec::new();
            }
            vec![
                Warning::new(
                    WarningKind::ForeignIo,
                    format!("other I/O reached vda during the job: {i} MiB read"),
                ),
                Warning::new(WarningKind::BufferedIo, "buffered I/O"),
                Warning::new(WarningKind::HighSpread, "the passes disagree"),
            ]
        });
        assert_eq!(
            lines_of(&doc, false),
            [
                "--quick: 2 passes",
                "foreign io in 5 tests (SEQ1M Q8T1 read, SEQ1M Q8T1 write, RND4K Q32T1 read and 2 \
                 more); the first: other I/O reached vda during the job (each with -v)",
                "buffered I/O",
            ]
        );
        let all = lines_of(&doc, true);
        assert_eq!(all.len(), 1 + 5 + 1, "{all:?}");
        assert_eq!(all[5], "other I/O reached vda during the job: 4 MiB read");
        // Four tests are named whole, not "3 and 1 more".
        let four = run_of(&tests[..4], |i| {
            vec![Warning::new(WarningKind::ForeignIo, format!("{i}"))]
        });
        assert!(lines_of(&four, false)[1].contains(
            " in 4 tests (SEQ1M Q8T1 read, SEQ1M Q8T1 write, RND4K Q32T1 read, RND4K Q1T1 read); "
        ));
        // A kind every test raised says so instead of naming them.
        let every = run_of(&tests[..5], |i| {
            vec![Warning::new(
                WarningKind::HostBusy,
                format!("the CPUs were {i}% busy"),
            )]
        });
        assert_eq!(
            lines_of(&every, false)[1],
            "host busy in all 5 tests; the first: the CPUs were 0% busy (each with -v)"
        );
    }

    /// Issue 48: a kind that weighs its evidence shows its strongest
    /// message, with the measure where its observation stops before it.
    #[test]
    fn a_weighed_kind_shows_its_strongest_evidence() {
        let tests = ["SEQ1M Q8T1 read", "RND4K Q32T1 read", "RND4K Q1T1 read"];
        let doc = run_of(&tests, |i| {
            let strength = [0.2, 3.5, 1.0][i];
            vec![
                Warning::new(
                    WarningKind::ForeignIo,
                    format!("other I/O reached vda in test {i}: {strength} MiB"),
                )
                .with_strength(strength),
                Warning::new(
                    WarningKind::RequestSizeChanged,
                    format!(
                        "reads reached vda as {}KiB requests on average: why",
                        4 << i
                    ),
                )
                .with_strength([2.0, 1.0, 8.0][i]),
            ]
        });
        let lines = lines_of(&doc, false);
        assert_eq!(
            lines[1],
            "foreign io in 3 tests (SEQ1M Q8T1 read, RND4K Q32T1 read, RND4K Q1T1 read); the \
             strongest: other I/O reached vda in test 1 (3.5x the job's own bytes) (each with -v)"
        );
        assert!(
            lines[2].ends_with(
                "the strongest: reads reached vda as 16KiB requests on average (each with -v)"
            ),
            "{lines:#?}"
        );
    }

    /// Issue 48: a busy machine's run prints at most eight warning lines:
    /// seven kinds, then one naming the kinds left out with their counts.
    #[test]
    fn past_eight_kinds_the_last_line_names_the_kinds_left_out() {
        let kinds = [
            WarningKind::ForeignIo,
            WarningKind::RequestSizeChanged,
            WarningKind::BufferedIo,
            WarningKind::FewSamples,
            WarningKind::CompressibleData,
            WarningKind::CacheSuspected,
            WarningKind::AboveRated,
            WarningKind::DeviceStalled,
            WarningKind::SharedDevice,
            WarningKind::HostBusy,
        ];
        // Each test raises every kind, the host busy in the same words.
        let doc = run_of(&["SEQ1M Q8T1 read", "RND4K Q1T1 read"], |i| {
            kinds
                .iter()
                .map(|&k| match k {
                    WarningKind::HostBusy => Warning::new(k, "the host was busy"),
                    _ => Warning::new(k, format!("{} seen in test {i}: detail", k.name())),
                })
                .collect()
        });
        let lines = lines_of(&doc, false);
        // The run's own --quick line, six of the tests' ten kinds, then
        // the four left out with how many times each was raised.
        assert_eq!(lines.len(), MOST_LINES, "{lines:#?}");
        assert!(lines[0].starts_with("--quick"), "{lines:#?}");
        assert!(lines[1].starts_with("foreign io in 2 tests"), "{lines:#?}");
        assert_eq!(
            lines[7],
            "4 more kinds: above rated ×2, device stalled ×2, shared device ×2, \
             host busy ×2 (each with -v)"
        );
        // -v keeps every message.
        assert_eq!(lines_of(&doc, true).len(), 2 * kinds.len());
    }

    #[test]
    fn an_observation_ends_at_the_first_colon_or_semicolon_past_a_name() {
        for (message, seen) in [
            (
                "SEQ1M Q8T1 read: passes ranged 1539.31 to 2249.20 MB/s; the maximum is reported",
                "SEQ1M Q8T1 read: passes ranged 1539.31 to 2249.20 MB/s",
            ),
            (
                "--quick: 2 passes of 1 s with 0 s intervals instead of 5; a first look",
                "--quick: 2 passes of 1 s with 0 s intervals instead of 5",
            ),
            ("short: and done", "short: and done"),
            (
                "reads reached vda as 512 KiB requests on average: the block layer split",
                "reads reached vda as 512 KiB requests on average",
            ),
        ] {
            assert_eq!(observation(message), seen);
        }
    }
}
