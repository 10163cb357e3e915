//! Why a run lacks a test the others have. A test's name is everything
//! that changes its result (`read 1MiB QD8 T1, io_uring, direct, random
//! data, 1GiB`), so the run's own test that does the same (its first
//! word) and whose name differs in the fewest other words is the same work
//! at another setting, and those words are the reason: `256MiB` where the
//! others ran `1GiB`, `psync` where they ran `io_uring` (issue 48).
//! `results compare`, its JSON and the report's page all say it from here.

use std::collections::HashSet;

/// A test a run lacks, and what its nearest test did differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing<'a> {
    /// The test the other runs have.
    pub test: &'a str,
    /// The words in which the run's nearest test differs from it, in the
    /// name's order: `(the run's, the missing test's)`. Empty when the run
    /// has no test that near.
    pub differs: Vec<WordDiff<'a>>,
}

/// The most words a nearest test may differ in: past two it is other
/// work, not the same work at another setting.
const MOST_DIFFERENT: usize = 2;

/// The most pairs of a missing test and a candidate weighed for one run:
/// past it (two sweeps of thousands of tests each with nothing in common)
/// the tests are listed without reasons rather than the compare taking
/// seconds.
const MOST_PAIRS: usize = 250_000;

/// Per run (each given by its tests' names), the tests other runs have
/// and it lacks, in first-seen order, each with its reason. A candidate
/// for a run's nearest test is one of its tests that some run having the
/// missing test lacks: a test that lines up already is not another
/// setting of a missing one (a sweep to 512k against one to 1M lacks 1M,
/// and its 512k has its counterpart).
pub fn missing_tests<'a>(runs: &[Vec<&'a str>]) -> Vec<Vec<Missing<'a>>> {
    let mut seen: HashSet<&str> = HashSet::new();
    let all: Vec<&str> = runs
        .iter()
        .flatten()
        .copied()
        .filter(|t| seen.insert(t))
        .collect();
    let sets: Vec<HashSet<&str>> = runs.iter().map(|r| r.iter().copied().collect()).collect();
    runs.iter()
        .zip(&sets)
        .map(|(has, set)| {
            let missing: Vec<&str> = all.iter().copied().filter(|t| !set.contains(t)).collect();
            let weigh = missing.len().saturating_mul(has.len()) <= MOST_PAIRS;
            let named: Vec<(&str, Vec<&str>)> = if weigh {
                has.iter().map(|n| (*n, words(n))).collect()
            } else {
                Vec::new()
            };
            missing
                .into_iter()
                .map(|t| {
                    let holders: Vec<&HashSet<&str>> =
                        sets.iter().filter(|s| s.contains(t)).collect();
                    let candidates: Vec<&Vec<&str>> = named
                        .iter()
                        .filter(|(n, _)| holders.iter().any(|h| !h.contains(n)))
                        .map(|(_, w)| w)
                        .collect();
                    Missing {
                        test: t,
                        differs: nearest(t, &candidates),
                    }
                })
                .collect()
        })
        .collect()
}

/// One word of a name as a run's nearest test has it and as the missing
/// test: `("256MiB", "1GiB")`.
pub type WordDiff<'a> = (&'a str, &'a str);

/// Missing tests of one reason: the words they differ in, and the tests.
pub type Group<'m, 'a> = (&'m [WordDiff<'a>], Vec<&'a str>);

/// `missing` grouped by reason: the tests the run ran at one other
/// setting together, in first-seen order, then those it has nothing near
/// (an empty reason).
pub fn by_reason<'m, 'a>(missing: &'m [Missing<'a>]) -> Vec<Group<'m, 'a>> {
    let mut groups: Vec<Group> = Vec::new();
    for m in missing {
        match groups.iter_mut().find(|(d, _)| *d == m.differs.as_slice()) {
            Some((_, tests)) => tests.push(m.test),
            None => groups.push((&m.differs, vec![m.test])),
        }
    }
    groups.sort_by_key(|(d, _)| d.is_empty());
    groups
}

/// A name's words: its comma-separated parts split at spaces.
fn words(name: &str) -> Vec<&str> {
    name.split([' ', ',']).filter(|w| !w.is_empty()).collect()
}

/// The words in which the nearest of the names `has` (each as its words)
/// differs from `test`: the name of as many words, beginning with the
/// same, differing in the fewest, at most [`MOST_DIFFERENT`]; the first
/// such name on a tie.
fn nearest<'a>(test: &'a str, has: &[&Vec<&'a str>]) -> Vec<WordDiff<'a>> {
    let want = words(test);
    let mut best: Vec<WordDiff> = Vec::new();
    // The first word is what the test does (`read`, `randwrite`, a
    // kernel, a protocol): another is other work, however close the rest.
    for theirs in has
        .iter()
        .filter(|w| w.len() == want.len() && w.first() == want.first())
    {
        let differs: Vec<WordDiff> = theirs
            .iter()
            .zip(&want)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (*a, *b))
            .collect();
        if differs.len() <= MOST_DIFFERENT && (best.is_empty() || differs.len() < best.len()) {
            best = differs;
        }
    }
    best
}

/// The reason in words, said of `run` (`#2`, `which`) for `tests` tests:
/// `#2 ran it with 256MiB, not 1GiB`; none without a nearest test.
pub fn reason(run: &str, differs: &[WordDiff], tests: usize) -> Option<String> {
    if differs.is_empty() {
        return None;
    }
    let (own, asked): (Vec<&str>, Vec<&str>) = differs.iter().copied().unzip();
    Some(format!(
        "{run} ran {} with {}, not {}",
        if tests == 1 { "it" } else { "them" },
        own.join(" and "),
        asked.join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_at_another_size_or_engine_names_the_words_that_differ() {
        let big = [
            "read 1MiB QD8 T1, io_uring, direct, random data, 1GiB",
            "randread 4KiB QD32 T1, io_uring, direct, random data, 1GiB",
            "stream copy",
        ];
        let small = [
            "read 1MiB QD8 T1, io_uring, direct, random data, 256MiB",
            "randread 4KiB QD32 T1, psync, buffered, random data, 256MiB",
        ];
        let missing = missing_tests(&[big.to_vec(), small.to_vec()]);
        // The first run lacks the second's two tests.
        assert_eq!(missing[0].len(), 2);
        assert_eq!(missing[0][0].differs, [("1GiB", "256MiB")]);
        assert_eq!(missing[1].len(), 3);
        assert_eq!(missing[1][0].test, big[0]);
        assert_eq!(missing[1][0].differs, [("256MiB", "1GiB")]);
        // Three words apart (engine, direct and size): other work.
        assert_eq!(missing[1][1].differs, []);
        // No name of as many words.
        assert_eq!(missing[1][2].differs, []);
        // Another first word is other work, however close the rest.
        let other = missing_tests(&[
            vec!["read 1MiB QD8 T1, io_uring, direct, random data, 1GiB"],
            vec!["randread 1MiB QD8 T1, io_uring, direct, random data, 1GiB"],
        ]);
        assert_eq!(other[0][0].differs, []);
        assert_eq!(
            reason("#2", &missing[1][0].differs, 1).unwrap(),
            "#2 ran it with 256MiB, not 1GiB"
        );
        assert_eq!(reason("#2", &[], 1), None);
        let groups = by_reason(&missing[1]);
        assert_eq!(groups.len(), 2, "{groups:?}");
        assert_eq!(groups[0].1, [big[0]]);
        assert_eq!(groups[1], (&[][..], vec![big[1], big[2]]));
    }

    #[test]
    fn a_test_that_lines_up_already_is_no_reason() {
        // A sweep to 512k against one to 1M: the first lacks 1M, and its
        // 512k, which the second has too, is not "1M at another size".
        let to_512k = vec!["read 4KiB QD1 T1, psync", "read 512KiB QD1 T1, psync"];
        let to_1m = vec![
            "read 4KiB QD1 T1, psync",
            "read 512KiB QD1 T1, psync",
            "read 1MiB QD1 T1, psync",
        ];
        let missing = missing_tests(&[to_512k, to_1m]);
        assert_eq!(missing[0].len(), 1);
        assert_eq!(missing[0][0].differs, []);
        assert!(missing[1].is_empty());
    }

    #[test]
    fn the_nearest_is_the_name_differing_in_fewest_words() {
        let has = [
            "read 1MiB QD8 T1, psync, direct, random data, 256MiB",
            "read 1MiB QD8 T1, io_uring, direct, random data, 256MiB",
        ];
        let missing = missing_tests(&[
            vec!["read 1MiB QD8 T1, io_uring, direct, random data, 1GiB"],
            has.to_vec(),
        ]);
        assert_eq!(missing[1][0].differs, [("256MiB", "1GiB")]);
        assert_eq!(
            reason("#3", &[("psync", "io_uring"), ("256MiB", "1GiB")], 2).unwrap(),
            "#3 ran them with psync and 256MiB, not io_uring and 1GiB"
        );
    }
}
