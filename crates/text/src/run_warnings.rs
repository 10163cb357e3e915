//! A disk run's warnings under its table: one line per kind, so a busy
//! machine's twenty "other I/O reached vda" do not bury the table. A kind
//! whose tests all said the same is that sentence once; a kind said
//! differently in several tests names them and shows what the first one
//! saw (its message up to the first colon, before the detail and the
//! remedy). `-v` (and `--json`) keep every message.

use iomark_model::disk::DiskRun;
use iomark_model::{RunDocument, WarningKind};

/// Tests named on a grouped line before "and N more".
const NAMED: usize = 3;

/// The run's warning lines, but of the kinds in `shown` (those its tables
/// show already); every distinct message when `verbose`.
pub(crate) fn lines(
    doc: &RunDocument,
    run: &DiskRun,
    shown: &[WarningKind],
    verbose: bool,
) -> Vec<String> {
    // Each kind in first-seen order, with each test that raised it (the
    // job's name; none for the run's own) and its distinct messages.
    let mut kinds: Vec<(WarningKind, Vec<&str>, Vec<&str>)> = Vec::new();
    let raised = doc.warnings.iter().map(|w| ("", w)).chain(
        run.jobs
            .iter()
            .flat_map(|j| j.warnings.iter().map(move |w| (j.spec.name.as_str(), w))),
    );
    for (test, w) in raised.filter(|(_, w)| !shown.contains(&w.kind)) {
        let at = match kinds.iter().position(|(k, ..)| *k == w.kind) {
            Some(at) => at,
            None => {
                kinds.push((w.kind, Vec::new(), Vec::new()));
                kinds.len() - 1
            }
        };
        let (_, tests, messages) = &mut kinds[at];
        if !test.is_empty() && !tests.contains(&test) {
            tests.push(test);
        }
        if !messages.contains(&w.message.as_str()) {
            messages.push(&w.message);
        }
    }
    let mut out = Vec::new();
    for (kind, tests, messages) in kinds {
        if verbose || messages.len() == 1 {
            out.extend(messages.iter().map(|m| m.to_string()));
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
            n => format!("in {n} tests ({named})"),
        };
        // The first message's observation, before its detail and remedy.
        let first = messages[0].split(": ").next().unwrap_or(messages[0]);
        out.push(format!(
            "{} {whom}; the first: {first} (each with -v)",
            kind.name().replace('_', " "),
        ));
    }
    out
}

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
        ];
        let doc = run_of(&tests, |i| {
            vec![
                Warning::new(
                    WarningKind::ForeignIo,
                    format!("other I/O reached vda: {i} MiB"),
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
                 more); the first: other I/O reached vda (each with -v)",
                "buffered I/O",
            ]
        );
        let all = lines_of(&doc, true);
        assert_eq!(all.len(), 1 + 5 + 1, "{all:?}");
        assert_eq!(all[5], "other I/O reached vda: 4 MiB");
        // Four tests are named whole, not "3 and 1 more".
        let four = run_of(&tests[..4], |i| {
            vec![Warning::new(WarningKind::ForeignIo, format!("{i}"))]
        });
        assert!(lines_of(&four, false)[1].contains(
            " in 4 tests (SEQ1M Q8T1 read, SEQ1M Q8T1 write, RND4K Q32T1 read, RND4K Q1T1 read); "
        ));
    }
}
