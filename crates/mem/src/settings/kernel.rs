//! Each kernel's own settings (its size and length), with the `clap`
//! feature the flags of `iomark mem stream|stencil|himeno`, and the
//! checks that make them a [`MemKernelSpec`].

use iomark_model::mem::{HimenoLength, HimenoSpec, MemKernelSpec, StencilSpec, StreamSpec};
use iomark_model::units::Nanos;

use super::{invalid, DEFAULT_HIMENO_SECONDS};
use crate::{himeno, stream, sys, MemError};

/// `iomark mem stream`'s own flags.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct StreamSettings {
    /// Elements (f64) per array, STREAM_ARRAY_SIZE; k/M/G are powers of 10
    /// (default: 4 x the last-level cache per array, at least 10M).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "N", value_parser = parse_count, help_heading = "Workload")
    )]
    pub size: Option<u64>,

    /// Passes over the four kernels; the first is not counted (at most 261:
    /// STREAM's values grow fifteen-fold a pass).
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "N",
            default_value_t = 10,
            help_heading = "Workload"
        )
    )]
    pub ntimes: u32,

    /// Non-temporal (streaming) stores in Scale, Add and Triad: on or off
    /// (alone: on). Default: on when an array is larger than the
    /// last-level cache (STREAM's sizes always are), as STREAM builds with
    /// streaming stores; the output says which stores were used.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "on|off",
            num_args = 0..=1,
            default_missing_value = "on",
            value_parser = iomark_model::values::ON_OFF,
            help_heading = "Workload"
        )
    )]
    pub nt_stores: Option<bool>,
}

/// `iomark mem stencil`'s own flags.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct StencilSettings {
    /// Mask width: 3 (bandwidth-bound) or 15 (compute-bound).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "K", default_value_t = 3, help_heading = "Workload")
    )]
    pub mask: u32,

    /// Rows and columns of the square grid (16 x N² bytes in all).
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "N",
            default_value_t = 8192,
            help_heading = "Workload"
        )
    )]
    pub n: u64,

    /// Sweeps; the first is reported apart as warm-up.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "N",
            default_value_t = 10,
            help_heading = "Workload"
        )
    )]
    pub sweeps: u32,
}

/// `iomark mem himeno`'s own flags.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct HimenoSettings {
    /// Grid: xs, s, m, l, xl, xxl (1025x1025x2049) or IxJxK.
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "SIZE",
            default_value = "m",
            help_heading = "Workload"
        )
    )]
    pub grid: String,

    /// Exactly N sweeps from a fresh grid; gosa is checked where a
    /// reference exists (xs/s/m/l/xl at 3, s and m at 64).
    #[cfg_attr(
        feature = "clap",
        arg(
            long,
            value_name = "N",
            conflicts_with = "seconds",
            help_heading = "Workload"
        )
    )]
    pub iterations: Option<u32>,

    /// Himeno's own scheme: 3 rehearsal sweeps, then as many as fill this
    /// many seconds.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "S", help_heading = "Workload")
    )]
    pub seconds: Option<f64>,
}

/// A kernel's own settings, checked into its spec.
pub trait KernelSettings {
    /// The checked kernel.
    fn kernel(&self) -> Result<MemKernelSpec, MemError>;
}

impl KernelSettings for StreamSettings {
    fn kernel(&self) -> Result<MemKernelSpec, MemError> {
        stream(self.size, self.ntimes, self.nt_stores)
    }
}

impl KernelSettings for StencilSettings {
    fn kernel(&self) -> Result<MemKernelSpec, MemError> {
        stencil(self.mask, self.n, self.sweeps)
    }
}

impl KernelSettings for HimenoSettings {
    fn kernel(&self) -> Result<MemKernelSpec, MemError> {
        himeno(&self.grid, self.iterations, self.seconds)
    }
}

/// `80M` = 80,000,000 elements, as STREAM sizes are usually written.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1_000),
        Some('m' | 'M') => (&t[..t.len() - 1], 1_000_000),
        Some('g' | 'G') => (&t[..t.len() - 1], 1_000_000_000),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            format!("expected a positive element count such as 10000000 or 80M, got {s:?}")
        })
}

/// STREAM: elements per array (`None`: STREAM's size rule), passes, and
/// non-temporal stores (`None`: on when an array is larger than the
/// last-level cache, or the cache is unknown; off for arrays that fit,
/// where streaming stores would push them out and slow every pass).
pub fn stream(
    size: Option<u64>,
    ntimes: u32,
    nt_stores: Option<bool>,
) -> Result<MemKernelSpec, MemError> {
    if ntimes < 2 {
        return invalid(format!(
            "--ntimes {ntimes} is too small: the first pass is not counted, so use at least 2"
        ));
    }
    if ntimes > stream::MAX_PASSES {
        return invalid(format!(
            "--ntimes {ntimes} is too many: STREAM's values grow fifteen-fold a pass and leave \
             a double's range after {} passes; use at most {0} (a larger --size runs longer)",
            stream::MAX_PASSES
        ));
    }
    let array_len = size.unwrap_or_else(default_stream_len);
    let nt_stores = nt_stores.unwrap_or_else(|| {
        sys::host()
            .llc
            .is_none_or(|llc| array_len.saturating_mul(8) > llc.get())
    });
    Ok(MemKernelSpec::Stream(StreamSpec {
        array_len,
        ntimes,
        nt_stores,
    }))
}

/// STREAM's size rule: each array 4 x the last-level cache, at least
/// STREAM's 10M, and no more than half the available memory in all.
pub fn default_stream_len() -> u64 {
    let host = sys::host();
    let rule = host.llc.map_or(0, |l| (4 * l.get()).div_ceil(8));
    let len = rule.max(10_000_000);
    match sys::mem_available() {
        Some(avail) => len.min(avail.get() / 2 / 24).max(1_000_000),
        None => len,
    }
}

/// The 2D stencil: mask width (3 or 15), grid side and sweeps.
pub fn stencil(mask: u32, n: u64, sweeps: u32) -> Result<MemKernelSpec, MemError> {
    if mask != 3 && mask != 15 {
        return invalid(format!(
            "--mask {mask} is not supported: use 3 or 15 (their weights are exact, which the check needs)"
        ));
    }
    if n <= mask as u64 {
        return invalid(format!(
            "--n {n} leaves no interior for a {mask}x{mask} mask; use --n {} or more",
            mask + 1
        ));
    }
    if sweeps == 0 {
        return invalid("--sweeps must be at least 1");
    }
    Ok(MemKernelSpec::Stencil(StencilSpec { n, mask, sweeps }))
}

/// Himeno: a grid name or `IxJxK`, and either exactly `iterations` sweeps
/// or Himeno's own timed scheme of `seconds` (60 by default).
pub fn himeno(
    grid: &str,
    iterations: Option<u32>,
    seconds: Option<f64>,
) -> Result<MemKernelSpec, MemError> {
    let grid = himeno::parse_grid(grid).map_err(|e| MemError::BadSpec(format!("--grid: {e}")))?;
    let length = match (iterations, seconds) {
        (Some(0), _) => return invalid("--iterations must be at least 1"),
        (Some(n), _) => HimenoLength::Iterations(n),
        (None, Some(s)) if !(s > 0.0 && s.is_finite()) => {
            return invalid(format!("--seconds {s} must be a positive number, e.g. 60"))
        }
        (None, Some(s)) => HimenoLength::Target(Nanos((s * 1e9) as u64)),
        (None, None) => HimenoLength::Target(Nanos::from_secs(DEFAULT_HIMENO_SECONDS)),
    };
    Ok(MemKernelSpec::Himeno(HimenoSpec { grid, length }))
}
