//! The one seam a finished run is printed through: iomark's text, the run
//! document, or fio's JSON layout (`json`, `json+`). A command picks the
//! [`Output`] from its flags and renders; the choice is never re-made
//! further down, so a run across MPI ranks prints its rank table exactly
//! where a run prints its text.

use iomark_model::{RunBody, RunDocument};

/// How a finished run is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// iomark's text ([`crate::run`]), each rank's table after it for a run
    /// across MPI ranks; `verbose` adds the spread over passes and the
    /// series behind the averages.
    Text {
        /// Show the spread and the series.
        verbose: bool,
    },
    /// The run document, JSON (`--json`).
    Document,
    /// fio's JSON layout (`--output-format json`); with `plus`, each
    /// latency histogram's bins too (`json+`).
    FioJson {
        /// fio's `json+`.
        plus: bool,
    },
}

/// Why a run could not be rendered as asked.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// fio's layout asked of a run that is not a disk run.
    #[error("fio's layout is for disk runs")]
    NotDisk,
    /// The document could not be written as JSON.
    #[error("cannot write the run as JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl Output {
    /// [`render`](Output::render) for a terminal `width` columns wide
    /// (none: not a terminal): text's prose wrapped to it
    /// ([`fit_prose`]); a JSON document never is.
    pub fn render_for(
        self,
        doc: &RunDocument,
        width: Option<usize>,
    ) -> Result<String, OutputError> {
        let out = self.render(doc)?;
        Ok(match (self, width) {
            (Output::Text { .. }, Some(width)) => fit_prose(&out, width),
            _ => out,
        })
    }

    /// The run as this output prints it, ending in a newline (empty for a
    /// network run's text, which iperf3's layout printed as it ran).
    pub fn render(self, doc: &RunDocument) -> Result<String, OutputError> {
        match self {
            Output::Text { verbose } => {
                let mut text = crate::run(doc, verbose).unwrap_or_default();
                match &doc.body {
                    RunBody::Disk(d) => {
                        if let Some(c) = &d.cluster {
                            text.push_str(&crate::rank_table(c));
                        }
                    }
                    RunBody::Mem(m) => {
                        if let Some(c) = &m.cluster {
                            text.push_str(&crate::mem_rank_table(c));
                        }
                    }
                    _ => {}
                }
                Ok(text)
            }
            Output::Document => Ok(iomark_model::escape::to_json_pretty(doc)? + "\n"),
            Output::FioJson { plus } => {
                let v = crate::fio_json(doc, plus).ok_or(OutputError::NotDisk)?;
                Ok(iomark_model::escape::to_json_pretty(&v)? + "\n")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomark_model::cluster::{ClusterRun, Layout, RankResult};
    use iomark_model::disk::{DiskJobResult, DiskJobSpec, DiskRun, DiskTarget, TargetKind};
    use iomark_model::units::{Bytes, BytesPerSec, Nanos};

    /// A one-job disk run; across two ranks when `ranks`.
    fn doc(ranks: bool) -> RunDocument {
        let rank = |r: u32| RankResult {
            rank: r,
            host: format!("node{r}"),
            path: format!("/scratch/{r}/iomark.tmp"),
            offset: Bytes(0),
            start: Nanos(0),
            end: Nanos::from_secs(5),
            read_bytes: Bytes(500 << 20),
            write_bytes: Bytes(0),
            read_bw: BytesPerSec(100e6 + 10e6 * f64::from(r)),
            write_bw: BytesPerSec(0.0),
            interrupted: false,
            stonewalled: false,
            device: None,
            jobs: Vec::new(),
        };
        let body = RunBody::Disk(DiskRun {
            rounds_so_far: Vec::new(),
            profile: "custom".into(),
            target: DiskTarget {
                given: "/scratch".into(),
                path: "/scratch/iomark.tmp".into(),
                kind: TargetKind::File,
                size: Bytes(Bytes::GIB),
                logical_block_size: 512,
                size_from_device: false,
            },
            jobs: vec![DiskJobResult::example(DiskJobSpec::example())],
            profile_result: None,
            cgroup: None,
            probe: None,
            knees: vec![],
            cluster: ranks.then(|| {
                Box::new(ClusterRun {
                    ranks: 2,
                    layout: Layout::FilePerRank,
                    wall: Nanos::from_secs(5),
                    per_rank: vec![rank(0), rank(1)],
                    stonewall: false,
                })
            }),
        });
        RunDocument::iomark(vec!["iomark".into()], body)
    }

    #[test]
    fn the_text_of_a_run_across_ranks_ends_with_its_rank_table() {
        let alone = doc(false);
        let text = Output::Text { verbose: false }.render(&alone).unwrap();
        assert_eq!(text, crate::run(&alone, false).unwrap());
        assert!(!text.contains("node0"), "{text}");

        let across = doc(true);
        let text = Output::Text { verbose: false }.render(&across).unwrap();
        let RunBody::Disk(d) = &across.body else {
            unreachable!()
        };
        let table = crate::rank_table(d.cluster.as_ref().unwrap());
        assert!(table.contains("slowest rank 0, fastest rank 1"), "{table}");
        assert_eq!(
            text,
            crate::run(&across, false).unwrap() + &table,
            "the run's text, then its rank table"
        );
    }

    #[test]
    fn the_document_and_fios_layouts_carry_no_rank_table() {
        let d = doc(true);
        let json = Output::Document.render(&d).unwrap();
        assert!(json.ends_with("}\n"));
        let back: RunDocument = serde_json::from_str(&json).unwrap();
        assert_eq!(back, d);
        for plus in [false, true] {
            let fio = Output::FioJson { plus }.render(&d).unwrap();
            let v: serde_json::Value = serde_json::from_str(&fio).unwrap();
            assert_eq!(v, crate::fio_json(&d, plus).unwrap());
            assert!(!fio.contains("slowest rank"), "{fio}");
        }
    }
}

/// `text` with each line of prose longer than `width` columns wrapped at
/// its spaces, the rest indented under its first word: on a terminal a
/// 300-character warning reads as four lines of 80, not one the terminal
/// breaks mid-word. Prose is a line with no two spaces in a row past its
/// indent (and a `- ` bullet); table rows, which have them, stay whole, as
/// does a word longer than a line (a path).
pub fn fit_prose(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = line
            .strip_suffix('\n')
            .map_or((line, ""), |body| (body, "\n"));
        let words = body.trim_start_matches(' ');
        let words = words.strip_prefix("- ").unwrap_or(words);
        let lead = body.len() - words.len();
        if body.chars().count() <= width || words.contains("  ") {
            out.push_str(line);
            continue;
        }
        let mut lines = vec![body[..lead].to_string()];
        for word in words.split(' ') {
            let last = lines.last_mut().expect("one line at least");
            let fresh = last.len() == lead;
            if !fresh && last.chars().count() + 1 + word.chars().count() > width {
                lines.push(format!("{:lead$}{word}", ""));
            } else {
                if !fresh {
                    last.push(' ');
                }
                last.push_str(word);
            }
        }
        out.push_str(&lines.join("\n"));
        out.push_str(end);
    }
    out
}

/// `text` of `key   value` lines (`iomark info`'s) fitted to `width`: a
/// line too long wraps its value at spaces, the rest under the value's
/// first column; other lines as [`fit_prose`] fits them.
pub fn fit_fields(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let end = &line[body.len()..];
        // The value's column: past the key and the spaces after it.
        let lead = body.len() - body.trim_start().len();
        let column = body[lead..]
            .find("  ")
            .map(|at| lead + at)
            .map(|at| at + body[at..].len() - body[at..].trim_start().len());
        match column {
            Some(col) if body.chars().count() > width && col < width / 2 => {
                let value = fit_prose(&body[col..], width - col);
                let indented = value.replace('\n', &format!("\n{:col$}", ""));
                out.push_str(&body[..col]);
                out.push_str(&indented);
                out.push_str(end);
            }
            _ => out.push_str(&fit_prose(line, width)),
        }
    }
    out
}

#[cfg(test)]
mod fitted_tests {
    use super::*;

    #[test]
    fn a_long_fields_value_wraps_under_itself() {
        let text = "device       vda  254:0\n  queue      rotational yes · logical 512 B · \
                    physical 4096 B · scheduler mq-deadline\n";
        assert_eq!(
            fit_fields(text, 40),
            "device       vda  254:0\n  queue      rotational yes · logical\n             \
             512 B · physical 4096 B ·\n             scheduler mq-deadline\n"
        );
    }

    #[test]
    fn long_prose_lines_wrap_under_their_first_word_and_table_rows_do_not() {
        let text = "  Seq        25.0    26.0    (a table row, longer than 30)\nwarnings:\n  \
                    - other I/O reached vda during the job: 158 MiB read beyond \
                    /a/path/longer/than/the/line/itself and more\n  - short\n\
                    Artefacts probe: no compression seen\n";
        assert_eq!(
            fit_prose(text, 30),
            "  Seq        25.0    26.0    (a table row, longer than 30)\nwarnings:\n  \
             - other I/O reached vda\n    during the job: 158 MiB\n    read beyond\n    \
             /a/path/longer/than/the/line/itself\n    and more\n  - short\n\
             Artefacts probe: no\ncompression seen\n"
        );
        assert_eq!(fit_prose(text, 500), text);
    }

    #[test]
    fn a_json_document_is_never_wrapped_and_text_is_only_on_a_terminal() {
        let doc = iomark_stats::example::mixed_randrw_run();
        let json = Output::Document.render_for(&doc, Some(20)).unwrap();
        assert_eq!(json, Output::Document.render(&doc).unwrap());
        serde_json::from_str::<serde_json::Value>(&json).unwrap();
        let text = Output::Text { verbose: false };
        assert_eq!(
            text.render_for(&doc, None).unwrap(),
            text.render(&doc).unwrap()
        );
    }
}
