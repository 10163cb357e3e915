//! The flags every benchmark command shares to store its run (`--db`,
//! `--no-store`, `--label`, `--note`), checked before anything runs, and
//! the command line as stored.

use anyhow::bail;
use clap::Args;
use iomark_model::{MAX_LABEL_BYTES, MAX_NOTE_BYTES};

/// The command line as stored with a run. Arguments need not be UTF-8 (a
/// path is any bytes): `std::env::args` would panic on one, so each is
/// converted lossily, its control characters escaped.
pub fn command_line() -> Vec<String> {
    std::env::args_os()
        .map(|a| iomark_text::escape_controls(&a.to_string_lossy()).into_owned())
        .collect()
}

/// Where and whether to store the run, with its labels and note.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Storage")]
pub struct StoreArgs {
    /// Results database: a SQLite file or postgres://user@host/db.
    ///
    /// Default: $IOMARK_DB when set (empty is refused), else
    /// $XDG_DATA_HOME/iomark/results.db (~/.local/share/iomark/results.db).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
    /// Do not store this run.
    #[arg(long, conflicts_with = "db")]
    pub no_store: bool,
    /// Label the stored run; repeat for more (--label usb3 --label uasp).
    #[arg(long = "label", value_name = "LABEL", value_parser = parse_label)]
    pub labels: Vec<String>,
    /// A free note stored with the run.
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
}

/// A label is one non-empty word-ish string without commas (lists show
/// labels joined by commas). Its length is checked by [`check_user_text`]
/// once the command line is parsed: clap's refusal would quote the whole
/// value, and a 100 KB label would fill the terminal.
pub fn parse_label(s: &str) -> Result<String, String> {
    let t = s.trim();
    if t.len() > MAX_LABEL_BYTES {
        return Ok(t.to_string());
    }
    if t.is_empty() {
        return Err("a label cannot be empty: use --label usb3".into());
    }
    if t.contains(',') {
        return Err(format!(
            "label '{t}' contains a comma: give each label its own --label"
        ));
    }
    Ok(t.to_string())
}

/// Refuse a `--label` or `--note` over its limit ([`MAX_LABEL_BYTES`],
/// [`MAX_NOTE_BYTES`]), in one line naming the limit, before anything runs
/// or is stored.
pub fn check_user_text(labels: &[String], note: Option<&str>) -> anyhow::Result<()> {
    if let Some(l) = labels.iter().find(|l| l.len() > MAX_LABEL_BYTES) {
        bail!(
            "--label is {} bytes long; a label may be at most {}: shorten it",
            l.len(),
            limit_words(MAX_LABEL_BYTES)
        );
    }
    if let Some(n) = note.filter(|n| n.len() > MAX_NOTE_BYTES) {
        bail!(
            "--note is {} bytes long; a note may be at most {}: shorten it (keep longer text in a file and name the file in the note)",
            n.len(),
            limit_words(MAX_NOTE_BYTES)
        );
    }
    Ok(())
}

/// `1 KiB (1024 bytes)`.
fn limit_words(bytes: usize) -> String {
    format!("{} KiB ({bytes} bytes)", bytes / 1024)
}

impl StoreArgs {
    /// Refuse a `--db` the store cannot use, and labels or a note over
    /// their limits, before anything is measured, so a run is never made
    /// only to be thrown away.
    pub fn check(&self) -> anyhow::Result<()> {
        check_user_text(&self.labels, self.note.as_deref())?;
        if !self.no_store {
            iomark_store::check_db(self.db.as_deref())?;
        }
        Ok(())
    }
}
