//! Each rank's target: its own test file or path, or its region of the
//! shared file rank 0 creates.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use iomark_disk::lifecycle::open_target;
use iomark_disk::target::{OpenTarget, TargetRequest};
use iomark_disk::DiskError;
use iomark_model::cluster::Layout;
use iomark_model::units::Bytes;
use iomark_pipeline::RunDisplay;

use crate::World;

/// This rank's target for `request`; with a shared file, its region of it,
/// as long as `request` asks of each rank. `None` when a stop signal came
/// first.
pub(super) fn open(
    world: &World,
    layout: Layout,
    request: &TargetRequest,
    stop: &AtomicBool,
    display: &mut dyn RunDisplay,
) -> Result<Option<OpenTarget>, DiskError> {
    if layout != Layout::SharedFile {
        return open_target(request, stop, display);
    }
    let per_rank = request.size.unwrap_or(request.default_size);
    // Rank 0 creates and fills the whole file; the others open it as an
    // existing file once its path is known.
    let mut mine = if world.is_root() {
        let mut whole = request.clone();
        whole.size = Some(Bytes(per_rank.get() * u64::from(world.size())));
        Some(open_target(&whole, stop, display))
    } else {
        None
    };
    let path = match &mine {
        Some(Ok(Some(t))) => t.info.path.clone(),
        _ => String::new(),
    };
    let path = String::from_utf8_lossy(&world.broadcast(path.as_bytes())).into_owned();
    if path.is_empty() {
        // Rank 0 could not create it: its own error is the job's.
        return match mine.take() {
            Some(r) => r,
            None => Err(DiskError::Invalid(
                "rank 0 could not create the shared file".into(),
            )),
        };
    }
    let mut target = match mine.take() {
        Some(r) => match r? {
            Some(t) => t,
            None => return Ok(None),
        },
        None => {
            let mut theirs = request.clone();
            theirs.path = PathBuf::from(&path);
            theirs.size = None;
            theirs.allow_write = vec![PathBuf::from(&path)];
            match open_target(&theirs, stop, display)? {
                Some(t) => t,
                None => return Ok(None),
            }
        }
    };
    target.region_base = Bytes(per_rank.get() * u64::from(world.rank()));
    target.info.size = per_rank;
    // The share comes from the shared file rank 0 made at the size asked
    // for, though the other ranks open it as an existing file.
    target.info.size_from_device = false;
    Ok(Some(target))
}
