//! The page's comparison table: tests as rows, runs as columns, each
//! figure with its ratio to its baseline, what that means and the
//! difference in the unit its run printed, as `iomark results compare`
//! lays it out. The pairing (`--baseline ID`, or `--baseline-label L`:
//! each run against the L-labelled run of the same device and test) is
//! `iomark_stats::lineup`'s, the same code `compare` uses.

use std::fmt::Write;

use iomark_stats::lineup::{Baseline, Lineup};

use crate::svg::esc;

/// One figure's cell.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedCell {
    /// The value as its run printed it: `10486 KB/s`.
    pub value: String,
    /// `2.00x better`, `1.01x~ within noise`; none for a baseline or a
    /// figure without a baseline.
    pub judgement: Option<String>,
    /// `+5243 KB/s`; none where there is no baseline figure.
    pub difference: Option<String>,
    /// The run it is a figure of.
    pub run: i64,
    /// The baseline run it was divided by.
    pub against: Option<i64>,
    /// The figure in base units (`data-value`).
    pub stored: f64,
}

/// One `(test, metric)` row: a cell per column, none where the run lacks it.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedRow {
    /// The test's name.
    pub test: String,
    /// The names the runs printed it under (`Seq read`), when they differ.
    pub own_names: Vec<String>,
    /// The metric.
    pub metric: String,
    /// Per column.
    pub cells: Vec<Option<ComparedCell>>,
}

/// The comparison drawn on the page, owned (the lineup borrows the stored
/// runs; the page outlives them).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// What the ratios are against, in words.
    pub against: String,
    /// Per column: its runs' ids (a device's runs of one set of labels
    /// that share no row are one column, as in `compare`) and whether they
    /// are baselines.
    pub columns: Vec<(Vec<i64>, bool)>,
    /// The rows, in first-seen order.
    pub rows: Vec<ComparedRow>,
    /// A line per run against its baseline, as `results compare` opens:
    /// `#2 against #1: 3 better, 1 worse, most lost: …`.
    pub verdicts: Vec<String>,
}

impl Comparison {
    /// The table of `lineup`, every figure judged against its baseline.
    pub fn of(lineup: &Lineup) -> Comparison {
        let runs = lineup.runs();
        let cols = lineup.columns();
        let columns = cols
            .iter()
            .map(|c| {
                let ids = c.iter().map(|&i| runs[i].summary.id.0).collect();
                (ids, lineup.is_baseline(c[0]))
            })
            .collect();
        let rows = lineup
            .keys()
            .iter()
            .map(|&k| ComparedRow {
                test: k.0.to_string(),
                own_names: lineup.own_names(k.0).to_vec(),
                metric: k.1.to_string(),
                cells: cols
                    .iter()
                    .map(|c| {
                        let i = lineup.in_column(c, k)?;
                        let f = lineup.figure(i, k)?;
                        let m = lineup.judged(i, k);
                        Some(ComparedCell {
                            value: lineup.printed(i).format_figure(f),
                            judgement: m.as_ref().and_then(|m| m.judgement()),
                            difference: m.as_ref().map(|m| m.difference_text()),
                            run: runs[i].summary.id.0,
                            against: m.as_ref().map(|m| m.baseline_run.0),
                            stored: f.value,
                        })
                    })
                    .collect(),
            })
            .collect();
        let against = match lineup.baseline() {
            Baseline::FirstRun => format!(
                "ratios are run / baseline run {}",
                runs.first().map_or(0, |r| r.summary.id.0)
            ),
            Baseline::Label(l) => {
                let pairs: Vec<String> = lineup
                    .baselines_used()
                    .iter()
                    .map(|(id, used)| {
                        let used: Vec<String> = used.iter().map(|b| b.to_string()).collect();
                        format!("run {id} against {}", used.join(", "))
                    })
                    .collect();
                format!(
                    "ratios are run / the run labelled {l} of the same device and test (of another device when none of the same has it): {}",
                    if pairs.is_empty() { "none".to_string() } else { pairs.join("; ") }
                )
            }
        };
        Comparison {
            against,
            columns,
            rows,
            verdicts: iomark_text::results::verdicts(lineup),
        }
    }
}

/// A column's heading: its runs' names, and whether it is the baseline.
fn heading(ids: &[i64], baseline: bool, name: &impl Fn(i64) -> String) -> String {
    let names: Vec<String> = ids.iter().map(|&id| esc(&name(id))).collect();
    format!(
        "{}{}",
        names.join("<br>"),
        if baseline {
            "<br><small>(baseline)</small>"
        } else {
            ""
        }
    )
}

/// A compared cell, or `-` where the column lacks the figure.
fn cell_html(o: &mut String, cell: Option<&ComparedCell>) {
    let Some(cell) = cell else {
        o.push_str("<td class=\"num\">-</td>");
        return;
    };
    let _ = write!(
        o,
        "<td class=\"num compared\" data-run=\"{}\" data-value=\"{}\"{}>{}",
        cell.run,
        cell.stored,
        cell.against
            .map(|b| format!(" data-against=\"{b}\""))
            .unwrap_or_default(),
        esc(&cell.value)
    );
    if let Some(j) = &cell.judgement {
        let _ = write!(o, " {}", esc(j));
    }
    if let Some(d) = &cell.difference {
        let _ = write!(o, "<br><small>({})</small>", esc(d));
    }
    o.push_str("</td>");
}

/// A test's own names, after it, small.
fn own(r: &ComparedRow) -> String {
    if r.own_names.is_empty() {
        String::new()
    } else {
        format!("<br><small>({})</small>", esc(&r.own_names.join("; ")))
    }
}

/// The verdict lines, then the table, with `name` giving each run's name
/// (a column of several runs names each): a column per run. With more runs than colours, a
/// run per row instead, in a folded table per test, its metrics the
/// columns: fifty runs side by side are wider than any page.
pub(crate) fn html(o: &mut String, c: &Comparison, name: impl Fn(i64) -> String) {
    if !c.verdicts.is_empty() {
        o.push_str("<h2>Verdict</h2><ul id=\"verdict\">");
        for v in &c.verdicts {
            let _ = write!(o, "<li>{}</li>", esc(v));
        }
        o.push_str("</ul>");
    }
    if c.columns.len() > crate::svg::COLOURS {
        by_test(o, c, &name);
    } else {
        side_by_side(o, c, &name);
    }
    let _ = write!(
        o,
        "<p><small>{}; ~ marks a difference within noise: the 90% interval of the ratio of both runs' sample means (each end a one-sided 95% bound) (per-second samples, passes or repeats) holds no change and rules out a loss of the threshold (5% without one); cannot tell: the samples can neither show nor rule out such a loss; a figure whose baseline is 0 has no ratio, only its difference.</small></p>",
        esc(&c.against)
    );
}

/// A table per test, folded: a row per column of runs, a column per metric.
fn by_test(o: &mut String, c: &Comparison, name: &impl Fn(i64) -> String) {
    o.push_str("<h2>Against the baseline</h2><div id=\"comparison\">");
    let mut tests: Vec<&str> = Vec::new();
    for r in &c.rows {
        if !tests.contains(&r.test.as_str()) {
            tests.push(&r.test);
        }
    }
    for test in tests {
        let rows: Vec<&ComparedRow> = c.rows.iter().filter(|r| r.test == test).collect();
        let _ = write!(
            o,
            "<details class=\"compared-test\"><summary><b>{}</b>{}: {} runs</summary><table class=\"comparison\"><tr><th>run</th>",
            esc(test),
            own(rows[0]),
            c.columns.iter().map(|(ids, _)| ids.len()).sum::<usize>()
        );
        for r in &rows {
            let _ = write!(o, "<th>{}</th>", esc(&r.metric));
        }
        o.push_str("</tr>");
        for (i, (ids, baseline)) in c.columns.iter().enumerate() {
            let _ = write!(o, "<tr><td>{}</td>", heading(ids, *baseline, name));
            for r in &rows {
                cell_html(o, r.cells.get(i).and_then(Option::as_ref));
            }
            o.push_str("</tr>");
        }
        o.push_str("</table></details>");
    }
    o.push_str("</div>");
}

/// One table: a row per figure, a column per column of runs; the CPU
/// figures in a second, folded, as `results compare` keeps them for -v:
/// a CrystalDiskMark run has eight of them per test.
fn side_by_side(o: &mut String, c: &Comparison, name: &impl Fn(i64) -> String) {
    let (cpu, io): (Vec<&ComparedRow>, Vec<&ComparedRow>) =
        c.rows.iter().partition(|r| r.metric.starts_with("cpu"));
    o.push_str("<h2>Against the baseline</h2>");
    table(o, "comparison", c, &io, name);
    if !cpu.is_empty() {
        let _ = write!(
            o,
            "<details class=\"cpu-rows\"><summary>CPU figures: {} row{}</summary>",
            cpu.len(),
            if cpu.len() == 1 { "" } else { "s" }
        );
        table(o, "comparison-cpu", c, &cpu, name);
        o.push_str("</details>");
    }
}

/// A table of `rows` with the columns' headings.
fn table(
    o: &mut String,
    id: &str,
    c: &Comparison,
    rows: &[&ComparedRow],
    name: &impl Fn(i64) -> String,
) {
    let _ = write!(o, "<table id=\"{id}\"><tr><th>test</th><th>metric</th>");
    for (ids, baseline) in &c.columns {
        let _ = write!(o, "<th>{}</th>", heading(ids, *baseline, name));
    }
    o.push_str("</tr>");
    for r in rows {
        let _ = write!(
            o,
            "<tr><td>{}{}</td><td>{}</td>",
            esc(&r.test),
            own(r),
            esc(&r.metric)
        );
        for cell in &r.cells {
            cell_html(o, cell.as_ref());
        }
        o.push_str("</tr>");
    }
    o.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_escapes_names_and_marks_the_baseline() {
        let c = Comparison {
            against: "ratios are run / baseline run 1".into(),
            columns: vec![(vec![1], true), (vec![2, 3], false)],
            rows: vec![ComparedRow {
                test: "read <b>".into(),
                own_names: vec!["Seq <read>".into()],
                metric: "read bw".into(),
                cells: vec![
                    Some(ComparedCell {
                        value: "20.00 MiB/s".into(),
                        judgement: None,
                        difference: None,
                        run: 1,
                        against: None,
                        stored: 20.0 * 1048576.0,
                    }),
                    None,
                ],
            }],
            verdicts: vec!["#2 against #1: 1 worse, most lost: read <b> 0.50x".into()],
        };
        let mut o = String::new();
        html(&mut o, &c, |id| format!("run {id} <x>"));
        assert!(
            o.contains("read &lt;b&gt;<br><small>(Seq &lt;read&gt;)</small>"),
            "{o}"
        );
        assert!(
            o.contains("run 1 &lt;x&gt;<br><small>(baseline)</small>"),
            "{o}"
        );
        assert!(
            o.contains("data-value=\"20971520\">20.00 MiB/s</td>"),
            "{o}"
        );
        assert!(o.contains("<td class=\"num\">-</td>"), "{o}");
        assert!(
            o.contains("<th>run 2 &lt;x&gt;<br>run 3 &lt;x&gt;</th>"),
            "{o}"
        );
        assert!(!o.contains("data-against"), "{o}");
        // CPU rows wait in a folded table of their own.
        let mut cpu = c.clone();
        cpu.rows[0].metric = "cpu process %".into();
        cpu.rows.insert(0, c.rows[0].clone());
        let mut folded = String::new();
        html(&mut folded, &cpu, |id| format!("run {id}"));
        let main = &folded[..folded.find("</table>").unwrap()];
        assert!(!main.contains("cpu process"), "{folded}");
        assert!(
            folded.contains("<details class=\"cpu-rows\"><summary>CPU figures: 1 row</summary><table id=\"comparison-cpu\">"),
            "{folded}"
        );
        // The verdict comes before the table.
        let verdict = o
            .find("<li>#2 against #1: 1 worse, most lost: read &lt;b&gt; 0.50x</li>")
            .expect(&o);
        assert!(verdict < o.find("<table").unwrap(), "{o}");
    }
}
