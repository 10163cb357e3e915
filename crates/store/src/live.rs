//! A run stored as it goes ([`LiveRun`]): begun as interrupted,
//! checkpointed after finished tests, finished with its status, and what
//! is remembered of devices between runs.
//!
//! The store never costs a result: every store error is a
//! [`LiveNotice`] and the run goes on unrecorded. A run whose recorder is
//! dropped without `finish` (an error returned early) is stored as
//! failed; a process killed outright leaves it stored as interrupted, with
//! every job finished up to its last checkpoint (they are a second or more
//! apart, [`LiveRun::update`]). A run whose final write fails is taken out
//! of the store again where the store still allows that, so that nothing
//! claims a completed run was interrupted.
//!
//! The store runs on a thread of its own, and every call waits at most
//! [`STORE_WAIT`], ended at once by a stop signal ([`StopSignals`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use iomark_model::live::LiveSample;
use iomark_model::{RunDocument, RunStatus};

use crate::{DeviceMemory, RunId, Store};

/// What a live run tells its command, as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveNotice {
    /// The run (or part of it) will not be in the store: the command's
    /// success is "measured, not stored".
    Lost(String),
    /// A store error that costs the run nothing (a device's memory).
    Warning(String),
    /// Another iomark run is going on a device this one uses
    /// ([`crate::presence::Sharer::words`]): said when the run begins.
    Sharing(String),
    /// The run is stored under `id` in `location`.
    Stored {
        /// The run's id.
        id: RunId,
        /// The store, as [`Store::location`] says.
        location: String,
    },
}

/// The process's stop signal, which ends a wait for the store at once.
#[derive(Debug, Clone, Copy)]
pub struct StopSignals {
    /// Raised by a stop signal; `None` when none is watched.
    pub flag: Option<&'static AtomicBool>,
    /// How many stop signals came so far.
    pub received: fn() -> usize,
}

/// How a live run speaks to its command.
#[derive(Debug, Clone, Copy)]
pub struct LiveHooks {
    /// Called with each notice.
    pub notice: fn(LiveNotice),
    /// The stop signal.
    pub stop: StopSignals,
}

/// Writes one live run to the store, warning instead of failing.
pub struct LiveRun {
    /// Where notices go.
    hooks: LiveHooks,
    store: Option<StoreThread>,
    id: Option<RunId>,
    location: String,
    /// The document of the last checkpoint, shared with the store's thread
    /// (one copy per checkpoint, not two).
    last: Option<Arc<RunDocument>>,
    /// No checkpoint before this (see [`LiveRun::update`]).
    next_checkpoint: Option<Instant>,
    finished: bool,
    /// The next sample's number, and where the store's thread says that
    /// writing one failed (sampling then stops; the run does not).
    samples: Option<(u64, mpsc::Receiver<String>, mpsc::Sender<String>)>,
    /// Says the run is going to readers on this machine until the run is
    /// finished or given up (declared last: dropped after the final write).
    presence: Option<crate::presence::Presence>,
    /// The block devices under the run, and the other runs seen on them
    /// at its begin and its checkpoints: each is a warning at its finish.
    devices: Vec<String>,
    sharers: Vec<crate::presence::Sharer>,
}

/// The least time between two checkpoints of a run.
const CHECKPOINT_GAP: Duration = Duration::from_secs(1);

impl LiveRun {
    /// Open the store `db` names (`--db`; `None`: the default) and record
    /// `doc` as started (it reads back as interrupted until
    /// [`finish`](LiveRun::finish)); with `off` (`--no-store`) nothing is
    /// stored.
    pub fn begin(db: Option<String>, off: bool, doc: &RunDocument, hooks: LiveHooks) -> LiveRun {
        let mut rec = LiveRun {
            hooks,
            store: None,
            id: None,
            location: String::new(),
            last: None,
            next_checkpoint: None,
            finished: false,
            samples: None,
            presence: None,
            devices: crate::presence::devices_of(doc),
            sharers: Vec::new(),
        };
        if off {
            return rec;
        }
        let store = match StoreThread::open(db, hooks.stop) {
            Ok(s) => s,
            Err(e) => {
                (rec.hooks.notice)(LiveNotice::Lost(e));
                return rec;
            }
        };
        rec.location = store.location.clone();
        let begun = Arc::new(doc.clone());
        let sent = Arc::clone(&begun);
        match store.call(move |s| s.begin_run(&sent)) {
            Ok(id) => {
                // Without it (no socket here), a reader goes by the seconds
                // stored.
                rec.presence =
                    crate::presence::Presence::announce(&rec.location, id, &rec.devices).ok();
                rec.look_for_sharers();
                for s in &rec.sharers {
                    (rec.hooks.notice)(LiveNotice::Sharing(s.words()));
                }
                rec.id = Some(id);
                rec.store = Some(store);
                rec.last = Some(begun);
                let (failed_tx, failed) = mpsc::channel();
                rec.samples = Some((0, failed, failed_tx));
            }
            Err(e) => (rec.hooks.notice)(LiveNotice::Lost(e.to_string())),
        }
        rec
    }

    /// Whether [`update`](LiveRun::update) would write now: there is a
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
                (self.hooks.notice)(LiveNotice::Warning(e.to_string()));
                None
            }
        }
    }

    /// Remember `device` in the store, if there is one.
    pub fn remember(&mut self, device: &DeviceMemory) {
        if let Some(store) = self.store.as_ref() {
            let device = device.clone();
            if let Err(e) = store.call(move |s| s.remember_device(&device)) {
                (self.hooks.notice)(LiveNotice::Warning(e.to_string()));
            }
        }
    }

    /// Store a second of the run as it was measured. The run never waits
    /// for it: the store's thread writes it when it gets to it. A sample
    /// the store refuses is a warning, and no more are written.
    pub fn sample(&mut self, sample: &LiveSample) {
        let (Some(store), Some(id), Some((seq, failed, failed_tx))) =
            (self.store.as_ref(), self.id, self.samples.as_mut())
        else {
            return;
        };
        if let Ok(e) = failed.try_recv() {
            self.samples = None;
            (self.hooks.notice)(LiveNotice::Warning(format!(
                "the run's live samples are no longer stored: {e}"
            )));
            return;
        }
        let (first, sample, failed_tx) = (*seq, sample.clone(), failed_tx.clone());
        *seq += 1;
        store.post(move |s| {
            if let Err(e) = s.add_samples(id, first, std::slice::from_ref(&sample)) {
                let _ = failed_tx.send(e.to_string());
            }
        });
        // A second of the run: a look for other runs on its devices too.
        self.look_for_sharers();
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
        self.look_for_sharers();
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

    /// Store the final document with its status, and say where it went;
    /// each other run seen on the same device while this one went is a
    /// warning of `doc` first. Returns the run's id when it was stored.
    pub fn finish(mut self, doc: &mut RunDocument) -> Option<RunId> {
        self.finished = true;
        if self.store.is_none() || self.id.is_none() {
            return None;
        }
        self.look_for_sharers();
        for s in &self.sharers {
            doc.warnings.push(iomark_model::Warning::new(
                iomark_model::WarningKind::SharedDevice,
                format!(
                    "{} at the same time as this run: each run's I/O is in the other's figures; run them one after the other",
                    s.words().replacen(" is using ", " was using ", 1)
                ),
            ));
        }
        let (Some(store), Some(id)) = (self.store.as_ref(), self.id) else {
            return None;
        };
        let last = doc.clone();
        match store.call(move |s| s.finish_run(id, &last)) {
            Ok(()) => {
                (self.hooks.notice)(LiveNotice::Stored {
                    id,
                    location: self.location.clone(),
                });
                Some(id)
            }
            Err(e) => {
                self.give_up(e);
                None
            }
        }
    }

    /// Adds the runs of other processes now going on this run's devices
    /// to those seen before (a run that came and went between two looks
    /// is missed; `foreign_io` still sees its I/O).
    fn look_for_sharers(&mut self) {
        for s in crate::presence::sharing(&self.devices) {
            if !self.sharers.contains(&s) {
                self.sharers.push(s);
            }
        }
    }

    /// The store failed on a write: the run goes on (or ends) unrecorded.
    /// What was stored of it is taken out again where the store still
    /// allows that, rather than left reading as interrupted.
    fn give_up(&mut self, e: StoreFailure) {
        self.presence = None;
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
        (self.hooks.notice)(LiveNotice::Lost(format!("{e}; {what}")));
    }
}

impl Drop for LiveRun {
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
                (self.hooks.notice)(LiveNotice::Warning(e.to_string()));
            }
        }
    }
}

/// How long one store operation may take before the run goes on without
/// the store: longer than SQLite's 30 s wait for a lock, far shorter than
/// forever (a PostgreSQL server that stops answering leaves its client
/// waiting on a socket that never times out). `IOMARK_STORE_TIMEOUT`
/// (seconds) overrides it, for tests.
pub const STORE_WAIT: Duration = Duration::from_secs(40);

/// How long a store call may take once a stop signal has come.
const STOPPING_GRACE: Duration = Duration::from_secs(2);

/// A store on a thread of its own. Each call waits for the answer at most
/// [`STORE_WAIT`], and a stop signal (Ctrl-C, SIGTERM, SIGHUP) ends the
/// wait at once: the run then goes on without the store, and the thread,
/// stuck in the store, ends with the process.
struct StoreThread {
    jobs: mpsc::Sender<StoreJob>,
    location: String,
    stop: StopSignals,
}

type StoreJob = Box<dyn FnOnce(&mut dyn Store) + Send>;

impl StoreThread {
    /// Opens the store `db` names, on its own thread.
    fn open(db: Option<String>, stop: StopSignals) -> Result<StoreThread, String> {
        let (jobs, inbox) = mpsc::channel::<StoreJob>();
        let (opened_tx, opened) = mpsc::channel();
        std::thread::Builder::new()
            .name("iomark-store".into())
            .spawn(move || {
                let mut store = match crate::open(db.as_deref()) {
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
        let location = wait_for(&opened, stop)??;
        Ok(StoreThread {
            jobs,
            location,
            stop,
        })
    }

    /// Runs `op` on the store, not waiting for it.
    fn post(&self, op: impl FnOnce(&mut dyn Store) + Send + 'static) {
        // A thread that is gone already failed a call, which said so.
        let _ = self.jobs.send(Box::new(op));
    }

    /// Runs `op` on the store: its error, or why no answer came.
    fn call<T: Send + 'static>(
        &self,
        op: impl FnOnce(&mut dyn Store) -> Result<T, crate::StoreError> + Send + 'static,
    ) -> Result<T, StoreFailure> {
        let (tx, answer) = mpsc::channel();
        self.jobs
            .send(Box::new(move |s: &mut dyn Store| {
                let _ = tx.send(op(s).map_err(|e| e.to_string()));
            }))
            .map_err(|_| {
                StoreFailure::NoAnswer(format!("{}: the store's thread is gone", self.location))
            })?;
        wait_for(&answer, self.stop)
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
fn wait_for<T>(rx: &mpsc::Receiver<T>, stop: StopSignals) -> Result<T, String> {
    let limit = std::env::var("IOMARK_STORE_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(STORE_WAIT, Duration::from_secs_f64);
    // A stop signal that comes during the wait ends it at once. One that
    // came before (a run stopped by Ctrl-C, now being stored) leaves the
    // store a short grace: a working store answers in milliseconds, and a
    // Ctrl-C that landed just before a stuck call is not lost.
    let flag = stop.flag;
    let signals = flag.map(|_| (stop.received)());
    let start = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(v) => return Ok(v),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("the store's thread ended without an answer".into())
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let signalled_now = signals.is_some_and(|n| (stop.received)() > n);
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
