//! Storing a live run: the `--db`, `--no-store`, `--label` and `--note`
//! flags every benchmark command shares, and the [`Recorder`] that writes
//! the run as it goes.
//!
//! A benchmark flattens [`StoreArgs`] into its own arguments, then:
//!
//! ```ignore
//! let mut recorder = Recorder::begin(&args.store, &mut doc); // labels, note into doc
//! for job in jobs {
//!     /* run it, push its result into doc */
//!     recorder.update(&doc);                                  // one transaction
//! }
//! doc.status = RunStatus::Complete; // or Interrupted on Ctrl-C, Failed on error
//! recorder.finish(&doc);
//! ```
//!
//! The store never costs a result: every store error becomes a warning on
//! stderr and the run goes on unrecorded. A run whose recorder is dropped
//! without `finish` (an error returned early) is stored as failed; a
//! process killed outright leaves it stored as interrupted, with every job
//! finished before the kill.

// The benchmark commands wire this in one by one; until each has, parts of
// it are unused in the binary.

use anyhow::bail;
use clap::Args;
use iomark_model::{RunDocument, RunStatus, MAX_LABEL_BYTES, MAX_NOTE_BYTES};
use iomark_store::{DeviceMemory, RunId, Store};

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

    /// Copy the labels and note into the document, so what is printed and
    /// what is stored agree.
    pub fn apply(&self, doc: &mut RunDocument) {
        for l in &self.labels {
            if !doc.labels.contains(l) {
                doc.labels.push(l.clone());
            }
        }
        if self.note.is_some() {
            doc.note.clone_from(&self.note);
        }
    }
}

/// Writes one live run to the store, warning instead of failing.
pub struct Recorder {
    store: Option<Box<dyn Store>>,
    id: Option<RunId>,
    location: String,
    last: Option<RunDocument>,
    finished: bool,
}

impl Recorder {
    /// Apply `args` to `doc`, open the store and record the run as started
    /// (it reads back as interrupted until [`finish`](Recorder::finish)).
    pub fn begin(args: &StoreArgs, doc: &mut RunDocument) -> Recorder {
        args.apply(doc);
        let mut rec = Recorder {
            store: None,
            id: None,
            location: String::new(),
            last: None,
            finished: false,
        };
        if args.no_store {
            return rec;
        }
        let mut store = match iomark_store::open(args.db.as_deref()) {
            Ok(s) => s,
            Err(e) => {
                warn(&format!("{e}"));
                return rec;
            }
        };
        rec.location = store.location();
        match store.begin_run(doc) {
            Ok(id) => {
                rec.id = Some(id);
                rec.store = Some(store);
                rec.last = Some(doc.clone());
            }
            Err(e) => warn(&format!("{e}")),
        }
        rec
    }

    /// The stored run's id, once it has one.
    pub fn id(&self) -> Option<RunId> {
        self.id
    }

    /// What the store remembers under `key`; none without a store, and a
    /// store error is a warning.
    pub fn device(&mut self, key: &str) -> Option<DeviceMemory> {
        match self.store.as_mut()?.device(key) {
            Ok(found) => found,
            Err(e) => {
                warn(&format!("{e}"));
                None
            }
        }
    }

    /// Remember `device` in the store, if there is one.
    pub fn remember(&mut self, device: &DeviceMemory) {
        if let Some(store) = self.store.as_mut() {
            if let Err(e) = store.remember_device(device) {
                warn(&format!("{e}"));
            }
        }
    }

    /// Store the document as it is now (call after each finished job).
    pub fn update(&mut self, doc: &RunDocument) {
        let (Some(store), Some(id)) = (self.store.as_mut(), self.id) else {
            return;
        };
        match store.update_run(id, doc) {
            Ok(()) => self.last = Some(doc.clone()),
            Err(e) => self.give_up(e),
        }
    }

    /// Store the final document with its status, and say where it went.
    /// Returns the run's id when it was stored.
    pub fn finish(mut self, doc: &RunDocument) -> Option<RunId> {
        self.finished = true;
        let (Some(store), Some(id)) = (self.store.as_mut(), self.id) else {
            return None;
        };
        match store.finish_run(id, doc) {
            Ok(()) => {
                eprintln!(
                    "stored as run {id} in {} (iomark results show {id})",
                    self.location
                );
                Some(id)
            }
            Err(e) => {
                self.give_up(e);
                None
            }
        }
    }

    fn give_up(&mut self, e: iomark_store::StoreError) {
        warn(&format!("{e}; the run is not stored further"));
        self.store = None;
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Dropped without finish: the command returned an error midway.
        if let (Some(store), Some(id), Some(mut doc)) =
            (self.store.as_mut(), self.id, self.last.take())
        {
            doc.status = RunStatus::Failed;
            if let Err(e) = store.finish_run(id, &doc) {
                warn(&format!("{e}"));
            }
        }
    }
}

fn warn(msg: &str) {
    eprintln!("iomark: warning: results not stored: {msg}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct T {
        #[command(flatten)]
        store: StoreArgs,
    }

    fn args(db: &std::path::Path) -> StoreArgs {
        StoreArgs {
            db: Some(db.to_str().unwrap().to_string()),
            no_store: false,
            labels: vec!["usb3".into()],
            note: Some("front port".into()),
        }
    }

    fn doc() -> RunDocument {
        let text = r#"{"schema_version":1,"tool":"iomark","tool_version":"0.1.0",
            "command_line":["iomark","disk"],"started_at_ms":1,"finished_at_ms":2,
            "status":"complete","body":{"kind":"disk","profile":"custom",
            "target":{"given":"/tmp","path":"/tmp/x","kind":"test_file","size":0,
            "logical_block_size":512},"jobs":[]}}"#;
        serde_json::from_str(text).unwrap()
    }

    fn status_of(db: &std::path::Path, id: RunId) -> RunStatus {
        let mut store = iomark_store::open(Some(db.to_str().unwrap())).unwrap();
        store.load(id).unwrap().summary.status
    }

    #[test]
    fn a_recorded_run_is_interrupted_until_finished() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let mut d = doc();
        let mut rec = Recorder::begin(&args(&db), &mut d);
        assert_eq!(d.labels, ["usb3"]);
        assert_eq!(d.note.as_deref(), Some("front port"));
        let id = rec.id().expect("stored");
        rec.update(&d);
        assert_eq!(status_of(&db, id), RunStatus::Interrupted);
        d.status = RunStatus::Complete;
        assert_eq!(rec.finish(&d), Some(id));
        assert_eq!(status_of(&db, id), RunStatus::Complete);
    }

    #[test]
    fn a_recorder_dropped_without_finish_marks_the_run_failed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let mut d = doc();
        let rec = Recorder::begin(&args(&db), &mut d);
        let id = rec.id().unwrap();
        drop(rec);
        assert_eq!(status_of(&db, id), RunStatus::Failed);
    }

    #[test]
    fn labels_and_notes_over_their_limit_are_refused_naming_it() {
        let at_limit = "l".repeat(MAX_LABEL_BYTES);
        assert_eq!(parse_label(&at_limit).unwrap(), at_limit);
        let over = StoreArgs {
            no_store: true,
            labels: vec!["usb3".into(), format!("{at_limit}x")],
            ..StoreArgs::default()
        };
        let err = over.check().unwrap_err().to_string();
        assert_eq!(
            err,
            "--label is 1025 bytes long; a label may be at most 1 KiB (1024 bytes): shorten it"
        );
        let long_note = StoreArgs {
            no_store: true,
            note: Some("n".repeat(MAX_NOTE_BYTES + 1)),
            ..StoreArgs::default()
        };
        let err = long_note.check().unwrap_err().to_string();
        assert!(
            err.starts_with("--note is 1025 bytes long; a note may be at most 1 KiB (1024 bytes)"),
            "{err}"
        );
        // A label over the limit is left to check(), whatever else is wrong
        // with it, so clap never quotes it.
        assert!(parse_label(&format!("{at_limit},x")).is_ok());
        let fits = StoreArgs {
            no_store: true,
            labels: vec![at_limit],
            note: Some("n".repeat(MAX_NOTE_BYTES)),
            ..StoreArgs::default()
        };
        fits.check().unwrap();
    }

    #[test]
    fn store_failures_and_no_store_never_stop_the_run() {
        let mut d = doc();
        let bad = StoreArgs {
            db: Some("/proc/no/such/dir/r.db".into()),
            ..StoreArgs::default()
        };
        let mut rec = Recorder::begin(&bad, &mut d);
        assert_eq!(rec.id(), None);
        rec.update(&d);
        assert_eq!(rec.finish(&d), None);
        let off = StoreArgs {
            no_store: true,
            labels: vec!["x".into()],
            ..StoreArgs::default()
        };
        let rec = Recorder::begin(&off, &mut d);
        assert_eq!(rec.id(), None);
        assert_eq!(d.labels, ["x"], "labels still reach the printed document");
    }

    #[test]
    fn flags_parse_and_labels_are_checked() {
        let t =
            T::try_parse_from(["t", "--label", "usb3", "--label", "uasp", "--note", "hi"]).unwrap();
        assert_eq!(t.store.labels, ["usb3", "uasp"]);
        assert_eq!(t.store.note.as_deref(), Some("hi"));
        assert!(T::try_parse_from(["t", "--label", ""]).is_err());
        assert!(T::try_parse_from(["t", "--label", "a,b"]).is_err());
        assert!(T::try_parse_from(["t", "--no-store", "--db", "x.db"]).is_err());
    }
}
