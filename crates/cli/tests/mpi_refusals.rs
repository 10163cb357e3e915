//! Without the `mpi` feature an MPI launch is refused, and the layout
//! flags that only mean something across ranks are refused outside one
//! (the MPI runs themselves are in tests/mpi_rig.rs, built with the
//! feature).

use crate::common::*;

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_run_under_a_launcher() {
    for var in ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"] {
        let dir = tempfile::tempdir().unwrap();
        let out = iomark_cmd(&[
            "disk",
            dir.path().to_str().unwrap(),
            "--rw",
            "write",
            "--no-store",
        ])
        .env(var, "3")
        .output()
        .unwrap();
        let err = fails_with(&out, "built without MPI");
        assert!(err.contains(var) && err.contains("--features mpi"), "{err}");
        assert_no_test_files(dir.path());
    }
    // A Slurm batch script is a one-task step: iomark runs alone there.
    let out = iomark_cmd(&["engines"])
        .env("SLURM_PROCID", "0")
        .env("SLURM_STEP_NUM_TASKS", "1")
        .output()
        .unwrap();
    assert_ok(&out, "engines in a batch script");
}

#[test]
fn layout_flags_are_refused_outside_mpi() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = iomark(&["disk", d, "--rw", "write", "--shared-file", "--no-store"]);
    fails_with(&out, "mpirun -np N");
    assert_no_test_files(dir.path());
}

#[test]
fn stonewall_is_refused_outside_mpi() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = iomark(&["disk", d, "--rw", "write", "--stonewall", "--no-store"]);
    let err = fails_with(&out, "--stonewall");
    assert!(err.contains("mpirun -np N"), "{err}");
    assert_no_test_files(dir.path());
}
