//! `--max-clients N`: several tests at once, each on a thread of its own.
//! Each test's report is printed whole when it ends, so the reports of
//! tests that overlap never interleave.

use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use crate::server::Server;
use crate::NetError;

/// How often the server looks for finished tests while it waits for new ones.
const DONE_POLL: Duration = Duration::from_millis(20);

/// One finished test: its report and its log lines.
type Finished = (Vec<u8>, Vec<u8>);

impl Server {
    /// Serve tests, up to `max_clients` at once, until the acceptor stops.
    pub(crate) fn serve_many(
        &self,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<(), NetError> {
        let cfg = self.config();
        if cfg.text {
            let _ = writeln!(
                out,
                "-----------------------------------------------------------\n\
                 Server listening on {} (up to {} tests at once)\n\
                 -----------------------------------------------------------",
                self.local_addr().port(),
                cfg.max_clients
            );
            let _ = out.flush();
        }
        let (done_tx, done_rx) = mpsc::channel::<Finished>();
        std::thread::scope(|scope| {
            let mut n = 0u32;
            loop {
                while let Ok((text, log)) = done_rx.try_recv() {
                    let _ = out.write_all(&text);
                    let _ = out.flush();
                    let _ = err.write_all(&log);
                }
                let (conn, cookie) = match self.next_test(DONE_POLL) {
                    Ok(t) => t,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(NetError::Closed {
                            during: "accepting connections",
                        })
                    }
                };
                n += 1;
                let done = done_tx.clone();
                let test = n;
                let spawned = std::thread::Builder::new()
                    .name(format!("net-test-{test}"))
                    .spawn_scoped(scope, move || {
                        let (mut text, mut log) = (Vec::new(), Vec::new());
                        match self.serve_test(conn, cookie, test, &mut text, &mut log) {
                            Ok(report) if cfg.json => {
                                let _ = writeln!(text, "{}", report.to_iperf3_json());
                            }
                            Ok(_) => {}
                            Err(e) => {
                                let e = iomark_model::escape::escape_controls(&e.to_string())
                                    .into_owned();
                                let _ = writeln!(log, "iomark: test #{test} ended: {e}");
                            }
                        }
                        let _ = done.send((text, log));
                    });
                if let Err(e) = spawned {
                    let _ = writeln!(err, "iomark: test #{n} not started: {e}");
                }
            }
        })
    }
}
