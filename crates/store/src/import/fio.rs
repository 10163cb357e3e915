//! fio's `--output-format=json` / `json+` (fio 3.x) as a disk run.
//!
//! Each entry of `jobs` becomes a [`DiskJobResult`]; the spec comes from the
//! job's options (then the global options, then fio's defaults). fio's `bw`
//! is KiB/s, so `bw_bytes` is used; latencies are the `*_ns` keys.

use std::collections::{BTreeMap, HashMap};

use iomark_model::disk::{
    CpuUsage, DataPattern, DirectionResult, DiskJobResult, DiskJobSpec, DiskRun, DiskTarget,
    EngineKind, LatencySummary, Percentile, RwMode, TargetKind,
};
use iomark_model::steady::{Criterion, SteadyStateOutcome, SteadyStateSpec};
use iomark_model::{
    Bytes, BytesPerSec, Iops, Nanos, ParseUnitError, RunBody, RunDocument, RunStatus, Warning,
    WarningKind,
};
use serde_json::Value;

use super::{need, short, At, ImportError};

mod slim;
pub(super) use slim::slim;

const TOOL: &str = "fio";

/// Up to this many jobs, json+'s `clat_ns.bins` are kept.
const BIN_JOBS: usize = 64;

pub(super) fn convert(v: &Value) -> Result<RunDocument, ImportError> {
    let version = need(v, TOOL, &["fio version"])?
        .as_str()
        .unwrap_or_default();
    let jobs = need(v, TOOL, &["jobs"])?
        .as_array()
        .ok_or_else(|| ImportError::Missing {
            tool: TOOL,
            field: "jobs (a list)".into(),
        })?;
    if jobs.is_empty() {
        return Err(ImportError::Unsupported(
            "fio output has no jobs: there is nothing to import".into(),
        ));
    }
    let global = v.get("global options");
    // Without group_reporting fio lists every clone on its own, each one
    // thread; with it, one entry stands for all `numjobs` threads. Counted
    // once up front: counting per job was quadratic, and 20,000 clones took
    // minutes. The key is the name's JSON text, so a name that is not a
    // string still only matches itself.
    let mut clones: HashMap<String, usize> = HashMap::new();
    for job in jobs {
        *clones.entry(job["jobname"].to_string()).or_insert(0) += 1;
    }
    // json+'s histogram bins (for the report's latency histograms) are
    // kept for a job file's worth of jobs; thousands of clones would make
    // the stored document many times larger for no figure.
    let keep_bins = jobs.len() <= BIN_JOBS;
    let mut results = Vec::with_capacity(jobs.len());
    let mut run_warnings = Vec::new();
    let mut failed = false;
    let mut elapsed_ms = 0u64;
    for (i, job) in jobs.iter().enumerate() {
        let path = format!("jobs[{i}]");
        let at = At::new(TOOL, &path);
        let name = job["jobname"].as_str().unwrap_or("fio job").to_string();
        let is_clone = clones[&job["jobname"].to_string()] > 1;
        let (result, error) = convert_job(job, i, &name, global, is_clone, keep_bins)?;
        if error != 0 {
            failed = true;
            run_warnings.push(Warning::new(
                WarningKind::Other,
                format!("fio job '{name}' ended with error {error}: its figures may be partial"),
            ));
        }
        let elapsed = at.u64(job, "elapsed")?.unwrap_or(0);
        elapsed_ms = elapsed_ms.max(at.ms_of("elapsed", elapsed, 1000)?);
        results.push(result);
    }
    let top = At::new(TOOL, "");
    let finished_at_ms = match top.u64(v, "timestamp_ms")? {
        Some(ms) => top.ms_of("timestamp_ms", ms, 1)?,
        None => top.ms_of_secs("timestamp", top.need_f64(v, "timestamp")?)?,
    };
    let target = target(jobs, global);
    let body = RunBody::Disk(DiskRun {
        rounds_so_far: Vec::new(),
        profile: TOOL.into(),
        target,
        jobs: results,
        profile_result: None,
        cgroup: None,
        probe: None,
        knees: vec![],
        cluster: None,
    });
    Ok(RunDocument {
        // fio writes the time it finished; a job longer than the time since
        // 1970 is not worth refusing a file over, so the start stops at 0.
        started_at_ms: finished_at_ms.saturating_sub(elapsed_ms),
        finished_at_ms,
        status: if failed {
            RunStatus::Failed
        } else {
            RunStatus::Complete
        },
        warnings: run_warnings,
        ..RunDocument::new(TOOL, version.trim_start_matches("fio-"), Vec::new(), body)
    })
}

/// A job option, falling back to the `[global]` section.
fn opt<'a>(job: &'a Value, global: Option<&'a Value>, key: &str) -> Option<&'a str> {
    opt_in(job, global, key).map(|(s, _)| s)
}

/// A job option and whether it came from the job (rather than `[global]`).
fn opt_in<'a>(job: &'a Value, global: Option<&'a Value>, key: &str) -> Option<(&'a str, bool)> {
    job["job options"][key]
        .as_str()
        .map(|s| (s, true))
        .or_else(|| global.and_then(|g| g[key].as_str()).map(|s| (s, false)))
}

/// A whole-number option as fio reads it: digits, hexadecimal
/// (`randseed=0x89`) or a 1024-based suffix (`iodepth=1k`); the error says
/// what is wrong with it.
fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if let Ok(u) = t.parse::<u64>() {
        return Ok(u);
    }
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map_err(|_| format!("is not a whole number (\"{}\")", short(s)));
    }
    if t.starts_with('-') {
        return Err(format!("is negative (\"{}\")", short(s)));
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("is too large (\"{}\" > {})", short(s), u64::MAX));
    }
    match t.parse::<Bytes>() {
        Ok(b) => Ok(b.get()),
        Err(ParseUnitError::Overflow { .. }) => {
            Err(format!("is too large (\"{}\" > {})", short(s), u64::MAX))
        }
        Err(_) => Err(format!("is not a whole number (\"{}\")", short(s))),
    }
}

fn convert_job(
    job: &Value,
    index: usize,
    name: &str,
    global: Option<&Value>,
    is_clone: bool,
    keep_bins: bool,
) -> Result<(DiskJobResult, i64), ImportError> {
    let o = |k: &'static str| opt(job, global, k);
    let job_opts = format!("jobs[{index}].job options");
    let at_job_opts = At::new(TOOL, &job_opts);
    let at_global = At::new(TOOL, "global options");
    // Where option `k` came from, to name it in a refusal.
    let at_opt = |from_job: bool| if from_job { at_job_opts } else { at_global };
    let count = |k: &'static str| -> Result<Option<u64>, ImportError> {
        opt_in(job, global, k)
            .map(|(s, from_job)| parse_count(s).map_err(|p| at_opt(from_job).invalid(k, p)))
            .transpose()
    };
    let count_u32 = |k: &'static str, default: u32| -> Result<u32, ImportError> {
        match (count(k)?, opt_in(job, global, k)) {
            (Some(u), Some((_, from_job))) => at_opt(from_job).fit::<u32>(k, u),
            _ => Ok(default),
        }
    };
    let src =
        |k: &'static str| opt_in(job, global, k).map(|(s, from_job)| (s, k, at_opt(from_job)));
    let rw_name = o("rw").or_else(|| o("readwrite")).unwrap_or("read");
    // fio allows `rw=randread:8` (an offset modifier); the mode is before it.
    let rw_name = rw_name.split(':').next().unwrap_or(rw_name);
    let rw: RwMode = rw_name.parse().map_err(|_| {
        ImportError::Unsupported(format!(
            "fio job '{name}' uses rw={rw_name}, which iomark does not measure (it knows read, write, randread, randwrite, readwrite, randrw)"
        ))
    })?;
    let bs = match src("bs").or_else(|| src("blocksize")) {
        Some((s, k, at)) => {
            let bs = parse_unit::<Bytes>(s.split(',').next().unwrap_or(s), at, k)?;
            // fio itself refuses bs=0; a file that says so was edited.
            if bs.is_some_and(|b| b.get() == 0) {
                return Err(at.invalid(
                    k,
                    format!("is 0 (\"{}\"): a block size is at least one byte", short(s)),
                ));
            }
            bs
        }
        None => None,
    }
    .unwrap_or(Bytes(4096));
    let engine_name = o("ioengine").unwrap_or("psync");
    let mut warnings = Vec::new();
    let engine = match engine_name {
        "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => EngineKind::Psync,
        "io_uring" => EngineKind::IoUring,
        "mmap" => EngineKind::MmapSync,
        "null" => EngineKind::Null,
        other => {
            // The nearest engine iomark has: asynchronous with a real
            // queue depth. Say so rather than pretend.
            warnings.push(Warning::new(
                WarningKind::Other,
                format!("imported from fio ioengine={other}, recorded as io_uring (the nearest asynchronous engine iomark knows)"),
            ));
            EngineKind::IoUring
        }
    };
    let direct = o("direct").is_some_and(|s| s == "1" || s == "true");
    if !direct {
        warnings.push(Warning::new(
            WarningKind::BufferedIo,
            format!("fio job '{name}' ran without direct=1: the page cache may have been measured instead of the device"),
        ));
    }
    let data = if let Some(p) = o("buffer_compress_percentage").and_then(|s| s.parse::<u8>().ok()) {
        DataPattern::Compressible(p.min(100))
    } else if o("zero_buffers").is_some() {
        DataPattern::Zeros
    } else {
        DataPattern::Random
    };
    let size = match src("size") {
        Some((s, k, at)) => parse_unit::<Bytes>(s, at, k)?,
        None => None,
    };
    let runtime = match src("runtime") {
        Some((s, k, at)) => parse_unit::<Nanos>(s, at, k)?,
        None => None,
    };
    let ramp = match src("ramp_time") {
        Some((s, k, at)) => parse_unit::<Nanos>(s, at, k)?,
        None => None,
    };
    let batch = match count("iodepth_batch_submit")? {
        Some(_) => count_u32("iodepth_batch_submit", 1)?,
        None => count_u32("iodepth_batch", 1)?,
    };
    // numjobs is checked even for a clone, so a corrupt file is refused
    // whole rather than half-read.
    let numjobs = count_u32("numjobs", 1)?;
    let spec = DiskJobSpec {
        name: name.to_string(),
        rw,
        bs,
        iodepth: count_u32("iodepth", 1)?,
        iodepth_batch: batch.max(1),
        // A clone listed on its own is one thread, whatever numjobs says.
        numjobs: if is_clone { 1 } else { numjobs },
        size: size.unwrap_or_default(),
        runtime,
        ramp: ramp.unwrap_or_default(),
        engine,
        direct,
        data,
        rwmix_read: o("rwmixread")
            .and_then(|s| s.parse::<u8>().ok())
            .unwrap_or(50),
        seed: count("randseed")?.unwrap_or(0),
        steady_state: None,
    };
    let ss_ramp = match src("ss_ramp").or_else(|| src("steadystate_ramp_time")) {
        Some((s, k, at)) => parse_unit::<Nanos>(s, at, k)?,
        None => None,
    };
    let steady_state = steady_state(job, &format!("jobs[{index}]"), ss_ramp)?;
    let spec = DiskJobSpec {
        steady_state: steady_state.as_ref().map(|o| o.spec),
        ..spec
    };
    let path = format!("jobs[{index}]");
    let at = At::new(TOOL, &path);
    let read = direction(job, "read", &format!("{path}.read"), keep_bins)?;
    let write = direction(job, "write", &format!("{path}.write"), keep_bins)?;
    if read.is_none() && write.is_none() && job.get("read").is_none() {
        return Err(at.missing("read", ""));
    }
    let levels = format!("{path}.iodepth_level");
    let at_levels = At::new(TOOL, &levels);
    let mut iodepth_level = BTreeMap::new();
    if let Some(m) = job["iodepth_level"].as_object() {
        for k in m.keys() {
            if let Some(pct) = at_levels.f64(&job["iodepth_level"], k)? {
                iodepth_level.insert(k.clone(), pct);
            }
        }
    }
    let error = match &job["error"] {
        Value::Null => 0,
        e => e.as_i64().ok_or_else(|| {
            at.invalid(
                "error",
                format!("is not an error number ({})", short(&e.to_string())),
            )
        })?,
    };
    let result = DiskJobResult {
        spec,
        read,
        write,
        // fio's JSON has no per-interval samples (they need --write_bw_log).
        samples: Vec::new(),
        cpu: CpuUsage {
            user_pct: at.f64(job, "usr_cpu")?.unwrap_or(0.0),
            system_pct: at.f64(job, "sys_cpu")?.unwrap_or(0.0),
        },
        host_cpu: None,
        iodepth_level,
        // Not in fio's output; its iodepth_level buckets are too coarse to
        // recover it.
        mean_depth: 0.0,
        queue: None,
        submission: None,
        device_io: None,
        page_cache_bypassed: direct,
        interrupted: false,
        warnings,
        repeats: Vec::new(),
        steady_state,
    };
    Ok((result, error))
}

/// A size or time option. One that does not parse keeps fio's default (fio
/// takes forms such as `bs=4k-16k` that iomark has no field for), but one
/// too large to hold is refused rather than quietly replaced.
fn parse_unit<T: std::str::FromStr<Err = ParseUnitError>>(
    s: &str,
    at: At<'_>,
    key: &str,
) -> Result<Option<T>, ImportError> {
    match s.parse::<T>() {
        Ok(v) => Ok(Some(v)),
        Err(ParseUnitError::Overflow { .. }) => {
            Err(at.invalid(key, format!("is too large (\"{}\")", short(s))))
        }
        Err(_) => Ok(None),
    }
}

/// One direction of a job, or `None` when it did no I/O that way.
fn direction(
    job: &Value,
    key: &str,
    path: &str,
    keep_bins: bool,
) -> Result<Option<DirectionResult>, ImportError> {
    let Some(d) = job.get(key) else {
        return Ok(None);
    };
    let at = At::new(TOOL, path);
    let total_ios = at.u64(d, "total_ios")?.unwrap_or(0);
    let io_bytes = at.u64(d, "io_bytes")?.unwrap_or(0);
    if total_ios == 0 && io_bytes == 0 {
        return Ok(None);
    }
    let runtime_ms = at.need_u64(d, "runtime")?;
    let runtime = runtime_ms
        .checked_mul(1_000_000)
        .map(Nanos)
        .ok_or_else(|| {
            at.invalid(
                "runtime",
                format!("is too long ({runtime_ms} ms > {} ns)", u64::MAX),
            )
        })?;
    let bw = match at.f64(d, "bw_bytes")? {
        Some(b) => b,
        // fio before 3.? printed only `bw`, in KiB/s.
        None => {
            let kib = at.f64(d, "bw")?.ok_or_else(|| at.missing("bw_bytes", ""))?;
            at.figure("bw", kib * 1024.0, &format!("{kib} KiB/s"))?
        }
    };
    let iops = at.need_f64(d, "iops")?;
    let c = &d["clat_ns"];
    let clat = format!("{path}.clat_ns");
    let at_c = At::new(TOOL, &clat);
    let mut percentiles = Vec::new();
    if let Some(m) = c["percentile"].as_object() {
        let pct = format!("{clat}.percentile");
        let at_p = At::new(TOOL, &pct);
        for (k, v) in m {
            // A key that is not a percentage would be stored as null (NaN)
            // and break every later report of the run.
            let percent = k
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| {
                    at_p.invalid(
                        &format!("\"{}\"", short(k)),
                        "is not a percentile from 0 to 100".into(),
                    )
                })?;
            let ns = at_p
                .u64(&c["percentile"], k)?
                .ok_or_else(|| at_p.invalid(k, format!("is not a latency in ns ({v})")))?;
            percentiles.push(Percentile { percent, ns });
        }
        percentiles.sort_by(|a, b| a.percent.total_cmp(&b.percent));
    }
    let mut bins = Vec::new();
    if let (true, Some(m)) = (keep_bins, c["bins"].as_object()) {
        let at_b = At::new(TOOL, &clat);
        for (k, v) in m {
            let ns = k.trim().parse::<u64>().map_err(|_| {
                at_b.invalid(
                    "bins",
                    format!("has a key that is not a latency in ns (\"{}\")", short(k)),
                )
            })?;
            let n = v.as_u64().ok_or_else(|| {
                at_b.invalid(
                    "bins",
                    format!(
                        "has a count that is not a whole number ({})",
                        short(&v.to_string())
                    ),
                )
            })?;
            if n > 0 {
                bins.push([ns, n]);
            }
        }
        bins.sort_unstable();
    }
    Ok(Some(DirectionResult {
        io_bytes: Bytes(io_bytes),
        ios: total_ios,
        runtime,
        bw: BytesPerSec(bw),
        iops: Iops(iops),
        clat: LatencySummary {
            count: at_c.u64(c, "N")?.unwrap_or(0),
            min_ns: at_c.u64(c, "min")?.unwrap_or(0),
            max_ns: at_c.u64(c, "max")?.unwrap_or(0),
            mean_ns: at_c.f64(c, "mean")?.unwrap_or(0.0),
            stddev_ns: at_c.f64(c, "stddev")?.unwrap_or(0.0),
            percentiles,
            bins,
        },
    }))
}

/// The file, device or directory the jobs worked on.
fn target(jobs: &[Value], global: Option<&Value>) -> DiskTarget {
    let first = &jobs[0];
    let given = opt(first, global, "filename")
        .or_else(|| opt(first, global, "directory"))
        .unwrap_or("")
        .to_string();
    let kind = if given.starts_with("/dev/") {
        TargetKind::BlockDevice
    } else {
        TargetKind::File
    };
    DiskTarget {
        path: given.clone(),
        given,
        kind,
        size: Bytes(0),
        logical_block_size: 0,
        size_from_device: false,
    }
}

/// fio's `steadystate` block (a job with `ss_dur`): the criterion, the
/// window, whether it was met and the last window's figures and samples.
/// fio does not say when it was met.
fn steady_state(
    job: &Value,
    path: &str,
    ramp: Option<Nanos>,
) -> Result<Option<SteadyStateOutcome>, ImportError> {
    let block = &job["steadystate"];
    if block.is_null() {
        return Ok(None);
    }
    let path = format!("{path}.steadystate");
    let at = At::new(TOOL, &path);
    let ss = block["ss"]
        .as_str()
        .ok_or_else(|| at.missing("ss", " (the criterion)"))?;
    let criterion: Criterion = ss.parse().map_err(|e| at.invalid("ss", format!("{e}")))?;
    let window = at
        .u64(block, "duration")?
        .ok_or_else(|| at.missing("duration", " (the window, s)"))?;
    let judged = match &block["criterion"] {
        Value::String(c) => {
            Some(c.trim_end_matches('%').trim().parse::<f64>().map_err(|_| {
                at.invalid("criterion", format!("is not a number (\"{}\")", short(c)))
            })?)
        }
        _ => None,
    };
    let series = |k: &str| -> Vec<f64> {
        block["data"][k]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default()
    };
    Ok(Some(SteadyStateOutcome {
        spec: SteadyStateSpec {
            criterion,
            window: Nanos::from_secs(window),
            ramp: ramp.unwrap_or_default(),
        },
        attained: at.u64(block, "attained")?.unwrap_or(0) > 0,
        attained_at: None,
        criterion: judged,
        max_deviation: at.f64(block, "max_deviation")?.unwrap_or(0.0),
        // A falling rate's slope is negative, which at.f64 refuses.
        slope: match &block["slope"] {
            Value::Null => 0.0,
            v => v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                at.invalid(
                    "slope",
                    format!("is not a number ({})", short(&v.to_string())),
                )
            })?,
        },
        iops: series("iops"),
        bw: series("bw"),
        lat_ns: series("lat"),
    }))
}
