//! `--get-server-output`: what the server prints of a test, kept for the
//! client that asked for it and sent in the server's results, as iperf3's
//! `server_output_text` (a server printing text) or `server_output_json`
//! (a server printing `-J`).

use std::io::Write;

use crate::proto::Results;
use crate::report::{IntervalRecord, StreamTotals, TestReport};

/// The server's output writer for one test, keeping a copy when asked.
pub(crate) struct Captured<'a> {
    out: &'a mut dyn Write,
    copy: Option<Vec<u8>>,
}

impl<'a> Captured<'a> {
    /// Everything written goes to `out`; with `keep`, a copy is kept too,
    /// starting with `already`, what was printed before the test's
    /// parameters said whether to keep it.
    pub fn new(out: &'a mut dyn Write, keep: bool, already: &str) -> Captured<'a> {
        Captured {
            out,
            copy: keep.then(|| already.as_bytes().to_vec()),
        }
    }

    /// Put the server's output into `mine`, the results it is about to
    /// send, when the client asked for it. The summary is this side's
    /// alone, as the server prints it before the exchange.
    pub fn fill(
        &mut self,
        mine: &mut Results,
        report: &TestReport,
        intervals: &[IntervalRecord],
        totals: &[StreamTotals],
        json: bool,
    ) {
        if !report.params.get_server_output {
            return;
        }
        let mut own = report.clone();
        own.close(&mut intervals.to_vec(), totals.to_vec(), mine, None);
        if json {
            mine.server_output_json = serde_json::from_str(&own.to_iperf3_json()).ok();
        } else if let Some(mut text) = self.copy.take() {
            text.extend_from_slice(own.summary_text().as_bytes());
            mine.server_output_text = Some(String::from_utf8_lossy(&text).into_owned());
        }
    }
}

impl Write for Captured<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        if let Some(c) = &mut self.copy {
            c.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
