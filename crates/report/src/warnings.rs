//! The page's warnings: every warning stored with a run (the run's own,
//! each job's, each mem sweep point's), folded under their run and
//! grouped by kind, each message once with the tests it was raised for.

use std::fmt::Write;

use iomark_model::{Warning, WarningKind};

use crate::svg::esc;
use crate::ReportRun;

/// Every warning of a run with the test (or part) it belongs to
/// ([`iomark_model::RunDocument::scoped_warnings`]): a sweep's doubts are its
/// points' (issue 32: a sweep page said "none" over 15 stored warnings).
fn stored(r: &ReportRun) -> Vec<(String, &Warning)> {
    r.doc.scoped_warnings()
}

/// One kind's warnings of a run: each message once, with every test it
/// was raised for (the passes of one CrystalDiskMark test repeat theirs).
struct KindGroup<'a> {
    kind: WarningKind,
    messages: Vec<(&'a str, Vec<String>)>,
}

fn grouped(r: &ReportRun) -> Vec<KindGroup<'_>> {
    let mut groups: Vec<KindGroup<'_>> = Vec::new();
    for (scope, w) in stored(r) {
        let at = match groups.iter().position(|g| g.kind == w.kind) {
            Some(i) => i,
            None => {
                groups.push(KindGroup {
                    kind: w.kind,
                    messages: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let messages = &mut groups[at].messages;
        match messages.iter_mut().find(|(m, _)| *m == w.message) {
            Some((_, scopes)) if scopes.contains(&scope) => {}
            Some((_, scopes)) => scopes.push(scope),
            None => messages.push((&w.message, vec![scope])),
        }
    }
    groups
}

/// `<h2>Warnings</h2>`, then per run with warnings a `<details>` (folded)
/// whose summary counts them, and inside it one list per kind.
pub(crate) fn section(o: &mut String, runs: &[ReportRun]) {
    o.push_str("<h2>Warnings</h2><div id=\"warnings\">");
    let mut any = false;
    for r in runs {
        let groups = grouped(r);
        if groups.is_empty() {
            continue;
        }
        any = true;
        // Counted as raised, as `results list` and the run list count
        // what the store keeps (a run's list said 47 where this said 46,
        // each message once); the messages shown are said apart.
        let count = stored(r).len();
        let different: usize = groups.iter().map(|g| g.messages.len()).sum();
        let different = if different < count {
            format!(", {different} different")
        } else {
            String::new()
        };
        let kinds: Vec<String> = groups
            .iter()
            .map(|g| g.kind.name().replace('_', " "))
            .collect();
        let _ = write!(
            o,
            "<details class=\"run-warnings\" data-run=\"{}\"><summary><b>{}</b>: {count} warning{}{different} ({})</summary><ul class=\"warnings\">",
            esc(&r.id),
            esc(&r.name),
            if count == 1 { "" } else { "s" },
            esc(&kinds.join(", "))
        );
        for (g, kind) in groups.iter().zip(&kinds) {
            let _ = write!(
                o,
                "<li data-kind=\"{}\"><b>{}</b><ul>",
                esc(&g.kind.name()),
                esc(kind)
            );
            for (message, scopes) in &g.messages {
                let _ = write!(
                    o,
                    "<li class=\"warning\" data-run=\"{}\">{} <small>(in {})</small></li>",
                    esc(&r.id),
                    esc(message),
                    esc(&scopes.join("; "))
                );
            }
            o.push_str("</ul></li>");
        }
        o.push_str("</ul></details>");
    }
    if !any {
        o.push_str("<p>none</p>");
    }
    o.push_str("</div>");
}
