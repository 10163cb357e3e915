//! Whether an MPI launcher started this process, from the variables each
//! one sets: Open MPI's mpirun (`OMPI_COMM_WORLD_SIZE`), PMI and PMIx
//! launchers such as MPICH's hydra and Slurm's srun with `--mpi=pmi2` or
//! `pmix` (`PMI_SIZE`, `PMI_RANK`, `PMIX_RANK`), and a Slurm job step of
//! several tasks (`SLURM_PROCID` with `SLURM_STEP_NUM_TASKS` above 1; a
//! batch script itself runs as a one-task step and is left alone).

/// The launcher found, and the world size it announced when it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    /// The variable that gave it away, for messages.
    pub variable: &'static str,
    /// The number of ranks, when the launcher says.
    pub size: Option<u32>,
}

impl Launched {
    /// Why a command cannot run under this launcher: this build has no
    /// MPI, or the command (`disk`, `net`, ...) runs alone.
    pub fn refusal(&self, command: &str) -> crate::ClusterError {
        if crate::HAS_MPI {
            crate::ClusterError::RunsAlone {
                command: command.to_string(),
                variable: self.variable,
            }
        } else {
            self.without_mpi()
        }
    }

    /// Why a build without MPI stops under a launcher.
    pub fn without_mpi(&self) -> crate::ClusterError {
        crate::ClusterError::NoMpi {
            variable: self.variable,
            size: self.size,
        }
    }
}

/// The launcher this process runs under, if any.
pub fn launched() -> Option<Launched> {
    launched_from(|k| std::env::var(k).ok())
}

/// [`launched`] over any environment (for tests).
pub fn launched_from(env: impl Fn(&str) -> Option<String>) -> Option<Launched> {
    let size_of = |k: &str| env(k).and_then(|v| v.trim().parse::<u32>().ok());
    for (variable, size) in [
        ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
        ("PMI_SIZE", "PMI_SIZE"),
        ("PMI_RANK", "PMI_SIZE"),
        ("PMIX_RANK", "PMIX_SIZE"),
    ] {
        if env(variable).is_some() {
            return Some(Launched {
                variable,
                size: size_of(size),
            });
        }
    }
    let tasks = size_of("SLURM_STEP_NUM_TASKS");
    if env("SLURM_PROCID").is_some() && tasks.is_some_and(|n| n > 1) {
        return Some(Launched {
            variable: "SLURM_PROCID",
            size: tasks,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn each_launcher_is_recognised() {
        let l = launched_from(env(&[("OMPI_COMM_WORLD_SIZE", "3")])).unwrap();
        assert_eq!((l.variable, l.size), ("OMPI_COMM_WORLD_SIZE", Some(3)));
        let l = launched_from(env(&[("PMI_RANK", "1"), ("PMI_SIZE", "4")])).unwrap();
        assert_eq!(l.size, Some(4));
        let l = launched_from(env(&[("PMIX_RANK", "0")])).unwrap();
        assert_eq!((l.variable, l.size), ("PMIX_RANK", None));
        let l = launched_from(env(&[("SLURM_PROCID", "2"), ("SLURM_STEP_NUM_TASKS", "8")]));
        assert_eq!(l.unwrap().size, Some(8));
    }

    #[test]
    fn a_refusal_names_the_launchers_variable_and_the_ranks() {
        let l = launched_from(env(&[("OMPI_COMM_WORLD_SIZE", "3")])).unwrap();
        let no_mpi = l.without_mpi().to_string();
        assert!(no_mpi.contains("launcher of 3 ranks (OMPI_COMM_WORLD_SIZE is set)"));
        let why = l.refusal("net").to_string();
        if crate::HAS_MPI {
            assert!(why.starts_with("iomark net runs alone"), "{why}");
        } else {
            assert_eq!(why, no_mpi);
        }
    }

    #[test]
    fn a_plain_shell_and_a_batch_script_are_not_launched() {
        assert_eq!(launched_from(env(&[("HOME", "/root")])), None);
        let batch = env(&[("SLURM_PROCID", "0"), ("SLURM_STEP_NUM_TASKS", "1")]);
        assert_eq!(launched_from(batch), None);
    }
}
