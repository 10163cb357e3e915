//! Where `iomark net client`'s output goes, and how each line starts:
//! iperf3's `--logfile`, `--timestamps`, `-T` and `--forceflush`
//! ([`crate::settings::ClientSettings::output`]). A `--json-stream` line
//! starts with nothing, as iperf3 3.21 prints it (`JSONStream_Output`
//! writes its object and a newline, never through `iperf_printf`): a
//! reader takes each line for one JSON object, whatever the title.
//!
//! [`Output`] is the client's [`RunDisplay`]: the client's text reaches it
//! a line at a time.

use std::fs::File;
use std::io::{self, Write};

use iomark_pipeline::RunDisplay;

use crate::NetError;

/// How each text line is dressed and where it goes.
#[derive(Debug, Clone, Default)]
pub struct OutputSettings {
    /// `--logfile`: append to this file instead of standard output.
    pub logfile: Option<std::path::PathBuf>,
    /// `--timestamps[=FORMAT]`: strftime prefix of each line (iperf3's
    /// default `%c `).
    pub timestamps: Option<String>,
    /// `-T`: `TITLE:  ` before each line.
    pub title: Option<String>,
    /// `--forceflush`: flush after each line.
    pub forceflush: bool,
    /// `--json-stream`: every line is a JSON object, written undressed
    /// (no timestamp, no title), still flushed per line with
    /// `--forceflush`.
    pub json_stream: bool,
}

/// A writer that starts each line with the timestamp and title, as
/// iperf3's `iperf_printf` does, and flushes per line when asked.
pub struct Output {
    sink: Box<dyn Write>,
    settings: OutputSettings,
    at_line_start: bool,
}

impl Output {
    /// Standard output, or the log file opened for appending.
    pub fn open(mut settings: OutputSettings) -> Result<Output, NetError> {
        // strftime's %c in the C locale, as iperf3 prints it.
        settings.timestamps = settings
            .timestamps
            .map(|f| f.replace("%c", "%a %b %e %H:%M:%S %Y"));
        let sink: Box<dyn Write> = match &settings.logfile {
            Some(p) => Box::new(File::options().create(true).append(true).open(p).map_err(
                |e| {
                    NetError::Invalid(format!(
                        "--logfile {}: cannot open it for appending: {e}",
                        p.display()
                    ))
                },
            )?),
            None => Box::new(io::stdout()),
        };
        if let Some(f) = &settings.timestamps {
            // A bad format is found before the test, not on its first line.
            stamp(f).map_err(|e| {
                NetError::Invalid(format!(
                    "--timestamps={f} is not a strftime format iomark can print (e.g. '%c ' or '%H:%M:%S '): {e}"
                ))
            })?;
        }
        Ok(Output {
            sink,
            settings,
            at_line_start: true,
        })
    }

    /// Write `text` as it is, without prefixes: the `-J` document.
    pub fn raw(&mut self, text: &str) -> io::Result<()> {
        self.sink.write_all(text.as_bytes())?;
        self.sink.flush()
    }

    fn prefix(&mut self) -> io::Result<()> {
        if self.settings.json_stream {
            return Ok(());
        }
        if let Some(f) = &self.settings.timestamps {
            let now = stamp(f).map_err(io::Error::other)?;
            self.sink.write_all(now.as_bytes())?;
        }
        if let Some(t) = &self.settings.title {
            // Shown, not sent: a newline in the title would split each
            // line in two, an ESC would reach the terminal.
            write!(self.sink, "{}:  ", iomark_model::escape::escape_controls(t))?;
        }
        Ok(())
    }
}

/// The time now in `format`, strictly: an unknown directive is an error.
fn stamp(format: &str) -> Result<String, jiff::Error> {
    jiff::fmt::strtime::format(format, &jiff::Zoned::now())
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for line in buf.split_inclusive(|&b| b == b'\n') {
            if self.at_line_start {
                self.prefix()?;
            }
            self.sink.write_all(line)?;
            self.at_line_start = line.ends_with(b"\n");
            if self.at_line_start && self.settings.forceflush {
                self.sink.flush()?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.flush()
    }
}

/// The client's display: iperf3's lines as it prints them, each dressed
/// and flushed as the settings say; the rest of a run's display (a
/// progress line, its seconds) is not iperf3's and is not shown.
impl RunDisplay for Output {
    fn report_line(&mut self, line: &str) {
        // A closed stdout ends what is shown, not the test (iperf3
        // ignores its printf's errors too).
        let _ = writeln!(self, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_gets_the_title() {
        let path = tempfile::NamedTempFile::new().unwrap();
        let mut o = Output::open(OutputSettings {
            logfile: Some(path.path().into()),
            title: Some("lab".into()),
            ..Default::default()
        })
        .unwrap();
        write!(o, "one\ntw").unwrap();
        writeln!(o, "o").unwrap();
        o.raw("{}\n").unwrap();
        drop(o);
        let text = std::fs::read_to_string(path.path()).unwrap();
        assert_eq!(text, "lab:  one\nlab:  two\n{}\n");
    }

    #[test]
    fn a_json_stream_line_starts_with_its_object_whatever_the_title() {
        let path = tempfile::NamedTempFile::new().unwrap();
        let settings = OutputSettings {
            logfile: Some(path.path().into()),
            title: Some("a\nb\x1b\u{2028}".into()),
            timestamps: Some("%c ".into()),
            forceflush: true,
            json_stream: true,
        };
        let mut o = Output::open(settings.clone()).unwrap();
        write!(o, "{{\"event\":\"start\"}}\n{{\"event\":").unwrap();
        writeln!(o, "\"end\"}}").unwrap();
        drop(o);
        let text = std::fs::read_to_string(path.path()).unwrap();
        assert_eq!(text, "{\"event\":\"start\"}\n{\"event\":\"end\"}\n");
        // Text lines keep the title, shown on one line.
        let mut o = Output::open(OutputSettings {
            json_stream: false,
            timestamps: None,
            ..settings
        })
        .unwrap();
        writeln!(o, "one").unwrap();
        drop(o);
        let text = std::fs::read_to_string(path.path()).unwrap();
        assert!(text.ends_with("}\na\\nb\\x1b\\u{2028}:  one\n"), "{text:?}");
    }
}
