//! Text output of the verify profile: what was checked, the rates across
//! the surface, the bad ranges and the usable size.

use std::fmt::Write;

use iomark_model::disk::DiskRun;
use iomark_model::units::{Bytes, BytesPerSec};
use iomark_model::verify::{SurfaceRate, VerifyPhase, VerifyResult};

/// Bad ranges listed one per line; the rest are counted.
const SHOWN_RANGES: usize = 20;

pub(crate) fn verify(out: &mut String, run: &DiskRun, r: &VerifyResult) {
    let how = format!(
        "{} blocks, {} groups, {}{}, {}",
        r.block,
        r.group,
        r.engine,
        if r.engine == iomark_model::disk::EngineKind::IoUring && !r.quick {
            " QD4"
        } else {
            ""
        },
        if r.direct { "direct" } else { "buffered" }
    );
    let what = if r.quick {
        format!(
            "quick probe of {} ({how}): a probe, not a full check",
            r.claimed
        )
    } else {
        match r.phase {
            VerifyPhase::Both => format!("full check of {} ({how})", r.claimed),
            VerifyPhase::Write => format!("write phase over {} ({how})", r.claimed),
            VerifyPhase::Read => format!("read phase over {} ({how})", r.claimed),
        }
    };
    let _ = writeln!(out, "Verify: {what}");
    crate::disk::target_line(out, run);
    let _ = writeln!(out);
    rate_line(out, "Write", r.write_bw, &r.write_series);
    rate_line(out, "Read", r.read_bw, &r.read_series);
    if r.phase == VerifyPhase::Write && !r.quick {
        let _ = writeln!(
            out,
            "\nBlocks left for the read phase: run the same command with --phase read \
             (after unplugging and plugging the device back in, to defeat its cache)."
        );
        return;
    }
    if r.checked_blocks == 0 {
        return;
    }
    bad_blocks(out, r);
    if let Some(v) = r.verdict() {
        let _ = writeln!(out, "Usable: {} of {} claimed", v.usable, v.claimed);
        let _ = writeln!(out, "\nVerdict: {}", v.summary());
    } else if r.partial {
        let _ = writeln!(out, "\nVerdict: none, the check did not reach the end");
    }
}

/// The check after a custom write run (`--verify`).
pub(crate) fn write_check(out: &mut String, r: &VerifyResult) {
    let _ = writeln!(
        out,
        "\nVerify (crc32c per {}): every block written read back{}",
        r.block,
        if r.partial {
            ", cut short: not every block was checked"
        } else {
            ""
        }
    );
    if let Some(bw) = r.read_bw {
        let _ = writeln!(out, "Check read {:>10.2} MB/s", bw.mb_per_sec());
    }
    bad_blocks(out, r);
    let verdict = if r.bad.total() == 0 {
        "every block holds its last write"
    } else {
        "the target returned wrong data"
    };
    let _ = writeln!(out, "Verdict: {verdict}");
}

/// The blocks checked, the bad ones by kind and as ranges.
fn bad_blocks(out: &mut String, r: &VerifyResult) {
    let b = &r.bad;
    let _ = writeln!(
        out,
        "\nChecked {} block(s): {} corrupted, {} lost, {} wrapped",
        r.checked_blocks, b.corrupted, b.lost, b.wrapped
    );
    if !r.ranges.is_empty() {
        let _ = writeln!(out, "Bad ranges:");
        for range in r.ranges.iter().take(SHOWN_RANGES) {
            let end = Bytes(range.start.get() + range.len.get());
            let from = range.from.map_or_else(String::new, |f| {
                format!(" (data written for offset {})", f.get())
            });
            let _ = writeln!(
                out,
                "  {:>14} .. {:<14} {:>10} {}{from}",
                range.start.get(),
                end.get(),
                range.len.to_string(),
                range.kind,
            );
        }
        for range in r.ranges.iter().take(3) {
            let _ = writeln!(
                out,
                "  at {}: expected {}, found {}",
                range.start.get(),
                range.expected,
                range.found
            );
        }
        let more = (r.ranges.len().saturating_sub(SHOWN_RANGES)) as u64 + r.more_ranges;
        if more > 0 {
            let _ = writeln!(out, "  ... and {more} more range(s)");
        }
    }
}

fn rate_line(out: &mut String, what: &str, bw: Option<BytesPerSec>, series: &[SurfaceRate]) {
    let Some(bw) = bw else { return };
    let spread = {
        let v: Vec<f64> = series.iter().map(|s| s.bw.mb_per_sec()).collect();
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(0.0, f64::max);
        if v.len() > 1 {
            format!("  (by position: {min:.2} .. {max:.2})")
        } else {
            String::new()
        }
    };
    let _ = writeln!(out, "{what:<6} {:>10.2} MB/s{spread}", bw.mb_per_sec());
}
