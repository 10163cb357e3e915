//! What watches a run while it measures, cut by concern: the progress the
//! user sees (the pipeline's [`RunDisplay`], display only), the run's checkpoints into
//! its sink, and the processes' coordination ([`Coordinator`]). [`Watch`]
//! joins them into the one observer ([`ProfileObserver`]) a workload is
//! given.

use iomark_model::disk::DiskJobResult;
use iomark_model::live::LiveSample;
use iomark_model::pts::PtsRoundStatus;
use iomark_model::{RunBody, RunDocument};

use super::{Coordinator, RunSink};
use crate::profiles::{PassSeries, ProfileObserver};
use crate::runner::{Interval, Observer};
use crate::DiskError;
use iomark_model::sustained::SummedSeries;
use iomark_pipeline::{Outline, Progress, RunDisplay, Tracker};

/// The run's checkpoints: each finished test goes into the document as
/// recorded so far, so a killed run keeps what it measured.
pub(super) struct Checkpoints<'a> {
    pub(super) sink: &'a mut dyn RunSink,
    pub(super) partial: &'a mut RunDocument,
}

impl Checkpoints<'_> {
    /// Record `jobs` as the run's, when a checkpoint is due (copied only
    /// then: after every job, that was quadratic).
    pub(super) fn jobs(&mut self, jobs: &[DiskJobResult]) {
        if !self.sink.checkpoint_due() {
            return;
        }
        if let RunBody::Disk(run) = &mut self.partial.body {
            run.jobs = jobs.to_vec();
        }
        self.sink.checkpoint(self.partial);
    }

    /// Keep where a PTS test's steady state stands after a round, for a
    /// view of the run as it goes: the round's last test's checkpoint,
    /// which the profile asks for right after this, stores it with the
    /// round's jobs (between tests, never while one measures).
    pub(super) fn round(&mut self, status: &PtsRoundStatus) {
        if let RunBody::Disk(run) = &mut self.partial.body {
            run.rounds_so_far.push(status.clone());
        }
    }
}

/// The run's tests as they go, second by second: each interval the runner
/// cuts becomes a [`LiveSample`] naming its test and the time left.
pub(super) struct Samples {
    tracker: Tracker,
    label: String,
}

impl Samples {
    /// Samples of a run laid out as `outline`.
    pub(super) fn new(outline: Outline) -> Samples {
        Samples {
            tracker: Tracker::new(outline),
            label: String::new(),
        }
    }

    fn sample(&self, iv: &Interval) -> LiveSample {
        let steps = self.tracker.outline().tests();
        let step = self.tracker.test().map_or(0, |(k, _)| k);
        let eta = self.tracker.left();
        let at_ms = iomark_model::now_ms();
        LiveSample {
            step,
            steps,
            label: self.label.clone(),
            at_ms,
            offset_ms: iv.offset.as_millis() as u64,
            duration_ms: iv.duration.as_millis() as u64,
            bytes: iv.bytes,
            ios: iv.ios,
            latency: iv.latency,
            // A time left with steps of unknown length on top is no time left.
            left_ms: (!eta.at_least).then_some(eta.left.as_millis() as u64),
            left_at_most: eta.at_most && !eta.at_least,
            flops: None,
        }
    }
}

/// The observer a workload runs under: the display, the checkpoints
/// (none for the short probe, whose jobs are not the run's), the run's
/// samples (none for the probe either) and the coordinator.
pub(super) struct Watch<'a, 'b> {
    pub(super) display: &'a mut dyn RunDisplay,
    pub(super) checkpoints: Option<&'a mut Checkpoints<'b>>,
    pub(super) samples: Option<&'a mut Samples>,
    pub(super) coordinator: &'a mut dyn Coordinator,
}

impl Watch<'_, '_> {
    /// Store and show the run's seconds the coordinator has ready.
    fn keep(&mut self, ready: Vec<LiveSample>) {
        keep_samples(
            ready,
            self.checkpoints.as_mut().map(|c| &mut *c.sink),
            self.display,
        );
    }
}

/// Store `ready`, the run's seconds, in `sink` (none where this process
/// does not record the run) and show them on `display`.
pub(super) fn keep_samples<'s>(
    ready: Vec<LiveSample>,
    mut sink: Option<&mut (dyn RunSink + 's)>,
    display: &mut dyn RunDisplay,
) {
    for sample in &ready {
        if let Some(sink) = sink.as_mut() {
            sink.sample(sample);
        }
        display.sample(sample);
    }
}

impl Observer for Watch<'_, '_> {
    fn progress(&mut self, p: &Progress) {
        if let Some(s) = self.samples.as_mut() {
            s.tracker.progress(p);
        }
        self.display.progress(p);
        self.coordinator.should_stop();
        if self.samples.is_some() {
            let ready = self.coordinator.samples_ready();
            self.keep(ready);
        }
    }

    fn interval(&mut self, iv: &Interval) {
        let Some(samples) = self.samples.as_ref() else {
            return;
        };
        let sample = samples.sample(iv);
        let ready = self.coordinator.sample(sample, &iv.counts);
        self.keep(ready);
    }
}

impl ProfileObserver for Watch<'_, '_> {
    fn begin(&mut self, label: &str) {
        if let Some(s) = self.samples.as_mut() {
            s.tracker.begin(label);
            s.label = label.to_string();
        }
        self.coordinator.job_start(label);
        self.display.begin(label);
    }

    fn end(&mut self) {
        if let Some(s) = self.samples.as_mut() {
            s.tracker.end();
        }
        self.display.end();
        self.coordinator.job_done();
    }

    fn round(&mut self, status: &PtsRoundStatus) {
        self.display.round(status);
        if let Some(c) = self.checkpoints.as_mut() {
            c.round(status);
        }
    }

    fn finished(&mut self, jobs: &[DiskJobResult]) {
        self.coordinator.kept(jobs);
        if let Some(c) = self.checkpoints.as_mut() {
            c.jobs(jobs);
        }
    }

    fn measured(
        &mut self,
        job: Result<DiskJobResult, DiskError>,
    ) -> Result<DiskJobResult, DiskError> {
        let job = self.coordinator.measured(job);
        if self.samples.is_some() {
            let ready = self.coordinator.samples_ready();
            self.keep(ready);
        }
        job
    }

    fn series(&mut self, pass: PassSeries) -> Result<SummedSeries, DiskError> {
        self.coordinator.series(pass)
    }
}
