//! Storing a live run: the `--db`, `--no-store`, `--label` and `--note`
//! flags every benchmark command shares, and the [`Recorder`] that writes
//! the run as it goes.
//!
//! A disk run goes through [`StoreSink`], the disk lifecycle's
//! [`RunSink`]. The memory and network commands flatten [`StoreArgs`] into
//! their own arguments and use the [`Recorder`] directly:
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
//! stderr and the run goes on unrecorded, and the command then exits with
//! code 4 ("measured, not stored", [`a_run_was_lost`]) instead of 0. A run
//! whose recorder is dropped without `finish` (an error returned early) is
//! stored as failed; a process killed outright leaves it stored as
//! interrupted, with every job finished up to its last checkpoint (they
//! are a second or more apart, [`Recorder::update`]). A run whose final
//! write fails is taken out of the store again where the store still
//! allows that, so that nothing claims a completed run was interrupted.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use iomark_disk::lifecycle::RunSink;
use iomark_model::{RunDocument, RunStatus};
use iomark_store::{DeviceMemory, RunId, Store};

mod args;

pub use args::{check_user_text, command_line, parse_label, StoreArgs};

/// Set once any recorder of this process has given up on its store.
static LOST: AtomicBool = AtomicBool::new(false);

/// Whether a run of this process measured but could not be stored (in
/// full): the command's success becomes exit code 4.
pub fn a_run_was_lost() -> bool {
    LOST.load(Ordering::Relaxed)
}

/// A disk run's sink ([`RunSink`]): the store `args` name, through a
/// [`Recorder`] begun when the lifecycle begins the run; dropped
/// unfinished (an error midway), the run is stored as failed.
pub struct StoreSink<'a> {
    args: &'a StoreArgs,
    recorder: Option<Recorder>,
}

impl<'a> StoreSink<'a> {
    /// The sink of a run stored as `args` say.
    pub fn new(args: &'a StoreArgs) -> Self {
        StoreSink {
            args,
            recorder: None,
        }
    }
}

impl RunSink for StoreSink<'_> {
    fn begin(&mut self, doc: &mut RunDocument) {
        self.recorder = Some(Recorder::begin(self.args, doc));
    }

    fn checkpoint_due(&self) -> bool {
        self.recorder.as_ref().is_some_and(Recorder::checkpoint_due)
    }

    fn checkpoint(&mut self, doc: &RunDocument) {
        if let Some(r) = &mut self.recorder {
            r.update(doc);
        }
    }

    fn finish(&mut self, doc: &mut RunDocument) -> Option<RunId> {
        self.args.apply(doc);
        self.recorder.take()?.finish(doc)
    }

    fn run_id(&self) -> Option<RunId> {
        self.recorder.as_ref()?.id()
    }

    fn recall(&mut self, key: &str) -> Option<DeviceMemory> {
        self.recorder.as_mut()?.device(key)
    }

    fn remember(&mut self, memory: &DeviceMemory) {
        if let Some(r) = &mut self.recorder {
            r.remember(memory);
        }
    }
}

/// Writes one live run to the store, warning instead of failing.
pub struct Recorder {
    store: Option<StoreThread>,
    id: Option<RunId>,
    location: String,
    /// The document of the last checkpoint, shared with the store's thread
    /// (one copy per checkpoint, not two).
    last: Option<Arc<RunDocument>>,
    /// No checkpoint before this (see [`Recorder::update`]).
    next_checkpoint: Option<Instant>,
    finished: bool,
}

/// The least time between two checkpoints of a run.
const CHECKPOINT_GAP: Duration = Duration::from_secs(1);

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
            next_checkpoint: None,
            finished: false,
        };
        if args.no_store {
            return rec;
        }
        let store = match StoreThread::open(args.db.clone()) {
            Ok(s) => s,
            Err(e) => {
                lost(&e);
                return rec;
            }
        };
        rec.location = store.location.clone();
        let begun = Arc::new(doc.clone());
        let sent = Arc::clone(&begun);
        match store.call(move |s| s.begin_run(&sent)) {
            Ok(id) => {
                rec.id = Some(id);
                rec.store = Some(store);
                rec.last = Some(begun);
            }
            Err(e) => lost(&e.to_string()),
        }
        rec
    }

    /// Whether [`update`](Recorder::update) would write now: there is a
    /// store and a checkpoint is due. A caller that must build the
    /// document first asks, so a run of thousands of jobs does not copy
    /// them all after each one for nothing.
    pub fn checkpoint_due(&self) -> bool {
        self.store.is_some()
            && self.id.is_some()
            && self.next_checkpoint.is_none_or(|at| Instant::now() >= at)
    }

    /// The stored run's id, once it has one.
    pub fn id(&self) -> Option<RunId> {
        self.id
    }

    /// What the store remembers under `key`; none without a store, and a
    /// store error is a warning.
    pub fn device(&mut self, key: &str) -> Option<DeviceMemory> {
        let key = key.to_string();
        match self.store.as_ref()?.call(move |s| s.device(&key)) {
            Ok(found) => found,
            Err(e) => {
                warn(&e.to_string());
                None
            }
        }
    }

    /// Remember `device` in the store, if there is one.
    pub fn remember(&mut self, device: &DeviceMemory) {
        if let Some(store) = self.store.as_ref() {
            let device = device.clone();
            if let Err(e) = store.call(move |s| s.remember_device(&device)) {
                warn(&e.to_string());
            }
        }
    }

    /// Store the document as it is now (call after each finished job).
    ///
    /// A checkpoint rewrites the whole run, so with many short jobs they
    /// are spaced: a second apart at least, and four times as long as the
    /// last one took, which keeps the store under a fifth of the run's time
    /// however many jobs it has (every job rewriting all before it made a
    /// 500-job file 12 s slower, and 5,000 jobs a hundred times that). The
    /// final document is always written.
    pub fn update(&mut self, doc: &RunDocument) {
        if !self.checkpoint_due() {
            return;
        }
        let (Some(store), Some(id)) = (self.store.as_ref(), self.id) else {
            return;
        };
        let now = Arc::new(doc.clone());
        self.last = Some(Arc::clone(&now));
        let started = Instant::now();
        match store.call(move |s| s.update_run(id, &now)) {
            Ok(()) => {
                let took = started.elapsed();
                self.next_checkpoint = Some(started + took.saturating_mul(4).max(CHECKPOINT_GAP));
            }
            Err(e) => self.give_up(e),
        }
    }

    /// Store the final document with its status, and say where it went.
    /// Returns the run's id when it was stored.
    pub fn finish(mut self, doc: &RunDocument) -> Option<RunId> {
        self.finished = true;
        let (Some(store), Some(id)) = (self.store.as_ref(), self.id) else {
            return None;
        };
        let last = doc.clone();
        match store.call(move |s| s.finish_run(id, &last)) {
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

    /// The store failed on a write: the run goes on (or ends) unrecorded.
    /// What was stored of it is taken out again where the store still
    /// allows that, rather than left reading as interrupted.
    fn give_up(&mut self, e: StoreFailure) {
        let (Some(store), Some(id)) = (self.store.take(), self.id) else {
            return;
        };
        let answered = matches!(e, StoreFailure::Said(_));
        let what = if answered && store.call(move |s| s.delete(id)).is_ok() {
            format!("run {id} was taken out of {} again", self.location)
        } else {
            format!(
                "run {id} stays in {} as interrupted, without all its figures",
                self.location
            )
        };
        lost(&format!("{e}; {what}"));
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        // Dropped without finish: the command returned an error midway.
        if let (Some(store), Some(id), Some(last)) =
            (self.store.as_ref(), self.id, self.last.take())
        {
            let mut doc = Arc::unwrap_or_clone(last);
            doc.status = RunStatus::Failed;
            if let Err(e) = store.call(move |s| s.finish_run(id, &doc)) {
                warn(&e.to_string());
            }
        }
    }
}

/// How long one store operation may take before the run goes on without
/// the store: longer than SQLite's 30 s wait for a lock, far shorter than
/// forever (a PostgreSQL server that stops answering leaves its client
/// waiting on a socket that never times out). `IOMARK_STORE_TIMEOUT`
/// (seconds) overrides it, for tests.
const STORE_WAIT: Duration = Duration::from_secs(40);

/// How long a store call may take once a stop signal has come.
const STOPPING_GRACE: Duration = Duration::from_secs(2);

/// A store on a thread of its own. Each call waits for the answer at most
/// [`STORE_WAIT`], and a stop signal (Ctrl-C, SIGTERM, SIGHUP) ends the
/// wait at once: the run then goes on without the store, and the thread,
/// stuck in the store, ends with the process.
struct StoreThread {
    jobs: mpsc::Sender<StoreJob>,
    location: String,
}

type StoreJob = Box<dyn FnOnce(&mut dyn Store) + Send>;

impl StoreThread {
    /// Opens the store `db` names, on its own thread.
    fn open(db: Option<String>) -> Result<StoreThread, String> {
        let (jobs, inbox) = mpsc::channel::<StoreJob>();
        let (opened_tx, opened) = mpsc::channel();
        std::thread::Builder::new()
            .name("iomark-store".into())
            .spawn(move || {
                let mut store = match iomark_store::open(db.as_deref()) {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = opened_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let _ = opened_tx.send(Ok(store.location()));
                for job in inbox {
                    job(store.as_mut());
                }
            })
            .map_err(|e| format!("cannot start the store's thread: {e}"))?;
        let location = wait_for(&opened)??;
        Ok(StoreThread { jobs, location })
    }

    /// Runs `op` on the store: its error, or why no answer came.
    fn call<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut dyn Store) -> Result<T, iomark_store::StoreError> + Send + 'static,
    ) -> Result<T, StoreFailure> {
        let (tx, answer) = mpsc::channel();
        self.jobs
            .send(Box::new(move |s: &mut dyn Store| {
                let _ = tx.send(op(s).map_err(|e| e.to_string()));
            }))
            .map_err(|_| {
                StoreFailure::NoAnswer(format!("{}: the store's thread is gone", self.location))
            })?;
        wait_for(&answer)
            .map_err(StoreFailure::NoAnswer)?
            .map_err(StoreFailure::Said)
    }
}

/// Why a store call gave no result.
enum StoreFailure {
    /// The store answered with an error.
    Said(String),
    /// No answer in time, or a stop signal: the store's thread may be
    /// stuck, and nothing more is asked of it.
    NoAnswer(String),
}

impl std::fmt::Display for StoreFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreFailure::Said(e) | StoreFailure::NoAnswer(e) => f.write_str(e),
        }
    }
}

/// The answer on `rx`, waited for at most [`STORE_WAIT`] and until a stop
/// signal.
fn wait_for<T>(rx: &mpsc::Receiver<T>) -> Result<T, String> {
    let limit = std::env::var("IOMARK_STORE_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(STORE_WAIT, Duration::from_secs_f64);
    // A stop signal that comes during the wait ends it at once. One that
    // came before (a run stopped by Ctrl-C, now being stored) leaves the
    // store a short grace: a working store answers in milliseconds, and a
    // Ctrl-C that landed just before a stuck call is not lost.
    let flag = crate::signals::stop_flag().ok();
    let signals = flag.map(|_| crate::signals::stop_signals_received());
    let start = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(v) => return Ok(v),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("the store's thread ended without an answer".into())
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let signalled_now = signals.is_some_and(|n| crate::signals::stop_signals_received() > n);
        let stopping = flag.is_some_and(|f| f.load(Ordering::Relaxed));
        if signalled_now || (stopping && start.elapsed() >= STOPPING_GRACE) {
            return Err("stopped while waiting for the store".into());
        }
        if start.elapsed() >= limit {
            return Err(format!(
                "the store did not answer within {} s",
                limit.as_secs_f64()
            ));
        }
    }
}

/// A store error that costs the run (part of) its record: said on stderr,
/// and remembered for the exit code.
fn lost(msg: &str) {
    LOST.store(true, Ordering::Relaxed);
    warn(msg);
}

fn warn(msg: &str) {
    eprintln!("iomark: warning: results not stored: {msg}");
}

#[cfg(test)]
mod tests;
