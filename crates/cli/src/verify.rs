//! What `iomark disk --profile verify` does with a directory's test file
//! once the check is done: a write phase keeps it for the read phase, a
//! read phase removes it (unless --keep-verify-file).

use iomark_disk::target::{remove_kept_verify_file, OpenTarget};
use iomark_model::verify::{VerifyPhase, VerifyResult};

use crate::disk_args::DiskArgs;

/// Keep or remove the directory's verify file after a run that found `v`.
/// An interrupted write phase keeps nothing: half a fill is no use to a
/// read phase, and the test file goes as any other.
pub(crate) fn after(
    args: &DiskArgs,
    v: &VerifyResult,
    target: &mut OpenTarget,
    interrupted: bool,
) -> anyhow::Result<()> {
    match v.phase {
        VerifyPhase::Write if !interrupted => {
            if let Some(kept) = target.keep_test_file()? {
                eprintln!(
                    "iomark: kept {} for the read phase: iomark disk {} --profile verify --phase read",
                    kept.display(),
                    args.path_given()
                        .map_or_else(|| ".".into(), |p| p.display().to_string())
                );
            }
        }
        VerifyPhase::Read
            if !interrupted && !args.prof.keep_verify_file && remove_kept_verify_file(target)? =>
        {
            eprintln!("iomark: removed {}", target.info.path);
        }
        _ => {}
    }
    Ok(())
}
