//! What a checked plan cannot do across MPI ranks: the refusals every rank
//! makes of the same plan before any of them opens its target, so a run
//! across ranks starts whole or not at all (as `MemPlan::check_across_ranks`
//! for STREAM).

use iomark_model::cluster::Layout;

use crate::plan::{DiskPlan, Workload};
use crate::profiles::{ProfileName, ProfilePlan};
use crate::DiskError;

impl DiskPlan {
    /// Refuse what runs alone only, for a run across MPI ranks laid out as
    /// `layout`, stopped by the first rank to finish under `stonewall`:
    /// `--repeat`, several depths, a profile that measures one device, a
    /// stonewalled `--verify`, a mapped engine on a shared file.
    pub fn check_across_ranks(&self, layout: Layout, stonewall: bool) -> Result<(), DiskError> {
        let shared_file = layout == Layout::SharedFile;
        if self.verify.is_some() && stonewall {
            return invalid(
                "--stonewall with --verify: a stonewalled rank stops mid-write and its writes \
                 are not read back; run --verify without --stonewall",
            );
        }
        if self.verify.is_some_and(|v| v.timed) {
            return invalid("--verify-timed is not merged across ranks: use --verify");
        }
        if self.repeat > 1 {
            return invalid(
                "--repeat is not merged across ranks: run without it under mpirun, or alone",
            );
        }
        match &self.workload {
            Workload::Custom(spec) => {
                if spec.steady_state.is_some() {
                    return invalid("--steady-state is judged on one process's seconds, not merged across ranks: run it without mpirun");
                }
                if shared_file && spec.engine.is_mapped() {
                    return invalid("--shared-file: a rank's region of the shared file is not mapped; use --engine psync or io_uring");
                }
            }
            Workload::Profile(name, profile) => {
                if let Err(why) = name.across_ranks() {
                    return Err(DiskError::Invalid(format!(
                        "--profile {name} runs alone, not across MPI ranks: {why}. Run it without \
                         mpirun, or run one of {} across ranks",
                        ProfileName::ALL
                            .into_iter()
                            .filter(|p| p.across_ranks().is_ok())
                            .map(ProfileName::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                if stonewall {
                    return invalid("--stonewall stops a custom workload (--rw ...), not a profile's jobs: leave it out");
                }
                if let (true, ProfilePlan::Sweep(o)) = (shared_file, profile) {
                    if o.engines.iter().any(|e| e.is_mapped()) {
                        return invalid("--shared-file: a rank's region of the shared file is not mapped; give --engines without mmap engines");
                    }
                }
            }
            Workload::Depths(_) => {
                return invalid("under MPI one depth runs at a time: give --iodepth a single value")
            }
        }
        Ok(())
    }
}

fn invalid(message: &str) -> Result<(), DiskError> {
    Err(DiskError::Invalid(message.to_string()))
}

#[cfg(test)]
mod tests {
    use iomark_model::cluster::Layout;
    use iomark_model::disk::{EngineKind, RwMode};
    use iomark_model::units::Bytes;

    use crate::job::JobSettings;
    use crate::plan::{DiskPlan, DiskSettings};
    use crate::profiles::ProfileName;

    fn plan(job: JobSettings, profile: Option<ProfileName>, repeat: u32) -> DiskPlan {
        DiskSettings {
            path: ".".into(),
            job,
            profile,
            repeat,
            ..DiskSettings::default()
        }
        .build()
        .unwrap()
    }

    fn refusal(plan: &DiskPlan, layout: Layout, stonewall: bool) -> String {
        plan.check_across_ranks(layout, stonewall)
            .unwrap_err()
            .to_string()
    }

    fn write(engine: EngineKind) -> JobSettings {
        JobSettings {
            rw: Some(RwMode::Write),
            bs: Some(Bytes(4096)),
            engine: Some(engine.into()),
            ..JobSettings::default()
        }
    }

    #[test]
    fn a_plain_custom_job_and_a_profile_that_merges_run_across_ranks() {
        let job = plan(write(EngineKind::Psync), None, 1);
        job.check_across_ranks(Layout::SharedFile, true).unwrap();
        let cdm = plan(JobSettings::default(), Some(ProfileName::Cdm), 1);
        cdm.check_across_ranks(Layout::FilePerRank, false).unwrap();
    }

    #[test]
    fn what_runs_alone_is_refused_naming_the_flag() {
        let repeated = plan(write(EngineKind::Psync), None, 2);
        assert!(refusal(&repeated, Layout::FilePerRank, false).starts_with("--repeat"));
        let mapped = plan(write(EngineKind::MmapSync), None, 1);
        assert!(refusal(&mapped, Layout::SharedFile, false).starts_with("--shared-file"));
        mapped
            .check_across_ranks(Layout::FilePerRank, false)
            .unwrap();
        let gnome = plan(JobSettings::default(), Some(ProfileName::Gnome), 1);
        let why = refusal(&gnome, Layout::FilePerRank, false);
        assert!(why.starts_with("--profile gnome runs alone"), "{why}");
        assert!(why.contains("cdm,"), "{why}");
        let cdm = plan(JobSettings::default(), Some(ProfileName::Cdm), 1);
        assert!(refusal(&cdm, Layout::FilePerRank, true).starts_with("--stonewall"));
        let verified = JobSettings {
            verify: Some(true),
            ..write(EngineKind::Psync)
        };
        let checked = plan(verified.clone(), None, 1);
        assert!(
            refusal(&checked, Layout::FilePerRank, true).starts_with("--stonewall with --verify")
        );
        checked
            .check_across_ranks(Layout::FilePerRank, false)
            .unwrap();
        let timed = JobSettings {
            verify_timed: true,
            ..verified
        };
        let timed = plan(timed, None, 1);
        assert!(refusal(&timed, Layout::FilePerRank, false).starts_with("--verify-timed"));
    }
}
